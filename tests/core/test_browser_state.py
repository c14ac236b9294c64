"""core.wikidata.browser_state: the Browser's decisions without a window."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from core.tiers.cutoffs import Distribution, TierSettings, long_tail_sub_tiers, tier_category
from core.wikidata.browser_state import BrowserState, Selection
from core.wikidata.records import CategoryTable


def table(name: str, counts: list[int], wikis: list[str] | None = None) -> CategoryTable:
    wikis = wikis or ["en"] * len(counts)
    return CategoryTable(
        name,
        qids=[f"Q{i + 1}" for i in range(len(counts))],
        labels=[None] * len(counts),
        statements=np.array(counts, dtype=np.int64),
        sitelinks=np.zeros(len(counts), dtype=np.int64),
        has_en=np.array(["en" in w for w in wikis]),
        has_it=np.array(["it" in w for w in wikis]),
        has_es=np.array(["es" in w for w in wikis]),
    )


COUNTS = [5, 50, 3, 30, 10, 2]  # 100 statements; Pareto 0.8 -> 30


def test_loading_derives_the_tiers_by_the_one_rule_with_sub_tiers() -> None:
    state = BrowserState()
    wikis = ["en", "en it", "it", "en", "es", ""]
    state.load("City", table("City", COUNTS, wikis), TierSettings())
    tiers = state.tiers
    assert tiers is not None and tiers.category == "City"
    expected = tier_category(Distribution(np.array(COUNTS)), TierSettings())
    assert np.array_equal(tiers.codes, expected.codes) and tiers.result.head_line == 30
    has = [np.array([lang in w for w in wikis]) for lang in ("en", "it", "es")]
    assert np.array_equal(tiers.sub_tiers, long_tail_sub_tiers(expected.codes, *has))
    assert tiers.tier_by_qid() == {
        "Q1": "long_tail",
        "Q2": "head",
        "Q3": "long_tail",
        "Q4": "head",
        "Q5": "long_tail",
        "Q6": "long_tail",
    }
    assert state.lines == {"pareto": 30.0, "head_tail": 30.0, "torso": None}  # rank ceil(0.2 * 6)


def test_a_load_is_one_change_and_an_edit_is_another() -> None:
    state = BrowserState()
    batches: list[set[str]] = []
    state.watch(lambda changes: batches.append(set(changes)))
    state.load("City", table("City", COUNTS), TierSettings())
    state.set_fraction(0.5)
    state.set_split_by("head_tail")
    assert batches[0] >= {"category", "table", "distribution", "tiers"}
    assert batches[1] == {"settings", "tiers"} and batches[2] == {"settings", "tiers"}
    assert state.tiers is not None and state.tiers.summary.tiers[0].size == 3  # 50, 30, 10


def test_tiers_taken_for_a_save_keep_their_category_and_settings() -> None:
    """What a debounced save captured is the edited category's, whatever is shown later."""
    state = BrowserState()
    state.load("Food", table("Food", COUNTS), TierSettings())
    state.set_split_by("head_tail")
    state.set_fraction(0.5)
    pending = state.tiers
    state.load("City", table("City", [1, 2, 3]), TierSettings())
    assert pending is not None and pending.category == "Food"
    assert pending.settings == TierSettings("head_tail", fraction=0.5)
    assert list(pending.qids) == [f"Q{i + 1}" for i in range(6)]
    assert state.tiers is not None and state.tiers.category == "City"


def test_only_the_splitting_line_and_the_torso_line_move() -> None:
    state = BrowserState()
    state.load("City", table("City", COUNTS), TierSettings())  # split by Pareto
    assert state.is_movable("pareto") and state.is_movable("torso")
    assert not state.is_movable("head_tail")
    before = state.settings
    assert not state.drag_line("head_tail", 3.0)  # shown for reference only
    assert state.settings == before
    assert state.drag_line("pareto", 10.0)  # the head follows the drag
    assert state.tiers is not None and state.tiers.summary.tiers[0].size == 3
    assert state.settings.share == pytest.approx(0.9)
    state.set_split_by("head_tail")
    assert state.is_movable("head_tail") and not state.is_movable("pareto")
    assert state.drag_line("head_tail", 5.0)
    assert state.tiers.summary.tiers[0].size == 4  # 50, 30, 10, 5
    with pytest.raises(ValueError, match="no line"):
        state.drag_line("middle", 1.0)


def test_torso_line_on_off_and_default() -> None:
    state = BrowserState()
    state.load("City", table("City", list(range(1, 11))), TierSettings("head_tail"))
    state.set_torso(True)  # half the head line (9)
    assert state.settings.torso_line == 4.0
    state.set_torso(True, 5)
    assert [t.size for t in state.tiers.summary.tiers] == [2, 4, 4]
    state.set_torso(False)
    assert state.settings.torso_line is None


def test_empty_category_and_compare_with_ticks() -> None:
    state = BrowserState()
    state.load("River", table("River", []), TierSettings())
    assert state.distribution is None and state.tiers is None
    state.compared = ("Food", "City")
    state.set_overlay("Food", None)  # the session holds no members of it
    state.set_overlay("City", Distribution([1, 2]))
    assert state.unfetched == ("Food",)
    state.set_overlay("Food", Distribution([3]))
    assert state.unfetched == ()


def test_the_selection_is_shared() -> None:
    selection = Selection(source="embedded")
    state = BrowserState(selection)
    assert state.selection is selection
    heard: list[tuple[str, object, object]] = []
    selection.subscribe(lambda *change: heard.append(change))
    selection.update(category="City", entity="Q1")
    assert heard == [("category", None, "City"), ("entity", None, "Q1")]
    assert replace(TierSettings(), share=0.5) != state.settings  # settings are values
