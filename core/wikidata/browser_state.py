"""What the Browser decides, Qt-free: the shared selection, the category shown, its tier
settings and the tiers they give, and the Compare-with ticks.

``widgets.browser.BrowserPanel`` renders a :class:`BrowserState` and writes the user's
edits into it (a spin box, a dragged line, a tick, a picked row); ``app.browser`` loads
categories into it and saves the tiers it derives; the Likelihood tab and the entity
inspector follow its :class:`Selection` and :attr:`BrowserState.tiers`. The tiers come
from :func:`core.tiers.cutoffs.tier_category` (the one rule) and
:func:`core.tiers.cutoffs.long_tail_sub_tiers`, recomputed whenever the members or the settings
change, so whoever reads them never sees the tiers of another category or setting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from core.state import Field, State
from core.tiers.cutoffs import (
    SPLIT_RULES,
    TIER_BY_CODE,
    Codes,
    Distribution,
    TierResult,
    TierSettings,
    TierSummary,
    long_tail_sub_tiers,
    settings_for_drag,
    tier_category,
)

if TYPE_CHECKING:
    from core.wikidata.records import CategoryTable

LINE_KINDS = ("pareto", "head_tail", "torso")


class Selection(State):
    """What the user is looking at, shared by the Browser, its inspector and the
    Likelihood tab: the source kind, the category picked and the entity (QID) picked."""

    source = Field[str]("")
    category = Field[str | None](None)
    entity = Field[str | None](None)


@dataclass(frozen=True, eq=False)
class CategoryTiers:
    """One category's tiers under one setting: the members (qid order, as loaded), the
    `TierResult` and every member's long-tail sub-tier. It is everything a save needs,
    so a save taken from it writes the category it was computed for."""

    category: str
    qids: Sequence[str]
    result: TierResult
    sub_tiers: Codes

    @property
    def settings(self) -> TierSettings:
        return self.result.settings

    @property
    def codes(self) -> Codes:
        return self.result.codes

    @property
    def summary(self) -> TierSummary:
        return self.result.summary

    def tier_by_qid(self) -> dict[str, str]:
        """qid -> tier word (head, torso, long_tail)."""
        return {
            qid: TIER_BY_CODE[int(code)].value
            for qid, code in zip(self.qids, self.result.codes, strict=True)
        }


def category_tiers(
    category: str, table: CategoryTable, distribution: Distribution, settings: TierSettings
) -> CategoryTiers:
    result = tier_category(distribution, settings)
    subs = long_tail_sub_tiers(result.codes, table.has_en, table.has_it, table.has_es)
    return CategoryTiers(category, list(table.qids), result, subs)


class BrowserState(State):
    """The Browser's state. ``category``/``table`` are the category whose members are
    loaded (``selection.category`` is what the user picked; the controller loads it);
    ``distribution`` and ``tiers`` are derived. ``overlays``: Compare-with categories as
    loaded, None for one the session holds no members of."""

    category = Field[str | None](None)
    table = Field["CategoryTable | None"](None)
    settings = Field[TierSettings](factory=TierSettings)
    compared = Field[tuple[str, ...]](())
    overlays = Field[Mapping[str, Distribution | None]](factory=lambda: MappingProxyType({}))
    # derived
    distribution = Field[Distribution | None](None)
    tiers = Field[CategoryTiers | None](None)

    def __init__(self, selection: Selection | None = None) -> None:
        self.selection = selection if selection is not None else Selection()
        super().__init__()

    def derive(self, changed: set[str]) -> None:
        if "table" in changed:
            table = self.table
            self.distribution = (
                Distribution(table.statements) if table is not None and len(table) else None
            )
        if changed & {"table", "settings", "category", "distribution"}:
            table, dist, category = self.table, self.distribution, self.category
            if table is None or dist is None or category is None:
                self.tiers = None
            else:
                self.tiers = category_tiers(category, table, dist, self.settings)

    # -- loading (the controller) ----------------------------------------------------------
    def load(
        self, category: str, table: CategoryTable | None, settings: TierSettings | None = None
    ) -> None:
        """Show ``category``'s members with ``settings`` (kept when None): one change."""
        with self.batch():
            self.category = category
            self.table = table
            if settings is not None:
                self.settings = settings

    def set_overlay(self, name: str, distribution: Distribution | None) -> None:
        overlays = dict(self.overlays)
        overlays[name] = distribution
        self.overlays = MappingProxyType(overlays)

    @property
    def unfetched(self) -> tuple[str, ...]:
        """Ticked Compare-with categories the session holds no members of."""
        return tuple(n for n in self.compared if n in self.overlays and self.overlays[n] is None)

    # -- the user's edits (the widgets) ----------------------------------------------------
    def set_split_by(self, split_by: str) -> None:
        if split_by not in SPLIT_RULES:
            raise ValueError(f"split_by must be one of {SPLIT_RULES}, not {split_by!r}")
        self.settings = replace(self.settings, split_by=split_by)

    def set_share(self, share: float) -> None:
        self.settings = replace(self.settings, share=round(float(share), 6))

    def set_fraction(self, fraction: float) -> None:
        self.settings = replace(self.settings, fraction=round(float(fraction), 6))

    def set_torso(self, on: bool, line: float | None = None) -> None:
        """Torso line on (at ``line``, else where it was, else half the head line) or off."""
        if not on:
            self.settings = replace(self.settings, torso_line=None)
            return
        if line is None:
            line = self.settings.torso_line
        if line is None:
            head = self.tiers.result.head_line if self.tiers is not None else 2
            line = float(max(1, int(head // 2)))
        self.settings = replace(self.settings, torso_line=float(line))

    def drag_line(self, kind: str, statements: float) -> bool:
        """The user dragged line ``kind`` to ``statements``: the settings that give exactly
        that line's tiers again (core.tiers.cutoffs.settings_for_drag). Only the head line that
        splits (``settings.split_by``) and the torso line move; the other rule's line is
        shown for reference and refused here. Returns whether the settings changed."""
        dist = self.distribution
        if kind not in LINE_KINDS:
            raise ValueError(f"no line {kind!r}: {', '.join(LINE_KINDS)}")
        if dist is None or not self.is_movable(kind):
            return False
        before = self.settings
        self.settings = settings_for_drag(dist, before, kind, statements)
        return self.settings != before

    def is_movable(self, kind: str) -> bool:
        return kind == "torso" or kind == self.settings.split_by

    # -- reading ---------------------------------------------------------------------------
    @property
    def lines(self) -> dict[str, float | None]:
        """The statement counts of the three lines (None where there is none)."""
        result = self.tiers.result if self.tiers is not None else None
        if result is None:
            return {"pareto": None, "head_tail": None, "torso": self.settings.torso_line}
        return {
            "pareto": float(result.pareto_line),
            "head_tail": float(result.head_tail_line),
            "torso": result.torso_line,
        }
