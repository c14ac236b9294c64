"""The Scores tables' model and view: formatting, the colour scale per metric column,
paging (the next page on scrolling) and sorting (here, or in the session while paging).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableView,
)

from core.labels import tier_label
from core.metrics.info import format_metric, lower_is_better, metric_info
from core.metrics.score_pages import ScoreSort
from widgets.scores.ranking import column_names, column_ranges, column_sort_ranks, sort_order
from widgets.scores.rows import ScoreTableRow
from widgets.theme import TONES

# Colour scale ends: pale so that black text stays readable on every cell.
BAD = QColor(246, 190, 182)
MIDDLE = QColor(255, 255, 255)
GOOD = QColor(186, 228, 192)


# -- formatting and colour ---------------------------------------------------------------


def metric_of(column: str) -> str:
    return column.partition(":")[0]


def column_title(column: str) -> str:
    metric, _, quality = column.partition(":")
    return f"{metric} {quality}" if quality else metric


def format_value(column: str, value: float | None) -> str:
    """A cell's value, to its metric's precision (core.metrics.info)."""
    return format_metric(metric_of(column), value)


def _blend(a: QColor, b: QColor, t: float) -> QColor:
    return QColor(
        round(a.red() + (b.red() - a.red()) * t),
        round(a.green() + (b.green() - a.green()) * t),
        round(a.blue() + (b.blue() - a.blue()) * t),
    )


def scale_colour(column: str, value: float, low: float, high: float) -> QColor | None:
    """Red (worst in the column) through white to green (best); None when all are equal."""
    if high <= low:
        return None
    goodness = (value - low) / (high - low)
    if lower_is_better(metric_of(column)):  # the colour scale turns round
        goodness = 1.0 - goodness
    if goodness < 0.5:
        return _blend(BAD, MIDDLE, goodness * 2)
    return _blend(MIDDLE, GOOD, (goodness - 0.5) * 2)


class ScoreTableModel(QAbstractTableModel):
    """Key columns then one column per metric (``metric`` or ``metric:quality``).

    Sorting puts texts without a value last in either direction and is stable. It works
    on per-column ranks (:func:`column_sort_ranks`): handed in by :meth:`set_rows` when a
    refresh job built them, else computed for a column the first time it is sorted. A
    header click is then an argsort of one array and a permutation (a few ms at 50k
    rows). Each metric column has its own colour scale from its lowest to its highest
    value (turned round where lower is better). The sort value is under ``Qt.UserRole``.

    Paged: when the rows handed in are the first of more (``total`` in :meth:`set_rows`),
    the view's scrolling to the end asks for the next page (``fetch_requested``, Qt's
    ``canFetchMore``/``fetchMore``) and :meth:`append_rows` adds it; a header click then
    cannot sort the rows it has, so it asks for the rows in that order
    (``sort_requested``: the controller sorts in SQL and hands in page 1 again).
    """

    fetch_requested = Signal(int)  # the offset of the next page: the view reached the end
    sort_requested = Signal(object)  # ScoreSort: a header click on a table still paging

    def __init__(
        self, key_headers: Sequence[str], parent: Any = None, *, tail_headers: Sequence[str] = ()
    ) -> None:
        super().__init__(parent)
        self.key_headers = tuple(key_headers)
        self.tail_headers = tuple(tail_headers)  # key cells shown after the metrics
        self.metric_columns: list[str] = []
        self.column_tips: dict[str, str] = {}
        self._rows: list[ScoreTableRow] = []
        self._ranges: dict[str, tuple[float, float]] = {}
        self._keys: dict[str, np.ndarray] = {}  # column name -> ranks, in the rows' order
        self._total = 0  # rows in all (the pages not loaded yet included)
        self._fetching = False  # the next page was asked for and has not come
        # Whether a page asked for now would be shown. Qt's views ask for the next page
        # from a timer that their row count starts, hidden or not; the panel answers
        # with its table's visibility, and asks itself once the table is shown.
        self.fetch_wanted: Callable[[], bool] = lambda: True

    # content
    def set_rows(
        self,
        rows: Sequence[ScoreTableRow],
        metric_columns: Sequence[str],
        column_tips: Mapping[str, str] | None = None,
        ranges: Mapping[str, tuple[float, float]] | None = None,
        *,
        sort_keys: Mapping[str, np.ndarray] | None = None,
        total: int | None = None,
    ) -> None:
        """Show ``rows`` in the order given: a caller that sorted them already (see
        :func:`presort_rows`) needs no :meth:`sort` after this. ``ranges``:
        :func:`column_ranges` of these rows (or of all the rows, when paged) when already
        computed; ``sort_keys``: :func:`table_sort_keys` of these rows, in their order,
        when already computed; ``total``: how many rows there are in all when ``rows``
        is only the first page (None: these are all)."""
        keys = dict(sort_keys or {})
        if any(len(k) != len(rows) for k in keys.values()):
            raise ValueError("sort_keys must have one rank per row, in the rows' order")
        self.beginResetModel()
        self._rows = list(rows)
        self.metric_columns = list(metric_columns)
        self.column_tips = dict(column_tips or {})
        self._ranges = (
            dict(ranges) if ranges is not None else column_ranges(self._rows, self.metric_columns)
        )
        self._keys = keys
        self._total = len(self._rows) if total is None else max(total, len(self._rows))
        self._fetching = False
        self.endResetModel()

    def append_rows(self, rows: Sequence[ScoreTableRow]) -> None:
        """The next page (what ``fetch_requested`` asked for), after the rows shown."""
        self._fetching = False
        if not rows:
            self._total = len(self._rows)  # fewer than announced: the table changed
            return
        first = len(self._rows)
        self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
        self._rows.extend(rows)
        self._total = max(self._total, len(self._rows))
        self._keys = {}  # ranks were of the rows before: ranked again on a sort
        self.endInsertRows()

    @property
    def complete(self) -> bool:
        """Whether every row is here (so a sort can be done here)."""
        return len(self._rows) >= self._total

    @property
    def total(self) -> int:
        return self._total

    def canFetchMore(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> bool:  # noqa: B008
        return not parent.isValid() and not self.complete and not self._fetching

    def fetchMore(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> None:  # noqa: B008
        if self.canFetchMore(parent) and self.fetch_wanted():
            self._fetching = True
            self.fetch_requested.emit(len(self._rows))

    def row_at(self, row: int) -> ScoreTableRow:
        return self._rows[row]

    def row_of_key(self, key: Any) -> int | None:
        for i, row in enumerate(self._rows):
            if row.key == key:
                return i
        return None

    def column_of(self, metric_column: str) -> int:
        return len(self.key_headers) + self.metric_columns.index(metric_column)

    def column_name(self, column: int) -> str | None:
        """The name a :class:`SortSpec` uses for ``column`` (None: no such column)."""
        if not 0 <= column < self.columnCount():
            return None
        metric = self._column(column)
        return self._header(column) if metric is None else metric

    def section_of(self, name: str) -> int | None:
        """The column named ``name`` (:meth:`column_name`), or None when it is gone."""
        names = column_names(self.key_headers, self.metric_columns, self.tail_headers)
        return names.index(name) if name in names else None

    # Qt model interface
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return (
            0
            if parent.isValid()
            else (len(self.key_headers) + len(self.metric_columns) + len(self.tail_headers))
        )

    def _column(self, column: int) -> str | None:
        """The metric column name, or None for a key column."""
        k = len(self.key_headers)
        return (
            self.metric_columns[column - k] if 0 <= column - k < len(self.metric_columns) else None
        )

    def _cell(self, column: int) -> int:
        """Index into ``ScoreTableRow.cells`` of a key (or tail) column."""
        k = len(self.key_headers)
        return column if column < k else column - len(self.metric_columns)

    def _header(self, column: int) -> str:
        return (self.key_headers + self.tail_headers)[self._cell(column)]

    def sort_value(self, row: ScoreTableRow, column: int) -> Any:
        metric = self._column(column)
        if metric is None:
            return row.cells[self._cell(column)]
        return row.scores.get(metric)

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        metric = self._column(index.column())
        if metric is None:
            value = row.cells[self._cell(index.column())]
            if role == Qt.ItemDataRole.DisplayRole:
                if value is None:
                    return ""
                # Tier codes read as every panel shows them ("long tail · en only");
                # sorting and filtering keep the codes (UserRole).
                if self._header(index.column()) == "tier" and isinstance(value, str):
                    return tier_label(value)
                return str(value)
            if role == Qt.ItemDataRole.ToolTipRole:
                return row.tooltip or None
            if role == Qt.ItemDataRole.UserRole:
                return value
            if role == Qt.ItemDataRole.TextAlignmentRole and isinstance(value, int):
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            return None
        value = row.scores.get(metric)
        if role == Qt.ItemDataRole.DisplayRole:
            return format_value(metric, value)
        if role == Qt.ItemDataRole.UserRole:
            return value
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.BackgroundRole and value is not None:
            low_high = self._ranges.get(metric)
            return scale_colour(metric, value, *low_high) if low_high else None
        if role == Qt.ItemDataRole.ForegroundRole:
            # Dark text on the light colour scale, in a dark theme too.
            return QColor(TONES["muted"][0]) if value is None else QColor("#1a1a1a")
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = row.score_tips.get(metric)
            if tip:
                return tip
            low_high = self._ranges.get(metric)
            if value is None:
                return f"{column_title(metric)}: no score (not scored, or no reference)"
            spread = (
                (
                    f" (column {format_value(metric, low_high[0])} – "
                    f"{format_value(metric, low_high[1])})"
                )
                if low_high
                else ""
            )
            return f"{column_title(metric)} = {value:.6g}{spread}"
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        metric = self._column(section)
        if role == Qt.ItemDataRole.DisplayRole:
            return self._header(section) if metric is None else column_title(metric)
        if role == Qt.ItemDataRole.ToolTipRole and metric is not None:
            info = metric_info(metric_of(metric))
            tip = self.column_tips.get(metric) or info.description
            better = "higher is better" if info.higher_is_better else "lower is better"
            return f"{tip}\n({better}; colours: red = worst, green = best in this column)"
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        name = self.column_name(column)
        if name is None:
            return
        if not self.complete:  # only some rows here: they come sorted from the session
            self.sort_requested.emit(ScoreSort(name, order == Qt.SortOrder.DescendingOrder))
            return
        ranks = self._keys.get(name)
        if ranks is None:  # not handed in: rank this column once (small tables, tests)
            ranks = self._keys[name] = column_sort_ranks(
                [self.sort_value(r, column) for r in self._rows]
            )
        order_ = sort_order(ranks, order == Qt.SortOrder.DescendingOrder)
        self.layoutAboutToBeChanged.emit()
        listed = order_.tolist()
        self._rows = [self._rows[i] for i in listed]
        self._keys = {k: v[order_] for k, v in self._keys.items()}
        # Selection and current index follow their rows: old position -> new position.
        where = np.empty(len(listed), dtype=np.int64)
        where[order_] = np.arange(len(listed))
        old = self.persistentIndexList()
        new = [self.index(int(where[i.row()]), i.column()) for i in old]
        self.changePersistentIndexList(old, new)
        self.layoutChanged.emit()


def table_view(model: ScoreTableModel) -> QTableView:
    view = QTableView()
    view.setModel(model)
    view.setSortingEnabled(True)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setAlternatingRowColors(False)  # the colour scale is the background
    view.verticalHeader().setVisible(False)
    view.verticalHeader().setDefaultSectionSize(22)
    header = view.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setStretchLastSection(False)
    header.setDefaultSectionSize(64)
    header.setMinimumSectionSize(28)
    header.setResizeContentsPrecision(60)  # sizing reads 60 rows, not thousands
    header.setSortIndicatorShown(True)
    header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
    return view
