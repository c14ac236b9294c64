"""A category's tier settings and its entities' tiers, kept in the session.

The browser re-tiers live as lines move; when the user settles, the settings (which
cut-off splits head from tail, the Pareto share, the head fraction, the torso line)
and every member's tier and sub-tier are written to the session, so units built later
record the tier their entity had, and a reopened session shows the same split.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlalchemy import select

from core.errors import UserFacingError
from core.io.bounded import stored_json
from core.store import SessionStore
from core.store.models import Category, CategoryMember, Entity
from core.tiers.cutoffs import (
    Distribution,
    TierResult,
    TierSettings,
    long_tail_sub_tiers,
    tier_category,
)

_META_PREFIX = "tiers:"


class NoMembersError(UserFacingError):
    """A category with no members cannot be split into tiers."""


def load_tier_settings(
    store: SessionStore, category: str, default: TierSettings | None = None
) -> TierSettings:
    """The category's saved settings, else ``default`` (the user's preferences), else
    METHODS' defaults."""
    fallback = default if default is not None else TierSettings()
    raw = store.get_meta(_META_PREFIX + category)
    if not raw:
        return fallback
    try:
        return TierSettings(**stored_json(raw, None))
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
    *,
    source: str = "gui",
) -> int:
    """Write the settings and each member's tier as one recorded edit
    (`core.edits.tiers.TierEdit`, one transaction with its history row); returns the
    members whose tier the edit names."""
    from core.edits import apply_edit
    from core.edits.tiers import TierEdit

    edit = TierEdit.from_codes(category, settings, qids, tier_codes, sub_tier_codes)
    apply_edit(store, edit, source=source)
    return edit.written


def load_member_tiers(
    store: SessionStore, category: str
) -> dict[str, tuple[str | None, str | None]]:
    """qid -> (tier, sub_tier) as last saved for the category."""
    with store.snapshot() as db:
        rows = db.execute(
            select(Entity.qid, CategoryMember.tier, CategoryMember.sub_tier)
            .join(CategoryMember, CategoryMember.entity_id == Entity.id)
            .join(Category, Category.id == CategoryMember.category_id)
            .where(Category.name == category)
        ).all()
    return {qid: (tier, sub) for qid, tier, sub in rows}


def retier_category(
    store: SessionStore,
    category: str,
    settings: TierSettings | None = None,
    *,
    source: str = "gui",
) -> tuple[TierResult, int]:
    """Tier every member of ``category`` with ``settings`` (default: the saved ones) by
    `core.tiers.cutoffs.tier_category`, the Browser's rule, and save settings and tiers as a
    drag does (a recorded edit from ``source``). Returns the result and the member
    rows written."""
    from core.wikidata.cache import load_category

    columns = load_category(store, category)
    if not len(columns):
        raise NoMembersError(
            f"The category {category!r} has no members in this session, so it has no tiers: "
            f"fetch its members first (taillens fetch {category!r} --session FILE)."
        )
    settings = settings if settings is not None else load_tier_settings(store, category)
    result = tier_category(Distribution(columns.statements), settings)
    subs = long_tail_sub_tiers(result.codes, columns.has_en, columns.has_it, columns.has_es)
    written = save_tiers(
        store, category, settings, list(columns.qids), result.codes, subs, source=source
    )
    return result, written


def no_members_in_tiers_message(
    category: str, tiers: object, member_tiers: dict[str, tuple[str | None, str | None]]
) -> str:
    """Why sampling ``category`` by ``tiers`` finds nobody, and the command that helps."""
    wanted = ", ".join(sorted(str(t) for t in tiers))  # type: ignore[attr-defined]
    if not any(t for t, _ in member_tiers.values()):
        return (
            f"no member of {category!r} has a tier yet, so none is in {wanted}: assign "
            f"tiers with `taillens tiers {category!r} --session FILE` (or drag a line in "
            "the Browser)"
        )
    present = sorted({t for pair in member_tiers.values() for t in pair if t})
    return (
        f"no member of {category!r} is in {wanted} (its members' tiers: "
        f"{', '.join(present)}); change the split with `taillens tiers {category!r} "
        "--session FILE --share/--fraction ...`"
    )


@dataclass(frozen=True)
class TierChange:
    """A unit whose root entity's tier in the unit's category differs now from the tier
    the unit recorded when it was built (units keep theirs: a report groups by it)."""

    unit_id: int
    built_tier: str | None
    built_sub_tier: str | None
    now_tier: str
    now_sub_tier: str | None

    def describe(self) -> str:
        built = self.built_sub_tier or self.built_tier or "no tier"
        now = self.now_sub_tier or self.now_tier
        return f"built as {built}, its root is {now} now"


_TIER_CHANGES_SQL = """
SELECT u.id, u.tier, u.sub_tier, cm.tier, cm.sub_tier
FROM data_units u
JOIN entities e ON e.qid = u.root_qid
JOIN category_members cm ON cm.entity_id = e.id AND cm.category_id = u.category_id
WHERE cm.tier IS NOT NULL AND {usable_units} AND {usable_entities}
  AND (coalesce(u.tier, '') != cm.tier OR coalesce(u.sub_tier, '') != coalesce(cm.sub_tier, ''))
ORDER BY u.id
"""


def unit_tier_changes(store: SessionStore) -> dict[int, TierChange]:
    """Units whose root's current tier (as last saved for their category) differs from
    the tier recorded at build time, by unit id. Units of no session category (imported
    from files) and roots not tiered now are left out."""
    from sqlalchemy import text

    from core.store.integrity import usable_rows

    with store.snapshot() as db:
        sql = _TIER_CHANGES_SQL.format(
            usable_units=usable_rows(db, "data_units", "u"),
            usable_entities=usable_rows(db, "entities", "e"),
        )
        return {row[0]: TierChange(*row) for row in db.execute(text(sql))}
