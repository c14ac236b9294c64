"""The model_tail cut-off: a category's likelihood cut-off settings and every member's
``model_tier`` (LINK, METHODS §3), as one edit.

The state is the saved cut-off settings (``None``: none saved) and each member's
model tier by QID. The Likelihood tab and ``taillens likelihood --cutoff`` apply it;
undo writes the state before back, member by member.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import bindparam, delete, select, update
from sqlalchemy.orm import Session

from core.changes import Topic
from core.edits.base import JSON, Edit, EditRefusedError
from core.store.models import Category, CategoryMember, Entity, SessionMeta

META_PREFIX = "likelihood:"  # as core.tiers.likelihood keeps the cut-off


class ModelTailEdit(Edit):
    """Set a category's model_tail cut-off and its members' model tiers."""

    kind = "model tail"
    label = "model_tail cut-off"
    topics = frozenset({Topic.LIKELIHOOD})

    def __init__(self, category: str, settings: dict[str, Any], tiers: dict[str, str | None]):
        super().__init__({"category": category}, {"settings": settings, "tiers": tiers})

    def _category_id(self, db: Session) -> int:
        found = db.execute(
            select(Category.id).where(Category.name == self.target["category"])
        ).scalar_one_or_none()
        if found is None:
            raise EditRefusedError(f"the session has no category {self.target['category']!r}")
        return int(found)

    def read(self, db: Session) -> JSON:
        category_id = self._category_id(db)
        raw = db.execute(
            select(SessionMeta.value).where(
                SessionMeta.key == META_PREFIX + self.target["category"]
            )
        ).scalar_one_or_none()
        try:
            settings = json.loads(raw) if raw else None
        except ValueError:
            settings = raw
        rows = db.execute(
            select(Entity.qid, CategoryMember.model_tier)
            .join(CategoryMember, CategoryMember.entity_id == Entity.id)
            .where(CategoryMember.category_id == category_id)
        ).all()
        return {"settings": settings, "tiers": dict(rows)}

    def write(self, db: Session, state: JSON) -> None:
        category_id = self._category_id(db)
        key = META_PREFIX + self.target["category"]
        settings = state.get("settings")
        if settings is None:
            db.execute(delete(SessionMeta).where(SessionMeta.key == key))
        else:
            value = settings if isinstance(settings, str) else json.dumps(settings)
            db.merge(SessionMeta(key=key, value=value))
        tiers: dict[str, str | None] = state.get("tiers") or {}
        members = db.execute(
            select(Entity.qid, Entity.id)
            .join(CategoryMember, CategoryMember.entity_id == Entity.id)
            .where(CategoryMember.category_id == category_id)
        ).all()
        params = [{"c": category_id, "e": e, "t": tiers.get(q)} for q, e in members]
        if params:
            db.connection().execute(
                update(CategoryMember)
                .where(CategoryMember.category_id == bindparam("c"))
                .where(CategoryMember.entity_id == bindparam("e"))
                .values(model_tier=bindparam("t")),
                params,
            )

    def describe(self, before: JSON = None) -> str:
        settings = self.after.get("settings") if isinstance(self.after, dict) else None
        cutoff = settings.get("cutoff") if isinstance(settings, dict) else None
        signal = settings.get("signal") if isinstance(settings, dict) else None
        words = "" if cutoff is None else f" ({signal} cut-off {cutoff:g})"
        return f"the model_tail of {self.target['category']}{words}"
