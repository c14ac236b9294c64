"""Category edits: a category's definition (its class, membership property and SPARQL
pattern) added or changed.

The state is the definition (``None``: the session has no such category). Changing the
pattern drops the members fetched under the old one, as saving a category always did;
undoing the change puts the old definition back, not those members (fetch them again).
Undoing the adding of a category removes it, and is refused once it has members or
units, which would go with it.
"""

from __future__ import annotations

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from core.changes import Topic
from core.edits.base import JSON, Edit, EditRefusedError
from core.store import models as m


class CategoryEdit(Edit):
    """Add or change (``definition``) a category of the session."""

    kind = "category"
    label = "category"
    topics = frozenset({Topic.CATEGORIES, Topic.MEMBERS})

    def __init__(
        self,
        name: str,
        class_qid: str,
        membership_property: str,
        pattern: str,
        *,
        is_default: bool = False,
    ) -> None:
        super().__init__(
            {"category": name},
            {
                "class_qid": class_qid,
                "membership_property": membership_property,
                "pattern": pattern,
                "is_default": is_default,
            },
        )
        self.dropped = 0  # members dropped by a changed pattern

    def _row(self, db: Session) -> m.Category | None:
        return db.execute(
            select(m.Category).where(m.Category.name == self.target["category"])
        ).scalar_one_or_none()

    def read(self, db: Session) -> JSON:
        row = self._row(db)
        if row is None:
            return None
        return {
            "class_qid": row.class_qid,
            "membership_property": row.membership_property,
            "pattern": row.pattern,
            "is_default": bool(row.is_default),
        }

    def write(self, db: Session, state: JSON) -> None:
        row = self._row(db)
        name = self.target["category"]
        if state is None:
            if row is None:
                return
            members = db.scalar(
                select(func.count())
                .select_from(m.CategoryMember)
                .where(m.CategoryMember.category_id == row.id)
            )
            units = db.scalar(
                select(func.count()).select_from(m.DataUnit).where(m.DataUnit.category_id == row.id)
            )
            if members or units:
                raise EditRefusedError(
                    f"the category {name} has {members:,} members and {units:,} units now: "
                    "it stays (removing it would remove them)"
                )
            db.delete(row)
            db.flush()
            return
        if row is None:
            db.add(m.Category(name=name, **state))
            db.flush()
            return
        if row.pattern != state["pattern"]:
            self.dropped = int(
                db.scalar(
                    select(func.count())
                    .select_from(m.CategoryMember)
                    .where(m.CategoryMember.category_id == row.id)
                )
                or 0
            )
            db.execute(delete(m.CategoryMember).where(m.CategoryMember.category_id == row.id))
        row.class_qid = state["class_qid"]
        row.membership_property = state["membership_property"]
        row.pattern = state["pattern"]
        row.is_default = bool(state.get("is_default"))
        db.flush()

    def describe(self, before: JSON = None) -> str:
        name = self.target["category"]
        if self.after is None:
            return f"the category {name} removed"
        if before is None:
            return f"the category {name} added"
        return f"the definition of {name}"
