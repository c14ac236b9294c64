"""Sorting the Scores tables: per-column ranks and a stable order, missing values last
(pure; a refresh job may sort at study scale and the model reuses its keys).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from PySide6.QtCore import (
    Qt,
)

from core.metrics.score_pages import ScoreSort
from widgets.scores.rows import TEXT_KEYS, TEXT_TAIL, ScoreTableRow

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
