"""Annotation summaries: per-item aggregates (:mod:`core.annotation.aggregation`) and
group figures with agreement (:mod:`core.annotation.agreement`), as the CLI, the Annotate
panel and the report read them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import select

from core.annotation.aggregation import item_aggregates, sampling_weight
from core.annotation.agreement import krippendorff_alpha, reliability_matrix
from core.annotation.queue import rateable_texts
from core.annotation.types import (
    GROUP_DIMENSIONS,
    REFERENCE,
    VERBALISATION,
    YES,
    AnnotationError,
    ItemRef,
    item_ref,
)
from core.groups import order_key
from core.store import SessionStore
from core.store.models import Annotation


@dataclass(frozen=True)
class ItemAggregate:
    """One rated item's aggregates, with the groups it belongs to."""

    item: ItemRef
    unit_id: int
    lang: str
    model: str
    category: str
    tier: str
    subtier: str
    ratings: int
    fluency_mean: float | None
    fluency_median: float | None
    adequacy_majority: int | None
    adequacy_yes: float | None  # WDV's adequacy percentage: share of Yes (0 if majority Not sure)
    weight: float | None = None  # the unit's WDV sampling_weight, when it has one

    def group(self, dimension: str) -> str:
        return str(getattr(self, dimension))


@dataclass(frozen=True)
class GroupAggregate:
    """A group's figures: per-item aggregates averaged (each item once), as WDV reports
    them; ``pooled_*`` pool every rating and are labelled so; alpha over the group's
    ratings (interval for fluency, nominal for adequacy)."""

    group: tuple[tuple[str, str], ...]  # e.g. (("tier", "head"),); () for all items
    items: int
    ratings: int
    annotators: int
    fluency_mean: float | None
    fluency_median: float | None
    adequacy_yes: float | None
    majority_yes: float | None  # share of items whose majority vote is Yes
    pooled_fluency_mean: float | None
    pooled_adequacy_yes: float | None
    alpha_fluency: float | None = None
    alpha_adequacy: float | None = None
    weighted: bool = False  # per-item figures weighted by sampling weight (WDV per theme)

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.group) or "all"


SUMMARY_COLUMNS = (
    "group",
    "items",
    "ratings",
    "annotators",
    "fluency_mean",
    "fluency_median",
    "adequacy_yes",
    "majority_yes",
    "pooled_fluency_mean",
    "pooled_adequacy_yes",
    "alpha_fluency",
    "alpha_adequacy",
)


@dataclass
class AnnotationSummary:
    by: tuple[str, ...]
    overall: GroupAggregate
    groups: list[GroupAggregate]
    items: list[ItemAggregate] = field(default_factory=list)
    agreement: bool = True
    weighted: bool = False

    @property
    def columns(self) -> tuple[str, ...]:
        return SUMMARY_COLUMNS if self.agreement else SUMMARY_COLUMNS[:-2]

    def rows(self) -> list[list[Any]]:
        """The overall row then one per group, values in :attr:`columns` order."""
        out = []
        for g in [self.overall, *self.groups]:
            row = [g.label] + [getattr(g, c) for c in self.columns[1:]]
            out.append(row)
        return out


@dataclass(frozen=True)
class _Rated:
    annotator_id: int
    item: ItemRef
    fluency: int | None
    adequacy: int | None


def _load_ratings(store: SessionStore) -> tuple[list[_Rated], dict[ItemRef, dict[str, Any]]]:
    with store.snapshot() as db:
        rated = [
            _Rated(
                r.annotator_id,
                item_ref(r.verbalisation_id, r.reference_id),
                r.fluency,
                r.adequacy,
            )
            for r in db.execute(
                select(
                    Annotation.annotator_id,
                    Annotation.verbalisation_id,
                    Annotation.reference_id,
                    Annotation.fluency,
                    Annotation.adequacy,
                ).where(Annotation.is_golden.is_(False))
            )
        ]
        info: dict[ItemRef, dict[str, Any]] = {}
        wanted = {r.item for r in rated}
        for target, kind in (("verbalisations", VERBALISATION), ("references", REFERENCE)):
            if any(ref.kind == kind for ref in wanted):
                for c in rateable_texts(db, target, parsed_only=False):
                    if c["ref"] in wanted:
                        info[c["ref"]] = c
    return rated, info


def _group_aggregate(
    group: tuple[tuple[str, str], ...],
    items: list[ItemAggregate],
    ratings: list[_Rated],
    agreement: bool,
    weighted: bool = False,
) -> GroupAggregate:
    def mean(values: Iterable[float | None]) -> float | None:
        # Per-item figures averaged, each item once; weighted: by its sampling weight
        # (an item without one counts with weight 1).
        pairs = [
            (v, (i.weight or 1.0) if weighted else 1.0)
            for v, i in zip(values, items, strict=True)
            if v is not None
        ]
        if not pairs:
            return None
        return float(np.average([v for v, _ in pairs], weights=[w for _, w in pairs]))

    fluency = [r.fluency for r in ratings if r.fluency is not None]
    adequacy = [r.adequacy for r in ratings if r.adequacy is not None]
    majorities = [i.adequacy_majority for i in items if i.adequacy_majority is not None]
    alpha_f = alpha_a = None
    if agreement:
        alpha_f = krippendorff_alpha(
            reliability_matrix((r.annotator_id, r.item, r.fluency) for r in ratings), "interval"
        )
        alpha_a = krippendorff_alpha(
            reliability_matrix((r.annotator_id, r.item, r.adequacy) for r in ratings), "nominal"
        )
    return GroupAggregate(
        group=group,
        items=len(items),
        ratings=len(ratings),
        annotators=len({r.annotator_id for r in ratings}),
        fluency_mean=mean(i.fluency_mean for i in items),
        fluency_median=mean(i.fluency_median for i in items),
        adequacy_yes=mean(i.adequacy_yes for i in items),
        majority_yes=mean(
            None if i.adequacy_majority is None else float(i.adequacy_majority == YES)
            for i in items
        )
        if majorities
        else None,
        pooled_fluency_mean=float(np.mean(fluency)) if fluency else None,
        pooled_adequacy_yes=(adequacy.count(YES) / len(adequacy)) if adequacy else None,
        alpha_fluency=alpha_f,
        alpha_adequacy=alpha_a,
        weighted=weighted,
    )


def aggregate_annotations(
    store: SessionStore,
    by: Sequence[str] = (),
    *,
    agreement: bool = True,
    models: Sequence[str] = (),
    langs: Sequence[str] = (),
    weighted: bool = False,
) -> AnnotationSummary:
    """Per-item aggregates, and group figures for each value (combination) of ``by``.

    ``by`` names dimensions of :data:`GROUP_DIMENSIONS`; golden answers are left out.
    Group figures average the per-item figures, each item once (METHODS §9); with
    ``weighted`` each item counts by its WDV ``sampling_weight`` instead (items without
    one count 1), as WDV's weighted per-theme figures. Pooled figures stay unweighted.
    """
    wrong = [d for d in by if d not in GROUP_DIMENSIONS]
    if wrong:
        raise AnnotationError(
            f"Cannot group ratings by {', '.join(wrong)}: choose from "
            f"{', '.join(GROUP_DIMENSIONS)}."
        )
    rated, info = _load_ratings(store)
    per_item: dict[ItemRef, list[_Rated]] = defaultdict(list)
    for r in rated:
        c = info.get(r.item)
        if c is None:
            continue
        if models and c["model"] not in models:
            continue
        if langs and c["lang"] not in langs:
            continue
        per_item[r.item].append(r)
    items = []
    for ref, rs in per_item.items():
        c = info[ref]
        agg = item_aggregates(
            [r.fluency for r in rs if r.fluency is not None],
            [r.adequacy for r in rs if r.adequacy is not None],
        )
        items.append(
            ItemAggregate(
                item=ref,
                unit_id=c["unit"].id,
                lang=c["lang"],
                model=c["model"] or f"{c['quality']} reference",
                category=c["category"],
                tier=c["tier"],
                subtier=c["sub_tier"],
                ratings=len(rs),
                fluency_mean=agg["fluency_mean"],
                fluency_median=agg["fluency_median"],
                adequacy_majority=agg["adequacy_majority_voted"],
                adequacy_yes=agg["adequacy_percentage"],
                weight=sampling_weight(c["unit"].attributes),
            )
        )
    items.sort(key=lambda i: (i.item.kind, i.item.id))
    all_ratings = [r for rs in per_item.values() for r in rs]
    overall = _group_aggregate((), items, all_ratings, agreement, weighted)
    groups: list[GroupAggregate] = []
    if by:
        buckets: dict[tuple[str, ...], list[ItemAggregate]] = defaultdict(list)
        for item in items:
            buckets[tuple(item.group(d) for d in by)].append(item)
        keys = sorted(
            buckets, key=lambda k: tuple(order_key(d, v) for d, v in zip(by, k, strict=True))
        )
        for key in keys:
            members = buckets[key]
            rs = [r for item in members for r in per_item[item.item]]
            groups.append(
                _group_aggregate(tuple(zip(by, key, strict=True)), members, rs, agreement, weighted)
            )
    return AnnotationSummary(tuple(by), overall, groups, items, agreement, weighted)


def per_item_values(store: SessionStore) -> dict[int, dict[str, float]]:
    """Verbalisation id -> {"fluency": mean, "adequacy": share of Yes}, for the report."""
    summary = aggregate_annotations(store, agreement=False)
    values: dict[int, dict[str, float]] = {}
    for item in summary.items:
        if item.item.kind != VERBALISATION:
            continue
        entry = {}
        if item.fluency_mean is not None:
            entry["fluency"] = item.fluency_mean
        if item.adequacy_yes is not None:
            entry["adequacy"] = item.adequacy_yes
        if entry:
            values[item.item.id] = entry
    return values
