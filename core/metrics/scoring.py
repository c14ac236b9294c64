"""The scoring job, and the queries the Scores panel and the report read scores with.

The job scores a session's verbalisations (optionally only some runs, languages, units)
with the chosen metrics and writes ``scores`` rows as CONVENTIONS.md says:

* sentence rows: ``verbalisation_id``, ``run_id``, ``lang`` set; reference-based metrics
  once per reference quality (``details["quality"]`` gold / silver, never mixed);
* corpus rows per run × language (× quality): ``verbalisation_id`` NULL, ``details["n"]``;
  ESA corpus rows carry ESI@1, ESI@2 and the three ESA means in details;
* with ``references=True`` the unit's reference texts are scored too by the
  reference-free metrics (and perplexity under ``--ppl-model``): sentence rows with
  ``reference_id``, corpus rows with ``run_id`` NULL and ``details["texts"] = "references"``.

Every output counts, as in the WebNLG challenge's official scripts: an empty output (an
empty line of an imported file, a model that generated nothing) is scored as the empty
text, and so, by default, is a reply from which no answer could be parsed; their sentence
rows say ``details["output"]`` = ``empty`` / ``unparsed`` and each corpus row counts them
(``details["empty_outputs"]``, ``details["unparsed_outputs"]``). Leaving them out is an
explicit choice (``ScoringRequest.exclude_empty`` / ``exclude_unparsed``; the summary
notes say how many were left out).

Re-scoring replaces the previous rows of the same metric for the same texts and groups;
all of a metric's deletes and inserts are one transaction, so a cancel or failure leaves
each metric either fully old or fully new. Texts a metric cannot score (no reference of a
language: reference-based scores are then absent, not 0) are counted in the summary notes.

Units' subjects and objects (for ESA and hallucination candidates) come from
``unit_triples`` of the text's language (``main`` tripleset; a set override wins over the
label, :meth:`UnitTriple.shown`, the rule the verbalise job uses); aliases from ``terms``
where the subject QID or the object's QID is known.

Perplexity (METHODS §7: of the generated tokens, given the prompt) scores a
verbalisation's raw reply, marker and preamble included, also where no answer could be
parsed from it, after the prompt the verbalise job stored with it. Rows without a stored
prompt (made before schema 0003, or imported) get it rebuilt from the run's template and
today's triples; ``details["prompt"]`` says which ("stored", "rebuilt" or "none"). The
perplexity metrics load each causal model once, share it between ``ppl`` and
``entity_ppl``, score every group of that model, and free it before the next model loads.
A run made through an OpenAI-compatible server has no local model: without ``--ppl-model``
its ``ppl`` is computed from the token log-probabilities the server returned with each
reply (``details["source"] = "server logprobs"``), where it returned them.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from core.changes import Topic
from core.errors import UserFacingError
from core.groups import head_tier
from core.jobs import Job, JobContext
from core.metrics import (
    DEFAULT_METRICS,
    MODEL_METRICS,
    REFERENCE_BASED,
    Metric,
    MetricOptions,
    create_metric,
    expand_metric_names,
)
from core.metrics.base import (
    ENTITY_PPL,
    ESA,
    HALLUCINATION,
    METEOR,
    PPL,
    EntityInfo,
    MetricValue,
    ScoringItem,
)

QUALITIES = ("gold", "silver")
CHUNK = 64  # texts per sentence-scoring call: the cancel and progress granularity
ROW_BATCH = 1_000  # score rows built and inserted at a time (in the metric's transaction)
_QID = re.compile(r"\AQ[1-9][0-9]*\Z")
_IN_CHUNK = 500  # SQLite host parameters per IN list
# The "model" of a perplexity group scored from a server run's stored log-probabilities.
SERVER_LOGPROBS = "server log-probabilities"


@dataclass(frozen=True)
class ScoringRequest:
    """What to score. ``None`` filters mean everything in the session."""

    metrics: tuple[str, ...] = DEFAULT_METRICS
    run_ids: tuple[int, ...] | None = None
    langs: tuple[str, ...] | None = None
    unit_ids: tuple[int, ...] | None = None
    references: bool = False
    options: MetricOptions = field(default_factory=MetricOptions)
    # Outputs with no text: scored as empty texts unless excluded (never silently dropped).
    exclude_empty: bool = False  # leave out empty outputs (and unparsed replies)
    exclude_unparsed: bool = False  # leave out only replies no answer was parsed from
    # A run still being written by a live process is skipped (scores describe finished
    # runs); with partial, it is scored as far as it got and its corpus rows say so.
    partial: bool = False


@dataclass(frozen=True)
class CorpusScore:
    """One stored corpus row, as the summary table shows it."""

    metric: str
    run_id: int | None
    model: str
    lang: str | None
    quality: str | None
    value: float | None
    n: int
    signature: str | None
    details: dict[str, Any]


@dataclass
class ScoringSummary:
    texts: int = 0
    rows_written: dict[str, int] = field(default_factory=dict)
    corpus: list[CorpusScore] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


# --- loading what is scored --------------------------------------------------------------


@dataclass(frozen=True)
class _Run:
    id: int
    kind: str
    model_id: str
    name: str
    parameters: dict[str, Any]
    templates: dict[str, Any]
    # Why the run is unfinished ("still running in process 12 on host"), or None.
    writing: str | None = None


@dataclass(frozen=True)
class _Text:
    """A text to score: a verbalisation (run set) or a reference (reference_id set)."""

    text: str
    lang: str
    unit_id: int
    verbalisation_id: int | None = None
    run_id: int | None = None
    reference_id: int | None = None
    quality: str | None = None  # of a reference text
    prompt: str | None = None  # the prompt stored with a verbalisation at generation
    parse_ok: bool = True  # False: a raw reply with no parsed answer
    output: str = "text"  # "text", or "empty" / "unparsed": scored as the empty text
    # The log-probabilities a server returned with the reply (a server run's ppl).
    token_logprobs: tuple[float, ...] | None = None


def _chunks(values: Sequence[Any], size: int = _IN_CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _check_langs(langs: Sequence[str] | None) -> None:
    for lang in langs or ():
        if not re.fullmatch(r"[a-z]{2,3}", lang):
            raise UserFacingError(f"{lang!r} is not a language code (e.g. en, it, es)")


def _still_writing(status: str, software: Any) -> str | None:
    """Why a run is still being written (its owner process lives), or None."""
    from core.verbalise.job import owner_state

    if status != "running":
        return None
    owner = software.get("owner") if isinstance(software, dict) else None
    state = owner_state(owner)
    if state in ("none", "gone") or not isinstance(owner, dict):
        return None  # an old run without an owner, or one whose process has ended
    where = f"process {owner.get('pid')} on {owner.get('host')}"
    return (
        f"still being written by {where}"
        if state == "alive"
        else f"perhaps still being written by {where}"
    )


def load_runs(store: Any, run_ids: Sequence[int] | None) -> dict[int, _Run]:
    """The runs to score; an id that is not in the session is a clear error."""
    from sqlalchemy import select

    from core.store.models import ModelRun

    with store.unit_of_work() as db:
        query = select(ModelRun).order_by(ModelRun.id)
        if run_ids is not None:
            query = query.where(ModelRun.id.in_(list(run_ids)))
        runs = {
            r.id: _Run(
                r.id,
                r.kind,
                r.model_id,
                r.system_name or r.model_id,
                dict(r.parameters or {}),
                dict(r.prompt_templates or {}),
                _still_writing(r.status, r.software),
            )
            for r in db.scalars(query)
        }
    if run_ids is not None:
        missing = sorted(set(run_ids) - set(runs))
        if missing:
            raise UserFacingError(
                f"no run {', '.join(map(str, missing))} in this session "
                f"(runs here: {', '.join(map(str, sorted(runs))) or 'none'}; "
                "see taillens score --session S --list-runs)"
            )
    return runs


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

    def __init__(self, store: Any, unit_ids: Sequence[int]) -> None:
        from sqlalchemy import select

        from core.store.models import Claim, DataUnit, Term, UnitReference, UnitTriple

        self.triples: dict[tuple[int, str], list[tuple[str, str, str]]] = {}
        self.entities: dict[tuple[int, str], tuple[EntityInfo, ...]] = {}
        self.references: dict[tuple[int, str, str], list[tuple[int, str]]] = defaultdict(list)
        self.reference_rows: list[_Text] = []
        rows_by_set: dict[tuple[int, str, str], list[Any]] = defaultdict(list)
        roots: dict[int, str | None] = {}
        value_types: dict[int, str | None] = {}
        with store.unit_of_work() as db:
            for chunk in _chunks(list(unit_ids)):
                for uid, root in db.execute(
                    select(DataUnit.id, DataUnit.root_qid).where(DataUnit.id.in_(chunk))
                ):
                    roots[uid] = root
                columns = [getattr(UnitTriple, name) for name in _TripleRow._fields]
                for values in db.execute(
                    select(*columns)
                    .where(UnitTriple.unit_id.in_(chunk))
                    .order_by(
                        UnitTriple.unit_id,
                        UnitTriple.lang,
                        UnitTriple.tripleset,
                        UnitTriple.position,
                    )
                ):
                    row = _TripleRow(*values)
                    rows_by_set[(row.unit_id, row.lang, row.tripleset)].append(row)
                for ref_id, ref_unit, ref_lang, ref_quality, ref_text in db.execute(
                    select(
                        UnitReference.id,
                        UnitReference.unit_id,
                        UnitReference.lang,
                        UnitReference.quality,
                        UnitReference.text,
                    )
                    .where(UnitReference.unit_id.in_(chunk))
                    .order_by(UnitReference.id)
                ):
                    self.references[(ref_unit, ref_lang, ref_quality)].append((ref_id, ref_text))
                    self.reference_rows.append(
                        _Text(
                            ref_text, ref_lang, ref_unit, reference_id=ref_id, quality=ref_quality
                        )
                    )
            claim_ids = sorted(
                {
                    r.claim_id
                    for rows in rows_by_set.values()
                    for r in rows
                    if r.claim_id is not None
                }
            )
            for chunk in _chunks(claim_ids):
                for cid, vtype in db.execute(
                    select(Claim.id, Claim.value_type).where(Claim.id.in_(chunk))
                ):
                    value_types[cid] = vtype
            qids = sorted(
                {
                    q
                    for rows in rows_by_set.values()
                    for r in rows
                    for q in (r.subject_qid, r.object_value)
                    if q and _QID.match(q)
                }
            )
            terms: dict[tuple[str, str], list[str]] = defaultdict(list)
            for chunk in _chunks(qids):
                for item_id, lang, _kind, text in db.execute(
                    select(Term.item_id, Term.lang, Term.kind, Term.text)
                    .where(Term.item_id.in_(chunk), Term.kind.in_(("label", "alias")))
                    .order_by(Term.item_id, Term.lang, Term.kind, Term.ordinal)
                ):
                    terms[(item_id, lang)].append(text)
        # Per (unit, lang): the main tripleset, else whichever set the language has.
        chosen: dict[tuple[int, str], list[Any]] = {}
        for (unit_id, lang, tripleset), rows in rows_by_set.items():
            if tripleset == "main" or (unit_id, lang) not in chosen:
                chosen[(unit_id, lang)] = rows
        for (unit_id, lang), rows in chosen.items():
            triples = [r.shown() for r in rows]
            self.triples[(unit_id, lang)] = triples
            root = roots.get(unit_id)
            # Without a root entity: the subject of the most triples (the first on a tie).
            subjects = [t[0] for t in triples]
            first_subject = max(subjects, key=subjects.count) if subjects else None
            entities: list[EntityInfo] = []
            for row, (subject, _predicate, obj) in zip(rows, triples, strict=True):
                is_root = (
                    (row.subject_qid == root)
                    if row.subject_qid and root
                    else (subject == first_subject)
                )
                entities.append(
                    EntityInfo(
                        subject,
                        _aliases(terms, row.subject_qid, lang, subject),
                        row.subject_qid,
                        is_root=is_root,
                    )
                )
                object_qid = (
                    row.object_value if row.object_value and _QID.match(row.object_value) else None
                )
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
            self.entities[(unit_id, lang)] = tuple(entities)


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


def unit_material(store: Any, unit_id: int, lang: str) -> UnitMaterial:
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


def _aliases(
    terms: dict[tuple[str, str], list[str]], qid: str | None, lang: str, shown: str
) -> tuple[str, ...]:
    if not qid:
        return ()
    return tuple(dict.fromkeys(t for t in terms.get((qid, lang), ()) if t != shown))


def _load_verbalisations(
    store: Any,
    runs: dict[int, _Run],
    request: ScoringRequest,
    summary: ScoringSummary,
    metrics: Sequence[str] = (),
) -> tuple[list[_Text], list[_Text]]:
    """(parsed texts, raw replies): what the metrics score, and what ``ppl`` scores.

    A raw reply is everything the model generated (for imports, the line as given),
    whitespace trimmed; a reply from which no answer was parsed is still generated text,
    so it has a perplexity, and only perplexity scores it."""
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
    texts: list[_Text] = []
    replies: list[_Text] = []
    # (run, lang) -> kind ("empty" / "unparsed") -> count, for the summary's notes
    blank: dict[tuple[int, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    with store.unit_of_work() as db:
        for vid, run_id, unit_id, lang, text, raw, prompt, logprobs in db.execute(query):
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
            if parsed:
                texts.append(
                    _Text(text, lang, unit_id, verbalisation_id=vid, run_id=run_id, prompt=prompt)
                )
                continue
            kind = "unparsed" if reply else "empty"
            blank[(run_id, lang)][kind] += 1
            excluded = request.exclude_empty or (kind == "unparsed" and request.exclude_unparsed)
            if not excluded:
                texts.append(
                    _Text(
                        "",
                        lang,
                        unit_id,
                        verbalisation_id=vid,
                        run_id=run_id,
                        prompt=prompt,
                        parse_ok=False,
                        output=kind,
                    )
                )
    for (run_id, lang), counts in sorted(blank.items()):
        for kind, n in sorted(counts.items()):
            what = "empty outputs" if kind == "empty" else "replies from which no answer was parsed"
            excluded = request.exclude_empty or (kind == "unparsed" and request.exclude_unparsed)
            how = (
                "were LEFT OUT of every score (excluded on request)"
                if excluded
                else "were scored as empty texts (as the WebNLG scripts do; exclude them "
                "explicitly to leave them out)"
            )
            but = (
                " (perplexity scored their raw replies)"
                if kind == "unparsed" and PPL in metrics
                else ""
            )
            summary.note(f"run {run_id}, {lang}: {n:,} {what} {how}{but}")
    return texts, replies


# --- the job -------------------------------------------------------------------------------


def validate_request(store: Any, request: ScoringRequest) -> dict[int, _Run]:
    """Refuse bad input before any work: unknown metrics, runs, languages."""
    expand_metric_names(request.metrics)
    _check_langs(request.langs)
    return load_runs(store, request.run_ids)


def unfinished_runs(
    runs: dict[int, _Run], request: ScoringRequest
) -> tuple[dict[int, _Run], list[str]]:
    """The runs to score and a note for each run still being written: without
    ``request.partial`` such a run is left out (scores describe finished runs); with it,
    it is kept and its corpus rows are marked partial."""
    notes = []
    kept = {}
    for run_id, run in runs.items():
        if run.writing is None:
            kept[run_id] = run
        elif request.partial:
            kept[run_id] = run
            notes.append(
                f"run {run_id} ({run.name}) is {run.writing}: scored partly, "
                "its corpus figures are marked partial; score again when it has "
                "finished"
            )
        else:
            notes.append(
                f"run {run_id} ({run.name}) is {run.writing}: not scored; score "
                "again when it has finished (or --partial to score what it has)"
            )
    return kept, notes


class _LazyItems(Sequence[ScoringItem]):
    """A group's ``ScoringItem``s, built when read (a chunk at a time while scoring, one
    at a time for a corpus score), so a large session never holds them all: the texts
    and, per text, its references (and prompt) are all a group keeps."""

    def __init__(
        self,
        make: Callable[..., ScoringItem],
        texts: Sequence[_Text],
        references: Sequence[Sequence[str]] | None = None,
        prompts: Sequence[str | None] | None = None,
    ) -> None:
        self._make = make
        self._texts = texts
        self._references = references
        self._prompts = prompts

    def __len__(self) -> int:
        return len(self._texts)

    def _one(self, index: int) -> ScoringItem:
        return self._make(
            self._texts[index],
            self._references[index] if self._references is not None else (),
            self._prompts[index] if self._prompts is not None else None,
        )

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._one(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._one(index)

    def __iter__(self) -> Iterator[ScoringItem]:
        return (self._one(i) for i in range(len(self)))


@dataclass
class _Group:
    """Texts scored together: one corpus row (run × lang × quality)."""

    run_id: int | None
    lang: str
    quality: str | None
    texts: list[_Text]
    items: Sequence[ScoringItem]  # built when read (_LazyItems)
    model: str | None = None  # the causal model of a perplexity group
    prompts: list[str] | None = None  # per text, perplexity only: stored / rebuilt / none


# A group scored: its sentence values, its corpus value, and the metric that made them.
_Result = tuple[_Group, list[MetricValue], MetricValue | None, Metric]


class _Scorer:
    def __init__(
        self, store: Any, request: ScoringRequest, runs: dict[int, _Run], ctx: JobContext
    ) -> None:
        self.store = store
        if {ESA, HALLUCINATION} & set(expand_metric_names(request.metrics)) and not (
            request.options.esa_synonyms
        ):
            # The session's synonym table (the ESA paper's dictionary) joins ESA's names.
            from dataclasses import replace

            from core.synonyms import effective_rows

            rows = tuple(effective_rows(store))
            if rows:
                request = replace(request, options=replace(request.options, esa_synonyms=rows))
        self.request = request
        self.runs = runs
        self.ctx = ctx
        self.summary = ScoringSummary()
        self.metrics = expand_metric_names(request.metrics)
        self.texts, self.replies = _load_verbalisations(
            store, runs, request, self.summary, self.metrics
        )
        # Texts per run and language as loaded (see _run_texts).
        self._text_counts = _run_text_counts(store)
        unit_ids = sorted(
            {t.unit_id for t in (*self.texts, *self.replies)} | set(request.unit_ids or ())
        )
        if request.references and request.unit_ids is None:
            unit_ids = _all_unit_ids(store)
        self.material = _UnitMaterial(store, unit_ids)
        self.reference_texts = [
            t
            for t in self.material.reference_rows
            if request.references and (request.langs is None or t.lang in request.langs)
        ]
        self.summary.texts = len(self.texts) + len(self.reference_texts)
        if {ESA, HALLUCINATION} & set(self.metrics):
            count = len(request.options.esa_synonyms)
            self.summary.note(
                f"ESA looked for names, aliases and {count:,} synonym rows "
                "(taillens synonyms, Scores ▸ Synonyms…)"
            )
        self._metric_cache: dict[tuple[str, str | None], Metric] = {}
        # Group "models" that are a server run's stored log-probabilities -> served model.
        self._server_models: dict[str, str] = {}

    # items

    def _item(
        self, text: _Text, references: Sequence[str] = (), prompt: str | None = None
    ) -> ScoringItem:
        key = (text.unit_id, text.lang)
        return ScoringItem(
            text=text.text,
            lang=text.lang,
            references=tuple(references),
            triples=tuple(self.material.triples.get(key, ())),
            entities=self.material.entities.get(key, ()),
            prompt=prompt,
            key=text.verbalisation_id or text.reference_id,
            token_logprobs=text.token_logprobs,
        )

    def _prompt(self, text: _Text) -> tuple[str | None, str]:
        """The prompt a verbalisation was generated from, and where it came from:
        ``stored`` at generation; ``rebuilt`` from the run's template and today's triples
        for rows older than the stored prompts (an override edited since the run then
        gives a context the model never saw); ``none``."""
        if text.prompt is not None:
            return text.prompt, "stored"
        rebuilt = self._rebuilt_prompt(text)
        return rebuilt, ("none" if rebuilt is None else "rebuilt")

    def _rebuilt_prompt(self, text: _Text) -> str | None:
        if text.run_id is None:
            return None
        run = self.runs[text.run_id]
        template = run.templates.get(text.lang)
        if not template:
            return None
        try:
            from core.verbalise.prompts import render_prompt
        except ImportError:
            self.summary.note(
                "core.verbalise.prompts is missing: perplexity scored without prompts"
            )
            return None
        try:
            return render_prompt(
                template, self.material.triples.get((text.unit_id, text.lang), ()), text.lang
            )
        except ValueError as error:  # a stored template without its {triples} slot
            self.summary.note(f"run {run.id}: {error}; perplexity scored without the prompt")
            return None

    def _by_run_lang(self, texts: Sequence[_Text]) -> dict[tuple[int | None, str], list[_Text]]:
        groups: dict[tuple[int | None, str], list[_Text]] = defaultdict(list)
        for text in texts:
            groups[(text.run_id, text.lang)].append(text)
        return groups

    def groups_for(self, metric: str) -> list[_Group]:
        groups: list[_Group] = []
        # ppl scores what the model generated (the raw reply); the rest the parsed text.
        by_run_lang = self._by_run_lang(self.replies if metric == PPL else self.texts)
        if metric in REFERENCE_BASED:
            for (run_id, lang), texts in by_run_lang.items():
                for quality in QUALITIES:
                    chosen = [
                        t for t in texts if self.material.references.get((t.unit_id, lang, quality))
                    ]
                    if len(chosen) < len(texts):
                        self.summary.note(
                            f"run {run_id}, {lang}: {len(texts) - len(chosen):,} of "
                            f"{len(texts):,} texts have no {quality} reference; their "
                            f"{quality} reference-based scores are absent (not 0)"
                        )
                    if not chosen:
                        continue
                    items = _LazyItems(
                        self._item,
                        chosen,
                        [
                            [ref for _, ref in self.material.references[(t.unit_id, lang, quality)]]
                            for t in chosen
                        ],
                    )
                    groups.append(_Group(run_id, lang, quality, chosen, items))
            return groups
        if metric in MODEL_METRICS:
            for (run_id, lang), texts in by_run_lang.items():
                run = self.runs[run_id] if run_id is not None else None
                model = self.request.options.ppl_model or (
                    run.parameters.get("model_path") or run.model_id
                    if run is not None and run.kind in ("causal",)
                    else None
                )
                if (
                    model is None
                    and metric == PPL
                    and run is not None
                    and any(t.token_logprobs for t in texts)
                ):
                    # A server run that returned log-probabilities: scored from them.
                    model = f"{SERVER_LOGPROBS} of run {run.id}"
                    self._server_models[model] = run.name
                if model is None:
                    served = (
                        " and its server returned no token log-probabilities"
                        if metric == PPL and run is not None and run.kind == "openai"
                        else ""
                    )
                    self.summary.note(
                        f"{metric}: run {run_id} ({run.kind if run else '?'}) has no causal "
                        f"model of its own{served}; choose one with --ppl-model"
                    )
                    continue
                if metric != PPL:  # entity_ppl scores labels alone: no prompt
                    groups.append(
                        _Group(
                            run_id,
                            lang,
                            None,
                            texts,
                            _LazyItems(self._item, texts),
                            model=str(model),
                        )
                    )
                    continue
                prompts = [self._prompt(t) for t in texts]
                rebuilt = sum(source == "rebuilt" for _, source in prompts)
                if rebuilt:
                    self.summary.note(
                        f"ppl: run {run_id}, {lang}: {rebuilt:,} verbalisations have no stored "
                        "prompt (made before TailLens stored prompts); their prompt was "
                        "rebuilt from the run's template and the unit's current triples"
                    )
                items = _LazyItems(self._item, texts, prompts=[prompt for prompt, _ in prompts])
                groups.append(
                    _Group(
                        run_id,
                        lang,
                        None,
                        texts,
                        items,
                        model=str(model),
                        prompts=[source for _, source in prompts],
                    )
                )
        else:
            for (run_id, lang), texts in by_run_lang.items():
                groups.append(_Group(run_id, lang, None, texts, _LazyItems(self._item, texts)))
        if self.reference_texts and (metric not in MODEL_METRICS or self.request.options.ppl_model):
            by_lang_quality: dict[tuple[str, str | None], list[_Text]] = defaultdict(list)
            for text in self.reference_texts:
                by_lang_quality[(text.lang, text.quality)].append(text)
            for (ref_lang, ref_quality), texts in sorted(
                by_lang_quality.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")
            ):
                groups.append(
                    _Group(
                        None,
                        ref_lang,
                        ref_quality,
                        texts,
                        _LazyItems(self._item, texts),
                        model=self.request.options.ppl_model,
                    )
                )
        return groups

    def metric(self, name: str, model: str | None) -> Metric:
        key = (name, model if name in MODEL_METRICS else None)
        if key not in self._metric_cache and model in self._server_models:
            from core.metrics.perplexity import ServerLogprobPerplexity

            self._metric_cache[key] = ServerLogprobPerplexity(self._server_models[model])
        if key not in self._metric_cache:
            metric = create_metric(name, self.request.options, model=model)
            share = getattr(metric, "share_model", None)
            if share is not None:
                # ppl and entity_ppl of one model: one loaded copy between them.
                for (other_name, other_model), other in self._metric_cache.items():
                    if other_model == model and other_name in MODEL_METRICS:
                        share(other)
                        break
            self._metric_cache[key] = metric
        return self._metric_cache[key]

    def _close_model(self, model: str | None) -> None:
        """Free a perplexity model (every metric sharing it); None: every one."""
        for (name, key_model), metric in self._metric_cache.items():
            if name in MODEL_METRICS and (model is None or key_model == model):
                close = getattr(metric, "close", None)
                if close is not None:
                    close()

    # scoring

    def run(self) -> ScoringSummary:
        plans = [(name, self.groups_for(name)) for name in self.metrics]
        # Every metric is built before any text is scored, so a missing model (a run's
        # folder gone, a bad --ppl-model) fails before anything is written.
        # signature() resolves a named BERTScore model or encoder (not loading it).
        absent: set[str] = set()
        for name, groups in plans:
            for group in groups:
                metric = self.metric(name, group.model)
                metric.signature()
                # A metric that cannot run here (METEOR without WordNet) says why, and
                # writes nothing: scores it made elsewhere stay as they are.
                if getattr(metric, "absent_reason", ""):
                    self.summary.note(metric.absent_reason)  # type: ignore[attr-defined]
                    absent.add(name)
        plans = [(name, groups) for name, groups in plans if name not in absent]
        self._total = sum(len(g.items) for _, groups in plans for g in groups)
        self._done = 0
        self.ctx.progress(0, self._total, "preparing")
        model_plans = [(name, groups) for name, groups in plans if name in MODEL_METRICS]
        try:
            for name, groups in plans:
                if name not in MODEL_METRICS:
                    results = [self._score_group(name, group) for group in groups]
                    self.ctx.check_cancelled()
                    self._write(name, results)
                elif name == model_plans[0][0]:
                    # All perplexity metrics at the first one's turn, model by model.
                    for model_name, model_results in self._score_by_model(model_plans):
                        self.ctx.check_cancelled()
                        self._write(model_name, model_results)
        finally:
            self._close_model(None)
        return self.summary

    def _score_group(self, name: str, group: _Group) -> _Result:
        self.ctx.check_cancelled()
        metric = self.metric(name, group.model)
        where = f"run {group.run_id}" if group.run_id is not None else "references"
        values: list[MetricValue] = []
        for chunk in _chunks(group.items, CHUNK):
            self.ctx.check_cancelled()
            values.extend(metric.sentence_scores(chunk))
            self._done += len(chunk)
            self.ctx.progress(
                self._done,
                self._total,
                f"{name} · {where} · {group.lang}{f' · {group.quality}' if group.quality else ''}",
            )
        corpus = _corpus_of(name, metric, group.items, values)
        return group, values, corpus, metric

    def _score_by_model(
        self, plans: list[tuple[str, list[_Group]]]
    ) -> list[tuple[str, list[_Result]]]:
        """Every perplexity group, one causal model at a time: the model is loaded once
        for all its groups of all the perplexity metrics, then freed before the next
        one loads (a 7B model and the next one need not fit together). Results come back
        per metric, in group order, to be written one metric per transaction."""
        models = list(dict.fromkeys(g.model for _, groups in plans for g in groups))
        scored: dict[tuple[str, int], _Result] = {}
        for model in models:
            try:
                for name, groups in plans:
                    for index, group in enumerate(groups):
                        if group.model == model:
                            scored[(name, index)] = self._score_group(name, group)
            finally:
                self._close_model(model)
        return [(name, [scored[(name, i)] for i in range(len(groups))]) for name, groups in plans]

    def _run_texts(self, run_id: int, lang: str | None) -> int:
        return self._text_counts.get((run_id, lang or ""), 0)

    def _write(self, name: str, results: list[_Result]) -> None:
        from sqlalchemy import and_, delete, func, insert

        from core.store.models import Score

        # The texts whose old rows go: every text asked for (a text that lost its last
        # reference loses its stale score), except for perplexity, where a run skipped for
        # want of a model keeps what an earlier --ppl-model gave it.
        covered = (
            [t for group, *_ in results for t in group.texts]
            if name in MODEL_METRICS
            else self.texts
        )
        verbalisation_ids = sorted(
            {t.verbalisation_id for t in covered if t.verbalisation_id is not None}
        )
        reference_ids = sorted(
            {
                t.reference_id
                for group, *_ in results
                for t in group.texts
                if t.reference_id is not None
            }
        )
        quality = func.json_extract(Score.details, "$.quality")
        texts_kind = func.json_extract(Score.details, "$.texts")
        written = 0
        with self.store.unit_of_work() as db:
            for chunk in _chunks(verbalisation_ids):
                db.execute(
                    delete(Score).where(
                        Score.metric == name,
                        Score.level == "sentence",
                        Score.verbalisation_id.in_(chunk),
                    )
                )
            for chunk in _chunks(reference_ids):
                db.execute(
                    delete(Score).where(
                        Score.metric == name,
                        Score.level == "sentence",
                        Score.reference_id.in_(chunk),
                    )
                )
            # Corpus rows of every group this request covered, whatever their quality: a
            # quality that has no references any more must not keep a stale corpus score.
            run_langs = {(t.run_id, t.lang) for t in covered if t.run_id is not None}
            for run_id, lang in run_langs:
                db.execute(
                    delete(Score).where(
                        Score.metric == name,
                        Score.level == "corpus",
                        Score.run_id == run_id,
                        Score.lang == lang,
                    )
                )
            for group, *_ in results:
                if group.run_id is None:
                    db.execute(
                        delete(Score).where(
                            and_(
                                Score.metric == name,
                                Score.level == "corpus",
                                Score.run_id.is_(None),
                                Score.lang == group.lang,
                                quality == group.quality,
                                texts_kind == "references",
                            )
                        )
                    )
            # Rows are built and inserted ROW_BATCH at a time, in the same transaction:
            # the metric is still wholly old or wholly new after a kill or a failure.
            batch: list[dict[str, Any]] = []
            for row in self._rows(name, results):
                batch.append(row)
                if len(batch) >= ROW_BATCH:
                    db.execute(insert(Score), batch)
                    written += len(batch)
                    batch = []
            if batch:
                db.execute(insert(Score), batch)
                written += len(batch)
        self.summary.rows_written[name] = written

    def _rows(self, name: str, results: list[_Result]) -> Iterator[dict[str, Any]]:
        """The ``scores`` rows of one metric's results, in order: each group's sentence
        rows, then its corpus row (which also goes to the summary)."""
        subset = self.request.unit_ids is not None
        for group, values, corpus, metric in results:
            signature = metric.signature()
            quality_key = group.quality if name in REFERENCE_BASED else None
            for index, (text, value) in enumerate(zip(group.texts, values, strict=True)):
                if value.value is None and name in REFERENCE_BASED:
                    continue  # absent, never 0
                details = dict(value.details)
                if group.prompts is not None:  # ppl of a verbalisation: the raw reply
                    details["prompt"] = group.prompts[index]
                    details["scored"] = "raw reply"
                    details["parse_ok"] = text.parse_ok
                if quality_key:
                    details["quality"] = quality_key
                if text.reference_id is not None:
                    details["quality"] = text.quality
                    details["texts"] = "references"
                if text.output != "text" and group.prompts is None:
                    details["output"] = text.output
                if group.model and name in MODEL_METRICS:
                    details.setdefault("model", group.model)
                yield {
                    "metric": name,
                    "value": value.value,
                    "details": details,
                    "signature": value.signature or signature,
                    "level": "sentence",
                    "verbalisation_id": text.verbalisation_id,
                    "reference_id": text.reference_id,
                    "run_id": text.run_id,
                    "lang": text.lang,
                }
            if corpus is None:
                continue
            if name == METEOR and corpus.value is None and corpus.details.get("note"):
                where = f"run {group.run_id}" if group.run_id is not None else "references"
                self.summary.note(
                    f"meteor absent for {where}, {group.lang}: {corpus.details['note']}"
                )
            details = dict(corpus.details)
            details.setdefault("n", len(group.texts))
            for kind in ("empty", "unparsed"):
                count = sum(1 for t in group.texts if t.output == kind)
                if count:
                    details[f"{kind}_outputs"] = count
            if group.quality:
                details["quality"] = group.quality
            if group.run_id is None:
                details["texts"] = "references"
            if subset:
                details["subset"] = "units"
            partial_run = self.runs.get(group.run_id) if group.run_id is not None else None
            if partial_run is not None and partial_run.writing is not None:
                details["partial"] = True  # the run was still being written
            if group.run_id is not None:
                # How many texts the run had in this language when scored: a reader tells
                # from it that the run has grown since (corpus_scores marks it stale).
                details["run_texts"] = self._run_texts(group.run_id, group.lang)
            if group.model and name in MODEL_METRICS:
                details.setdefault("model", group.model)
            yield {
                "metric": name,
                "value": corpus.value,
                "details": details,
                "signature": corpus.signature or signature,
                "level": "corpus",
                "verbalisation_id": None,
                "reference_id": None,
                "run_id": group.run_id,
                "lang": group.lang,
            }
            run = self.runs.get(group.run_id) if group.run_id is not None else None
            self.summary.corpus.append(
                CorpusScore(
                    name,
                    group.run_id,
                    run.name if run else "references",
                    group.lang,
                    details.get("quality"),
                    corpus.value,
                    int(details.get("n") or 0),
                    corpus.signature or signature,
                    details,
                )
            )


def _logprob_values(stored: Any) -> tuple[float, ...] | None:
    """The log-probabilities of a ``verbalisations.token_logprobs`` value, None if absent
    or not a list of numbers."""
    values = stored.get("logprobs") if isinstance(stored, dict) else None
    if not isinstance(values, list) or not values:
        return None
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return None
    return tuple(float(v) for v in values)


def _pooled_perplexity(pairs: Iterable[tuple[float, int]]) -> MetricValue | None:
    """exp of the mean NLL over all tokens, from (mean NLL, tokens) per scored text."""
    pairs = [(nll, tokens) for nll, tokens in pairs if tokens]
    if not pairs:
        return None
    tokens = sum(t for _, t in pairs)
    return MetricValue(
        math.exp(sum(nll * t for nll, t in pairs) / tokens),
        {"n": len(pairs), "tokens": tokens, "aggregate": "pooled tokens"},
    )


def _corpus_of(
    name: str, metric: Metric, items: Sequence[ScoringItem], values: Sequence[MetricValue]
) -> MetricValue | None:
    """The corpus value, from the sentence values where that is the same number, so a
    model is not run twice over the same texts."""
    from_sentences = getattr(metric, "corpus_from_sentences", None)
    if from_sentences is not None:
        return from_sentences(items, values)
    if name == PPL and all("mean_nll" in v.details or v.value is None for v in values):
        return _pooled_perplexity(
            (v.details["mean_nll"], int(v.details.get("tokens") or 0))
            for v in values
            if v.value is not None
        )
    if name == ENTITY_PPL and all("entities" in v.details for v in values):
        # Each distinct label once, as EntityPerplexity.corpus_score pools them.
        labels: dict[str, tuple[float, int]] = {}
        for value in values:
            for entity in value.details["entities"]:
                if entity.get("ppl") and entity.get("tokens"):
                    labels[entity["label"]] = (math.log(entity["ppl"]), int(entity["tokens"]))
        return _pooled_perplexity(labels.values())
    return metric.corpus_score(items)


def _all_unit_ids(store: Any) -> list[int]:
    from sqlalchemy import select

    from core.store.models import DataUnit

    with store.unit_of_work() as db:
        return list(db.scalars(select(DataUnit.id).order_by(DataUnit.id)))


def score_job(store: Any, request: ScoringRequest) -> Job[ScoringSummary]:
    """A job scoring the session's texts; bad input is refused here, before the job runs."""
    runs = validate_request(store, request)
    if not runs and not request.references:
        raise UserFacingError(
            "the session has no model runs to score (verbalise units or import outputs first)"
        )
    runs, notes = unfinished_runs(runs, request)
    if not runs and not request.references:
        raise UserFacingError("nothing to score: " + "; ".join(notes))
    metrics = expand_metric_names(request.metrics)

    def run(ctx: JobContext) -> ScoringSummary:
        summary = _Scorer(store, request, runs, ctx).run()
        for note in notes:
            summary.note(note)
        return summary

    return Job(
        title="Scoring",
        run=run,
        kind="metrics.score",
        params={
            "metrics": list(metrics),
            "runs": sorted(runs),
            "langs": list(request.langs) if request.langs else None,
            "units": len(request.unit_ids) if request.unit_ids else None,
            "references": request.references,
        },
        writes=frozenset({Topic.SCORES}),
    )


# --- reading scores back (Scores panel, report) ------------------------------------------


@dataclass(frozen=True)
class StoredScore:
    id: int
    metric: str
    level: str
    value: float | None
    quality: str | None
    signature: str | None
    details: dict[str, Any]
    run_id: int | None
    lang: str | None
    verbalisation_id: int | None
    reference_id: int | None


def _stored(row: Any) -> StoredScore:
    details = dict(row.details or {})
    return StoredScore(
        row.id,
        row.metric,
        row.level,
        row.value,
        details.get("quality"),
        row.signature,
        details,
        row.run_id,
        row.lang,
        row.verbalisation_id,
        row.reference_id,
    )


def scores_of_verbalisation(store: Any, verbalisation_id: int) -> list[StoredScore]:
    """Every sentence score of one text, with details (ESA mentions, missing entities,
    hallucination spans, BERTScore model and rescaling, inversion drop)."""
    from sqlalchemy import select

    from core.store.models import Score

    with store.snapshot() as db:
        return [
            _stored(r)
            for r in db.scalars(
                select(Score)
                .where(Score.verbalisation_id == verbalisation_id, Score.level == "sentence")
                .order_by(Score.metric, Score.id)
            )
        ]


@dataclass(frozen=True)
class SentenceScoreRow:
    """One verbalisation and its sentence scores: {column: value}, where a column is the
    metric name, or ``metric:quality`` for reference-based metrics (``bleu:gold``)."""

    verbalisation_id: int
    run_id: int
    model: str
    unit_id: int
    unit_uid: str
    tier: str | None
    sub_tier: str | None
    lang: str
    candidate_index: int
    text: str | None
    scores: dict[str, float | None]


def score_column(metric: str, quality: str | None) -> str:
    return f"{metric}:{quality}" if quality else metric


def sentence_score_table(
    store: Any,
    *,
    run_ids: Sequence[int] | None = None,
    langs: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
) -> list[SentenceScoreRow]:
    """Units × candidates × metrics: the Scores panel's table, one row per verbalisation."""
    from sqlalchemy import select

    from core.store.models import DataUnit, ModelRun, Score, Verbalisation

    query = (
        select(
            Verbalisation.id,
            Verbalisation.run_id,
            Verbalisation.unit_id,
            Verbalisation.lang,
            Verbalisation.candidate_index,
            Verbalisation.text,
            ModelRun.system_name,
            ModelRun.model_id,
            DataUnit.uid,
            DataUnit.tier,
            DataUnit.sub_tier,
        )
        .join(ModelRun, ModelRun.id == Verbalisation.run_id)
        .join(DataUnit, DataUnit.id == Verbalisation.unit_id)
        .order_by(
            Verbalisation.run_id,
            Verbalisation.unit_id,
            Verbalisation.lang,
            Verbalisation.candidate_index,
        )
    )
    score_query = select(Score.verbalisation_id, Score.metric, Score.value, Score.details).where(
        Score.level == "sentence", Score.verbalisation_id.is_not(None)
    )
    if run_ids is not None:
        query = query.where(Verbalisation.run_id.in_(list(run_ids)))
        score_query = score_query.where(Score.run_id.in_(list(run_ids)))
    if langs is not None:
        query = query.where(Verbalisation.lang.in_(list(langs)))
        score_query = score_query.where(Score.lang.in_(list(langs)))
    if metrics is not None:
        score_query = score_query.where(Score.metric.in_(list(metrics)))
    with store.snapshot() as db:
        by_text: dict[int, dict[str, float | None]] = defaultdict(dict)
        for vid, metric, value, details in db.execute(score_query):
            by_text[vid][score_column(metric, (details or {}).get("quality"))] = value
        return [
            SentenceScoreRow(
                r.id,
                r.run_id,
                r.system_name or r.model_id,
                r.unit_id,
                r.uid,
                r.tier,
                r.sub_tier,
                r.lang,
                r.candidate_index,
                r.text,
                by_text.get(r.id, {}),
            )
            for r in db.execute(query)
        ]


def corpus_scores(
    store: Any, *, run_ids: Sequence[int] | None = None, metrics: Sequence[str] | None = None
) -> list[CorpusScore]:
    """The stored corpus rows (run × lang × quality), references' rows included."""
    from sqlalchemy import select

    from core.store.models import ModelRun, Score

    query = (
        select(Score, ModelRun.system_name, ModelRun.model_id)
        .outerjoin(ModelRun, ModelRun.id == Score.run_id)
        .where(Score.level == "corpus")
        .order_by(Score.run_id, Score.lang, Score.metric, Score.id)
    )
    if run_ids is not None:
        query = query.where(Score.run_id.in_(list(run_ids)))
    if metrics is not None:
        query = query.where(Score.metric.in_(list(metrics)))
    counts = _run_text_counts(store)
    with store.snapshot() as db:
        out = []
        for score, system_name, model_id in db.execute(query):
            details = dict(score.details or {})
            scored_texts = details.get("run_texts")
            if (
                score.run_id is not None
                and scored_texts is not None
                and counts.get((score.run_id, score.lang), 0) != scored_texts
            ):
                details["stale"] = True  # the run changed since: score it again
            out.append(
                CorpusScore(
                    score.metric,
                    score.run_id,
                    system_name or model_id or "references",
                    score.lang,
                    details.get("quality"),
                    score.value,
                    int(details.get("n") or 0),
                    score.signature,
                    details,
                )
            )
        return out


def _run_text_counts(store: Any) -> dict[tuple[int, str], int]:
    """Verbalisations per (run, language), every candidate counted."""
    from sqlalchemy import func, select

    from core.store.models import Verbalisation

    with store.snapshot() as db:
        return {
            (run_id, lang): int(count)
            for run_id, lang, count in db.execute(
                select(Verbalisation.run_id, Verbalisation.lang, func.count()).group_by(
                    Verbalisation.run_id, Verbalisation.lang
                )
            )
        }


@dataclass(frozen=True)
class GroupScore:
    """Sentence scores of one group pooled: mean, median and count."""

    metric: str
    quality: str | None
    group: tuple[str | None, ...]  # values of the ``by`` keys, in order
    n: int
    mean: float | None
    median: float | None


GROUP_KEYS = ("model", "lang", "tier", "sub_tier", "run_id")


def summary_by_group(
    store: Any,
    *,
    by: Sequence[str] = ("model", "lang", "tier"),
    run_ids: Sequence[int] | None = None,
    metrics: Sequence[str] | None = None,
) -> list[GroupScore]:
    """Sentence scores summarised by model × language × tier (or any of GROUP_KEYS).

    These are means of per-text scores (for BLEU and chrF++ not the corpus statistic;
    :func:`corpus_scores` has those). TailNLG's ``top_head`` counts as ``head``.
    """
    unknown = [k for k in by if k not in GROUP_KEYS]
    if unknown:
        raise UserFacingError(f"cannot group by {unknown}; choose from {GROUP_KEYS}")
    return summarise_rows(sentence_score_table(store, run_ids=run_ids, metrics=metrics), by=by)


def summarise_rows(
    rows: Iterable[SentenceScoreRow], *, by: Sequence[str] = ("model", "lang", "tier")
) -> list[GroupScore]:
    """:func:`summary_by_group` of rows already read (the Scores panel reads the table
    once per refresh and derives its summary from the same rows)."""
    import statistics

    unknown = [k for k in by if k not in GROUP_KEYS]
    if unknown:
        raise UserFacingError(f"cannot group by {unknown}; choose from {GROUP_KEYS}")
    pools: dict[tuple[str, str | None, tuple[Any, ...]], list[float]] = defaultdict(list)
    for row in rows:
        keys = {
            "model": row.model,
            "lang": row.lang,
            "tier": head_tier(row.tier),
            "sub_tier": row.sub_tier,
            "run_id": str(row.run_id),
        }
        group = tuple(keys[k] for k in by)
        for column, value in row.scores.items():
            metric, _, quality = column.partition(":")
            if value is not None:
                pools[(metric, quality or None, group)].append(value)
    return [
        GroupScore(
            metric,
            quality,
            group,
            len(values),
            statistics.fmean(values) if values else None,
            statistics.median(values) if values else None,
        )
        for (metric, quality, group), values in sorted(
            pools.items(),
            key=lambda kv: (kv[0][0], kv[0][1] or "", tuple(str(g) for g in kv[0][2])),
        )
    ]
