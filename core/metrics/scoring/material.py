"""What the scoring job reads from the session: the texts to score (verbalisations, raw
replies) and each unit's material (triples, entities with aliases, references).

Units' subjects and objects (for ESA and hallucination candidates) come from
``unit_triples`` of the text's language (``main`` tripleset; a set override wins over the
label, :meth:`UnitTriple.shown`, the rule the verbalise job uses); aliases from ``terms``
where the subject QID or the object's QID is known. Everything here is read from a WAL
snapshot: scoring never waits for a writer (a run being verbalised) to read.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from core.metrics.base import PPL, EntityInfo
from core.metrics.scoring.request import (
    _QID,
    ScoringRequest,
    ScoringSummary,
    _Run,
    _Text,
)
from core.store.batching import in_chunks

if TYPE_CHECKING:
    from core.store import SessionStore


class _TripleRow(NamedTuple):
    """The columns of a ``unit_triples`` row scoring reads (no ORM object per row)."""

    unit_id: int
    lang: str
    tripleset: str
    subject: str
    predicate: str
    object: str
    subject_override: str | None
    predicate_override: str | None
    object_override: str | None
    subject_qid: str | None
    object_value: str | None
    claim_id: int | None

    def shown(self) -> tuple[str, str, str]:
        """As :meth:`core.store.models.UnitTriple.shown`: a set override wins."""
        return (
            self.subject if self.subject_override is None else self.subject_override,
            self.predicate if self.predicate_override is None else self.predicate_override,
            self.object if self.object_override is None else self.object_override,
        )


class _UnitMaterial:
    """Triples, entities and references of the units being scored, per language."""

    def __init__(
        self,
        store: SessionStore,
        unit_ids: Sequence[int],
        *,
        langs: Collection[str] | None = None,
        reference_texts: bool = True,
    ) -> None:
        """``langs``: only these languages' triples and references (None: all);
        ``reference_texts``: also list every reference as a text to score
        (``reference_rows``)."""
        self.triples: dict[tuple[int, str], list[tuple[str, str, str]]] = {}
        self.entities: dict[tuple[int, str], tuple[EntityInfo, ...]] = {}
        self.references: dict[tuple[int, str, str], list[tuple[int, str]]] = defaultdict(list)
        self.reference_rows: list[_Text] = []
        # Per (unit, lang): the main tripleset, else whichever set the language has
        # first, kept as the rows come (ordered by tripleset), the other sets dropped.
        chosen: dict[tuple[int, str], list[_TripleRow]] = {}
        roots: dict[int, str | None] = {}
        with store.snapshot() as db:
            for chunk in in_chunks(list(unit_ids)):
                roots.update(_read_roots(db, chunk))
                _read_triples(db, chunk, langs, chosen)
                self._read_references(db, chunk, langs, reference_texts=reference_texts)
            value_types = _read_value_types(db, chosen)
            terms = _read_terms(db, chosen)
        for (unit_id, lang), rows in chosen.items():
            triples = [r.shown() for r in rows]
            self.triples[(unit_id, lang)] = triples
            self.entities[(unit_id, lang)] = _entities(
                rows, triples, roots.get(unit_id), lang, terms, value_types
            )

    def _read_references(
        self, db: Any, chunk: Sequence[int], langs: Collection[str] | None, *, reference_texts: bool
    ) -> None:
        from sqlalchemy import select

        from core.store.models import UnitReference

        reference_query = select(
            UnitReference.id,
            UnitReference.unit_id,
            UnitReference.lang,
            UnitReference.quality,
            UnitReference.text,
        ).where(UnitReference.unit_id.in_(chunk))
        if langs is not None:
            reference_query = reference_query.where(UnitReference.lang.in_(sorted(langs)))
        for ref_id, ref_unit, ref_lang, ref_quality, ref_text in db.execute(
            reference_query.order_by(UnitReference.id)
        ):
            self.references[(ref_unit, ref_lang, ref_quality)].append((ref_id, ref_text))
            if reference_texts:
                self.reference_rows.append(
                    _Text(ref_text, ref_lang, ref_unit, reference_id=ref_id, quality=ref_quality)
                )


def _read_roots(db: Any, chunk: Sequence[int]) -> dict[int, str | None]:
    from sqlalchemy import select

    from core.store.models import DataUnit

    query = select(DataUnit.id, DataUnit.root_qid).where(DataUnit.id.in_(chunk))
    return {uid: root for uid, root in db.execute(query)}


def _read_triples(
    db: Any,
    chunk: Sequence[int],
    langs: Collection[str] | None,
    chosen: dict[tuple[int, str], list[_TripleRow]],
) -> None:
    """Add ``chunk``'s units' triples to ``chosen``: per (unit, lang) the main tripleset,
    else the first set the language has (rows come ordered by tripleset)."""
    from sqlalchemy import select

    from core.store.models import UnitTriple

    columns = [getattr(UnitTriple, name) for name in _TripleRow._fields]
    triple_query = select(*columns).where(UnitTriple.unit_id.in_(chunk))
    if langs is not None:
        triple_query = triple_query.where(UnitTriple.lang.in_(sorted(langs)))
    for values in db.execute(
        triple_query.order_by(
            UnitTriple.unit_id, UnitTriple.lang, UnitTriple.tripleset, UnitTriple.position
        )
    ):
        row = _TripleRow(*values)
        key = (row.unit_id, row.lang)
        if row.tripleset == "main" or key not in chosen:
            if key not in chosen or chosen[key][0].tripleset != row.tripleset:
                chosen[key] = []
            chosen[key].append(row)


def _read_value_types(
    db: Any, chosen: dict[tuple[int, str], list[_TripleRow]]
) -> dict[int, str | None]:
    """The Wikidata value type of each claim behind a chosen triple."""
    from sqlalchemy import select

    from core.store.models import Claim

    claim_ids = sorted(
        {r.claim_id for rows in chosen.values() for r in rows if r.claim_id is not None}
    )
    value_types: dict[int, str | None] = {}
    for chunk in in_chunks(claim_ids):
        for cid, vtype in db.execute(select(Claim.id, Claim.value_type).where(Claim.id.in_(chunk))):
            value_types[cid] = vtype
    return value_types


def _read_terms(
    db: Any, chosen: dict[tuple[int, str], list[_TripleRow]]
) -> dict[tuple[str, str], list[str]]:
    """Labels and aliases per (QID, lang) of the chosen triples' subjects and objects."""
    from sqlalchemy import select

    from core.store.models import Term

    qids = sorted(
        {
            q
            for rows in chosen.values()
            for r in rows
            for q in (r.subject_qid, r.object_value)
            if q and _QID.match(q)
        }
    )
    terms: dict[tuple[str, str], list[str]] = defaultdict(list)
    for qid_chunk in in_chunks(qids):
        for item_id, lang, _kind, text in db.execute(
            select(Term.item_id, Term.lang, Term.kind, Term.text)
            .where(Term.item_id.in_(qid_chunk), Term.kind.in_(("label", "alias")))
            .order_by(Term.item_id, Term.lang, Term.kind, Term.ordinal)
        ):
            terms[(item_id, lang)].append(text)
    return terms


def _entities(
    rows: Sequence[_TripleRow],
    triples: Sequence[tuple[str, str, str]],
    root: str | None,
    lang: str,
    terms: dict[tuple[str, str], list[str]],
    value_types: dict[int, str | None],
) -> tuple[EntityInfo, ...]:
    """The subject and the object of each triple, with aliases, QIDs and whether it is
    the unit's root entity."""
    # Without a root entity: the subject of the most triples (the first on a tie).
    subjects = [t[0] for t in triples]
    first_subject = max(subjects, key=subjects.count) if subjects else None
    entities: list[EntityInfo] = []
    for row, (subject, _predicate, obj) in zip(rows, triples, strict=True):
        is_root = (
            (row.subject_qid == root) if row.subject_qid and root else (subject == first_subject)
        )
        entities.append(
            EntityInfo(
                subject,
                _aliases(terms, row.subject_qid, lang, subject),
                row.subject_qid,
                is_root=is_root,
            )
        )
        object_qid = row.object_value if row.object_value and _QID.match(row.object_value) else None
        vtype = value_types.get(row.claim_id) if row.claim_id else None
        entities.append(
            EntityInfo(
                obj,
                _aliases(terms, object_qid, lang, obj),
                object_qid,
                is_root=bool(root and object_qid == root),
                value_type="item" if vtype in (None, "wikibase-item") else vtype,
            )
        )
    return tuple(entities)


@dataclass(frozen=True)
class UnitMaterial:
    """What the scoring job judges one unit's texts in one language against.

    ``triples`` are the language's ``main`` tripleset (else the set the language has),
    overrides applied; ``entities`` the subjects and objects with their aliases, QIDs and
    value types (ESA and hallucination candidates); ``references`` maps a quality
    (``gold``, ``silver``) to its ``(reference id, text)`` pairs in id order. A unit or
    language with none of them has empty fields."""

    unit_id: int
    lang: str
    triples: tuple[tuple[str, str, str], ...]
    entities: tuple[EntityInfo, ...]
    references: dict[str, tuple[tuple[int, str], ...]]


def unit_material(store: SessionStore, unit_id: int, lang: str) -> UnitMaterial:
    """Unit ``unit_id``'s triples, entities and references in ``lang``, read exactly as the
    scoring job reads them (so the Scores panel's detail shows what a score was made
    from)."""
    material = _UnitMaterial(store, [unit_id])
    references = {
        quality: tuple(pairs)
        for (uid, ref_lang, quality), pairs in material.references.items()
        if uid == unit_id and ref_lang == lang
    }
    return UnitMaterial(
        unit_id,
        lang,
        tuple(material.triples.get((unit_id, lang), ())),
        material.entities.get((unit_id, lang), ()),
        references,
    )


def unit_references(
    store: SessionStore, unit_ids: Sequence[int]
) -> dict[tuple[int, str, str], list[tuple[int, str]]]:
    """(unit id, lang, quality) -> its ``(reference id, text)`` pairs in id order, read as
    the scoring job reads them."""
    return dict(_UnitMaterial(store, unit_ids, reference_texts=False).references)


def _aliases(
    terms: dict[tuple[str, str], list[str]], qid: str | None, lang: str, shown: str
) -> tuple[str, ...]:
    if not qid:
        return ()
    return tuple(dict.fromkeys(t for t in terms.get((qid, lang), ()) if t != shown))


def _load_verbalisations(
    store: SessionStore,
    runs: dict[int, _Run],
    request: ScoringRequest,
    summary: ScoringSummary,
    metrics: Sequence[str] = (),
) -> tuple[list[_Text], list[_Text]]:
    """(parsed texts, raw replies): what the metrics score, and what ``ppl`` scores.

    A raw reply is everything the model generated (for imports, the line as given),
    whitespace trimmed; a reply from which no answer was parsed is still generated text,
    so it has a perplexity, and only perplexity scores it."""
    texts: list[_Text] = []
    replies: list[_Text] = []
    # (run, lang) -> kind ("empty" / "unparsed") -> count, for the summary's notes
    blank: dict[tuple[int, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    with store.snapshot() as db:
        for vid, run_id, unit_id, lang, text, raw, prompt, logprobs in db.execute(
            _verbalisation_query(runs, request)
        ):
            parsed = text is not None and bool(text.strip())
            reply = (raw or "").strip() or (text or "").strip()
            if reply:
                replies.append(
                    _Text(
                        reply,
                        lang,
                        unit_id,
                        verbalisation_id=vid,
                        run_id=run_id,
                        prompt=prompt,
                        parse_ok=parsed,
                        token_logprobs=_logprob_values(logprobs),
                    )
                )
            kind = "text" if parsed else "unparsed" if reply else "empty"
            if not parsed:
                blank[(run_id, lang)][kind] += 1
            if parsed or not _excluded(request, kind):
                texts.append(
                    _Text(
                        text if parsed else "",
                        lang,
                        unit_id,
                        verbalisation_id=vid,
                        run_id=run_id,
                        prompt=prompt,
                        parse_ok=parsed,
                        output=kind,
                    )
                )
    _note_blank(summary, blank, request, metrics)
    return texts, replies


def _verbalisation_query(runs: dict[int, _Run], request: ScoringRequest) -> Any:
    from sqlalchemy import select

    from core.store.models import Verbalisation

    query = (
        select(
            Verbalisation.id,
            Verbalisation.run_id,
            Verbalisation.unit_id,
            Verbalisation.lang,
            Verbalisation.text,
            Verbalisation.raw_output,
            Verbalisation.prompt,
            Verbalisation.token_logprobs,
        )
        .where(Verbalisation.run_id.in_(list(runs)))
        .order_by(
            Verbalisation.run_id,
            Verbalisation.lang,
            Verbalisation.unit_id,
            Verbalisation.candidate_index,
        )
    )
    if request.langs is not None:
        query = query.where(Verbalisation.lang.in_(list(request.langs)))
    if request.unit_ids is not None:
        query = query.where(Verbalisation.unit_id.in_(list(request.unit_ids)))
    return query


def _excluded(request: ScoringRequest, kind: str) -> bool:
    """Whether a blank output of ``kind`` ("empty" / "unparsed") is left out of scoring."""
    return request.exclude_empty or (kind == "unparsed" and request.exclude_unparsed)


def _note_blank(
    summary: ScoringSummary,
    blank: dict[tuple[int, str], dict[str, int]],
    request: ScoringRequest,
    metrics: Sequence[str],
) -> None:
    """One note per run, language and kind of blank output: how many, and what scoring
    did with them."""
    for (run_id, lang), counts in sorted(blank.items()):
        for kind, n in sorted(counts.items()):
            what = "empty outputs" if kind == "empty" else "replies from which no answer was parsed"
            how = (
                "were LEFT OUT of every score (excluded on request)"
                if _excluded(request, kind)
                else "were scored as empty texts (as the WebNLG scripts do; exclude them "
                "explicitly to leave them out)"
            )
            but = (
                " (perplexity scored their raw replies)"
                if kind == "unparsed" and PPL in metrics
                else ""
            )
            summary.note(f"run {run_id}, {lang}: {n:,} {what} {how}{but}")


def _logprob_values(stored: Any) -> tuple[float, ...] | None:
    """The log-probabilities of a ``verbalisations.token_logprobs`` value, None if absent
    or not a list of numbers."""
    values = stored.get("logprobs") if isinstance(stored, dict) else None
    if not isinstance(values, list) or not values:
        return None
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return None
    return tuple(float(v) for v in values)


def _all_unit_ids(store: SessionStore) -> list[int]:
    from sqlalchemy import select

    from core.store.models import DataUnit

    with store.snapshot() as db:
        return list(db.scalars(select(DataUnit.id).order_by(DataUnit.id)))
