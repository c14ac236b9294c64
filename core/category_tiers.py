"""A category's tier settings and its entities' tiers, kept in the session.

The browser re-tiers live as lines move; when the user settles, the settings (which
cut-off splits head from tail, the Pareto share, the head fraction, the torso line)
and every member's tier and sub-tier are written to the session, so units built later
record the tier their entity had, and a reopened session shows the same split.
"""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
from sqlalchemy import bindparam, select, update

from core.store import SessionStore
from core.store.models import Category, CategoryMember, Entity, SessionMeta
from core.tiers import SUB_TIER_BY_CODE, TIER_BY_CODE, TierSettings

_META_PREFIX = "tiers:"

def load_tier_settings(store: SessionStore, category: str,
                       default: TierSettings | None = None) -> TierSettings:
    """The category's saved settings, else ``default`` (the user's preferences), else
    METHODS' defaults."""
    fallback = default if default is not None else TierSettings()
    raw = store.get_meta(_META_PREFIX + category)
    if not raw:
        return fallback
    try:
        return TierSettings(**json.loads(raw))
    except (TypeError, ValueError):
        # Settings written by hand or by a future version: fall back to the defaults
        # rather than refuse to show the category.
        return fallback


def save_tiers(
    store: SessionStore,
    category: str,
    settings: TierSettings,
    qids: list[str],
    tier_codes: np.ndarray,
    sub_tier_codes: np.ndarray,
) -> int:
    """Write the settings and each member's tier in one transaction; returns rows updated."""
    if not (len(qids) == len(tier_codes) == len(sub_tier_codes)):
        raise ValueError("qids, tier codes and sub-tier codes must be aligned")
    rows = [
        {
            "q": qid,
            "t": TIER_BY_CODE[int(t)].value if int(t) in TIER_BY_CODE else None,
            "s": SUB_TIER_BY_CODE[int(s)].value if int(s) in SUB_TIER_BY_CODE else None,
        }
        for qid, t, s in zip(qids, tier_codes, sub_tier_codes, strict=True)
    ]
    with store.unit_of_work() as db:
        category_id = db.execute(
            select(Category.id).where(Category.name == category)
        ).scalar_one_or_none()
        if category_id is None:
            raise ValueError(f"the session has no category {category!r}")
        db.merge(SessionMeta(key=_META_PREFIX + category, value=json.dumps(asdict(settings))))
        entity_ids = dict(
            db.execute(
                select(Entity.qid, Entity.id)
                .join(CategoryMember, CategoryMember.entity_id == Entity.id)
                .where(CategoryMember.category_id == category_id)
            ).all()
        )
        params = [
            {"c": category_id, "e": entity_ids[row["q"]], "t": row["t"], "s": row["s"]}
            for row in rows
            if row["q"] in entity_ids
        ]
        if params:
            db.connection().execute(
                update(CategoryMember)
                .where(CategoryMember.category_id == bindparam("c"))
                .where(CategoryMember.entity_id == bindparam("e"))
                .values(tier=bindparam("t"), sub_tier=bindparam("s")),
                params,
            )
    return len(params)


def load_member_tiers(
    store: SessionStore, category: str
) -> dict[str, tuple[str | None, str | None]]:
    """qid -> (tier, sub_tier) as last saved for the category."""
    with store.engine.connect() as conn:
        rows = conn.execute(
            select(Entity.qid, CategoryMember.tier, CategoryMember.sub_tier)
            .join(CategoryMember, CategoryMember.entity_id == Entity.id)
            .join(Category, Category.id == CategoryMember.category_id)
            .where(Category.name == category)
        ).all()
    return {qid: (tier, sub) for qid, tier, sub in rows}
