"""Draft edits: the unit being built in the Units panel (its triples and the words given
for them), which the session keeps so a crash loses nothing.

The state is the draft as the session keeps it (``units:draft`` and
``units:draft-overrides`` in the session's meta, as JSON text; empty: no draft). Every
change to the draft (a triple added, removed or moved, words given, the draft started or
discarded) is one edit, so Edit ▸ Undo steps back through the draft; the Units panel
reads the draft again after an undo or redo.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.edits.base import JSON, Edit
from core.store.models import SessionMeta

DRAFT_META_KEY = "units:draft"  # as core.units.builder.saved keeps them
DRAFT_OVERRIDES_META_KEY = "units:draft-overrides"
KEYS = (DRAFT_META_KEY, DRAFT_OVERRIDES_META_KEY)


class DraftEdit(Edit):
    """Keep ``draft`` (JSON text, "" for none) and its ``overrides`` (JSON text)."""

    kind = "draft"
    label = "unit draft"
    topics = frozenset()  # the draft is the Units panel's own; no other panel shows it

    def __init__(self, draft: str, overrides: str, *, words: str = "the unit draft") -> None:
        super().__init__({"draft": "units"}, {"draft": draft, "overrides": overrides})
        self.words = words

    def read(self, db: Session) -> JSON:
        rows = dict(
            db.execute(
                select(SessionMeta.key, SessionMeta.value).where(SessionMeta.key.in_(KEYS))
            ).all()
        )
        return {
            "draft": rows.get(DRAFT_META_KEY) or "",
            "overrides": rows.get(DRAFT_OVERRIDES_META_KEY) or "[]",
        }

    def write(self, db: Session, state: JSON) -> None:
        # As save_draft and save_draft_overrides write them ("" for no draft).
        db.merge(SessionMeta(key=DRAFT_META_KEY, value=state["draft"]))
        db.merge(SessionMeta(key=DRAFT_OVERRIDES_META_KEY, value=state["overrides"]))
        db.flush()

    def describe(self, before: JSON = None) -> str:
        return getattr(self, "words", "") or "the unit draft"
