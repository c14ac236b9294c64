"""What the Units panel's user chose (Qt-free): the saved-units table's filters and sort,
and the claim filters (METHODS §4 rules) the draft's candidates follow.

``widgets/units/`` binds its filter combos, the table's sort and the rule switches to
it (``widgets.binding.bind``); ``app/units.py`` follows ``claim_filters`` into the draft;
``app/window_state.py`` keeps :meth:`UnitsPanelState.saved` per session and restores the
panel by :meth:`UnitsPanelState.restore`. Tests drive it without a window.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.state import Field, State
from core.units.claim_filters import ClaimFilterSettings

ANY = "All"  # a units filter that lets every unit through
# The filters above the units table, in their order (each a column of the table).
UNIT_FILTER_NAMES = ("shape", "size", "tier", "languages", "references")
# The fields that make the table's view (what window_state keeps per session).
VIEW_FIELDS = (*UNIT_FILTER_NAMES, "sort_column", "sort_descending")


class UnitsPanelState(State):
    shape: Field[str] = Field(ANY)
    size: Field[str] = Field(ANY)
    tier: Field[str] = Field(ANY)
    languages: Field[str] = Field(ANY)
    references: Field[str] = Field(ANY)
    sort_column: Field[int] = Field(-1)  # -1: in the order the session gave them
    sort_descending: Field[bool] = Field(False)
    claim_filters: Field[ClaimFilterSettings] = Field(factory=ClaimFilterSettings)

    def unit_filter(self) -> dict[str, str]:
        """Each units filter's value (``ANY``: not filtering)."""
        return {name: getattr(self, name) for name in UNIT_FILTER_NAMES}

    def filtering(self) -> bool:
        return any(value != ANY for value in self.unit_filter().values())

    def saved(self) -> dict[str, Any]:
        """The table's view as plain JSON values (the format settings already hold)."""
        return {
            "filters": self.unit_filter(),
            "sort": [self.sort_column, 1 if self.sort_descending else 0],
        }

    def restore(self, saved: Mapping[str, Any], columns: int) -> None:
        """The view :meth:`saved` gave, as one change; what is malformed (an unknown
        filter, a value that is not text, a sort past the table's ``columns``) is left
        as it is rather than refused: settings outlive versions of the table."""
        values: dict[str, Any] = {}
        filters = saved.get("filters")
        if isinstance(filters, Mapping):
            for name, value in filters.items():
                if name in UNIT_FILTER_NAMES and isinstance(value, str):
                    values[name] = value
        sort = saved.get("sort")
        if (
            isinstance(sort, list)
            and len(sort) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in sort)
            and -1 <= sort[0] < columns
        ):
            values["sort_column"], values["sort_descending"] = sort[0], bool(sort[1])
        self.update(**values)

    def with_rule(self, rule: str, on: bool) -> ClaimFilterSettings:
        """The claim filters with one rule switched (what a rule's switch writes)."""
        from dataclasses import replace

        return replace(self.claim_filters, **{rule: on})
