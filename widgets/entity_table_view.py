"""The Browser's entity table: a category's entities and their tiers, filtered by tier,
Wikipedia page and text, with the count of rows shown below.

The Browser panel (:mod:`widgets.browser`) gives it the category's table and tiers from
its state and hears which entity the user picked (:attr:`EntityTableView.entity_picked`);
the columns are sized here so the Tier column, the one the panel is about, stays whole.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.labels import tier_label
from core.tiers.cutoffs import Tier
from core.vocab import LANGUAGES
from core.wikidata.records import CategoryTable
from widgets.entity_table import COL_TIER, SUB_TIER_FILTER, EntityTableModel

# The Label column: as wide as its labels up to LABEL_MAX px where the table has the
# room, never under LABEL_MIN px (see EntityTableView._fit_label_column).
LABEL_MIN, LABEL_MAX = 90, 240


class EntityTableView(QWidget):
    entity_picked = Signal(object)  # the QID of the row the user made current

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = EntityTableModel(self)  # deleted with the view
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(2, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        # One line a row: a label too long for its column is cut at its end ("Fenareto
        # Internati…"), not wrapped to a first word and an ellipsis ("Fenareto …").
        self.table.setWordWrap(False)
        self._size_columns()
        self.table.selectionModel().currentRowChanged.connect(self._on_row_selected)
        self._build_filters()
        self._layout()

    def _size_columns(self) -> None:
        header = self.table.horizontalHeader()
        metrics = header.fontMetrics()
        cells = self.table.fontMetrics()
        for column, sample in ((1, "Q9999999999"), (2, "99,999"), (3, "9,999"), (4, "en it es")):
            # never narrower than the title and the sort arrow ("Statements" was clipped),
            # nor than a typical cell; the Label column takes the rest
            title = str(self.model.headerData(column, Qt.Orientation.Horizontal) or "")
            width = max(cells.horizontalAdvance(sample) + 12, metrics.horizontalAdvance(title) + 28)
            self.table.setColumnWidth(column, width)
        # Labels whole up to 240 px where the table has the room; where it has not (a
        # 1366 px window), the Label column gives way so the Tier column, the one this
        # panel is about, is whole on screen (it showed "Tie" and "hea" at the right
        # edge), down to 90 px; narrower still, the table scrolls sideways.
        # The Tier column takes what is left.
        tier_words = [tier_label(t.value) for t in Tier]
        tier_words += [tier_label(f"long_tail_{lang}") for lang in LANGUAGES]
        self._tier_width = max(
            max(cells.horizontalAdvance(words) for words in tier_words) + 16,
            metrics.horizontalAdvance(
                str(self.model.headerData(COL_TIER, Qt.Orientation.Horizontal))
            )
            + 28,
        )
        self._label_wanted = LABEL_MIN  # the Label column's content width, at most 240 px
        self.table.viewport().installEventFilter(self)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        header.setResizeContentsPrecision(200)
        header.setMinimumSectionSize(40)

    def _build_filters(self) -> None:
        self.tier_filter = QComboBox()
        self.tier_filter.addItem("Any tier", None)
        for code, tier in enumerate(Tier):
            self.tier_filter.addItem(tier_label(tier.value), code)
        for sub, lang in enumerate(LANGUAGES):
            self.tier_filter.addItem(tier_label(f"long_tail_{lang}"), SUB_TIER_FILTER + sub)
        self.wiki_filter = QComboBox()
        self.wiki_filter.addItem("Any Wikipedia", None)
        for lang in LANGUAGES:
            self.wiki_filter.addItem(f"has {lang} page", lang)
        self.search_edit = QLineEdit()
        self.search_edit.setPlaceholderText("Search label or QID")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.setMinimumWidth(100)  # its placeholder readable in a narrow dock
        for widget in (self.tier_filter, self.wiki_filter):
            widget.currentIndexChanged.connect(lambda _i: self._apply_filters())
        self.search_edit.textChanged.connect(lambda _t: self._apply_filters())
        self.count_label = QLabel()

    def _layout(self) -> None:
        filters = QHBoxLayout()
        filters.addWidget(self.search_edit, 1)
        filters.addWidget(self.tier_filter)
        filters.addWidget(self.wiki_filter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(filters)
        layout.addWidget(self.table, 1)
        # Below the table, not in the filter row: that row sets the Browser's minimum width.
        layout.addWidget(self.count_label)

    # -- what the panel shows ------------------------------------------------------------------
    def show_table(self, table: CategoryTable) -> None:
        self.model.set_entities(table)
        self.table.resizeColumnToContents(0)
        self._label_wanted = min(max(self.table.columnWidth(0), LABEL_MIN), LABEL_MAX)
        self._fit_label_column()

    def set_tiers(self, codes: np.ndarray | None, sub_tiers: np.ndarray | None = None) -> None:
        """Each row's tier code (None: no tiers, every row untiered) and long-tail sub-tier."""
        if codes is None:
            self.model.set_tiers(np.full(len(self.model.columns), -1, np.int8))
        else:
            self.model.set_tiers(codes, sub_tiers)
        self.update_count()

    def show_selected(self, qid: str | None) -> None:
        """Select ``qid``'s row (none when it is None or not shown)."""
        row = self.model.row_of(qid) if qid is not None else None
        # No loop: the row picked here writes the same entity back, which is no change.
        if row is None:
            self.table.clearSelection()
            self.table.setCurrentIndex(QModelIndex())
        else:
            self.table.selectRow(row)

    def update_count(self) -> None:
        self.count_label.setText(f"{self.model.rowCount():,} of {len(self.model.columns):,}")

    # -- sizing and the user's choices -----------------------------------------------------------
    def _fit_label_column(self) -> None:
        """The Label column as wide as its labels (up to 240 px) where that leaves the
        other columns and the Tier column's words on screen, else narrower (not under
        90 px)."""
        others = sum(self.table.columnWidth(c) for c in range(1, COL_TIER))
        room = self.table.viewport().width() - others - self._tier_width
        width = max(LABEL_MIN, min(self._label_wanted, room))
        if self.table.columnWidth(0) != width:
            self.table.setColumnWidth(0, width)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self.table.viewport():
            QTimer.singleShot(0, self, self._fit_label_column)
        return super().eventFilter(watched, event)

    def _apply_filters(self) -> None:
        self.model.set_filters(
            tier=self.tier_filter.currentData(),
            wiki=self.wiki_filter.currentData(),
            text=self.search_edit.text(),
        )
        self.update_count()

    def _on_row_selected(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.entity_picked.emit(self.model.data(current, Qt.ItemDataRole.UserRole))
