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

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core import heavy
from core.changes import Topic
from core.errors import UserFacingError
from core.io.bounded import stored_json
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
_META_PREFIX = "likelihood:"


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


def _category_row(db: Session, category: str) -> Any:
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
        row = _category_row(db, category)
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


# --- reading back, the two signals side by side -----------------------------------------


@dataclass
class LikelihoodTable:
    """A category's members with both popularity signals, aligned by position. Members
    not scored under the model and language have NaN likelihoods."""

    category: str
    model: str
    lang: str
    qids: list[str]
    labels: list[str]
    statements: np.ndarray  # statement counts
    sitelinks: np.ndarray
    label_loglik: np.ndarray
    statement_loglik: np.ndarray
    tiers: list[str | None]  # Wikidata tier (head / torso / long_tail)

    def values(self, signal: str = DEFAULT_SIGNAL) -> np.ndarray:
        if signal not in SIGNALS:
            raise LikelihoodError(f"unknown signal {signal!r}: choose label or statement")
        return self.label_loglik if signal == "label" else self.statement_loglik

    @property
    def scored(self) -> int:
        return int(np.isfinite(self.label_loglik).sum())


def scored_models(store: SessionStore, category: str | None = None) -> list[tuple[str, str, int]]:
    """(model, lang, entities scored) present in the session (of a category's members)."""
    from sqlalchemy import func, select

    from core.store.models import Category, CategoryMember
    from core.store.models import EntityLikelihood as L

    query = select(L.model, L.lang, func.count()).group_by(L.model, L.lang)
    if category is not None:
        query = (
            query.join(CategoryMember, CategoryMember.entity_id == L.entity_id)
            .join(Category, Category.id == CategoryMember.category_id)
            .where(Category.name == category)
        )
    with store.snapshot() as db:
        return [(m, lang, int(n)) for m, lang, n in db.execute(query.order_by(L.model, L.lang))]


def _wikidata_tiers(
    store: SessionStore, category: str, counts: np.ndarray, stored: list[str | None]
) -> list[str | None]:
    """The tiers the Browser saved; where none was saved, the saved (or default)
    settings applied to the counts, as the Browser would show them."""
    if stored and all(t is not None for t in stored):
        return stored
    from core.tiers.cutoffs import TIER_BY_CODE, Distribution
    from core.tiers.stored import load_tier_settings

    if not len(counts):
        return []
    settings = load_tier_settings(store, category)
    distribution = Distribution(counts)
    cutoffs = distribution.cutoffs(settings.share, settings.fraction, settings.torso_line)
    head_line = cutoffs.pareto_value if settings.split_by == "pareto" else cutoffs.head_tail_value
    torso = (
        settings.torso_line
        if (settings.torso_line is not None and settings.torso_line < head_line)
        else None
    )
    return [TIER_BY_CODE[int(c)].value for c in distribution.tier(head_line, torso)]


def load_likelihood_table(
    store: SessionStore, category: str, model: str, lang: str
) -> LikelihoodTable:
    """Both signals for every member of ``category`` (``model`` as stored: see
    :func:`model_key`)."""
    from sqlalchemy import and_, func, select

    from core.store.models import CategoryMember, Entity, Term
    from core.store.models import EntityLikelihood as L

    with store.unit_of_work() as db:
        row = _category_row(db, category)
        rows = db.execute(
            select(
                Entity.qid,
                func.coalesce(L.label, Term.text, Entity.qid),
                func.coalesce(Entity.statement_count, 0),
                func.coalesce(Entity.sitelink_count, 0),
                L.label_loglik,
                L.statement_loglik,
                CategoryMember.tier,
            )
            .select_from(CategoryMember)
            .join(Entity, Entity.id == CategoryMember.entity_id)
            .outerjoin(L, and_(L.entity_id == Entity.id, L.model == model, L.lang == lang))
            .outerjoin(
                Term,
                and_(
                    Term.item_id == Entity.qid,
                    Term.lang == "en",
                    Term.kind == "label",
                    Term.ordinal == 0,
                ),
            )
            .where(CategoryMember.category_id == row.id)
            .order_by(Entity.qid)
        ).all()
    columns = list(zip(*rows, strict=True)) if rows else [()] * 7

    def floats(values: Sequence[Any]) -> np.ndarray:
        return np.asarray([np.nan if v is None else float(v) for v in values], dtype=float)

    counts = np.asarray(columns[2], dtype=np.int64)
    return LikelihoodTable(
        category,
        model,
        lang,
        list(columns[0]),
        [str(v) for v in columns[1]],
        counts,
        np.asarray(columns[3], dtype=np.int64),
        floats(columns[4]),
        floats(columns[5]),
        _wikidata_tiers(store, category, counts, list(columns[6])),
    )


@dataclass(frozen=True)
class RankCorrelation:
    """Spearman's rho between likelihood and a count, over entities scored (ties get
    average ranks); ``rho`` None when either side is constant or n < 3."""

    against: str
    n: int
    rho: float | None
    p_value: float | None


def rank_correlation(likelihood: np.ndarray, counts: np.ndarray, against: str) -> RankCorrelation:
    keep = np.isfinite(likelihood)
    x, y = likelihood[keep], np.asarray(counts, dtype=float)[keep]
    n = int(keep.sum())
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return RankCorrelation(against, n, None, None)
    with heavy.lock():
        from scipy.stats import spearmanr

        result = spearmanr(x, y)
    rho, p = float(result.statistic), float(result.pvalue)
    return RankCorrelation(
        against, n, None if math.isnan(rho) else rho, None if math.isnan(p) else p
    )


def correlations(table: LikelihoodTable, signal: str = DEFAULT_SIGNAL) -> list[RankCorrelation]:
    values = table.values(signal)
    return [
        rank_correlation(values, table.statements, "statements"),
        rank_correlation(values, table.sitelinks, "sitelinks"),
    ]


# --- the model_tail sub-tier -----------------------------------------------------------


@dataclass(frozen=True)
class CutoffSettings:
    """A category's likelihood cut-off: entities whose mean log-likelihood is below
    ``cutoff`` are ``model_tail``; at or above it (ties included), ``model_head``."""

    model: str
    lang: str
    signal: str = DEFAULT_SIGNAL
    cutoff: float = 0.0


def matched_cutoff(table: LikelihoodTable, signal: str = DEFAULT_SIGNAL) -> float | None:
    """The default cut-off: the one that makes the model's tail as large as Wikidata's
    long tail among the scored entities (so the two signals split alike and their
    disagreements compare like with like); the median when no entity is long-tail.
    With k long-tail entities, the cut-off is the (k+1)-th lowest likelihood, so the k
    lowest are below it (fewer when values tie at the cut-off: ties are head)."""
    values = table.values(signal)
    keep = np.isfinite(values)
    if not keep.any():
        return None
    ordered = np.sort(values[keep])
    tail = sum(1 for t, k in zip(table.tiers, keep, strict=True) if k and t == "long_tail")
    if tail == 0:
        return float(np.median(ordered))
    if tail >= len(ordered):
        return float(np.nextafter(ordered[-1], np.inf))
    return float(ordered[tail])


def model_tiers(values: np.ndarray, cutoff: float) -> list[str | None]:
    """model_tail below the cut-off, model_head at or above it, None where unscored."""
    return [
        None if not np.isfinite(v) else (MODEL_TAIL if v < cutoff else MODEL_HEAD) for v in values
    ]


def load_cutoff(store: SessionStore, category: str) -> CutoffSettings | None:
    raw = store.get_meta(_META_PREFIX + category)
    if not raw:
        return None
    try:
        return CutoffSettings(**stored_json(raw, None))
    except (TypeError, ValueError):
        return None


def save_model_tail(
    store: SessionStore, category: str, settings: CutoffSettings, *, source: str = "gui"
) -> dict[str, int]:
    """Store the cut-off and every member's ``model_tier`` as one recorded edit from
    ``source`` (`core.edits.likelihood.ModelTailEdit`; members not scored under the
    model get NULL); returns how many got each."""
    from core.edits import apply_edit
    from core.edits.likelihood import ModelTailEdit

    if settings.signal not in SIGNALS:
        raise LikelihoodError(f"unknown signal {settings.signal!r}: choose label or statement")
    if not math.isfinite(settings.cutoff):
        raise LikelihoodError(f"the cut-off must be a finite number, not {settings.cutoff}")
    table = load_likelihood_table(store, category, settings.model, settings.lang)
    if not table.qids:
        raise LikelihoodError(f"category {category!r} has no members in the session")
    if table.scored == 0:
        raise LikelihoodError(
            f"no member of {category!r} is scored under {settings.model} "
            f"in {settings.lang!r}: run taillens likelihood first"
        )
    tiers = model_tiers(table.values(settings.signal), settings.cutoff)
    with store.snapshot() as db:
        _category_row(db, category)  # a clear message when there is no such category
    edit = ModelTailEdit(category, asdict(settings), dict(zip(table.qids, tiers, strict=True)))
    apply_edit(store, edit, source=source)
    return {
        MODEL_TAIL: tiers.count(MODEL_TAIL),
        MODEL_HEAD: tiers.count(MODEL_HEAD),
        "unscored": tiers.count(None),
    }


@dataclass(frozen=True)
class Disagreement:
    qid: str
    label: str
    kind: str  # HEAD_BY_COUNTS or TAIL_BY_COUNTS
    tier: str
    statements: int
    sitelinks: int
    loglik: float


def disagreements(
    table: LikelihoodTable, cutoff: float, signal: str = DEFAULT_SIGNAL
) -> list[Disagreement]:
    """Entities head by Wikidata counts but model_tail, and long-tail by counts but
    model_head (torso entities are neither); most striking first: the head ones by
    likelihood ascending, then the tail ones by likelihood descending."""
    values = table.values(signal)
    found: list[Disagreement] = []
    for i, (tier, model_tier) in enumerate(
        zip(table.tiers, model_tiers(values, cutoff), strict=True)
    ):
        kind = (
            HEAD_BY_COUNTS
            if tier == "head" and model_tier == MODEL_TAIL
            else TAIL_BY_COUNTS
            if tier == "long_tail" and model_tier == MODEL_HEAD
            else None
        )
        if kind is not None:
            found.append(
                Disagreement(
                    table.qids[i],
                    table.labels[i],
                    kind,
                    str(tier),
                    int(table.statements[i]),
                    int(table.sitelinks[i]),
                    float(values[i]),
                )
            )
    return sorted(
        found,
        key=lambda d: (
            d.kind != HEAD_BY_COUNTS,
            d.loglik if d.kind == HEAD_BY_COUNTS else -d.loglik,
            d.qid,
        ),
    )


@dataclass
class LikelihoodView:
    """What the Browser's likelihood tab shows, read in one job."""

    table: LikelihoodTable
    models: list[tuple[str, str, int]] = field(default_factory=list)
    saved: CutoffSettings | None = None


def load_likelihood_view(
    store: SessionStore, category: str, wanted: tuple[str, str] | None = None
) -> LikelihoodView | None:
    """The tab's view of ``category``: the scores of the ``wanted`` (model, language),
    else of the pair the saved cut-off is for, else of the first scored; None when no
    member is scored."""
    models = scored_models(store, category)
    if not models:
        return None
    saved = load_cutoff(store, category)
    pairs = [(m, lang) for m, lang, _n in models]
    if wanted in pairs:
        model, lang = wanted
    elif saved is not None and (saved.model, saved.lang) in pairs:
        model, lang = saved.model, saved.lang
    else:
        model, lang = pairs[0]
    return LikelihoodView(load_likelihood_table(store, category, model, lang), models, saved)
