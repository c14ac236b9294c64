"""Qt item model for a category's entities: numpy columns, sorted and filtered in numpy.

A ``QSortFilterProxyModel`` would call ``data()`` once per comparison, which is far too
slow for 20,000 rows that re-tier as a line is dragged. Instead the model keeps the
columns as arrays and an index array ``order`` (the visible rows, in display order),
recomputed with numpy when the sort, a filter or the tiers change.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from core.labels import tier_label
from core.tiers.cutoffs import LONG_TAIL_CODE, TIER_BY_CODE, long_tail_sub_tiers
from core.vocab import LANGUAGES
from core.wikidata.records import CategoryTable
from widgets.theme import TONES

COLUMNS = ("Label", "QID", "Statements", "Sitelinks", "Wikipedias", "Tier")
COL_LABEL, COL_QID, COL_STATEMENTS, COL_SITELINKS, COL_WIKIS, COL_TIER = range(6)
# head, torso, long tail: tones the style draws in the theme's variant
TIER_COLOURS = {0: TONES["head"][0], 1: TONES["torso"][0], 2: TONES["tail"][0]}
NO_TIER = -1
SUB_TIER_FILTER = 10  # tier filter values 10, 11, 12: long tail with a page only in en/it/es

_Index = QModelIndex | QPersistentModelIndex


class EntityTableModel(QAbstractTableModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.columns = CategoryTable.empty()
        self.tiers = np.zeros(0, dtype=np.int8)
        self.sub_tiers = np.zeros(0, dtype=np.int8)  # -1, or 0/1/2: page only in en/it/es
        self.order = np.zeros(0, dtype=np.int64)
        self._wikis: list[str] = []
        self._search_keys: np.ndarray = np.zeros(0, dtype=object)
        self._sort_column = COL_STATEMENTS
        self._sort_order = Qt.SortOrder.DescendingOrder
        self._tier_filter: int | None = None
        self._wiki_filter: str | None = None
        self._text_filter = ""

    # -- loading and state ---------------------------------------------------------------
    def set_entities(self, columns: CategoryTable, tiers: np.ndarray | None = None) -> None:
        self.beginResetModel()
        self.columns = columns
        n = len(columns)
        self._set_codes(
            np.asarray(tiers, dtype=np.int8) if tiers is not None else np.full(n, NO_TIER, np.int8)
        )
        self._wikis = [
            " ".join(code for code, flag in (("en", e), ("it", i), ("es", s)) if flag)
            for e, i, s in zip(columns.has_en, columns.has_it, columns.has_es, strict=True)
        ]
        self._search_keys = np.array(
            [
                f"{(label or '').lower()}\t{qid.lower()}"
                for qid, label in zip(columns.qids, columns.labels, strict=True)
            ],
            dtype=object,
        )
        self.order = self._compute_order()
        self.endResetModel()

    def set_tiers(self, tiers: np.ndarray, sub_tiers: np.ndarray | None = None) -> None:
        """New tier codes for every entity (same order as the columns), with their
        long-tail sub-tiers when the caller has them (else computed here)."""
        self._set_codes(np.asarray(tiers, dtype=np.int8), sub_tiers)
        if self._tier_filter is not None or self._sort_column == COL_TIER:
            self._relayout()
        elif len(self.order):
            self.dataChanged.emit(
                self.index(0, COL_TIER),
                self.index(len(self.order) - 1, COL_TIER),
                [Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ForegroundRole],
            )

    def _set_codes(self, tiers: np.ndarray, sub_tiers: np.ndarray | None = None) -> None:
        self.tiers = tiers
        cols = self.columns
        if sub_tiers is not None and len(sub_tiers) == len(tiers):
            self.sub_tiers = sub_tiers
        elif len(tiers) and tiers.min() >= 0:
            self.sub_tiers = long_tail_sub_tiers(tiers, cols.has_en, cols.has_it, cols.has_es)
        else:
            self.sub_tiers = np.full(len(tiers), NO_TIER, np.int8)

    def set_filters(self, tier: int | None = None, wiki: str | None = None, text: str = "") -> None:
        self._tier_filter, self._wiki_filter, self._text_filter = tier, wiki, text.strip().lower()
        self._relayout()

    def row_of(self, qid: str) -> int | None:
        try:
            entity = self.columns.qids.index(qid)
        except ValueError:
            return None
        rows = np.flatnonzero(self.order == entity)
        return int(rows[0]) if len(rows) else None

    # -- Qt model API ------------------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.order)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        entity = int(self.order[index.row()])
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(entity, column)
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (COL_STATEMENTS, COL_SITELINKS):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and column == COL_TIER:
            colour = TIER_COLOURS.get(int(self.tiers[entity]))
            return QBrush(QColor(colour)) if colour else None
        if role == Qt.ItemDataRole.ToolTipRole and column == COL_LABEL:
            # Whole, for a label the column's width elides (the Browser narrows it so
            # the Tier column stays on screen).
            return self._display(entity, column)
        if role == Qt.ItemDataRole.UserRole:
            return self.columns.qids[entity]
        return None

    def _display(self, entity: int, column: int) -> str:
        cols = self.columns
        if column == COL_LABEL:
            return cols.labels[entity] or "(no English label)"
        if column == COL_QID:
            return cols.qids[entity]
        if column == COL_STATEMENTS:
            return f"{int(cols.statements[entity]):,}"
        if column == COL_SITELINKS:
            return f"{int(cols.sitelinks[entity]):,}"
        if column == COL_WIKIS:
            return self._wikis[entity]
        code = int(self.tiers[entity])
        if code not in TIER_BY_CODE:
            return ""
        sub = int(self.sub_tiers[entity])
        if code == LONG_TAIL_CODE and sub >= 0:
            return tier_label(f"long_tail_{LANGUAGES[sub]}")
        return tier_label(TIER_BY_CODE[code].value)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self._sort_column, self._sort_order = column, order
        self._relayout()

    # -- ordering ----------------------------------------------------------------------------
    def _relayout(self) -> None:
        self.layoutAboutToBeChanged.emit()
        self.order = self._compute_order()
        self.layoutChanged.emit()

    def _compute_order(self) -> np.ndarray:
        cols = self.columns
        n = len(cols)
        mask = np.ones(n, dtype=bool)
        if self._tier_filter is not None:
            if self._tier_filter >= SUB_TIER_FILTER:
                mask &= self.sub_tiers == self._tier_filter - SUB_TIER_FILTER
            else:
                mask &= self.tiers == self._tier_filter
        if self._wiki_filter:
            mask &= {"en": cols.has_en, "it": cols.has_it, "es": cols.has_es}[self._wiki_filter]
        if self._text_filter:
            needle = self._text_filter
            mask &= np.fromiter((needle in key for key in self._search_keys), bool, count=n)
        visible = np.flatnonzero(mask)
        keys = self._sort_keys()
        # Stable sort so equal keys keep a predictable order (by entity index).
        ranked = visible[np.argsort(keys[visible], kind="stable")]
        if self._sort_order == Qt.SortOrder.DescendingOrder:
            ranked = ranked[::-1]
        return ranked.astype(np.int64)

    def _sort_keys(self) -> np.ndarray:
        cols = self.columns
        column = self._sort_column
        if column == COL_STATEMENTS:
            return cols.statements
        if column == COL_SITELINKS:
            return cols.sitelinks
        if column == COL_TIER:
            return self.tiers
        if column == COL_QID:
            return np.array([int(q[1:]) if q[1:].isdigit() else 0 for q in cols.qids])
        if column == COL_WIKIS:
            return np.array(self._wikis, dtype=object)
        return np.array([(label or "").lower() for label in cols.labels], dtype=object)
