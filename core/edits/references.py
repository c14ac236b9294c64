"""Reference edits: a gold reference written by an annotator, or made from a correction.

A written reference is named by its unit, language and provenance line (who wrote it,
when to the microsecond, and from what), so the edit finds its row again after
reopening; its state is the text with who made it and the verbalisation it corrects
(``None``: no such reference). Undo deletes the reference (with whatever was computed
from it since, as deleting a reference does); redo writes it again under a new id.
Reviews of references are ratings (``core.edits.ratings.RatingEdit``).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.changes import Topic
from core.edits.base import JSON, Edit, EditRefusedError
from core.store.models import DataUnit, UnitReference
from core.vocab import GOLD


class GoldReferenceEdit(Edit):
    """Add (``text`` …) or remove (``None``) one gold reference of a unit."""

    kind = "reference"
    label = "reference"
    topics = frozenset({Topic.REFERENCES})

    def __init__(
        self,
        unit_id: int,
        lang: str,
        provenance: str,
        text: str | None,
        *,
        created_by: int | None = None,
        source_verbalisation_id: int | None = None,
        annotator: str | None = None,
    ) -> None:
        after = None
        if text is not None:
            after = {
                "text": text,
                "created_by": created_by,
                "source_verbalisation_id": source_verbalisation_id,
            }
        target = {"unit_id": unit_id, "lang": lang, "provenance": provenance}
        if annotator is not None:
            target["annotator"] = annotator
        super().__init__(target, after)

    def _row(self, db: Session) -> UnitReference | None:
        return db.scalar(
            select(UnitReference)
            .where(
                UnitReference.unit_id == int(self.target["unit_id"]),
                UnitReference.lang == self.target["lang"],
                UnitReference.quality == GOLD,
                UnitReference.provenance == self.target["provenance"],
            )
            .order_by(UnitReference.id)
        )

    def read(self, db: Session) -> JSON:
        if db.get(DataUnit, int(self.target["unit_id"])) is None:
            raise EditRefusedError(f"There is no unit {self.target['unit_id']} in this session.")
        row = self._row(db)
        if row is None:
            return None
        return {
            "text": row.text,
            "created_by": row.created_by,
            "source_verbalisation_id": row.source_verbalisation_id,
        }

    def write(self, db: Session, state: JSON) -> None:
        row = self._row(db)
        if state is None:
            if row is not None:
                db.delete(row)
            db.flush()
            return
        if row is None:
            row = UnitReference(
                unit_id=int(self.target["unit_id"]),
                lang=self.target["lang"],
                quality=GOLD,
                provenance=self.target["provenance"],
                text=state["text"],
            )
            db.add(row)
        row.text = state["text"]
        row.created_by = state.get("created_by")
        row.source_verbalisation_id = state.get("source_verbalisation_id")
        db.flush()

    def describe(self, before: JSON = None) -> str:
        unit, lang = self.target["unit_id"], self.target["lang"]
        if self.after is None:
            return f"a gold reference of unit {unit} ({lang}) removed"
        words = self.after["text"]
        short = words if len(words) <= 40 else words[:39] + "…"
        return f"a gold reference of unit {unit} ({lang}): {short!r}"
