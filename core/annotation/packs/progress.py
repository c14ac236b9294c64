"""The team's progress: per annotator, the texts handed out in packs, those rated,
golden accuracy and the median time per rating; agreement over every rating."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import select

from core.annotation.golden import golden_accuracy
from core.annotation.packs.manifest import LETTER_KIND
from core.annotation.types import (
    ItemRef,
    item_ref,
    natural_key,
)
from core.store import SessionStore
from core.store.models import (
    Annotation,
    AnnotationPack,
    Annotator,
)

# Gaps between two ratings longer than this are breaks, not time spent on an item.
DEFAULT_BREAK_S = 900.0

# -- progress ----------------------------------------------------------------------------


@dataclass(frozen=True)
class AnnotatorProgress:
    """One annotator's work: items handed out in packs, rated, remaining, golden accuracy
    and the median time per rating (gaps over ``break_s`` are breaks and do not count)."""

    annotator: str
    packs: int
    assigned: int
    done: int
    ratings: int
    golden_items: int
    golden_adequacy: float | None
    golden_fluency: float | None
    seconds_per_item: float | None

    @property
    def remaining(self) -> int:
        return max(0, self.assigned - self.done)


@dataclass(frozen=True)
class TeamProgress:
    annotators: list[AnnotatorProgress] = field(default_factory=list)
    alpha_fluency: float | None = None
    alpha_adequacy: float | None = None
    rated_items: int = 0


def team_progress(
    store: SessionStore,
    *,
    break_s: float = DEFAULT_BREAK_S,
    agreement: Callable[[SessionStore], tuple[float | None, float | None, int]] | None = None,
) -> TeamProgress:
    with store.snapshot() as db:
        packs = list(db.execute(select(AnnotationPack.annotator, AnnotationPack.items)))
        ratings = list(
            db.execute(
                select(
                    Annotator.name,
                    Annotation.verbalisation_id,
                    Annotation.reference_id,
                    Annotation.created_at,
                )
                .join(Annotator, Annotator.id == Annotation.annotator_id)
                .where(Annotation.is_golden.is_(False))
            )
        )
    assigned: dict[str, set[ItemRef]] = defaultdict(set)
    pack_count: dict[str, int] = defaultdict(int)
    for who, held in packs:
        pack_count[who] += 1
        for kind, item_id, *_ in (held or {}).get("items", []):
            assigned[who].add(ItemRef(LETTER_KIND[kind], item_id))
    rated: dict[str, set[ItemRef]] = defaultdict(set)
    times: dict[str, list[datetime]] = defaultdict(list)
    for name, v, r, created in ratings:
        rated[name].add(item_ref(v, r))
        if created is not None:
            times[name].append(created if created.tzinfo else created.replace(tzinfo=UTC))
    golden = {g.annotator: g for g in golden_accuracy(store)}
    people = sorted(set(assigned) | set(rated), key=natural_key)
    rows = []
    for name in people:
        stamps = sorted(times[name])
        gaps = [
            (b - a).total_seconds()
            for a, b in zip(stamps, stamps[1:], strict=False)
            if 0 < (b - a).total_seconds() <= break_s
        ]
        g = golden.get(name)
        rows.append(
            AnnotatorProgress(
                name,
                pack_count[name],
                len(assigned[name]),
                len(assigned[name] & rated[name]),
                len(rated[name]),
                g.items if g else 0,
                g.adequacy_accuracy if g else None,
                g.fluency_accuracy if g else None,
                statistics.median(gaps) if gaps else None,
            )
        )
    alpha_f = alpha_a = None
    items = 0
    if agreement is not None:
        alpha_f, alpha_a, items = agreement(store)
    return TeamProgress(rows, alpha_f, alpha_a, items)


def overall_agreement(store: SessionStore) -> tuple[float | None, float | None, int]:
    """Krippendorff's alpha over every merged rating (METHODS §9), and the items rated."""
    from core.annotation.summary import aggregate_annotations

    summary = aggregate_annotations(store, agreement=True)
    return summary.overall.alpha_fluency, summary.overall.alpha_adequacy, summary.overall.items
