"""Tier edits: a category's tier settings and every member's tier and sub-tier.

The state of a category's tiers is its saved settings (``None`` when it never had any)
and each member's (tier, sub-tier) by QID. The Browser (a settled drag, a typed share)
and ``taillens tiers`` both apply a :class:`TierEdit`; undo writes the state before
back, member by member, so a reverted split is exactly the one the user had.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import numpy as np
from sqlalchemy import bindparam, delete, select, update
from sqlalchemy.orm import Session

from core.changes import Topic
from core.edits.base import JSON, Edit, EditRefusedError
from core.store.models import Category, CategoryMember, Entity, SessionMeta
from core.tiers.cutoffs import SUB_TIER_BY_CODE, TIER_BY_CODE, TierSettings

META_PREFIX = "tiers:"  # as core.tiers.stored writes the settings


def _settings_words(settings: JSON) -> str:
    if not isinstance(settings, dict):
        return "no saved split"
    if settings.get("split_by") == "fraction":
        words = f"head fraction {settings.get('fraction'):g}"
    else:
        words = f"Pareto share {settings.get('share'):g}"
    torso = settings.get("torso_line")
    return words if torso is None else f"{words}, torso line {torso:g}"


class TierEdit(Edit):
    """Set a category's tier settings and its members' tiers."""

    kind = "tiers"
    label = "tiers"
    topics = frozenset({Topic.TIERS})

    written = 0  # members the edit names, counted when it reads the state before

    def __init__(self, category: str, settings: TierSettings, tiers: dict[str, Any]) -> None:
        super().__init__({"category": category}, {"settings": asdict(settings), "tiers": tiers})

    @classmethod
    def from_codes(
        cls,
        category: str,
        settings: TierSettings,
        qids: list[str],
        tier_codes: np.ndarray,
        sub_tier_codes: np.ndarray,
    ) -> TierEdit:
        """The edit for the Browser's and the CLI's tiering result (aligned arrays)."""
        if not (len(qids) == len(tier_codes) == len(sub_tier_codes)):
            raise ValueError("qids, tier codes and sub-tier codes must be aligned")
        tiers = {
            qid: [
                TIER_BY_CODE[int(t)].value if int(t) in TIER_BY_CODE else None,
                SUB_TIER_BY_CODE[int(s)].value if int(s) in SUB_TIER_BY_CODE else None,
            ]
            for qid, t, s in zip(qids, tier_codes, sub_tier_codes, strict=True)
        }
        return cls(category, settings, tiers)

    @property
    def category(self) -> str:
        return str(self.target["category"])

    def _category_id(self, db: Session) -> int:
        category_id = db.execute(
            select(Category.id).where(Category.name == self.category)
        ).scalar_one_or_none()
        if category_id is None:
            raise EditRefusedError(f"the session has no category {self.category!r}")
        return int(category_id)

    def read(self, db: Session) -> JSON:
        category_id = self._category_id(db)
        raw = db.execute(
            select(SessionMeta.value).where(SessionMeta.key == META_PREFIX + self.category)
        ).scalar_one_or_none()
        try:
            settings = json.loads(raw) if raw else None
        except ValueError:
            settings = raw  # written by hand: kept as the text it is, so undo restores it
        rows = db.execute(
            select(Entity.qid, CategoryMember.tier, CategoryMember.sub_tier)
            .join(CategoryMember, CategoryMember.entity_id == Entity.id)
            .where(CategoryMember.category_id == category_id)
        ).all()
        # How many members the edit names (what save_tiers reports as written).
        named = self.after.get("tiers") or {} if isinstance(self.after, dict) else {}
        self.written = sum(1 for qid, _, _ in rows if qid in named)
        return {"settings": settings, "tiers": {qid: [t, s] for qid, t, s in rows}}

    def write(self, db: Session, state: JSON) -> None:
        category_id = self._category_id(db)
        key = META_PREFIX + self.category
        settings = state.get("settings")
        if settings is None:
            db.execute(delete(SessionMeta).where(SessionMeta.key == key))
        else:
            value = settings if isinstance(settings, str) else json.dumps(settings)
            db.merge(SessionMeta(key=key, value=value))
        tiers: dict[str, list[str | None]] = state.get("tiers") or {}
        entity_ids = db.execute(
            select(Entity.qid, Entity.id)
            .join(CategoryMember, CategoryMember.entity_id == Entity.id)
            .where(CategoryMember.category_id == category_id)
        ).all()
        # Every member is written: one the state does not name had no tier then.
        params = [
            {
                "c": category_id,
                "e": entity_id,
                "t": tiers.get(qid, [None, None])[0],
                "s": tiers.get(qid, [None, None])[1],
            }
            for qid, entity_id in entity_ids
        ]
        if params:
            db.connection().execute(
                update(CategoryMember)
                .where(CategoryMember.category_id == bindparam("c"))
                .where(CategoryMember.entity_id == bindparam("e"))
                .values(tier=bindparam("t"), sub_tier=bindparam("s")),
                params,
            )

    def describe(self, before: JSON = None) -> str:
        after = _settings_words(self.after.get("settings"))
        if isinstance(before, dict) and before.get("settings") != self.after.get("settings"):
            was = _settings_words(before.get("settings"))
            return f"the tiers of {self.category} ({was} → {after})"
        return f"the tiers of {self.category} ({after})"
