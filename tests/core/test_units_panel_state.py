"""core/units/builder/panel_state.py: what the Units panel's user chose, without a window."""

from __future__ import annotations

from core.units.builder.panel_state import ANY, UnitsPanelState
from core.units.claim_filters import ClaimFilterSettings


def test_saved_view_round_trips_as_one_change() -> None:
    state = UnitsPanelState(size="2", sort_column=0, sort_descending=True)
    saved = state.saved()
    assert saved == {
        "filters": {"shape": ANY, "size": "2", "tier": ANY, "languages": ANY, "references": ANY},
        "sort": [0, 1],
    }
    batches = []
    other = UnitsPanelState()
    other.watch(batches.append)
    other.restore(saved, columns=8)
    assert other.saved() == saved and other.filtering()
    assert len(batches) == 1 and set(batches[0]) == {"size", "sort_column", "sort_descending"}


def test_malformed_saved_view_is_left_out() -> None:
    state = UnitsPanelState(shape="chain")
    state.restore(
        {"filters": {"shape": 3, "colour": "red", "tier": "head"}, "sort": [9, 1]}, columns=8
    )
    assert state.unit_filter()["shape"] == "chain"  # a number is no filter value
    assert state.tier == "head"
    assert (state.sort_column, state.sort_descending) == (-1, False)  # column 9 of 8
    state.restore({"sort": [True, 0]}, columns=8)  # a yes/no is no column
    assert state.sort_column == -1


def test_a_rule_switch_changes_one_rule() -> None:
    state = UnitsPanelState()
    assert state.claim_filters == ClaimFilterSettings()
    state.claim_filters = state.with_rule("drop_deprecated", False)
    assert not state.claim_filters.drop_deprecated and state.claim_filters.truthy_only
