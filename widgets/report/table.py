"""The report's tables: a ``core.report.Table`` as a Qt model (significant cells
highlighted and starred) and one tab page per table.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QBrush, QColor, QFont, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHeaderView,
    QLabel,
    QScrollArea,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.labels import tier_label
from core.report import (
    Table,
    metric_label,
)
from core.report.render import SIGNIFICANT_MARK
from core.report.verdict import (
    format_value,
)
from core.tiers.cutoffs import SubTier, Tier
from widgets.theme import muted_colour, themed_style_sheet

# Columns of the report's tables that may hold a tier code (a compared group, or a key),
# and the codes (core.tiers.cutoffs' tiers and sub-tiers).
# Where the report's tables hold tier codes: the comparisons' two groups, the study
# table's "type" (its tier group), and the tier columns of the other tables.
TIER_COLUMNS = frozenset({"tier", "subtier", "a", "b", "group", "group_a", "group_b", "type"})
TIER_CODES = frozenset(tier.value for tier in (*Tier, *SubTier))

MARK_BACKGROUND = QColor("#ffd866")
MARK_FOREGROUND = QColor("#5c3b00")
# Friendlier headers for the comparison tables (the exports keep the core's names).
HEADERS = {
    "group_a": "a",
    "group_b": "b",
    "n_a": "n a",
    "median_a": "median a",
    "iqr_a": "IQR a",
    "mean_a": "mean a",
    "n_b": "n b",
    "median_b": "median b",
    "iqr_b": "IQR b",
    "mean_b": "mean b",
    "p_value": "p (averaged)",
    "effect_size": "effect r",
    "significant": "significant",
    "lang": "language",
    "p_adjusted": "p corrected",
    "median_a_ci_low": "a 95% low",
    "median_a_ci_high": "a 95% high",
    "median_b_ci_low": "b 95% low",
    "median_b_ci_high": "b 95% high",
    "median_diff": "median a−b",
    "median_diff_ci_low": "a−b 95% low",
    "median_diff_ci_high": "a−b 95% high",
}
TAB_TITLES = {
    "counts": "Counts",
    "runs": "Runs",
    "signatures": "Signatures",
    "annotations": "Human ratings",
    "agreement": "Metrics vs humans",
    "esa_matrix": "ESA matrix",
    "runs_used": "Runs used",
    "headlines": "Head vs tail",
}


# -- the table model ------------------------------------------------------------------------


class ReportTableModel(QAbstractTableModel):
    """A ``core.report.Table`` as a Qt model: marked cells highlighted and starred.

    ``Qt.UserRole`` gives a cell's raw value (tests and sorting use it); sorting keeps
    each row's marks, which are looked up by the row's position in the core table.
    """

    def __init__(self, table: Table | None = None, parent: Any = None) -> None:
        super().__init__(parent)
        self.table: Table | None = None
        self._order: list[int] = []
        self._mark_tip = "significant"
        self._bold = QFont()
        self._bold.setBold(True)
        if table is not None:
            self.set_table(table)

    def set_table(self, table: Table | None, mark_tip: str = "significant") -> None:
        self.beginResetModel()
        self.table = table
        self._order = list(range(len(table.rows))) if table is not None else []
        self._mark_tip = mark_tip
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() or self.table is None else len(self._order)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() or self.table is None else len(self.table.columns)

    def is_marked(self, row: int, column: int) -> bool:
        return self.table is not None and (self._order[row], column) in self.table.marked

    def raw(self, row: int, column: int) -> Any:
        assert self.table is not None
        return self.table.rows[self._order[row]][column]

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid() or self.table is None:
            return None
        row, column = index.row(), index.column()
        value = self.raw(row, column)
        marked = self.is_marked(row, column)
        if role == Qt.ItemDataRole.DisplayRole:
            if self.table.columns[column] == "metric" and isinstance(value, str):
                value = metric_label(value)
            elif value in TIER_CODES and self.table.columns[column] in TIER_COLUMNS:
                value = tier_label(
                    value
                )  # "long tail", as every panel says; UserRole keeps the code
            return format_value(value) + (f" {SIGNIFICANT_MARK}" if marked else "")
        if role == Qt.ItemDataRole.UserRole:
            return value
        if role == Qt.ItemDataRole.BackgroundRole and marked:
            return QBrush(MARK_BACKGROUND)
        if role == Qt.ItemDataRole.ForegroundRole and marked:
            return QBrush(MARK_FOREGROUND)
        if role == Qt.ItemDataRole.FontRole and marked:
            return self._bold
        if role == Qt.ItemDataRole.ToolTipRole:
            text = str(value) if value is not None else ""
            return f"{text}\n{self._mark_tip}" if marked else (text if len(text) > 30 else None)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            numeric = isinstance(value, int | float) and not isinstance(value, bool)
            horizontal = Qt.AlignmentFlag.AlignRight if numeric else Qt.AlignmentFlag.AlignLeft
            return int(horizontal | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if self.table is None or role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            name = self.table.columns[section]
            return HEADERS.get(name, name) if self.table.name.startswith("compare_") else name
        return str(section + 1)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if self.table is None or not 0 <= column < len(self.table.columns):
            return
        rows = self.table.rows

        def key(i: int) -> tuple[int, Any]:
            value = rows[i][column]
            if value is None or (isinstance(value, float) and math.isnan(value)):
                return (1, 0)  # blanks last either way
            return (0, value if isinstance(value, int | float) else str(value))

        self.layoutAboutToBeChanged.emit()
        filled = [i for i in self._order if key(i)[0] == 0]
        blank = [i for i in self._order if key(i)[0] == 1]
        filled.sort(key=key, reverse=order == Qt.SortOrder.DescendingOrder)
        self._order = filled + blank
        self.layoutChanged.emit()


class TablePage(QWidget):
    """One table of the report: its note above, the table view below."""

    @staticmethod
    def showing(table: Table, mark_tip: str) -> tuple[Table, str | None]:
        """What a page shows: the table, and the marks' tip where it has marks."""
        return table, (mark_tip if table.marked else None)

    def __init__(self, table: Table, mark_tip: str) -> None:
        super().__init__()
        self.shows = self.showing(table, mark_tip)  # what it was laid out for
        self.model = ReportTableModel(parent=self)  # deleted with the table
        self.model.set_table(table, mark_tip)
        self.view = QTableView()
        self.view.setModel(self.model)
        # No sort indicator at first: the rows stay in the core's reading order until a
        # header is clicked (setSortingEnabled would otherwise sort by column 0 at once).
        self.view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.view.setSortingEnabled(True)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setAlternatingRowColors(True)
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setDefaultSectionSize(22)
        self.view.setWordWrap(False)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setMinimumSectionSize(36)
        header.setResizeContentsPrecision(40)  # sizing reads 40 rows, not all of them
        if table.name.startswith("compare_"):
            # The verdict (p, effect, mark) right after the two groups' names, so a narrow
            # dock shows it without scrolling; n, median, IQR, mean follow.
            for offset, name in enumerate(("p_value", "p_adjusted", "effect_size", "significant")):
                if name in table.columns and "group_b" in table.columns:
                    target = table.columns.index("group_b") + 1 + offset
                    header.moveSection(header.visualIndex(table.columns.index(name)), target)
            # A stratum that is the same on every row (one model, say) is said once in
            # the note rather than repeated in a column a narrow dock has no room for.
            constant = []
            for name in ("model", "lang", "quality"):
                column = table.columns.index(name)
                values = {row[column] for row in table.rows}
                if len(table.rows) > 1 and len(values) == 1:
                    self.view.setColumnHidden(column, True)
                    value = next(iter(values))
                    if value:  # empty: the dimension compared, or no quality at all
                        constant.append(f"{HEADERS.get(name, name)} {value}")
            if constant:
                note = f"{table.note}; same on every row: {', '.join(constant)}"
                table = replace(table, note=note.strip())
        self._sized = False
        # Plain text: a note quotes conditions and names ("esa.undetected>=1", "metric's");
        # escaped into an auto-format label they showed as "&gt;" and "&#x27;".
        self.note = QLabel(table.note or "")
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.setWordWrap(True)
        themed_style_sheet(self.note, lambda p: f"color: {muted_colour(p)}; font-size:11px;")
        # At most about three lines high, scrolling past that: the table keeps its rows.
        note_scroll = QScrollArea()
        note_scroll.setWidget(self.note)
        note_scroll.setWidgetResizable(True)
        note_scroll.setFrameShape(QFrame.Shape.NoFrame)
        note_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.note.ensurePolished()  # the style sheet's 11 px font, for the line height
        note_scroll.setMaximumHeight(3 * self.note.fontMetrics().lineSpacing() + 2)
        note_scroll.setVisible(bool(table.note))
        self.empty = QLabel(
            "No rows: nothing to compare in this dimension (see the notes above the tables)."
        )
        self.empty.setWordWrap(True)
        self.empty.setVisible(not table.rows)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 0)
        layout.addWidget(note_scroll)
        layout.addWidget(self.empty)
        layout.addWidget(self.view, 1)

    def showEvent(self, event: QShowEvent) -> None:
        # Columns are sized when a tab is first seen: sizing reads cells, and a report
        # has many tables that may never be opened (keeps show_report well under 100 ms).
        if not self._sized:
            self._sized = True
            self.view.resizeColumnsToContents()
            for column in range(self.model.columnCount()):
                if self.view.columnWidth(column) > 260:
                    self.view.setColumnWidth(column, 260)  # long JSON cells: see the tooltip
        super().showEvent(event)


def plain_title(title: str) -> str:
    return title.removesuffix(f" {SIGNIFICANT_MARK}")


def tab_title(table: Table) -> str:
    """Short tab titles; a tab holding significant cells carries the mark."""
    if table.name.startswith("compare_"):
        title = f"By {table.name.removeprefix('compare_')}"
    elif table.name.startswith("study_"):
        title = "Study table"
    else:
        title = TAB_TITLES.get(table.name, table.title)
    return title + (f" {SIGNIFICANT_MARK}" if table.marked else "")
