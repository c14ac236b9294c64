"""The session's saved units: a table read a page at a time, sorted and filtered in the
view, with the selected unit's reference texts below it.

Its filters and sort are fields of the panel's :class:`UnitsPanelState` (the combos are
bound to them; the header's sort indicator writes into them and follows them), so a
filter or sort restored from settings is a state change like the user's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QScrollArea,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.groups import order_key, subtier_group, tier_group
from core.labels import plural, tier_label
from core.tiers.cutoffs import SubTier, Tier
from core.units.builder.panel_state import ANY, UNIT_FILTER_NAMES, VIEW_FIELDS, UnitsPanelState
from core.vocab import QUALITIES
from widgets.binding import bind
from widgets.theme import TONES, muted_colour, themed_text

if TYPE_CHECKING:
    from core.tiers.stored import TierChange
    from core.units.builder.saved import StoredUnit

GREY = QBrush(QColor(TONES["muted"][0]))  # the style draws it in the theme's variant
RED = QBrush(QColor(TONES["error"][0]))
UNIT_COLUMNS = (
    "uid",
    "shape",
    "size",
    "tier",
    "languages",
    "parallel",
    "origin",
    "references",
)
SORT_ROLE = Qt.ItemDataRole.UserRole + 1  # what a column sorts by (sizes as numbers)
FILTER_ROLE = Qt.ItemDataRole.UserRole + 2  # the values a unit's cell matches, "|"-joined
NO_TIER = "none"
# What each filter combo offers first (a name alone: five boxes of "Any …" did not fit a
# 1024 px window).
_FILTER_WORDS = {
    "shape": "Shape",
    "size": "Size",
    "tier": "Tier",
    "languages": "Language",
    "references": "References",
}
# Every tier and sub-tier a unit can be sampled from or built under.
TIERS = tuple(tier.value for tier in (*Tier, *SubTier))
# The values each column of the units list shows at its widest (the tiers' display
# words, "long tail · en only" the longest); origin takes what is left.
_UNIT_COLUMN_SAMPLES: dict[str, tuple[str, ...]] = {
    "uid": ("WWWWWWW",),
    "shape": ("sibling",),
    "size": ("size",),
    "tier": tuple(tier_label(tier) for tier in TIERS),
    "languages": ("en es it",),
    "parallel": ("en es it",),
}


def tier_words(tier: str | None, sub_tier: str | None = None) -> str:
    """A unit's tier in the words every panel uses (Annotate's filter, the Report's
    groups): TailNLG's top_head is "head", its rare_claims "rare claims", a long-tail
    unit's language sub-tier "long tail · en only"."""
    return tier_label(subtier_group(tier, sub_tier)) if tier else ""


def _tier_groups(tier: str | None, sub_tier: str | None) -> list[str]:
    """The tier filter's values a unit matches: its tier and its sub-tier group (a
    long_tail_en unit is in "long tail" and in "long tail · en only")."""
    if not tier:
        return [NO_TIER]
    return list(dict.fromkeys((tier_group(tier), subtier_group(tier, sub_tier))))


def _tier_sort_key(tier: str | None, sub_tier: str | None) -> str:
    """Sorting the tier column goes head to tail (a string: Qt compares it)."""
    if not tier:
        return "99"
    rank, code = order_key("subtier", subtier_group(tier, sub_tier))
    return f"{rank:02d} {code}"


def item(text: str, *, data: Any = None, grey: bool = False) -> QStandardItem:
    cell = QStandardItem(text)
    cell.setEditable(False)
    if data is not None:
        cell.setData(data, Qt.ItemDataRole.UserRole)
    if grey:
        cell.setForeground(GREY)
    return cell


def table(model: QStandardItemModel | QSortFilterProxyModel, stretch: bool = False) -> QTableView:
    view = QTableView()
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.verticalHeader().setVisible(False)
    header = view.horizontalHeader()
    if stretch:
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
    else:
        header.setStretchLastSection(True)
    return view


def _fit_unit_columns(view: QTableView) -> None:
    """Each column as wide as its widest value, on one line (no "long tail · en / only"
    wrapped over two lines)."""
    view.setWordWrap(False)
    metrics = view.fontMetrics()
    header_metrics = view.horizontalHeader().fontMetrics()
    for column, name in enumerate(UNIT_COLUMNS):
        samples = _UNIT_COLUMN_SAMPLES.get(name)
        if samples is None:
            continue
        width = max(
            *(metrics.horizontalAdvance(sample) for sample in samples),
            header_metrics.horizontalAdvance(name),
        )
        view.setColumnWidth(column, width + 16)


class _PagedUnitsModel(QStandardItemModel):
    """The saved units, read a page at a time: the view asks for more (``fetchMore``) as
    it scrolls, the table asks its controller (``more_units_requested``), which answers
    with ``UnitsTable.add_units``."""

    def __init__(self, owner: UnitsTable) -> None:
        # The table is its Qt parent: without one the model outlived the window in Qt,
        # and what Qt held for it kept the whole window's Python side alive.
        super().__init__(0, len(UNIT_COLUMNS), owner)
        self._owner = owner
        self.total = 0  # units in the session, whether read yet or not
        self.asked_after: int | None = None  # the last unit id a page was asked after

    def canFetchMore(self, parent: QModelIndex = QModelIndex()) -> bool:  # noqa: B008
        return not parent.isValid() and self.rowCount() < self.total

    def fetchMore(self, parent: QModelIndex = QModelIndex()) -> None:  # noqa: B008
        if self.canFetchMore(parent):
            after = self._owner.last_unit_id()
            if after is not None and after == self.asked_after:
                return  # that page is on its way (read off the UI thread)
            self.asked_after = after
            self._owner.more_units_requested.emit(after)


class _UnitFilter(QSortFilterProxyModel):
    """The units shown: sorted by any column, filtered by shape, size, tier, language and
    whether they have references (``wanted``: column -> the value a unit must have)."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.wanted: dict[int, str] = {}
        self.setSortRole(SORT_ROLE)

    def set_wanted(self, wanted: Mapping[int, str]) -> None:
        self.wanted = {c: v for c, v in wanted.items() if v != ANY}
        self.invalidateFilter()

    def filterAcceptsRow(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> bool:
        source = self.sourceModel()
        for column, value in self.wanted.items():
            cell = str(source.index(row, column, parent).data(FILTER_ROLE) or "")
            if value not in cell.split("|"):
                return False
        return True


def _unit_row(
    unit: StoredUnit, refs: Mapping[str, int], change: TierChange | None
) -> list[QStandardItem]:
    """One unit's cells, each with what it sorts by and what its filter matches."""
    tier = item(tier_words(unit.tier, unit.sub_tier))
    if change is not None:
        tier.setText(
            f"{tier.text() or 'no tier'} ⚠ now {tier_words(change.now_tier, change.now_sub_tier)}"
        )
        tier.setToolTip(
            f"This unit was {change.describe()} (the Browser's lines "
            "moved since). The unit keeps its tier; the report groups it "
            "by the tier at build time."
        )
        tier.setForeground(RED)
    refs_text = " · ".join(f"{q} {n:,}" for q, n in sorted(refs.items()))
    row = [
        item(unit.uid, data=unit.id),
        item(unit.shape or ""),
        item(str(unit.size)),
        tier,
        item(" ".join(unit.languages)),
        item(" ".join(sorted(unit.parallel))),
        item(unit.origin),
        item(refs_text, grey=not refs),
    ]
    sorts: tuple[Any, ...] = (
        unit.uid,
        unit.shape or "",
        unit.size,
        _tier_sort_key(unit.tier, unit.sub_tier),
        " ".join(unit.languages),
        " ".join(sorted(unit.parallel)),
        unit.origin,
        sum(refs.values()),
    )
    matches = unit_matches(unit, refs)
    for column, (cell, key) in enumerate(zip(row, sorts, strict=True)):
        cell.setData(key, SORT_ROLE)
        name = UNIT_COLUMNS[column]
        if name in matches:
            cell.setData(matches[name], FILTER_ROLE)
    return row


def unit_matches(unit: StoredUnit, refs: Mapping[str, int]) -> dict[str, str]:
    """The values each filter matches for ``unit`` ("|"-joined)."""
    return {
        "shape": unit.shape or "",
        "size": str(unit.size),
        "tier": "|".join(_tier_groups(unit.tier, unit.sub_tier)),
        "languages": "|".join(unit.languages),
        "references": "|".join([*refs, "any"] if refs else ["none"]),
    }


class UnitsTable(QWidget):
    """The saved units' table, its filter row, count line and the references below."""

    unit_selected = Signal(int)  # a saved unit to show
    more_units_requested = Signal(object)  # the last unit id shown: the next page is wanted
    units_shown = Signal()  # the session's units (page one) are in the table

    def __init__(self, state: UnitsPanelState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self._tier_changes: Mapping[int, TierChange] = {}
        self._reading_all = False  # a sort or filter is reading the remaining pages
        self._asking = False  # inside _read_every_page's loop
        self._units_words = ""
        self._build_view()
        self._build_filters()
        self._build_references()
        self.units_label = QLabel()
        self.top_row = QHBoxLayout()  # the count, then what the panel adds beside it
        self.top_row.addWidget(self.units_label, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self.top_row)
        filter_row = QHBoxLayout()
        for combo in self.unit_filters.values():
            filter_row.addWidget(combo, 1)
        layout.addLayout(filter_row)
        layout.addWidget(self.units_view, 1)
        layout.addWidget(self.references_scroll)
        # The view follows the state whoever changed it: a combo, the header, a restore.
        state.watch(lambda _changes: self._apply_view(), VIEW_FIELDS)

    # -- building --------------------------------------------------------------------------
    def _build_view(self) -> None:
        self.units_model = _PagedUnitsModel(self)
        self.units_model.setHorizontalHeaderLabels(list(UNIT_COLUMNS))
        # Sorted and filtered in the view; a sort or a filter reads every page first.
        self.units_proxy = _UnitFilter(self)
        self.units_proxy.setSourceModel(self.units_model)
        view = self.units_view = table(self.units_proxy)
        view.setSortingEnabled(True)
        header = view.horizontalHeader()
        header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        header.sortIndicatorChanged.connect(self._on_sort_indicator)
        _fit_unit_columns(view)
        # At least five rows of units, whatever the editor below asks for (one row showed
        # at 1024 x 640 once the filters and references took their lines).
        view.setMinimumHeight(
            5 * view.verticalHeader().defaultSectionSize()
            + header.sizeHint().height()
            + view.horizontalScrollBar().sizeHint().height()
            + 2 * view.frameWidth()
        )
        view.selectionModel().currentRowChanged.connect(self._on_unit_row)

    def _build_filters(self) -> None:
        self.unit_filters: dict[str, QComboBox] = {}
        for name in UNIT_FILTER_NAMES:
            everything = _FILTER_WORDS[name]
            combo = QComboBox()
            combo.addItem(everything, ANY)
            combo.setToolTip(f"Only units with this {name}")
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            # Never narrower than its own name, what it shows when nothing is chosen.
            combo.setMinimumContentsLength(len(everything))
            self.unit_filters[name] = combo
        self._fill_filter("references", [*QUALITIES, "any", "none"])
        # Before the bindings: a value set on the state that no unit read yet has (a
        # restored filter) is offered first, so the combo can show it.
        self.state.subscribe(self._offer, UNIT_FILTER_NAMES)
        for name, combo in self.unit_filters.items():
            bind(self.state, name, combo)

    def _build_references(self) -> None:
        self.references_view = QLabel()  # the selected unit's reference texts
        self.references_view.setWordWrap(True)
        self.references_view.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.references_view.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.references_scroll = QScrollArea()
        self.references_scroll.setWidget(self.references_view)
        self.references_scroll.setWidgetResizable(True)
        self.references_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.references_scroll.setMaximumHeight(90)
        self.references_scroll.setVisible(False)

    # -- what the controller shows ---------------------------------------------------------
    def show_units(
        self,
        units: Sequence[StoredUnit],
        tier_changes: Mapping[int, TierChange] | None = None,
        total: int | None = None,
        references: Mapping[int, Mapping[str, int]] | None = None,
    ) -> None:
        """``core.units.builder.saved.StoredUnit``s; ``tier_changes`` (unit id ->
        ``core.tiers.stored.TierChange``) marks units whose root has another tier now.
        With ``total`` (the session's count), ``units`` is the first page: the rest is
        asked for (``more_units_requested``) as the view scrolls."""
        self._tier_changes = tier_changes = tier_changes or {}
        self.units_model.removeRows(0, self.units_model.rowCount())
        self.units_model.asked_after = None
        self.units_model.total = len(units) if total is None else total
        self.add_units(units, references)
        changed = len(tier_changes)
        self._units_words = f"{plural(self.units_model.total, 'unit')} in the session" + (
            f" · {changed:,} built under another tier than their root's now" if changed else ""
        )
        self.units_label.setText(self._units_words)
        if self.state.sort_column >= 0 or self.state.filtering():
            self._apply_view()  # a sort or filter in force works on every unit
        self.units_shown.emit()

    def add_units(
        self,
        units: Sequence[StoredUnit],
        references: Mapping[int, Mapping[str, int]] | None = None,
    ) -> None:
        """The next page of units (after those shown); ``references``: unit id ->
        {quality: texts} (``core.units.reference_counts.reference_counts``)."""
        references = references or {}
        if not units:
            self.units_model.total = self.units_model.rowCount()  # the session shrank
        for unit in units:
            refs = references.get(unit.id, {})
            self.units_model.appendRow(_unit_row(unit, refs, self._tier_changes.get(unit.id)))
            matches = unit_matches(unit, refs)
            for name in ("shape", "size", "languages"):
                self._fill_filter(name, matches[name].split("|"))
            self._fill_tier_filter(matches["tier"].split("|"))
        if self._reading_all:  # a sort or filter waits for every page: ask for the next
            self._read_every_page()
        if self._reading_all or self.state.filtering():
            self._show_counts()

    def last_unit_id(self) -> int | None:
        rows = self.units_model.rowCount()
        if not rows:
            return None
        return int(self.units_model.item(rows - 1, 0).data(Qt.ItemDataRole.UserRole))

    def show_references(self, references: Sequence[tuple[str, str, str]]) -> None:
        """The selected unit's reference texts: (language, quality, text)."""
        themed_text(
            self.references_view,
            lambda: (
                "<br>".join(
                    f"<b>{escape(lang)}</b> <span style='color:{muted_colour()}'>"
                    f"{escape(quality)}</span> {escape(text)}"
                    for lang, quality, text in references
                )
                or "<i>No reference texts for this unit.</i>"
            ),
        )
        self.references_scroll.setVisible(True)

    # -- filters and sort --------------------------------------------------------------------
    def _fill_filter(self, name: str, values: Sequence[str]) -> None:
        combo = self.unit_filters[name]
        known = {combo.itemData(i) for i in range(combo.count())}
        for value in values:
            if value and value not in known:
                combo.addItem(value, value)
                known.add(value)

    def _fill_tier_filter(self, codes: Sequence[str]) -> None:
        """Tiers in the one vocabulary, head to tail (as Annotate's filter lists them)."""
        combo = self.unit_filters["tier"]
        for code in codes:
            if combo.findData(code) >= 0:
                continue
            key = order_key("subtier", code)
            at = 1  # after "Tier" (any tier)
            while at < combo.count() and order_key("subtier", combo.itemData(at)) <= key:
                at += 1
            combo.insertItem(at, tier_label(None if code == NO_TIER else code), code)

    def _offer(self, name: str, _old: Any, new: Any) -> None:
        """A filter value no unit read yet has is offered all the same (the filter reads
        every page)."""
        combo = self.unit_filters[name]
        if isinstance(new, str) and combo.findData(new) < 0:
            combo.addItem(new, new)

    def _on_sort_indicator(self, section: int, order: Qt.SortOrder) -> None:
        self.state.update(
            sort_column=section, sort_descending=order == Qt.SortOrder.DescendingOrder
        )

    def _apply_view(self) -> None:
        """Sort and filter as the state says; either works on every unit, so the pages
        not read yet are asked for."""
        state, header = self.state, self.units_view.horizontalHeader()
        order = (
            Qt.SortOrder.DescendingOrder if state.sort_descending else Qt.SortOrder.AscendingOrder
        )
        if (header.sortIndicatorSection(), header.sortIndicatorOrder()) != (
            state.sort_column,
            order,
        ):
            # The header's signal writes the same values back: no change, no loop.
            if state.sort_column >= 0:
                self.units_view.sortByColumn(state.sort_column, order)
            else:
                header.setSortIndicator(-1, order)
                self.units_proxy.sort(-1)
        wanted = {UNIT_COLUMNS.index(name): value for name, value in state.unit_filter().items()}
        self.units_proxy.set_wanted(wanted)
        self._read_every_page()
        self._show_counts()

    def _show_counts(self) -> None:
        shown, loaded = self.units_proxy.rowCount(), self.units_model.rowCount()
        total = self.units_model.total
        reading = (
            f" (reading {loaded:,} of {total:,}…)" if self._reading_all and loaded < total else ""
        )
        self.units_label.setText(
            f"{shown:,} of {plural(total, 'unit')} match the filters{reading}"
            if shown != loaded or reading
            else self._units_words
        )

    def _read_every_page(self) -> None:
        """A sort or a filter works on every unit: the pages not read yet are asked for,
        one after another, until none is left. An answer that comes at once (through
        ``add_units``) is followed by the next question here; one that comes later (read
        off the UI thread) asks for the next from ``add_units``. The proxy sorts and
        filters the rows as they arrive."""
        model = self.units_model
        self._reading_all = model.canFetchMore(QModelIndex())
        if self._asking:
            return
        self._asking = True
        try:
            while model.canFetchMore(QModelIndex()):
                before = model.rowCount()
                model.fetchMore(QModelIndex())
                if model.rowCount() == before:  # answered later, off the UI thread (or never)
                    return
            self._reading_all = False
        finally:
            self._asking = False

    def _on_unit_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            row = self.units_proxy.mapToSource(current).row()
            unit_id = self.units_model.item(row, 0).data(Qt.ItemDataRole.UserRole)
            self.unit_selected.emit(int(unit_id))
