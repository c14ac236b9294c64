"""Annotation edits: an annotator's rating of one text (with its correction), and a
named annotator added.

A rating's state is its fields (``core.annotation.ratings.RATING_FIELDS``) and when it
was last changed (``updated_at``: "the annotator's latest rating" is read by it), or
``None`` when the annotator has not rated the text. Undoing a new rating deletes it;
undoing a replacing one puts the replaced fields, correction included, back; redo puts
the rating (and its correction) back again. Golden answers (``is_golden``) are not
ratings: these edits never touch them.

Which row is the annotator's rating is the rating rule's (``core.edits.rating_rule``).
Only the session's tables are imported here (no ``core.annotation``): the annotation
package validates a rating and then applies these edits, so this module sits below it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import flag_modified

from core.changes import Topic
from core.edits.base import JSON, Edit, EditRefusedError
from core.edits.rating_rule import REFERENCE, VERBALISATION, the_rating
from core.store.models import Annotation, Annotator, UnitReference, Verbalisation

FIELDS = (
    "fluency",
    "adequacy",
    "blame",
    "blame_other",
    "checks",
    "error_taxonomy",
    "corrected_text",
)


def stamp(value: datetime) -> str:
    """A time as the history keeps it: naive UTC, microseconds (SQLite keeps no zone)."""
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value.isoformat(timespec="microseconds")


def unit_of_item(db: Session, kind: str, item_id: int) -> int | None:
    """The data unit a verbalisation or reference belongs to (None: no such text)."""
    row: Verbalisation | UnitReference | None = (
        db.get(Verbalisation, item_id) if kind == VERBALISATION else db.get(UnitReference, item_id)
    )
    return None if row is None else int(row.unit_id)


class RatingEdit(Edit):
    """Set (``values``) or remove (``None``) an annotator's rating of one text."""

    kind = "rating"
    label = "rating"
    topics = frozenset({Topic.ANNOTATIONS})

    def __init__(
        self,
        annotator_id: int,
        annotator: str,
        item_kind: str,
        item_id: int,
        unit_id: int | None,
        values: dict[str, Any] | None,
        *,
        now: datetime | None = None,
    ) -> None:
        after = None
        if values is not None:
            after = {name: values.get(name) for name in FIELDS}
            after["updated_at"] = stamp(now or datetime.now(UTC))
        super().__init__(
            {
                "annotator_id": annotator_id,
                "annotator": annotator,
                "item_kind": item_kind,
                "item_id": item_id,
                "unit_id": unit_id,
            },
            after,
        )

    def _row(self, db: Session) -> Annotation | None:
        return the_rating(
            db,
            int(self.target["annotator_id"]),
            self.target["item_kind"],
            int(self.target["item_id"]),
        )

    def read(self, db: Session) -> JSON:
        if db.get(Annotator, int(self.target["annotator_id"])) is None:
            raise EditRefusedError(
                f"There is no annotator {self.target['annotator_id']} in this session."
            )
        kind, item_id = self.target["item_kind"], int(self.target["item_id"])
        if unit_of_item(db, kind, item_id) is None:
            raise EditRefusedError(
                f"There is no {kind} {item_id} in this session (it may have been deleted)."
            )
        row = self._row(db)
        if row is None:
            return None
        state: dict[str, Any] = {name: getattr(row, name) for name in FIELDS}
        state["updated_at"] = stamp(row.updated_at) if row.updated_at is not None else None
        return state

    def write(self, db: Session, state: JSON) -> None:
        row = self._row(db)
        if state is None:
            if row is not None:
                db.delete(row)
            return
        when = datetime.fromisoformat(state["updated_at"]) if state.get("updated_at") else None
        values = {name: state.get(name) for name in FIELDS}
        if row is None:
            kind, item_id = self.target["item_kind"], int(self.target["item_id"])
            row = Annotation(
                annotator_id=int(self.target["annotator_id"]),
                is_golden=False,
                verbalisation_id=item_id if kind == VERBALISATION else None,
                reference_id=item_id if kind == REFERENCE else None,
                created_at=when,
                **values,
            )
            db.add(row)
        else:
            for name, value in values.items():
                setattr(row, name, value)
        # Set and flagged: the column's onupdate would restamp it otherwise, and an undone
        # rating must not become "the latest" again.
        row.updated_at = when  # type: ignore[assignment]
        if row in db and row.id is not None:
            flag_modified(row, "updated_at")
        db.flush()

    def describe(self, before: JSON = None) -> str:
        who = self.target["annotator"]
        what = f"{self.target['item_kind']} {self.target['item_id']}"
        if self.after is None:
            return f"{who}'s rating of {what} removed"
        parts = []
        if self.after.get("fluency") is not None:
            parts.append(f"fluency {self.after['fluency']}")
        if self.after.get("adequacy") is not None:
            parts.append(f"adequacy {self.after['adequacy']}")
        if self.after.get("corrected_text"):
            parts.append("a correction")
        detail = f" ({', '.join(parts)})" if parts else ""
        verb = "rating" if before is None else "changed rating"
        return f"{who}'s {verb} of {what}{detail}"


class AnnotatorEdit(Edit):
    """Add (``True``) or remove (``False``) a named annotator. Removing is only what an
    undo of the adding does, and is refused while the annotator has ratings."""

    kind = "annotator"
    label = "annotator"
    topics = frozenset({Topic.ANNOTATIONS})

    def __init__(self, name: str, present: bool = True) -> None:
        super().__init__({"annotator": name}, present)

    def read(self, db: Session) -> JSON:
        return (
            db.scalar(select(Annotator.id).where(Annotator.name == self.target["annotator"]))
            is not None
        )

    def write(self, db: Session, state: JSON) -> None:
        name = self.target["annotator"]
        row = db.scalar(select(Annotator).where(Annotator.name == name))
        if state and row is None:
            db.add(Annotator(name=name, is_anonymous=False))
        elif not state and row is not None:
            rated = db.scalar(
                select(Annotation.id).where(Annotation.annotator_id == row.id).limit(1)
            )
            if rated is not None:
                raise EditRefusedError(
                    f"{name} has ratings now: the annotator stays (undo their ratings first)."
                )
            db.delete(row)
        db.flush()

    def describe(self, before: JSON = None) -> str:
        verb = "added" if self.after else "removed"
        return f"the annotator {self.target['annotator']} {verb}"


class GoldenEdit(Edit):
    """Set (``answer``: the expert and the known fluency and adequacy) or remove
    (``None``) the known answer of one text (a golden item). One answer per text."""

    kind = "golden"
    label = "golden item"
    topics = frozenset({Topic.ANNOTATIONS})

    def __init__(
        self, item_kind: str, item_id: int, unit_id: int | None, answer: dict[str, Any] | None
    ) -> None:
        super().__init__({"item_kind": item_kind, "item_id": item_id, "unit_id": unit_id}, answer)

    def _rows(self, db: Session) -> list[Annotation]:
        column = (
            Annotation.verbalisation_id
            if self.target["item_kind"] == VERBALISATION
            else Annotation.reference_id
        )
        return list(
            db.scalars(
                select(Annotation)
                .where(column == int(self.target["item_id"]), Annotation.is_golden.is_(True))
                .order_by(Annotation.id)
            )
        )

    def read(self, db: Session) -> JSON:
        kind, item_id = self.target["item_kind"], int(self.target["item_id"])
        if unit_of_item(db, kind, item_id) is None:
            raise EditRefusedError(
                f"There is no {kind} {item_id} in this session (it may have been deleted)."
            )
        rows = self._rows(db)
        if not rows:
            return None
        row = rows[0]
        return {"expert_id": row.annotator_id, "fluency": row.fluency, "adequacy": row.adequacy}

    def write(self, db: Session, state: JSON) -> None:
        for row in self._rows(db):
            db.delete(row)
        db.flush()
        if state is None:
            return
        if db.get(Annotator, int(state["expert_id"])) is None:
            raise EditRefusedError(f"There is no annotator {state['expert_id']} in this session.")
        kind, item_id = self.target["item_kind"], int(self.target["item_id"])
        db.add(
            Annotation(
                annotator_id=int(state["expert_id"]),
                is_golden=True,
                verbalisation_id=item_id if kind == VERBALISATION else None,
                reference_id=item_id if kind == REFERENCE else None,
                fluency=state.get("fluency"),
                adequacy=state.get("adequacy"),
            )
        )
        db.flush()

    def describe(self, before: JSON = None) -> str:
        what = f"{self.target['item_kind']} {self.target['item_id']}"
        if self.after is None:
            return f"the known answer of {what} removed"
        return (
            f"the known answer of {what} (fluency {self.after.get('fluency')}, "
            f"adequacy {self.after.get('adequacy')})"
        )
