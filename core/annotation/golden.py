"""Golden items: known answers set by an expert, and each annotator's accuracy on them.

Golden answers are answer keys, not ratings: they never count in aggregates or agreement.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from sqlalchemy import select

from core.annotation.ratings import (
    as_ref,
    check_item,
    item_filter,
    stored_rating,
    validate_rating,
)
from core.annotation.types import (
    AnnotationError,
    GoldenAccuracy,
    GoldenAnswer,
    ItemRef,
    QueueItem,
    Rating,
    StoredRating,
    natural_key,
)
from core.store import SessionStore
from core.store.models import Annotation, Annotator


def set_golden_answer(
    store: SessionStore,
    expert_id: int,
    item: ItemRef | QueueItem | int,
    *,
    fluency: int | None = None,
    adequacy: int | None = None,
    source: str = "gui",
) -> int:
    """Record the known answer of ``item`` (a golden annotation by ``expert_id``), as a
    recorded edit from ``source``.

    One answer per item: setting it again (by anyone) replaces the previous answer.
    """
    from core.edits import apply_edit
    from core.edits.ratings import GoldenEdit, unit_of_item

    ref = as_ref(item)
    if fluency is None and adequacy is None:
        raise AnnotationError("A golden item needs a known fluency, adequacy or both.")
    values = validate_rating(Rating(fluency=fluency, adequacy=adequacy))
    with store.snapshot() as db:
        if db.get(Annotator, expert_id) is None:
            raise AnnotationError(f"There is no annotator {expert_id} in this session.")
        check_item(db, ref)
        unit_id = unit_of_item(db, ref.kind, ref.id)
    answer = {"expert_id": expert_id, "fluency": values["fluency"], "adequacy": values["adequacy"]}
    apply_edit(store, GoldenEdit(ref.kind, ref.id, unit_id, answer), source=source)
    with store.snapshot() as db:
        row_id = db.scalar(
            select(Annotation.id).where(item_filter(ref), Annotation.is_golden.is_(True))
        )
    if row_id is None:  # another program removed it between the two transactions
        raise AnnotationError("The known answer was removed by another change as it was set.")
    return int(row_id)


def clear_golden_answer(
    store: SessionStore, item: ItemRef | QueueItem | int, *, source: str = "gui"
) -> bool:
    """Remove the known answer of ``item`` (a recorded edit); False when it had none."""
    from core.edits import apply_edit
    from core.edits.ratings import GoldenEdit, unit_of_item

    ref = as_ref(item)
    with store.snapshot() as db:
        unit_id = unit_of_item(db, ref.kind, ref.id)
    if unit_id is None:
        return False
    return apply_edit(store, GoldenEdit(ref.kind, ref.id, unit_id, None), source=source) is not None


def golden_answers(store: SessionStore) -> dict[ItemRef, GoldenAnswer]:
    answers: dict[ItemRef, GoldenAnswer] = {}
    with store.snapshot() as db:
        for row in db.scalars(
            select(Annotation).where(Annotation.is_golden.is_(True)).order_by(Annotation.id)
        ):
            ref = stored_rating(row).item
            answers[ref] = GoldenAnswer(ref, row.annotator_id, row.fluency, row.adequacy)
    return answers


def golden_accuracy(store: SessionStore, fluency_tolerance: int = 1) -> list[GoldenAccuracy]:
    """Each annotator's accuracy on golden items they rated (experts' own answers excluded)."""
    answers = golden_answers(store)
    if not answers:
        return []
    with store.snapshot() as db:
        names = dict(db.execute(select(Annotator.id, Annotator.name)).all())
        rows = [
            stored_rating(r)
            for r in db.scalars(select(Annotation).where(Annotation.is_golden.is_(False)))
        ]
    per: dict[int, list[tuple[StoredRating, GoldenAnswer]]] = defaultdict(list)
    for rating in rows:
        answer = answers.get(rating.item)
        # The expert who set an answer is not checked against it (an ordinary rating of
        # theirs on that item would always agree, or only show they changed their mind).
        if answer is not None and rating.annotator_id != answer.expert_id:
            per[rating.annotator_id].append((rating, answer))
    results = []
    for annotator_id, pairs in per.items():
        adequacy = [
            (r.adequacy, a.adequacy)
            for r, a in pairs
            if r.adequacy is not None and a.adequacy is not None
        ]
        fluency = [
            abs(r.fluency - a.fluency)
            for r, a in pairs
            if r.fluency is not None and a.fluency is not None
        ]
        results.append(
            GoldenAccuracy(
                annotator_id,
                names.get(annotator_id, str(annotator_id)),
                len(pairs),
                len(adequacy),
                sum(r == a for r, a in adequacy),
                len(fluency),
                sum(d <= fluency_tolerance for d in fluency),
                fluency_tolerance,
                float(np.mean(fluency)) if fluency else None,
            )
        )
    return sorted(results, key=lambda g: natural_key(g.annotator))
