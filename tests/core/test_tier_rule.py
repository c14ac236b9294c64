"""One rule from tier settings to tiers: a dragged line, saved and reopened, gives the same
tiers; the CLI and the session agree with the panel."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from core.store import SessionStore
from core.tiers.cutoffs import (
    Distribution,
    TierSettings,
    fraction_for_line,
    settings_for_drag,
    share_for_line,
    snapped_line,
    tier_category,
)
from core.tiers.stored import (
    NoMembersError,
    load_member_tiers,
    load_tier_settings,
    retier_category,
)
from core.wikidata.cache import store_members_page
from core.wikidata.categories import category_by_name
from core.wikidata.records import EntityRecord, MembersPage


def airport_like() -> np.ndarray:
    """400 entities: 209 with >= 4 statements, 28 with exactly 3, 163 with 0-2."""
    rng = np.random.default_rng(0)
    head = np.maximum(4, (rng.pareto(1.2, 209) * 10).astype(int) + 4)
    return np.concatenate([head, [3] * 28, rng.integers(0, 3, 163)]).astype(np.int64)


def head_size(dist: Distribution, settings: TierSettings) -> int:
    return int(np.count_nonzero(tier_category(dist, settings).codes == 0))


def test_airport_case_drag_save_reopen_gives_the_same_tiers(tmp_path: Path) -> None:
    counts = airport_like()
    dist = Distribution(counts)
    share_of_four = dist.statement_share_at_or_above(4)
    # The old bug: the share the line stood for, rounded as the spin box showed it, is
    # first reached among the 3-statement entities: re-derived, the line falls to 3.
    rounded = round(share_of_four, 3)
    assert rounded > share_of_four and dist.pareto_cutoff(rounded) == 3

    settings = settings_for_drag(dist, TierSettings(), "pareto", 3.3)
    assert dist.pareto_cutoff(settings.share) == 4
    assert head_size(dist, settings) == 209
    with filled(tmp_path / "s.taillens", counts) as store:
        retier_category(store, "City", settings)
    with SessionStore.open(tmp_path / "s.taillens") as store:  # reopen
        reopened = load_tier_settings(store, "City")
        saved = load_member_tiers(store, "City")
    assert reopened == settings
    result = tier_category(dist, reopened)
    assert result.head_line == 4 and result.summary.tiers[0].size == 209
    assert sum(t == "head" for t, _ in saved.values()) == 209
    assert sum(t == "long_tail" for t, _ in saved.values()) == 191


@pytest.mark.parametrize("seed", range(6))
def test_any_dragged_line_maps_back_to_its_own_tiers(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # Many ties (small counts), some zeros, a heavy tail.
    counts = np.concatenate([rng.integers(0, 6, 80), (rng.pareto(1.0, 40) * 5).astype(int)])
    dist = Distribution(counts)
    for line in np.linspace(-1, counts.max() + 3, 97):
        for kind, split in (("pareto", "pareto"), ("head_tail", "head_tail")):
            settings = settings_for_drag(dist, TierSettings(split_by=split), kind, float(line))
            result = tier_category(dist, settings)
            snapped = snapped_line(dist, float(line), positive=kind == "pareto")
            assert result.head_line == snapped
            # Tiers are exactly "count >= the line the user sees", ties all in the head.
            assert np.array_equal(result.codes == 0, counts >= snapped)
            # The stored number alone reproduces it (what the CLI is given).
            again = TierSettings(split_by=split, share=settings.share, fraction=settings.fraction)
            assert np.array_equal(tier_category(dist, again).codes, result.codes)


def test_share_between_two_entities_cumulative_shares_and_ties() -> None:
    # Descending 40, 20, 20, 10, 10 (100): cumulative 0.4, 0.6, 0.8, 0.9, 1.0.
    counts = np.array([10, 20, 40, 10, 20])
    dist = Distribution(counts)
    # Between 0.4 and 0.6: reached at the second entity (20); its tie joins the head.
    assert head_size(dist, TierSettings(share=0.5)) == 3
    assert head_size(dist, TierSettings(share=0.4)) == 1
    assert head_size(dist, TierSettings(share=0.41)) == 3
    assert head_size(dist, TierSettings(share=0.85)) == 5  # reached at a 10: both 10s
    # Dragging to 15 means >= 20; the shortest share that maps back is 0.8 ...
    assert share_for_line(dist, 15.0) == (0.8, 20)
    # ... and any share in (0.4, 0.8] is the same line.
    for share in (0.41, 0.6, 0.7999, 0.8):
        assert tier_category(dist, TierSettings(share=share)).head_line == 20
    # Head fraction: ranks 2-3 hold 20; (1/5, 3/5] maps to 20; 0.6 is the shortest.
    assert fraction_for_line(dist, 19.5) == (0.6, 20)
    assert tier_category(dist, TierSettings("head_tail", fraction=0.21)).head_line == 20


def test_torso_drag_is_a_whole_count_and_never_above_the_head() -> None:
    dist = Distribution(np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]))
    settings = settings_for_drag(dist, TierSettings(), "torso", 2.2)
    assert settings.torso_line == 3.0
    result = tier_category(dist, replace(settings, torso_line=99.0))
    assert result.torso_line == result.head_line
    assert math.isclose(share_for_line(Distribution(np.zeros(3, np.int64)), 1)[0], 1.0)


def filled(path: Path, counts: np.ndarray) -> SessionStore:
    store = SessionStore.create(path)
    entities = tuple(
        EntityRecord(
            f"Q{i + 1}", f"E{i + 1}", int(c), int(c) // 2, frozenset({"en"} if i % 3 else {"it"})
        )
        for i, c in enumerate(counts)
    )
    store_members_page(store, category_by_name("City"), MembersPage("City", 0, entities), "t")
    return store


def test_retier_category_needs_members(tmp_path: Path) -> None:
    with (
        SessionStore.create(tmp_path / "s.taillens") as store,
        pytest.raises(NoMembersError, match="no members.*taillens fetch"),
    ):
        retier_category(store, "City")
