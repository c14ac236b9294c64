"""Writing gold references and reviewing translations (METHODS §11 steps 1 and 5).

* **Write**: :func:`units_to_write` orders units for an annotator's language, those with
  no reference in it first; :func:`write_reference` stores a text as ``gold`` with the
  annotator (``created_by``) and a provenance line.
* **Review**: :func:`sample_for_review` draws N translations per source→target pair
  (default :data:`DEFAULT_SAMPLE`, the paper's 50) from those scored below Good by QE;
  where no translation has a band (no QE model), from all translations, and it says so.
  A review is an annotation of the translated reference (``annotations.reference_id``):
  the F.2 flags in ``error_taxonomy`` (``{"accuracy": [...], "fluency": [...]}``: a flag
  listed is 1, one not listed 0; both families present with empty lists is a review
  that found no error) and an optional ``corrected_text``, promoted to a gold reference
  (:func:`core.annotation.ratings.promote_correction`).
* **Report**: :func:`review_report`, the figures of TailNLG's Table 1 per pair: Accuracy
  and Fluency on 0–5 as mean ± standard deviation, each = 5 minus the flags raised in
  that dimension (the paper does not give its formula; this one fits its figures, METHODS
  §11), with the share of reviews with at least one flag; and agreement per pair
  (Table 6): Spearman and Pearson between the first two annotators over the items both
  reviewed, and Krippendorff's alpha (interval) over all annotators
  (:mod:`core.annotation.agreement`).
"""

from __future__ import annotations

import math
import random
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from core import heavy
from core.annotation.types import ERROR_TAXONOMY, REFERENCE, ItemRef
from core.errors import UserFacingError
from core.references.qe import BELOW_GOOD

if TYPE_CHECKING:
    from core.store import SessionStore

DEFAULT_SAMPLE = 50  # per language pair (TailNLG §3.4)
SCALE_MAX = 5


class ReviewError(UserFacingError):
    """A write or review request that cannot be honoured."""


# --- writing gold references --------------------------------------------------------------


@dataclass(frozen=True)
class UnitToWrite:
    unit_id: int
    uid: str
    triples: tuple[tuple[str, str, str], ...]  # the unit's triples in the language (else en)
    references: int  # references it already has in the language


def units_to_write(store: SessionStore, lang: str, limit: int | None = None) -> list[UnitToWrite]:
    """Units in the order an annotator writing in ``lang`` meets them: those with no
    reference in ``lang`` first, then by fewest references, then by unit id."""
    from sqlalchemy import func, select

    from core.store.models import DataUnit, UnitReference, UnitTriple

    with store.snapshot() as db:
        counts = dict(
            db.execute(
                select(UnitReference.unit_id, func.count())
                .where(UnitReference.lang == lang)
                .group_by(UnitReference.unit_id)
            ).all()
        )
        units = db.execute(select(DataUnit.id, DataUnit.uid).order_by(DataUnit.id)).all()
        ordered = sorted(units, key=lambda u: (counts.get(u.id, 0) > 0, counts.get(u.id, 0), u.id))
        if limit is not None:
            ordered = ordered[:limit]
        ids = [u.id for u in ordered]
        triples: dict[tuple[int, str], list[tuple[str, str, str]]] = defaultdict(list)
        for row in db.execute(
            select(
                UnitTriple.unit_id,
                UnitTriple.lang,
                UnitTriple.subject,
                UnitTriple.predicate,
                UnitTriple.object,
            )
            .where(UnitTriple.unit_id.in_(ids), UnitTriple.tripleset == "main")
            .order_by(UnitTriple.unit_id, UnitTriple.position)
        ):
            triples[(row.unit_id, row.lang)].append((row.subject, row.predicate, row.object))
    return [
        UnitToWrite(
            u.id,
            u.uid,
            tuple(triples.get((u.id, lang)) or triples.get((u.id, "en")) or ()),
            counts.get(u.id, 0),
        )
        for u in ordered
    ]


def write_reference(
    store: SessionStore,
    annotator_id: int,
    unit_id: int,
    lang: str,
    text: str,
    *,
    source: str = "gui",
) -> int:
    """Store ``text`` as a gold reference of ``unit_id`` in ``lang`` by the annotator (a
    recorded edit from ``source``: `core.edits.references.GoldReferenceEdit`)."""
    from sqlalchemy import select

    from core.edits import apply_edit
    from core.edits.references import GoldReferenceEdit
    from core.store.models import Annotator, DataUnit, UnitReference

    clean = text.strip()
    if not clean:
        raise ReviewError("An empty text is not a reference: write the verbalisation first.")
    with store.snapshot() as db:
        annotator = db.get(Annotator, annotator_id)
        if annotator is None:
            raise ReviewError(f"There is no annotator {annotator_id} in this session.")
        if db.get(DataUnit, unit_id) is None:
            raise ReviewError(f"There is no unit {unit_id} in this session.")
        name = annotator.name
    # To the microsecond: the provenance line also names the reference for its undo.
    when = datetime.now(UTC).isoformat(timespec="microseconds")
    provenance = f"written by {name} at {when}"
    edit = GoldReferenceEdit(
        unit_id, lang, provenance, clean, created_by=annotator_id, annotator=name
    )
    apply_edit(store, edit, source=source, who=name)
    with store.snapshot() as db:
        reference_id = db.scalar(
            select(UnitReference.id).where(
                UnitReference.unit_id == unit_id, UnitReference.provenance == provenance
            )
        )
    if reference_id is None:  # another program removed it between the two transactions
        raise ReviewError("The reference was removed by another change as it was saved.")
    return int(reference_id)


# --- sampling and reviewing ----------------------------------------------------------------


@dataclass(frozen=True)
class ReviewItem:
    reference_id: int  # the translated (silver) reference
    derivation_id: int
    unit_id: int
    pair: str  # "en→it"
    source: str
    translation: str  # the reference's text now (the post-edit where kept)
    mt_text: str
    band: str | None
    score: float | None
    spans: tuple[dict[str, Any], ...]


@dataclass
class ReviewSample:
    items: list[ReviewItem]
    per_pair: dict[str, int]
    eligible: dict[str, int]
    note: str | None = None  # e.g. no QE band: sampled from all translations


def _translations(store: SessionStore) -> list[ReviewItem]:
    from sqlalchemy import select

    from core.store.models import ReferenceDerivation as D
    from core.store.models import UnitReference as R

    with store.snapshot() as db:
        source = R.__table__.alias("source")
        rows = db.execute(
            select(
                D.id,
                D.reference_id,
                R.unit_id,
                D.source_lang,
                D.lang,
                source.c.text,
                R.text,
                D.mt_text,
                D.qe_band,
                D.qe_score,
                D.qe_spans,
            )
            .join(R, R.id == D.reference_id)
            .join(source, source.c.id == D.source_reference_id)
            .order_by(D.id)
        ).all()
    return [
        ReviewItem(
            int(r[1]),
            int(r[0]),
            int(r[2]),
            f"{r[3]}→{r[4]}",
            r[5],
            r[6],
            r[7],
            r[8],
            r[9],
            tuple((r[10] or {}).get("spans", [])),
        )
        for r in rows
    ]


def sample_for_review(
    store: SessionStore,
    n: int = DEFAULT_SAMPLE,
    *,
    seed: int = 0,
    pairs: Sequence[str] | None = None,
) -> ReviewSample:
    """Up to ``n`` translations per pair, below Good, drawn with ``seed`` (the same
    session and seed give the same sample, so two annotators review the same items)."""
    if n < 1:
        raise ReviewError(f"the sample needs at least one translation per pair, not {n}")
    items = _translations(store)
    if pairs:
        items = [i for i in items if i.pair in set(pairs)]
    banded = any(i.band is not None for i in items)
    pool = [i for i in items if i.band in BELOW_GOOD] if banded else items
    note = (
        None
        if banded or not items
        else (
            "no translation has a quality band (no QE model was run): sampled from all translations"
        )
    )
    by_pair: dict[str, list[ReviewItem]] = defaultdict(list)
    for item in pool:
        by_pair[item.pair].append(item)
    rng = random.Random(seed)
    chosen: list[ReviewItem] = []
    per_pair: dict[str, int] = {}
    for pair in sorted(by_pair):
        group = by_pair[pair]
        picked = sorted(rng.sample(group, min(n, len(group))), key=lambda i: i.derivation_id)
        chosen += picked
        per_pair[pair] = len(picked)
    return ReviewSample(chosen, per_pair, {p: len(g) for p, g in sorted(by_pair.items())}, note)


def save_review(
    store: SessionStore,
    annotator_id: int,
    reference_id: int,
    flags: Mapping[str, Sequence[str]],
    corrected: str | None = None,
    *,
    promote: bool = True,
    source: str = "gui",
) -> tuple[int, int | None]:
    """Save an F.2 review of a translated reference (recorded edits from ``source``);
    returns (annotation id, gold reference id made from the correction or None)."""
    from core.annotation.ratings import promote_correction, save_rating
    from core.annotation.types import Rating

    unknown = sorted(set(flags) - set(ERROR_TAXONOMY))
    if unknown:
        raise ReviewError(f"Unknown error family {', '.join(unknown)}: choose accuracy or fluency.")
    taxonomy = {family: list(flags.get(family, ())) for family in ERROR_TAXONOMY}
    saved = save_rating(
        store,
        annotator_id,
        ItemRef(REFERENCE, reference_id),
        Rating(error_taxonomy=taxonomy, corrected_text=corrected, complete_taxonomy=True),
        source=source,
    )
    gold = None
    if promote and corrected and corrected.strip():
        gold = promote_correction(store, saved.annotation_id, source=source)
    return saved.annotation_id, gold


# --- the report ---------------------------------------------------------------------------


@dataclass
class PairFigures:
    pair: str
    reviews: int = 0
    items: int = 0
    accuracy_mean: float | None = None
    accuracy_sd: float | None = None
    fluency_mean: float | None = None
    fluency_sd: float | None = None
    flagged_share: float | None = None
    flags: dict[str, int] = field(default_factory=dict)
    corrected: int = 0
    spearman: float | None = None
    pearson: float | None = None
    alpha: float | None = None
    paired_items: int = 0


@dataclass
class ReviewReport:
    pairs: list[PairFigures]
    formula: str = (
        "Accuracy and Fluency = 5 minus the flags raised in that dimension (METHODS §11; "
        "the paper does not state its formula). Agreement: Spearman and Pearson of the "
        "summed score (Accuracy + Fluency) between the first two annotators, over the "
        "items both reviewed; Krippendorff's alpha (interval) over all annotators."
    )


def _mean_sd(values: list[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def _correlations(x: list[float], y: list[float]) -> tuple[float | None, float | None]:
    if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return None, None
    with heavy.lock():
        from scipy import stats

        rho = float(stats.spearmanr(x, y).statistic)
        r = float(stats.pearsonr(x, y).statistic)
    return (None if math.isnan(rho) else rho), (None if math.isnan(r) else r)


def review_report(store: SessionStore) -> ReviewReport:
    """Table 1 and Table 6 figures of the reviews in the session, per pair."""
    from sqlalchemy import select

    from core.annotation.agreement import krippendorff_alpha, reliability_matrix
    from core.store.models import Annotation

    pairs_of = {i.reference_id: i.pair for i in _translations(store)}
    with store.snapshot() as db:
        rows = db.execute(
            select(
                Annotation.annotator_id,
                Annotation.reference_id,
                Annotation.error_taxonomy,
                Annotation.corrected_text,
            )
            .where(
                Annotation.reference_id.in_(list(pairs_of)),
                Annotation.is_golden.is_(False),
                Annotation.error_taxonomy.is_not(None),
            )
            .order_by(Annotation.id)
        ).all()
    grouped: dict[str, list[Any]] = defaultdict(list)
    for row in rows:
        grouped[pairs_of[row.reference_id]].append(row)
    out = []
    for pair in sorted(grouped):
        reviews = grouped[pair]
        figures = PairFigures(
            pair, reviews=len(reviews), items=len({r.reference_id for r in reviews})
        )
        accuracy, fluency, flagged = [], [], 0
        totals: dict[tuple[int, int], float] = {}
        for r in reviews:
            taxonomy = r.error_taxonomy or {}
            a = len(taxonomy.get("accuracy", []))
            f = len(taxonomy.get("fluency", []))
            accuracy.append(float(SCALE_MAX - a))
            fluency.append(float(SCALE_MAX - f))
            flagged += (a + f) > 0
            for family in ERROR_TAXONOMY:
                for name in taxonomy.get(family, []):
                    figures.flags[f"{family}.{name}"] = figures.flags.get(f"{family}.{name}", 0) + 1
            figures.corrected += bool(r.corrected_text)
            totals[(r.annotator_id, r.reference_id)] = float(2 * SCALE_MAX - a - f)
        figures.accuracy_mean, figures.accuracy_sd = _mean_sd(accuracy)
        figures.fluency_mean, figures.fluency_sd = _mean_sd(fluency)
        figures.flagged_share = flagged / len(reviews)
        annotators = sorted({a for a, _ in totals})
        if len(annotators) >= 2:
            first, second = annotators[:2]
            shared = sorted(i for (a, i) in totals if a == first and (second, i) in totals)
            figures.paired_items = len(shared)
            figures.spearman, figures.pearson = _correlations(
                [totals[(first, i)] for i in shared], [totals[(second, i)] for i in shared]
            )
            figures.alpha = krippendorff_alpha(
                reliability_matrix((a, i, v) for (a, i), v in totals.items()), "interval"
            )
        out.append(figures)
    return ReviewReport(out)
