"""Setting edits: a choice the session keeps for a panel (the Verbalise settings: the
model, the prompt, the scope), stored as one text under one key of the session's meta.

The state is that text (``None``: never set). The panel that keeps it applies it again
after an undo or redo.
"""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from core.changes import Topic
from core.edits.base import JSON, Edit
from core.store.models import SessionMeta


class SettingEdit(Edit):
    """Keep ``value`` under ``key`` (``None``: remove it)."""

    kind = "setting"
    label = "setting"
    topics = frozenset[Topic]()  # only the panel that keeps it shows it

    def __init__(self, key: str, value: str | None, *, words: str = "") -> None:
        super().__init__({"key": key}, value)
        self.words = words

    def read(self, db: Session) -> JSON:
        return db.execute(
            select(SessionMeta.value).where(SessionMeta.key == self.target["key"])
        ).scalar_one_or_none()

    def write(self, db: Session, state: JSON) -> None:
        if state is None:
            db.execute(delete(SessionMeta).where(SessionMeta.key == self.target["key"]))
        else:
            db.merge(SessionMeta(key=self.target["key"], value=state))
        db.flush()

    def describe(self, before: JSON = None) -> str:
        return getattr(self, "words", "") or f"the setting {self.target['key']}"
