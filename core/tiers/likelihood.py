"""The long tail as the model sees it (LINK, Li et al., "In Search of the Long-Tail").

METHODS §3: besides Wikidata's counts, an entity's popularity can be read from the
likelihood a causal language model gives it: the **mean log-likelihood per token** of
the entity's label, and of a short templated statement about it ("X is a city in Y."),
in one language. Scores are stored per (entity, model, language) in
``entity_likelihoods``; a likelihood cut-off drawn per category defines the
``model_tail`` sub-tier (``category_members.model_tier``), and entities on which the two
signals disagree (head by counts, tail by likelihood, and the reverse) are listed.

* :func:`sequence_loglik` is the scoring core (also for the knowledge beam search):
  each text is scored alone after the tokenizer's BOS token (without BOS, its first
  token is context), right-padded in batches, the mask keeping padding out; the value
  is ``mean over the text's tokens of log p(token | everything before it)`` in nats,
  from the model's logits at temperature 1.
* :func:`likelihood_job` scores a category's members (or a selection), batched, with
  progress and cancel; entities already scored under the same model (same fingerprint)
  and language are skipped, so a cancelled job resumes where it stopped.
* :func:`save_model_tail` stores the cut-off and every member's ``model_tier``; it is
  the one function the Browser and ``taillens likelihood --cutoff`` call.

torch and transformers are imported when a model is loaded, never at import.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.changes import Topic
from core.errors import UserFacingError
from core.jobs import Job, JobContext
from core.vocab import LANGUAGES

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from core.store import SessionStore

SIGNALS = ("label", "statement")
DEFAULT_BATCH = 16
DEFAULT_SIGNAL = "label"
MODEL_TAIL = "model_tail"
MODEL_HEAD = "model_head"
# Disagreement kinds: Wikidata's tier against the model's.
HEAD_BY_COUNTS = "head_by_counts_tail_by_model"
TAIL_BY_COUNTS = "tail_by_counts_head_by_model"

# Properties that place an entity, in order of preference (first with a label wins).
PLACE_PROPERTIES = ("P17", "P131", "P27", "P495", "P276")
# Statement templates per language: with a place, and without. {x} the entity's label,
# {cls} the category's class label in that language, {place} the place's label. The
# article is fixed ("un"), so within a category (one class) every entity gets the same
# frame and only the names differ.
TEMPLATES: dict[str, tuple[str, str]] = {
    "en": ("{x} is a {cls} in {place}.", "{x} is a {cls}."),
    "it": ("{x} è un {cls} in {place}.", "{x} è un {cls}."),
    "es": ("{x} es un {cls} en {place}.", "{x} es un {cls}."),
}
META_PREFIX = "likelihood:"


class LikelihoodError(UserFacingError):
    """Bad input to the likelihood job or the cut-off: the message says what and why."""


# --- scoring core ----------------------------------------------------------------------


@dataclass(frozen=True)
class TextLoglik:
    """Summed log-likelihood of a text's scored tokens, and how many were scored."""

    loglik: float
    tokens: int

    @property
    def mean(self) -> float | None:
        return self.loglik / self.tokens if self.tokens else None


def text_logliks(
    model: Any, tokenizer: Any, texts: Sequence[str], batch: int = DEFAULT_BATCH
) -> list[TextLoglik]:
    """Summed log-likelihood and token count of each text, scored alone (see module)."""
    sequences: list[tuple[list[int], int]] = []
    limit = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    bos = tokenizer.bos_token_id
    for text in texts:
        target = list(tokenizer(text, add_special_tokens=False)["input_ids"]) if text else []
        if bos is not None:
            ids, n_context = [int(bos), *target], 1
        else:
            ids, n_context = target, 1  # the first token is context
        if limit and len(ids) > limit:
            ids = ids[:limit]
        sequences.append((ids, n_context))
    from core.metrics.perplexity import score_sequences

    return [
        TextLoglik(-score.nll, score.tokens)
        for score in score_sequences(model, tokenizer, sequences, batch)
    ]


def sequence_loglik(
    model: Any, tokenizer: Any, texts: Sequence[str], batch: int = DEFAULT_BATCH
) -> list[float | None]:
    """Mean log-likelihood per token (nats) of each text alone; None for a text with no
    token to score. The LINK signal; the knowledge beam search ranks by it."""
    return [score.mean for score in text_logliks(model, tokenizer, texts, batch)]


# --- what is scored --------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One entity to score: its label and statement in the chosen language."""

    entity_id: int
    qid: str
    label: str
    statement: str | None


@dataclass(frozen=True)
class Targets:
    category: str
    lang: str
    members: int
    targets: list[Target]
    without_label: list[str]  # qids with no label in the language (not scored)


def _labels(db: Session, qids: Sequence[str], lang: str) -> dict[str, str]:
    from sqlalchemy import select

    from core.store.batching import in_chunks
    from core.store.models import Term

    found: dict[str, str] = {}
    ids = list(dict.fromkeys(qids))
    for chunk in in_chunks(ids):
        rows = db.execute(
            select(Term.item_id, Term.text).where(
                Term.item_id.in_(chunk),
                Term.lang == lang,
                Term.kind == "label",
                Term.ordinal == 0,
            )
        ).all()
        found.update({qid: text for qid, text in rows if text and text.strip()})
    return found


def _places(db: Session, qids: Sequence[str]) -> dict[str, list[str]]:
    """Each subject's place values (item QIDs), preferred rank first, by property order."""
    from sqlalchemy import select

    from core.store.batching import in_chunks
    from core.store.models import Claim

    places: dict[str, list[tuple[int, int, str]]] = {}
    ids = list(dict.fromkeys(qids))
    rank_order = {"preferred": 0, "normal": 1}
    for chunk in in_chunks(ids):
        rows = db.execute(
            select(Claim.subject_qid, Claim.property_pid, Claim.value, Claim.rank, Claim.id)
            .where(
                Claim.subject_qid.in_(chunk),
                Claim.property_pid.in_(PLACE_PROPERTIES),
                Claim.value_type == "wikibase-item",
                Claim.value.is_not(None),
                Claim.rank != "deprecated",
            )
            .order_by(Claim.id)
        ).all()
        for subject, pid, value, rank, _id in rows:
            if value is None:  # excluded by the query; narrows the type
                continue
            places.setdefault(subject, []).append(
                (PLACE_PROPERTIES.index(pid), rank_order.get(rank, 1), value)
            )
    return {
        s: [v for _p, _r, v in sorted(found, key=lambda t: (t[0], t[1]))]
        for s, found in places.items()
    }


def statement_for(label: str, cls: str | None, place: str | None, lang: str) -> str | None:
    """The templated statement about an entity (None without a class label)."""
    if not cls:
        return None
    with_place, without = TEMPLATES[lang]
    if place:
        return with_place.format(x=label, cls=cls, place=place)
    return without.format(x=label, cls=cls)


def _check_lang(lang: str) -> str:
    if lang not in LANGUAGES:
        raise LikelihoodError(f"unknown language {lang!r}: choose one of {', '.join(LANGUAGES)}")
    return lang


def category_row(db: Session, category: str) -> Any:
    from sqlalchemy import select

    from core.store.models import Category

    row = db.execute(select(Category).where(Category.name == category)).scalar_one_or_none()
    if row is None:
        names = db.execute(select(Category.name).order_by(Category.name)).scalars().all()
        known = ", ".join(names) if names else "none"
        raise LikelihoodError(f"the session has no category {category!r} (it has: {known})")
    return row


def load_targets(
    store: SessionStore, category: str, lang: str, qids: Sequence[str] | None = None
) -> Targets:
    """A category's members (or the ``qids`` among them) with their label and statement in
    ``lang``, built from the session only. Raises :class:`LikelihoodError` for an unknown
    category, one with no members, or a language none of them has a label in."""
    from sqlalchemy import select

    from core.store.models import CategoryMember, Entity

    _check_lang(lang)
    with store.unit_of_work() as db:
        row = category_row(db, category)
        members = db.execute(
            select(Entity.id, Entity.qid)
            .join(CategoryMember, CategoryMember.entity_id == Entity.id)
            .where(CategoryMember.category_id == row.id)
            .order_by(Entity.qid)
        ).all()
        if not members:
            raise LikelihoodError(
                f"category {category!r} has no members in the session: "
                "fetch them first (taillens fetch)"
            )
        if qids is not None:
            wanted = set(qids)
            members = [m for m in members if m.qid in wanted]
            if not members:
                raise LikelihoodError(f"none of the selected entities is a member of {category!r}")
        all_qids = [m.qid for m in members]
        labels = _labels(db, all_qids, lang)
        if not labels:
            raise LikelihoodError(
                f"no member of {category!r} has a label in {lang!r}: open the entities (or "
                "fetch them) from a source that gives labels in that language"
            )
        cls = _labels(db, [row.class_qid], lang).get(row.class_qid)
        if cls is None and lang == "en":
            cls = row.name.lower()
        places = _places(db, [q for q in all_qids if q in labels])
        place_labels = _labels(db, [v for vs in places.values() for v in vs], lang)
        targets = []
        for entity_id, qid in members:
            label = labels.get(qid)
            if label is None:
                continue
            place = next((place_labels[v] for v in places.get(qid, []) if v in place_labels), None)
            targets.append(Target(entity_id, qid, label, statement_for(label, cls, place, lang)))
    return Targets(category, lang, len(members), targets, [q for q in all_qids if q not in labels])


# --- the job ---------------------------------------------------------------------------


@dataclass
class LikelihoodRequest:
    category: str
    model: str | Path
    lang: str = "en"
    qids: list[str] | None = None  # a selection; None: every member
    batch: int = DEFAULT_BATCH
    device: str = "auto"
    dtype: str = "auto"


@dataclass
class LikelihoodSummary:
    category: str
    model: str
    lang: str
    members: int
    scored: int = 0  # scored by this job
    skipped: int = 0  # already scored under the same model and language
    without_label: int = 0
    elapsed_s: float = 0.0
    load_s: float = 0.0  # of elapsed_s, loading the model

    @property
    def seconds_per_entity(self) -> float | None:
        """Scoring time per entity scored, model loading left out."""
        return (self.elapsed_s - self.load_s) / self.scored if self.scored else None


def model_key(model: str | Path) -> str:
    """How a model is named in ``entity_likelihoods``: its resolved folder."""
    from core.local_models.loader import resolve_model

    return str(resolve_model(model).resolve())


def _scored_fingerprints(store: SessionStore, model: str, lang: str) -> dict[int, str | None]:
    from sqlalchemy import select

    from core.store.models import EntityLikelihood as L

    with store.snapshot() as db:
        rows = db.execute(
            select(L.entity_id, L.model_fingerprint).where(L.model == model, L.lang == lang)
        ).all()
    return dict(rows)


def _write_rows(
    store: SessionStore,
    model: str,
    fingerprint: str,
    lang: str,
    rows: list[tuple[Target, TextLoglik, TextLoglik | None]],
) -> None:
    from sqlalchemy.dialects.sqlite import insert

    from core.store.models import EntityLikelihood as L

    values = [
        {
            "entity_id": t.entity_id,
            "model": model,
            "model_fingerprint": fingerprint,
            "lang": lang,
            "label": t.label,
            "label_loglik": label.mean,
            "label_tokens": label.tokens,
            "statement": t.statement,
            "statement_loglik": statement.mean if statement else None,
            "statement_tokens": statement.tokens if statement else None,
        }
        for t, label, statement in rows
    ]
    stmt = insert(L)
    with store.unit_of_work() as db:
        db.execute(
            stmt.on_conflict_do_update(
                index_elements=[L.entity_id, L.model, L.lang],
                set_={
                    k: stmt.excluded[k]
                    for k in values[0]
                    if k not in ("entity_id", "model", "lang")
                },
            ),
            values,
        )


def _score_batch(
    loaded: Any, chunk: Sequence[Target], size: int
) -> list[tuple[Target, TextLoglik, TextLoglik | None]]:
    """Each target with its label's score and its statement's (None without one)."""
    labels = text_logliks(loaded.model, loaded.tokenizer, [t.label for t in chunk], size)
    with_statement = [t for t in chunk if t.statement]
    statements = dict(
        zip(
            [t.entity_id for t in with_statement],
            text_logliks(
                loaded.model, loaded.tokenizer, [t.statement or "" for t in with_statement], size
            ),
            strict=True,
        )
    )
    return [(t, score, statements.get(t.entity_id)) for t, score in zip(chunk, labels, strict=True)]


def likelihood_job(
    store: SessionStore, request: LikelihoodRequest, loader: Callable[..., Any] | None = None
) -> Job[LikelihoodSummary]:
    """Score ``request.category``'s members under a local causal model.

    Everything that can be checked is checked before anything is stored: the model
    folder (a causal LM), the category (members), the language (labels). Each batch is
    written in its own transaction, so cancelling keeps every finished batch and a
    later run skips those entities."""
    from core.local_models.loader import (
        CAUSAL,
        ModelError,
        check_model_folder,
        load_model,
        model_fingerprint,
        resolve_model,
    )

    lang = _check_lang(request.lang)
    path = resolve_model(request.model)
    if check_model_folder(path) != CAUSAL:
        raise ModelError(f"{path} is not a causal LM: model likelihood needs one")
    key = model_key(path)
    fingerprint = model_fingerprint(path)
    targets = load_targets(store, request.category, lang, request.qids)
    load = loader or load_model
    summary = LikelihoodSummary(
        request.category, key, lang, targets.members, without_label=len(targets.without_label)
    )

    def run(ctx: JobContext) -> LikelihoodSummary:
        started = time.perf_counter()
        job.partial = summary
        loaded = None
        done_before = _scored_fingerprints(store, key, lang)
        total = len(targets.targets)
        pending = [t for t in targets.targets if done_before.get(t.entity_id) != fingerprint]
        summary.skipped = total - len(pending)
        ctx.progress(summary.skipped, total, f"{summary.skipped} already scored")
        size = max(1, int(request.batch))
        for start in range(0, len(pending), size):
            ctx.check_cancelled()
            if loaded is None:
                loading = time.perf_counter()
                loaded = load(
                    path, device=request.device, dtype=request.dtype, expected_type=CAUSAL
                )
                summary.load_s = time.perf_counter() - loading
            chunk = pending[start : start + size]
            _write_rows(store, key, str(fingerprint), lang, _score_batch(loaded, chunk, size))
            summary.scored += len(chunk)
            summary.elapsed_s = time.perf_counter() - started
            ctx.progress(
                summary.skipped + summary.scored,
                total,
                f"{summary.scored} scored, {summary.skipped} already were",
            )
        summary.elapsed_s = time.perf_counter() - started
        if loaded is not None:
            from core.local_models.loader import free_device_memory

            device, loaded = loaded.device, None
            free_device_memory(device)
        ctx.progress(total, total, "done")
        return summary

    job: Job[LikelihoodSummary] = Job(
        title=f"Likelihood of {request.category} ({lang})",
        run=run,
        kind="likelihood",
        writes=frozenset({Topic.LIKELIHOOD}),
        params={
            "category": request.category,
            "model": key,
            "lang": lang,
            "batch": request.batch,
            "selection": len(request.qids or []),
        },
    )
    return job
