"""Scores panel: units × candidates × metrics, one text in detail, a corpus summary.

Top: "Score…" (the metrics, models, runs and languages to score, run as a job with its
progress and a Cancel button here) and filters by run, language, tier and the text's words
(a ``ScoresFilter``). A note line says
which BERTScore model the scores come from and whether they are rescaled, and which
encoder graph–text similarity uses.

Tab "Texts": a table (model/view, sortable, a colour scale per metric column; a page of the
texts, the next one asked for when it is scrolled to its end, sorted in the session while
it holds only some of them) beside the
selected text with its ESA mentions highlighted, missing entities listed and hallucination
candidates marked, and the unit's triples (in the text's language) and references (gold and
silver labelled). The table and the detail sit in a splitter that lies side by side when
the panel is wide and stacks when it is narrow (the dock starts narrow).

Tab "Summary": sentence scores pooled by model × language × tier.

The panel keeps no truth of its own: ``app.scores.ScoresController`` reads the session
through ``core.metrics.score_pages`` (a page at a time) and ``core.metrics.scoring`` and
hands plain rows here.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QColor, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.metrics import ALL_METRICS, DEFAULT_METRICS
from core.metrics.info import format_metric, lower_is_better, metric_info
from core.metrics.score_pages import KEY_COLUMNS, ScoresFilter, ScoreSort
from core.surface import surface_triple
from widgets.synonyms import SynonymDialog

# The texts table's key columns (core's names, which a ScoreSort uses): the key cells before
# the metric columns, and the text after them.
TEXT_KEYS = KEY_COLUMNS[:-1]  # unit, model, lang, #, tier
TEXT_TAIL = KEY_COLUMNS[-1:]  # text
SUMMARY_KEYS = ("model", "lang", "tier", "texts")
# Colour scale ends: pale so that black text stays readable on every cell.
BAD = QColor(246, 190, 182)
MIDDLE = QColor(255, 255, 255)
GOOD = QColor(186, 228, 192)
# Highlights in the detail view (also drawn in its legend).
MENTION_COLOUR = "#b9e4c9"  # ESA: a unit entity found in the text
HALLUCINATION_COLOUR = "#f7c6a3"  # a name or number matching nothing in the unit
MISSING_COLOUR = "#c23b22"  # a unit entity the text does not mention
WIDE_PX = 1000  # at least this wide: table and detail side by side
SEARCH_DELAY_MS = 300  # the search asks for rows this long after the last key


# -- plain data the controller hands in -------------------------------------------------


@dataclass(frozen=True)
class ScoreTableRow:
    """One table row: key cells (text or numbers) and scores by column."""

    key: Any  # the verbalisation id (texts) or the group (summary)
    cells: tuple[Any, ...]
    scores: Mapping[str, float | None]
    tooltip: str = ""
    score_tips: Mapping[str, str] = field(default_factory=dict)  # column -> cell tooltip


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    label: str  # the unit entity (mention) or the span's words (hallucination)
    how: str = ""  # how a mention was matched (label, alias, date, pronoun, …)


@dataclass(frozen=True)
class TextDetail:
    """Everything the detail view shows of one verbalisation."""

    title: str
    text: str
    lang: str
    mentions: Sequence[Span] = ()
    missing: Sequence[str] = ()
    hallucinations: Sequence[Span] = ()
    esa_scored: bool = False
    hallucination_scored: bool = False
    triples: Sequence[tuple[str, str, str]] = ()
    references: Sequence[tuple[str, str]] = ()  # (quality, text)
    scores: Sequence[tuple[str, str, str]] = ()  # (column, value, note)


@dataclass(frozen=True)
class ModelChoice:
    label: str
    value: str | None  # what goes into MetricOptions (None: the default)
    note: str = ""


@dataclass(frozen=True)
class ScoreChoices:
    """What the Score… dialog offers (the controller finds the models and runs)."""

    runs: Sequence[tuple[int, str]]  # (run id, label)
    langs: Sequence[str]
    bertscore_models: Sequence[ModelChoice]
    encoders: Sequence[ModelChoice]
    ppl_models: Sequence[ModelChoice]
    checked: Sequence[str] = DEFAULT_METRICS
    # METEOR's WordNet: where it was found, or why METEOR will be absent (one line).
    wordnet_found: bool = False
    wordnet_note: str = ""


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


def highlighted_html(text: str, mentions: Sequence[Span], hallucinations: Sequence[Span]) -> str:
    """The text as HTML, mentions and hallucination candidates on their own colours
    (a character in both gets the hallucination colour with the mention's underline)."""
    kinds = [0] * len(text)  # bit 1: mention, bit 2: hallucination
    titles: list[str] = [""] * len(text)
    for bit, spans in ((1, mentions), (2, hallucinations)):
        for span in spans:
            for i in range(max(0, span.start), min(len(text), span.end)):
                kinds[i] |= bit
                what = (
                    f"mentions {span.label}" + (f" ({span.how})" if span.how else "")
                    if bit == 1
                    else "hallucination candidate: matches nothing in the unit"
                )
                titles[i] = f"{titles[i]}; {what}" if titles[i] else what
    out: list[str] = []
    i = 0
    while i < len(text):
        j = i
        while j < len(text) and kinds[j] == kinds[i] and titles[j] == titles[i]:
            j += 1
        piece = html.escape(text[i:j]).replace("\n", "<br>")
        kind = kinds[i]
        if kind == 0:
            out.append(piece)
        else:
            colour = HALLUCINATION_COLOUR if kind & 2 else MENTION_COLOUR
            style = f"background-color:{colour};"
            if kind == 3:
                style += "text-decoration:underline;"
            out.append(f'<span style="{style}" title="{html.escape(titles[i])}">{piece}</span>')
        i = j
    return "".join(out)


# -- the table model ---------------------------------------------------------------------


def column_ranges(
    rows: Sequence[ScoreTableRow], metric_columns: Sequence[str]
) -> dict[str, tuple[float, float]]:
    """Each metric column's lowest and highest value (its colour scale). Pure, so that a
    controller can compute it off the UI thread for tens of thousands of rows."""
    ranges: dict[str, tuple[float, float]] = {}
    for column in metric_columns:
        values = [v for r in rows if (v := r.scores.get(column)) is not None]
        if values:
            ranges[column] = (min(values), max(values))
    return ranges


def scored_count(rows: Sequence[ScoreTableRow]) -> int:
    """Rows with at least one score."""
    return sum(1 for r in rows if any(v is not None for v in r.scores.values()))


# -- sorting (pure: a refresh job sorts at study scale, the model reuses its keys) ----------

# The rank of a missing value: after every present one, in both directions.
MISSING_RANK = np.iinfo(np.int32).max


# A table's sort: the column by name (a key header such as ``"unit"`` or ``"text"``, or a
# metric column such as ``"bleu:gold"``), so that it survives columns coming and going
# between refreshes, and the direction. Core's type: the same value sorts a page in SQL.
SortSpec = ScoreSort


def qt_order(sort: ScoreSort) -> Qt.SortOrder:
    return Qt.SortOrder.DescendingOrder if sort.descending else Qt.SortOrder.AscendingOrder


def sort_key(value: Any) -> tuple[int, Any, str] | None:
    """The one sort key of a cell: numbers by value, then anything else by its text;
    None (and NaN, whose order is undefined) is missing."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, (int, float)):
        return (0, value, "")
    return (1, 0, str(value))


def column_sort_ranks(values: Sequence[Any]) -> np.ndarray:
    """Dense ranks (int32) of ``values`` under :func:`sort_key`: equal keys share a rank, a
    missing value gets :data:`MISSING_RANK`. A stable argsort of the ranks is the table's
    sort (see :func:`sort_order`); building them is the slow part, done in a job."""
    n = len(values)
    missing = np.fromiter((v is None for v in values), dtype=bool, count=n)
    ranks = np.full(n, MISSING_RANK, dtype=np.int32)
    if {type(v) for v in values} <= {float, int, type(None)}:  # score columns: numpy only
        numbers = np.fromiter((0.0 if v is None else v for v in values), dtype=np.float64, count=n)
        missing |= np.isnan(numbers)
        present = numbers[~missing]
        if not present.size or float(np.abs(present).max()) <= 2.0**53:  # exact as floats
            _distinct, inverse = np.unique(present, return_inverse=True)
            ranks[~missing] = inverse.reshape(-1)
            return ranks
    keys = [sort_key(v) for v in values]
    rank_of = {k: i for i, k in enumerate(sorted({k for k in keys if k is not None}))}
    return np.fromiter(
        (MISSING_RANK if k is None else rank_of[k] for k in keys), dtype=np.int32, count=n
    )


def sort_order(ranks: np.ndarray, descending: bool) -> np.ndarray:
    """Row positions in sorted order: stable (equal values keep their order) and with the
    missing values last in either direction, as the table sorts."""
    if descending:
        ranks = np.where(ranks == MISSING_RANK, MISSING_RANK, -ranks.astype(np.int64))
    return np.argsort(ranks, kind="stable")


def column_names(
    key_headers: Sequence[str], metric_columns: Sequence[str], tail_headers: Sequence[str] = ()
) -> list[str]:
    """Each table column's name (:attr:`SortSpec.column`), in column order."""
    return [*key_headers, *metric_columns, *tail_headers]


def table_sort_keys(
    rows: Sequence[ScoreTableRow],
    metric_columns: Sequence[str],
    *,
    key_headers: Sequence[str] = TEXT_KEYS,
    tail_headers: Sequence[str] = TEXT_TAIL,
) -> dict[str, np.ndarray]:
    """:func:`column_sort_ranks` of every column, by column name, aligned with ``rows``
    (what :meth:`ScoreTableModel.set_rows` takes as ``sort_keys``)."""
    keys: dict[str, np.ndarray] = {}
    for cell, name in enumerate((*key_headers, *tail_headers)):
        keys[name] = column_sort_ranks([r.cells[cell] for r in rows])
    for column in metric_columns:
        keys[column] = column_sort_ranks([r.scores.get(column) for r in rows])
    return keys


@dataclass(frozen=True)
class SortedRows:
    """Table rows sorted off the UI thread, with their sort keys in the same order."""

    rows: list[ScoreTableRow]
    keys: dict[str, np.ndarray]
    sorted_by: SortSpec | None  # None: in the order given (no sort, or its column is gone)


def presort_rows(
    rows: Sequence[ScoreTableRow],
    metric_columns: Sequence[str],
    sort: SortSpec | None,
    *,
    key_headers: Sequence[str] = TEXT_KEYS,
    tail_headers: Sequence[str] = TEXT_TAIL,
) -> SortedRows:
    """Sort ``rows`` as the table would (pure; a refresh job calls it with the table's
    current sort so that the UI thread does not sort tens of thousands of rows again)."""
    keys = table_sort_keys(rows, metric_columns, key_headers=key_headers, tail_headers=tail_headers)
    if sort is None or sort.column not in keys:
        return SortedRows(list(rows), keys, None)
    order = sort_order(keys[sort.column], sort.descending)
    listed = order.tolist()
    return SortedRows([rows[i] for i in listed], {k: v[order] for k, v in keys.items()}, sort)


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
        if self.canFetchMore(parent):
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
                return "" if value is None else str(value)
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
        if role == Qt.ItemDataRole.ForegroundRole and value is None:
            return QColor("#9a9a9a")
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


def _table(model: ScoreTableModel) -> QTableView:
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


# -- the Score… dialog -----------------------------------------------------------------


class ScoreDialog(QDialog):
    """Which metrics, models, runs and languages to score."""

    def __init__(self, choices: ScoreChoices, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Score verbalisations")
        layout = QVBoxLayout(self)

        metrics_box = QGroupBox("Metrics")
        grid = QGridLayout(metrics_box)
        self.metric_checks: dict[str, QCheckBox] = {}
        self.metric_notes: dict[str, QLabel] = {}
        for i, name in enumerate(ALL_METRICS):
            check = QCheckBox(name)
            check.setChecked(name in choices.checked)
            description = metric_info(name).description
            if metric_info(name).needs_model:
                description += " — needs a causal model (the run's own, or the one below)"
            check.setToolTip(description)
            # One line each: word-wrapped labels in a grid get one line's height and overlap.
            label = QLabel(description)
            label.setStyleSheet("color: palette(mid);")
            label.setToolTip(description)
            grid.addWidget(check, i, 0)
            grid.addWidget(label, i, 1)
            self.metric_checks[name] = check
            self.metric_notes[name] = label
        grid.setColumnStretch(1, 1)
        # METEOR needs a WordNet folder on this machine: say where it is, or why not.
        self.wordnet_edit = QLineEdit()
        self.wordnet_edit.setPlaceholderText("WordNet folder (empty: look for one)")
        self.wordnet_edit.setToolTip(
            "A WordNet 3.0 database folder (index.noun, data.noun, …) "
            "for METEOR; empty: $TAILLENS_WORDNET, nltk's data "
            "folders, /usr/share/wordnet (Debian's wordnet-base)"
        )
        self.wordnet_note = QLabel(choices.wordnet_note)
        self.wordnet_note.setWordWrap(True)
        if not choices.wordnet_found:
            self.wordnet_note.setStyleSheet("color: #a33;")
        row = len(ALL_METRICS)
        grid.addWidget(QLabel("WordNet"), row, 0)
        grid.addWidget(self.wordnet_edit, row, 1)
        grid.addWidget(self.wordnet_note, row + 1, 0, 1, 2)
        layout.addWidget(metrics_box)

        models_box = QGroupBox("Models")
        form = QFormLayout(models_box)
        self.bertscore_combo = self._model_combo(choices.bertscore_models)
        self.bertscore_note = QLabel()
        self.bertscore_note.setWordWrap(True)
        self.bertscore_combo.currentIndexChanged.connect(self._update_notes)
        self.bertscore_combo.editTextChanged.connect(self._update_notes)
        self.encoder_combo = self._model_combo(choices.encoders)
        self.encoder_note = QLabel()
        self.encoder_note.setWordWrap(True)
        self.encoder_combo.currentIndexChanged.connect(self._update_notes)
        self.encoder_combo.editTextChanged.connect(self._update_notes)
        self.ppl_combo = self._model_combo(choices.ppl_models)
        self.device_combo = QComboBox()
        self.device_combo.addItems(["auto", "cpu", "cuda", "mps"])
        self.esa_distance = QDoubleSpinBox()
        self.esa_distance.setRange(0.0, 0.95)
        self.esa_distance.setSingleStep(0.05)
        self.esa_distance.setValue(0.4)
        self.esa_distance.setToolTip(
            "Normalised Levenshtein distance under which a span of the "
            "text counts as a mention of an entity (METHODS §7)"
        )
        form.addRow("BERTScore model", self.bertscore_combo)
        form.addRow("", self.bertscore_note)
        form.addRow("Similarity encoder", self.encoder_combo)
        form.addRow("", self.encoder_note)
        form.addRow("Perplexity model", self.ppl_combo)
        form.addRow("ESA distance", self.esa_distance)
        form.addRow("Device", self.device_combo)
        layout.addWidget(models_box)

        texts_box = QGroupBox("Texts")
        texts = QVBoxLayout(texts_box)
        self.runs_list = QListWidget()
        self.runs_list.setMaximumHeight(110)
        for run_id, label in choices.runs:
            item = QListWidgetItem(label)
            item.setData(Qt.ItemDataRole.UserRole, run_id)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.runs_list.addItem(item)
        texts.addWidget(QLabel("Runs"))
        texts.addWidget(self.runs_list)
        langs_row = QHBoxLayout()
        langs_row.addWidget(QLabel("Languages"))
        self.lang_checks: dict[str, QCheckBox] = {}
        for lang in choices.langs:
            check = QCheckBox(lang)
            check.setChecked(True)
            langs_row.addWidget(check)
            self.lang_checks[lang] = check
        langs_row.addStretch(1)
        texts.addLayout(langs_row)
        self.references_check = QCheckBox("Also score the references (reference-free metrics)")
        texts.addWidget(self.references_check)
        # Every output counts by default, as in the WebNLG challenge's scripts.
        self.exclude_empty_check = QCheckBox(
            "Leave out empty outputs and unparsed replies (default: scored as empty texts)"
        )
        self.exclude_empty_check.setToolTip(
            "By default an empty output, and a reply no answer could be parsed from, is "
            "scored as an empty text, so it lowers the corpus score as it does in the WebNLG "
            "challenge's official scripts. Checked: they are left out (the summary counts "
            "them)."
        )
        self.exclude_unparsed_check = QCheckBox(
            "Leave out only the replies no answer could be parsed from"
        )
        texts.addWidget(self.exclude_empty_check)
        texts.addWidget(self.exclude_unparsed_check)
        layout.addWidget(texts_box)

        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Score")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self._update_notes()

    @staticmethod
    def _model_combo(choices: Sequence[ModelChoice]) -> QComboBox:
        combo = QComboBox()
        combo.setEditable(True)
        combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        combo.setToolTip("Pick one, or type a model folder or a cached Hugging Face id")
        for choice in choices:
            combo.addItem(choice.label, (choice.value, choice.note))
        return combo

    @staticmethod
    def _combo_value(combo: QComboBox) -> tuple[str | None, str]:
        index = combo.currentIndex()
        text = combo.currentText().strip()
        if index >= 0 and combo.itemText(index) == text:
            value, note = combo.itemData(index)
            return value, note
        return (text or None), ""

    def _update_notes(self, *_args: Any) -> None:
        value, note = self._combo_value(self.bertscore_combo)
        self.bertscore_note.setText(
            note
            or (
                f"{value}: rescaled only where bert_score ships a baseline for this model and "
                "language; otherwise the raw F1 is stored and marked not rescaled."
                if value
                else ""
            )
        )
        value, note = self._combo_value(self.encoder_combo)
        self.encoder_note.setText(
            note or (f"{value} (a sentence-transformers model)" if value else "")
        )

    def values(self) -> dict[str, Any]:
        """The request, as plain values (the controller builds the ScoringRequest)."""
        runs = [self.runs_list.item(i) for i in range(self.runs_list.count())]
        chosen_runs = [
            int(r.data(Qt.ItemDataRole.UserRole))
            for r in runs
            if r.checkState() == Qt.CheckState.Checked
        ]
        langs = [lang for lang, check in self.lang_checks.items() if check.isChecked()]
        return {
            "metrics": [n for n, c in self.metric_checks.items() if c.isChecked()],
            "run_ids": None if len(chosen_runs) == len(runs) else chosen_runs,
            "langs": None if len(langs) == len(self.lang_checks) else langs,
            "references": self.references_check.isChecked(),
            "bertscore_model": self._combo_value(self.bertscore_combo)[0],
            "encoder": self._combo_value(self.encoder_combo)[0],
            "ppl_model": self._combo_value(self.ppl_combo)[0],
            "esa_distance": round(self.esa_distance.value(), 4),
            "device": self.device_combo.currentText(),
            "wordnet": self.wordnet_edit.text().strip() or None,
            "exclude_empty": self.exclude_empty_check.isChecked(),
            "exclude_unparsed": self.exclude_unparsed_check.isChecked(),
        }


# -- the panel ---------------------------------------------------------------------------


class ScoresPanel(QWidget):
    score_dialog_requested = Signal()  # "Score…": the controller answers open_score_dialog
    synonyms_requested = Signal()  # "Synonyms…": the controller answers open_synonym_dialog
    score_requested = Signal(dict)  # ScoreDialog.values()
    cancel_requested = Signal()
    filters_changed = Signal(object)  # ScoresFilter: the run, language, tier and search chosen
    sort_changed = Signal(object)  # ScoreSort: a header click on a table still paging
    more_requested = Signal(int)  # the offset of the next page: the table scrolled to its end
    text_selected = Signal(int)  # a verbalisation id
    retrieval_requested = Signal()  # "Retrieval…": app/retrieval.py opens the dialog

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.score_button = QPushButton("Score…")
        self.score_button.setToolTip(
            "Score the session's verbalisations (BLEU, chrF++, ROUGE, "
            "BERTScore, ESA, hallucination candidates, similarity, "
            "perplexity)"
        )
        self.score_button.clicked.connect(self.score_dialog_requested)
        self.synonyms_button = QPushButton("Synonyms…")
        self.synonyms_button.setToolTip(
            "Edit the synonym table ESA uses (Spain / Spanish, Texas / TX), stored in the session"
        )
        self.synonyms_button.clicked.connect(self.synonyms_requested)
        self.retrieval_button = QPushButton("Retrieval…")
        self.retrieval_button.setToolTip(
            "Graph ↔ text retrieval: find the graph behind the "
            "selected text; the outputs that match their own "
            "graph worst"
        )
        self.retrieval_button.clicked.connect(self.retrieval_requested)
        self.run_combo = QComboBox()
        self.lang_combo = QComboBox()
        self.tier_combo = QComboBox()
        for combo, tip in (
            (self.run_combo, "Only this run (model)"),
            (self.lang_combo, "Only this language"),
            (self.tier_combo, "Only units of this tier"),
        ):
            combo.setToolTip(tip)
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            combo.currentIndexChanged.connect(self._emit_filters)
        self.set_filter_choices([], [], [])
        # Words in the text or the unit's id, asked for a moment after the last key.
        self.search_edit = QLineEdit()
        self.search_edit.setPlaceholderText("Search texts")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.setToolTip("Only texts (or unit ids) containing these characters")
        self.search_edit.setMinimumWidth(120)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._emit_filters)
        self.search_edit.textChanged.connect(lambda _text: self._search_timer.start())
        self.search_edit.returnPressed.connect(self._search_now)
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.progress.setMaximumHeight(16)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.progress_label = QLabel()
        self.progress_label.setWordWrap(True)
        self.progress_box = QWidget()
        progress_row = QHBoxLayout(self.progress_box)
        progress_row.setContentsMargins(0, 0, 0, 0)
        progress_row.addWidget(self.progress, 1)
        progress_row.addWidget(self.cancel_button)
        self.progress_box.setVisible(False)
        self.count_label = QLabel()
        self.note_label = QLabel()
        self.note_label.setWordWrap(True)
        self.note_label.setTextFormat(Qt.TextFormat.RichText)
        self.note_label.setStyleSheet("color: #444;")

        # texts: table | detail
        self.table_model = ScoreTableModel(TEXT_KEYS, self, tail_headers=TEXT_TAIL)
        self.table_model.fetch_requested.connect(self.more_requested)
        self.table_model.sort_requested.connect(self.sort_changed)
        self.table = _table(self.table_model)
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        self.text_view = QTextBrowser()
        self.text_view.setOpenLinks(False)
        self.unit_view = QTextBrowser()
        self.unit_view.setOpenLinks(False)
        self.detail = QSplitter(Qt.Orientation.Vertical)
        self.detail.addWidget(self.text_view)
        self.detail.addWidget(self.unit_view)
        self.detail.setChildrenCollapsible(False)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.detail)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.shown_detail: TextDetail | None = None
        self.show_detail(None)

        # summary
        self.summary_model = ScoreTableModel(SUMMARY_KEYS, self)
        self.summary_table = _table(self.summary_model)
        self.summary_note = QLabel(
            "Means of per-text scores by model × language × tier "
            "(TailNLG's top_head counts as head). Hover a cell for "
            "its median and count; corpus BLEU/chrF++ are in "
            "<i>taillens score</i> and the report."
        )
        self.summary_note.setWordWrap(True)
        summary_box = QWidget()
        summary_layout = QVBoxLayout(summary_box)
        summary_layout.setContentsMargins(0, 0, 0, 0)
        summary_layout.addWidget(self.summary_note)
        summary_layout.addWidget(self.summary_table, 1)

        self.tabs = QTabWidget()
        self.tabs.addTab(self.splitter, "Texts")
        self.tabs.addTab(summary_box, "Summary")

        # layout
        top = QHBoxLayout()
        top.addWidget(self.score_button)
        top.addWidget(self.synonyms_button)
        top.addWidget(self.retrieval_button)
        top.addWidget(self.count_label, 1)
        filters = QHBoxLayout()
        for combo in (self.run_combo, self.lang_combo, self.tier_combo):
            filters.addWidget(combo)
        filters.addWidget(self.search_edit, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addLayout(filters)
        layout.addWidget(self.progress_box)
        layout.addWidget(self.progress_label)
        layout.addWidget(self.note_label)
        layout.addWidget(self.tabs, 1)
        self.progress_label.setVisible(False)
        self._dialog: ScoreDialog | None = None
        self._split_set = False  # the splitter's first sizes, once shown
        self._sized = False  # column widths follow the first rows, then stay as the user sets
        self._scored = 0  # texts with a score, of those that pass the filters
        self._total = 0  # texts in the session

    # -- what the controller shows -------------------------------------------------------
    def set_filter_choices(
        self, runs: Sequence[tuple[int, str]], langs: Sequence[str], tiers: Sequence[str]
    ) -> None:
        """Fill the filters, keeping what is chosen where it still exists."""
        for combo, everything, items in (
            (self.run_combo, "All runs", [(label, run_id) for run_id, label in runs]),
            (self.lang_combo, "All languages", [(lang, lang) for lang in langs]),
            (self.tier_combo, "All tiers", [(tier, tier) for tier in tiers]),
        ):
            current = combo.currentData()
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(everything, None)
            for label, data in items:
                combo.addItem(label, data)
            combo.setCurrentIndex(max(0, combo.findData(current)) if current is not None else 0)
            combo.blockSignals(False)

    def filters(self) -> ScoresFilter:
        return ScoresFilter(
            run_id=self.run_combo.currentData(),
            lang=self.lang_combo.currentData(),
            tier=self.tier_combo.currentData(),
            search=self.search_edit.text().strip(),
        )

    def sort_spec(self) -> SortSpec | None:
        """The texts table's current sort, by column name (what a refresh job sorts by)."""
        header = self.table.horizontalHeader()
        name = self.table_model.column_name(header.sortIndicatorSection())
        if name is None:
            return None
        return SortSpec(name, header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder)

    def show_rows(
        self,
        rows: Sequence[ScoreTableRow],
        columns: Sequence[str],
        tips: Mapping[str, str],
        total: int,
        *,
        ranges: Mapping[str, tuple[float, float]] | None = None,
        scored: int | None = None,
        sort_keys: Mapping[str, np.ndarray] | None = None,
        sorted_by: SortSpec | None = None,
        matching: int | None = None,
    ) -> None:
        """The texts table; the selection and the sort order survive a refresh.
        ``total``: the session's texts; ``matching``: those that pass the filters when
        ``rows`` is only their first page (None: ``rows`` are all of them; the rest come
        through :meth:`append_rows` as the table is scrolled).
        ``ranges`` (:func:`column_ranges`), ``scored`` (:func:`scored_count`) and
        ``sort_keys`` (:func:`table_sort_keys`) may come precomputed off the UI thread;
        rows already sorted there (in SQL, or :func:`presort_rows`) say so in
        ``sorted_by``, and when that is the table's sort they are shown as they are, with
        no sort here (a table with pages still to come asks for its sort instead)."""
        selected = self.selected_key()
        wanted = self.sort_spec()  # by name: the column may have moved or gone
        same_columns = list(columns) == self.table_model.metric_columns
        self.table_model.set_rows(rows, columns, tips, ranges, sort_keys=sort_keys, total=matching)
        section = self.table_model.section_of(wanted.column) if wanted is not None else None
        header = self.table.horizontalHeader()
        if section is not None and wanted is not None and wanted != sorted_by:
            self.table_model.sort(section, qt_order(wanted))  # sorted for another order
        if wanted is not None and (
            section != header.sortIndicatorSection()
            or qt_order(wanted) != header.sortIndicatorOrder()
        ):
            # Point the indicator at the column's new place (or nowhere, the column gone)
            # without the view sorting again.
            blocked = header.blockSignals(True)
            header.setSortIndicator(-1 if section is None else section, qt_order(wanted))
            header.blockSignals(blocked)
        if not same_columns or not self._sized:
            self._size_columns(self.table, len(TEXT_KEYS), text_column=True)
            self._sized = bool(rows)
        self._scored = scored_count(rows) if scored is None else scored
        self._total = total
        self._show_count()
        QTimer.singleShot(0, self._fill_view)
        row = self.table_model.row_of_key(selected) if selected is not None else None
        if row is not None:
            self.table.selectRow(row)
        elif selected is not None:
            self.show_detail(None)

    def append_rows(self, rows: Sequence[ScoreTableRow]) -> None:
        """The next page of the texts table (what ``more_requested`` asked for)."""
        self.table_model.append_rows(rows)
        self._show_count()

    def _fill_view(self) -> None:
        """Ask for the next page when the table shows its last row with room below (a
        tall panel, a short page): Qt's views ask only when scrolled to the end."""
        model = self.table_model
        if not self.table.isVisible() or not model.canFetchMore(QModelIndex()):
            return
        last = self.table.visualRect(model.index(model.rowCount() - 1, 0))
        if model.rowCount() == 0 or self.table.viewport().rect().intersects(last):
            model.fetchMore(QModelIndex())

    def _show_count(self) -> None:
        model = self.table_model
        matching, loaded = model.total, model.rowCount()
        shown = f"{matching:,}" if matching == self._total else f"{matching:,} of {self._total:,}"
        more = f" ({loaded:,} loaded; scroll for more)" if loaded < matching else ""
        self.count_label.setText(
            f"{shown} texts{more} · {self._scored:,} scored · "
            f"{len(model.metric_columns)} score columns"
        )

    def show_summary(
        self, rows: Sequence[ScoreTableRow], columns: Sequence[str], tips: Mapping[str, str]
    ) -> None:
        self.summary_model.set_rows(rows, columns, tips)
        self._size_columns(self.summary_table, len(SUMMARY_KEYS), text_column=False)

    def show_notes(self, text: str, tooltip: str = "") -> None:
        """Which BERTScore model and similarity encoder the scores come from."""
        self.note_label.setText(text)
        self.note_label.setToolTip(tooltip)
        self.note_label.setVisible(bool(text))

    def selected_key(self) -> Any:
        index = self.table.currentIndex()
        return self.table_model.row_at(index.row()).key if index.isValid() else None

    def select_text(self, verbalisation_id: int) -> bool:
        row = self.table_model.row_of_key(verbalisation_id)
        if row is None:
            return False
        self.table.selectRow(row)
        self.table.scrollTo(self.table_model.index(row, 0))
        return True

    def show_detail(self, detail: TextDetail | None) -> None:
        self.shown_detail = detail
        if detail is None:
            self.text_view.setHtml(
                "<p style='color:#777'>Select a text in the table to see "
                "its entity mentions, missing entities and hallucination "
                "candidates beside its unit and references.</p>"
            )
            self.unit_view.clear()
            return
        self.text_view.setHtml(_text_html(detail))
        self.unit_view.setHtml(_unit_html(detail))

    def open_score_dialog(self, choices: ScoreChoices) -> ScoreDialog:
        """The Score… dialog (window-modal, not blocking); accepted, it asks to score."""
        dialog = ScoreDialog(choices, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self.score_requested.emit(dialog.values()))
        dialog.open()
        self._dialog = dialog
        return dialog

    def open_synonym_dialog(self) -> SynonymDialog:
        """The ESA synonym editor (window-modal, not blocking)."""
        dialog = SynonymDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        self.synonym_dialog = dialog
        return dialog

    def job_started(self, title: str) -> None:
        self.score_button.setEnabled(False)
        self.progress.setRange(0, 0)
        self.progress.setFormat(title)
        self.progress_box.setVisible(True)
        self.cancel_button.setEnabled(True)
        self.progress_label.setVisible(False)

    def job_progress(self, done: float, total: float | None, message: str) -> None:
        if total:
            self.progress.setRange(0, 1000)
            self.progress.setValue(round(1000 * min(1.0, done / total)))
            self.progress.setFormat(f"%p% {message}" if message else "%p%")
        else:
            self.progress.setRange(0, 0)
        self.progress.setToolTip(message)

    def job_finished(self, message: str) -> None:
        self.score_button.setEnabled(True)
        self.progress_box.setVisible(False)
        self.progress_label.setText(message)
        self.progress_label.setVisible(bool(message))

    # -- internals ---------------------------------------------------------------------
    def _emit_filters(self, _index: int = 0) -> None:
        self._search_timer.stop()
        self.filters_changed.emit(self.filters())

    def _search_now(self) -> None:
        if self._search_timer.isActive():
            self._emit_filters()

    def _on_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.text_selected.emit(int(self.table_model.row_at(current.row()).key))

    def _size_columns(self, view: QTableView, keys: int, *, text_column: bool) -> None:
        view.resizeColumnsToContents()
        model = view.model()
        header = view.horizontalHeader()
        for column in range(model.columnCount()):
            if column < keys:
                header.resizeSection(column, min(header.sectionSize(column), 120))
            else:
                header.resizeSection(column, max(48, min(header.sectionSize(column), 90)))
        if text_column and model.tail_headers:
            # The text, last: whole in its tooltip and in the detail.
            header.resizeSection(model.columnCount() - 1, 320)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Side by side when there is room (a widened or floating dock), stacked when narrow."""
        super().resizeEvent(event)
        QTimer.singleShot(0, self._fill_view)
        wide = event.size().width() >= WIDE_PX
        wanted = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.splitter.orientation() != wanted or not self._split_set:
            self.splitter.setOrientation(wanted)
            total = max(1, self.splitter.width() if wide else self.splitter.height())
            self.splitter.setSizes([total * 3 // 5, total * 2 // 5])
            self._split_set = self.isVisible()


def _legend() -> str:
    return (
        f"<span style='background-color:{MENTION_COLOUR}'>&nbsp;entity mention (ESA)"
        f"&nbsp;</span> &nbsp; <span style='background-color:{HALLUCINATION_COLOUR}'>"
        "&nbsp;hallucination candidate&nbsp;</span> &nbsp; "
        f"<span style='color:{MISSING_COLOUR}'>✗ missing entity</span>"
    )


def _text_html(detail: TextDetail) -> str:
    parts = [
        f"<p><b>{html.escape(detail.title)}</b></p>",
        f"<p style='font-size:small'>{_legend()}</p>",
        "<p style='font-size:large'>"
        f"{highlighted_html(detail.text, detail.mentions, detail.hallucinations)}</p>",
    ]
    if detail.esa_scored:
        if detail.missing:
            items = "".join(
                f"<li style='color:{MISSING_COLOUR}'>✗ {html.escape(m)}</li>"
                for m in detail.missing
            )
            parts.append(f"<p><b>Missing entities</b> ({len(detail.missing)}):</p><ul>{items}</ul>")
        else:
            parts.append("<p><b>Missing entities</b>: none, every entity is mentioned.</p>")
    else:
        parts.append(
            "<p style='color:#777'>ESA not scored for this text yet: use "
            "<b>Score…</b> with <i>esa</i> to see its mentions and missing "
            "entities.</p>"
        )
    if detail.hallucination_scored:
        if detail.hallucinations:
            spans = ", ".join(
                f"<span style='background-color:{HALLUCINATION_COLOUR}'>"
                f"{html.escape(s.label)}</span>"
                for s in detail.hallucinations
            )
            parts.append(f"<p><b>Hallucination candidates</b>: {spans}</p>")
        else:
            parts.append("<p><b>Hallucination candidates</b>: none.</p>")
    if detail.scores:
        rows = "".join(
            f"<tr><td>{html.escape(c)}</td><td align='right'>&nbsp;{html.escape(v)}&nbsp;</td>"
            f"<td style='color:#666'>{html.escape(n)}</td></tr>"
            for c, v, n in detail.scores
        )
        parts.append(f"<p><b>Scores</b></p><table cellspacing='0'>{rows}</table>")
    return "".join(parts)


def _unit_html(detail: TextDetail) -> str:
    parts = [f"<p><b>Unit triples ({html.escape(detail.lang)})</b></p>"]
    if detail.triples:
        rows = "".join(
            f"<tr><td>{html.escape(s)}</td><td style='color:#555'>&nbsp;"
            f"{html.escape(p)}&nbsp;</td><td>{html.escape(o)}</td></tr>"
            for s, p, o in map(surface_triple, detail.triples)
        )
        parts.append(f"<table cellspacing='2'>{rows}</table>")
    else:
        parts.append(f"<p style='color:#777'>The unit has no triples in {detail.lang}.</p>")
    parts.append(f"<p><b>References ({html.escape(detail.lang)})</b></p>")
    if detail.references:
        items = "".join(
            f"<li><span style='background-color:{'#fde9a9' if q == 'gold' else '#dfe3e8'}'>"
            f"&nbsp;{html.escape(q)}&nbsp;</span> {html.escape(t)}</li>"
            for q, t in detail.references
        )
        parts.append(f"<ul>{items}</ul>")
    else:
        parts.append(
            f"<p style='color:#777'>No reference in {detail.lang}: reference-based "
            "metrics are absent for this text (not 0).</p>"
        )
    return "".join(parts)
