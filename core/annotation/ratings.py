"""Ratings: validating, saving (one per annotator and item, the rule of
:mod:`core.edits.rating_rule`), undoing and reading them, and promoting a correction
to a gold reference of the item's unit."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.annotation.types import (
    ADEQUACY_LABELS,
    BLAME_PARTS,
    CHECKS,
    COMBINATION,
    ERROR_TAXONOMY,
    FLUENCY_MAX,
    FLUENCY_MIN,
    NO,
    NOT_SURE,
    VERBALISATION,
    AnnotationError,
    ItemRef,
    QueueItem,
    Rating,
    SavedRating,
    StoredRating,
    is_int,
    item_ref,
)
from core.edits.rating_rule import item_column, rating_query, the_rating
from core.store import SessionStore
from core.store.models import Annotation, Annotator, UnitReference, Verbalisation
from core.vocab import GOLD


def normalise_blame(blame: str | Sequence[str] | None) -> str | None:
    """The stored form of a blame: parts in :data:`BLAME_PARTS` order, ``"+"``-joined."""
    if blame is None:
        return None
    parts = blame.split("+") if isinstance(blame, str) else list(blame)
    parts = [str(p).strip().lower() for p in parts if str(p).strip()]
    if not parts:
        return None
    if parts == [COMBINATION]:
        return COMBINATION
    wrong = sorted(set(parts) - set(BLAME_PARTS))
    if wrong:
        raise AnnotationError(
            f"Unknown blame {', '.join(map(repr, wrong))}: choose from "
            f"{', '.join(BLAME_PARTS)}, or {COMBINATION!r} (several parts make a combination)."
        )
    return "+".join(p for p in BLAME_PARTS if p in parts)


def validate_rating(rating: Rating) -> dict[str, Any]:
    """The column values of a rating, or an :class:`AnnotationError` saying what is wrong."""
    fluency, adequacy = rating.fluency, rating.adequacy
    if fluency is not None and (
        not is_int(fluency) or not FLUENCY_MIN <= int(fluency) <= FLUENCY_MAX
    ):
        raise AnnotationError(
            f"Fluency must be a whole number from {FLUENCY_MIN} to {FLUENCY_MAX}, not {fluency!r}."
        )
    if adequacy is not None and (not is_int(adequacy) or int(adequacy) not in ADEQUACY_LABELS):
        raise AnnotationError(
            f"Adequacy must be 0 (Yes), 1 (No) or 2 (Not sure), not {adequacy!r}."
        )
    blame = normalise_blame(rating.blame)
    other = (rating.blame_other or "").strip() or None
    if blame is not None and adequacy not in (NO, NOT_SURE):
        raise AnnotationError("Blame is only recorded when adequacy is No or Not sure.")
    if blame is not None and "other" in blame.split("+") and other is None:
        raise AnnotationError("Blame 'other' needs a few words saying what is wrong.")
    if other is not None and (blame is None or "other" not in blame.split("+")):
        raise AnnotationError("Free text for the blame is only kept with blame 'other'.")
    checks = None
    if rating.checks:
        wrong = sorted(set(rating.checks) - set(CHECKS))
        if wrong:
            raise AnnotationError(
                f"Unknown check(s) {', '.join(map(repr, wrong))}: the "
                f"checks are {', '.join(CHECKS)}."
            )
        if not all(isinstance(v, bool) for v in rating.checks.values()):
            raise AnnotationError("Each check is true or false.")
        checks = {name: rating.checks[name] for name in CHECKS if name in rating.checks}
    taxonomy: dict[str, list[str]] | None = None
    if rating.error_taxonomy:
        taxonomy = {}
        for family, errors in rating.error_taxonomy.items():
            if family not in ERROR_TAXONOMY:
                raise AnnotationError(
                    f"Unknown error family {family!r}: choose accuracy or fluency."
                )
            listed = [errors] if isinstance(errors, str) else list(errors)
            wrong = sorted(set(listed) - set(ERROR_TAXONOMY[family]))
            if wrong:
                raise AnnotationError(
                    f"Unknown {family} error(s) {', '.join(map(repr, wrong))}: choose from "
                    f"{', '.join(ERROR_TAXONOMY[family])}."
                )
            if listed or rating.complete_taxonomy:
                taxonomy[family] = [e for e in ERROR_TAXONOMY[family] if e in listed]
        taxonomy = taxonomy or None
    corrected = rating.corrected_text.strip() if rating.corrected_text else None
    values = {
        "fluency": None if fluency is None else int(fluency),
        "adequacy": None if adequacy is None else int(adequacy),
        "blame": blame,
        "blame_other": other,
        "checks": checks,
        "error_taxonomy": taxonomy,
        "corrected_text": corrected or None,
    }
    if all(v is None for v in values.values()):
        raise AnnotationError(
            "Nothing to save: give a fluency, an adequacy, a check, an error or a corrected text."
        )
    return values


RATING_FIELDS = (
    "fluency",
    "adequacy",
    "blame",
    "blame_other",
    "checks",
    "error_taxonomy",
    "corrected_text",
)


def item_filter(item: ItemRef) -> Any:
    return item_column(item.kind) == item.id


def check_item(db: Session, item: ItemRef) -> None:
    model = Verbalisation if item.kind == VERBALISATION else UnitReference
    if db.get(model, item.id) is None:
        raise AnnotationError(
            f"There is no {item.kind} {item.id} in this session (it may have been deleted)."
        )


def as_ref(item: ItemRef | QueueItem | int) -> ItemRef:
    if isinstance(item, QueueItem):
        return item.ref
    if isinstance(item, ItemRef):
        return item
    if is_int(item):
        return ItemRef(VERBALISATION, int(item))
    raise AnnotationError(f"Not an item to rate: {item!r}")


def save_rating(
    store: SessionStore,
    annotator_id: int,
    item: ItemRef | QueueItem | int,
    rating: Rating,
    *,
    source: str = "gui",
) -> SavedRating:
    """Save (or replace) ``annotator_id``'s rating of ``item`` (one per annotator and
    item: :mod:`core.edits.rating_rule`): a recorded edit
    (`core.edits.ratings.RatingEdit`), committed with its history row in one
    transaction; ``source`` is "gui" or the command that saved it."""
    from core.edits import apply_edit
    from core.edits.ratings import RatingEdit, unit_of_item

    ref = as_ref(item)
    values = validate_rating(rating)
    with store.snapshot() as db:
        annotator = db.get(Annotator, annotator_id)
        if annotator is None:
            raise AnnotationError(f"There is no annotator {annotator_id} in this session.")
        check_item(db, ref)
        unit_id = unit_of_item(db, ref.kind, ref.id)
        name = annotator.name
    # Microsecond times (CURRENT_TIMESTAMP has seconds): "the last rating" is exact.
    edit = RatingEdit(annotator_id, name, ref.kind, ref.id, unit_id, values)
    entry = apply_edit(store, edit, source=source, who=name)
    with store.snapshot() as db:
        row_id = db.scalar(rating_query(annotator_id, ref.kind, ref.id, Annotation.id))
    if row_id is None:  # another program removed it between the two transactions
        raise AnnotationError("The rating was removed by another change as it was saved.")
    previous = entry.before if entry is not None else None
    return SavedRating(
        int(row_id), annotator_id, ref, values, previous, entry.id if entry else None
    )


def undo_rating(store: SessionStore, saved: SavedRating) -> bool:
    """Undo one save (its history row): delete a new rating, or put back what a
    replacing save overwrote. Returns False when the rating is no longer there (deleted
    meanwhile); a rating changed since by another save is refused
    (`core.edits.EditConflictError`)."""
    from core.edits import EditConflictError, undo_edit

    if saved.history_id is None:
        return False
    try:
        undo_edit(store, saved.history_id)
    except EditConflictError:
        with store.snapshot() as db:
            if db.get(Annotation, saved.annotation_id) is None:
                return False
        raise
    return True


def undo_last_rating(store: SessionStore, annotator_id: int) -> ItemRef | None:
    """Remove ``annotator_id``'s most recent rating (golden answers untouched), as a
    recorded edit.

    Without a :class:`SavedRating` there is no record of what a replacing save
    overwrote, so this removes the rating; returns the item it was of, or None.
    """
    from core.edits import apply_edit
    from core.edits.ratings import RatingEdit, unit_of_item

    with store.snapshot() as db:
        row = db.scalar(
            select(Annotation)
            .where(Annotation.annotator_id == annotator_id, Annotation.is_golden.is_(False))
            .order_by(Annotation.updated_at.desc(), Annotation.id.desc())
            .limit(1)
        )
        if row is None:
            return None
        ref = item_ref(row.verbalisation_id, row.reference_id)
        annotator = db.get(Annotator, annotator_id)
        name = annotator.name if annotator is not None else str(annotator_id)
        unit_id = unit_of_item(db, ref.kind, ref.id)
    apply_edit(store, RatingEdit(annotator_id, name, ref.kind, ref.id, unit_id, None), who=name)
    return ref


def rating_of(
    store: SessionStore, annotator_id: int, item: ItemRef | QueueItem | int
) -> StoredRating | None:
    """``annotator_id``'s rating of ``item`` (not a golden answer), or None."""
    ref = as_ref(item)
    with store.snapshot() as db:
        row = the_rating(db, annotator_id, ref.kind, ref.id)
        return None if row is None else stored_rating(row)


def ratings_of_item(
    store: SessionStore,
    item: ItemRef | QueueItem | int,
) -> list[tuple[str, StoredRating]]:
    """Every annotator's rating of ``item`` (golden answers included), with the
    annotator's name, in the order they were saved."""
    ref = as_ref(item)
    with store.snapshot() as db:
        rows = db.execute(
            select(Annotator.name, Annotation)
            .join(Annotator, Annotator.id == Annotation.annotator_id)
            .where(item_filter(ref))
            .order_by(Annotation.id)
        ).all()
        return [(name, stored_rating(row)) for name, row in rows]


def stored_rating(row: Any) -> StoredRating:
    ref = item_ref(row.verbalisation_id, row.reference_id)
    return StoredRating(
        row.id,
        row.annotator_id,
        ref,
        row.fluency,
        row.adequacy,
        row.blame,
        row.blame_other,
        row.checks,
        row.error_taxonomy,
        row.corrected_text,
        bool(row.is_golden),
    )


# -- corrections become gold references ---------------------------------------------------


def promote_correction(store: SessionStore, annotation_id: int, *, source: str = "gui") -> int:
    """Make an annotation's corrected text a gold reference of its unit; returns its id.

    Provenance: ``created_by`` the annotator, ``source_verbalisation_id`` the corrected
    verbalisation, and a line with who, when and from which text. Promoting the same
    text twice returns the reference made the first time. A recorded edit from ``source``
    (`core.edits.references.GoldReferenceEdit`).
    """
    from core.edits import apply_edit
    from core.edits.references import GoldReferenceEdit

    with store.snapshot() as db:
        row = db.get(Annotation, annotation_id)
        if row is None:
            raise AnnotationError(f"There is no annotation {annotation_id} in this session.")
        if not row.corrected_text:
            raise AnnotationError("This rating has no corrected text to promote.")
        source_verbalisation: int | None
        if row.verbalisation_id is not None:
            text = db.get_one(Verbalisation, row.verbalisation_id)
            unit_id, lang, what = text.unit_id, text.lang, f"verbalisation {text.id}"
            source_verbalisation = text.id
        else:
            origin = db.get_one(UnitReference, row.reference_id)
            unit_id, lang = origin.unit_id, origin.lang
            what, source_verbalisation = f"{origin.quality} reference {origin.id}", None
        existing = db.scalar(
            select(UnitReference.id).where(
                UnitReference.unit_id == unit_id,
                UnitReference.lang == lang,
                UnitReference.quality == GOLD,
                UnitReference.text == row.corrected_text,
            )
        )
        if existing is not None:
            return int(existing)
        annotator = db.get_one(Annotator, row.annotator_id)
        name, corrected, annotator_id = annotator.name, row.corrected_text, row.annotator_id
        # To the microsecond: the provenance line also names the reference for its undo.
        when = datetime.now(UTC).isoformat(timespec="microseconds")
        provenance = f"correction by {name} at {when} of {what} (annotation {row.id})"
    edit = GoldReferenceEdit(
        unit_id,
        lang,
        provenance,
        corrected,
        created_by=annotator_id,
        source_verbalisation_id=source_verbalisation,
        annotator=name,
    )
    apply_edit(store, edit, source=source, who=name)
    with store.snapshot() as db:
        reference_id = db.scalar(
            select(UnitReference.id).where(
                UnitReference.unit_id == unit_id, UnitReference.provenance == provenance
            )
        )
    if reference_id is None:  # another program removed it between the two transactions
        raise AnnotationError("The reference was removed by another change as it was made.")
    return int(reference_id)
