"""The unit whose prompt the Verbalise panel previews: a search and a paged drop-down."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from core.labels import plural, tier_label
from widgets.theme import set_muted
from widgets.verbalise.common import combo

if TYPE_CHECKING:
    from core.verbalise.runs import UnitSummary

_Index = QModelIndex | QPersistentModelIndex


def unit_label(unit: UnitSummary) -> str:
    """How the picker names a unit: uid · category · tier · size."""
    tier = unit.sub_tier or unit.tier
    parts = [
        unit.uid,
        unit.category,
        tier_label(tier) if tier else "",
        f"{unit.size} triple{'s' if unit.size != 1 else ''}",
    ]
    return " · ".join(str(p) for p in parts if p)


class PagedUnits(QStandardItemModel):
    """The units the picker's search matches, read a page at a time: the drop-down asks
    for more (``fetchMore``) as it scrolls, the picker asks its controller
    (``UnitPicker.more_requested``), which answers with :meth:`UnitPicker.add_page`."""

    def __init__(self, picker: UnitPicker) -> None:
        super().__init__(0, 1, picker)  # deleted with the picker (Qt holds a parentless one)
        self._picker = picker
        self.matching = 0  # units the search matches, whether read yet or not

    def canFetchMore(self, parent: _Index = QModelIndex()) -> bool:  # noqa: B008
        return not parent.isValid() and self.rowCount() < self.matching

    def fetchMore(self, parent: _Index = QModelIndex()) -> None:  # noqa: B008
        if self.canFetchMore(parent):
            self._picker.more_requested.emit(self._picker.search_text(), self.last_id())

    def last_id(self) -> int | None:
        rows = self.rowCount()
        return int(self.item(rows - 1).data(Qt.ItemDataRole.UserRole)) if rows else None


class UnitPicker(QWidget):
    """The unit whose prompt is previewed: a search line and a drop-down of the units it
    matches, one page at a time (the session is never read whole). A unit chosen
    elsewhere (the Units panel) is shown even when its page is not read yet."""

    search_changed = Signal(str)  # the search text, once typing pauses
    more_requested = Signal(str, object)  # the search text, the last unit id read
    unit_chosen = Signal(int)  # a unit picked in the drop-down

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._shown: UnitSummary | None = None
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find a unit: part of its id, category or tier")
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip(
            "Lists the units whose id, category, tier or sub-tier contains this text"
        )
        self._typing = QTimer(self)
        self._typing.setSingleShot(True)
        self._typing.setInterval(250)
        self._typing.timeout.connect(lambda: self.search_changed.emit(self.search_text()))
        self.search.textChanged.connect(lambda _text: self._typing.start())
        self.units = PagedUnits(self)
        self.combo = combo()
        self.combo.setModel(self.units)
        self.combo.setToolTip(
            "The unit whose prompt is previewed; follows the unit selected in the Units panel"
        )
        # Only the user's pick is a choice (``activated``): filling the list and showing a
        # unit chosen elsewhere change the current index without telling anyone.
        self.combo.activated.connect(self._on_activated)
        self.matches_label = QLabel()
        set_muted(self.matches_label)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("<b>Exact prompt</b> for"))
        row.addWidget(self.combo, 1)
        layout.addLayout(row)
        search_row = QHBoxLayout()
        search_row.addWidget(self.search, 1)
        search_row.addWidget(self.matches_label)
        layout.addLayout(search_row)

    def search_text(self) -> str:
        return self.search.text().strip()

    def show_page(self, units: Sequence[UnitSummary], matching: int) -> None:
        """The first page of the units the search matches, and how many it matches."""
        self.units.removeRows(0, self.units.rowCount())
        self.units.matching = matching
        self.matches_label.setText(
            f"{matching:,} matching" if self.search_text() else plural(matching, "unit")
        )
        self.add_page(units)

    def add_page(self, units: Sequence[UnitSummary]) -> None:
        """The next page (the drop-down scrolled to its end)."""
        for unit in units:
            row = QStandardItem(unit_label(unit))
            row.setData(unit.id, Qt.ItemDataRole.UserRole)
            self.units.appendRow(row)
        if not units:  # nothing more to read: the session shrank since the count
            self.units.matching = self.units.rowCount()
        self.show_unit(self._shown)

    def show_unit(self, unit: UnitSummary | None) -> None:
        """The unit previewed, whether its page is read or not."""
        self._shown = unit
        index = self.combo.findData(unit.id) if unit is not None else -1
        self.combo.setPlaceholderText(unit_label(unit) if unit is not None else "")
        self.combo.setCurrentIndex(index)

    def unit_id(self) -> int | None:
        data = self.combo.currentData()
        if data is not None:
            return int(data)
        return self._shown.id if self._shown is not None else None

    def _on_activated(self, _index: int) -> None:
        data = self.combo.currentData()
        if data is not None:
            self.unit_chosen.emit(int(data))
