"""The two signals side by side (LINK; METHODS §3): a category's model likelihood read back
beside its statement counts, their rank correlations, the model_tail cut-off matched to the
Wikidata long tail and saved as a sub-tier, the entities where the two disagree, and what
the Likelihood tab shows. Scoring is :mod:`core.tiers.likelihood`'s."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from core import heavy
from core.io.bounded import stored_json

if TYPE_CHECKING:
    from core.store import SessionStore

from core.tiers.likelihood import (
    DEFAULT_SIGNAL,
    HEAD_BY_COUNTS,
    META_PREFIX,
    MODEL_HEAD,
    MODEL_TAIL,
    SIGNALS,
    TAIL_BY_COUNTS,
    LikelihoodError,
    category_row,
)

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
        row = category_row(db, category)
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
    raw = store.get_meta(META_PREFIX + category)
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
        category_row(db, category)  # a clear message when there is no such category
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
