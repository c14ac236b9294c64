"""The Browser's entity table on its own: rows, tiers, filters, count and the row picked."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from core.wikidata.records import CategoryTable
from widgets.entity_table import COL_TIER
from widgets.entity_table_view import LABEL_MAX, LABEL_MIN, EntityTableView


def _table(counts: list[int]) -> CategoryTable:
    n = len(counts)
    return CategoryTable(
        "test",
        qids=[f"Q{i + 1}" for i in range(n)],
        labels=[f"Entity {i + 1}" for i in range(n)],
        statements=np.array(counts, dtype=np.int64),
        sitelinks=np.zeros(n, dtype=np.int64),
        has_en=np.array([i % 2 == 0 for i in range(n)]),
        has_it=np.zeros(n, dtype=bool),
        has_es=np.zeros(n, dtype=bool),
    )


def test_rows_tiers_filters_and_count(qtbot) -> None:
    view = EntityTableView()
    qtbot.addWidget(view)
    view.resize(900, 400)
    view.show()
    view.show_table(_table([40, 3, 20, 1]))
    view.set_tiers(None)  # no tiers yet: every row shown, none tiered
    assert view.count_label.text() == "4 of 4"
    assert "head" not in {view.model.data(view.model.index(r, COL_TIER)) for r in range(4)}
    view.set_tiers(np.array([0, 2, 0, 2], dtype=np.int8))
    tiers = [view.model.data(view.model.index(r, COL_TIER)) for r in range(4)]
    assert tiers.count("head") == 2
    view.wiki_filter.setCurrentIndex(view.wiki_filter.findData("en"))
    assert view.model.rowCount() == 2 and view.count_label.text() == "2 of 4"
    view.search_edit.setText("Q3")
    assert view.model.rowCount() == 1 and view.count_label.text() == "1 of 4"
    assert LABEL_MIN <= view.table.columnWidth(0) <= LABEL_MAX


def test_the_row_picked_is_said_and_a_selection_shown(qtbot) -> None:
    view = EntityTableView()
    qtbot.addWidget(view)
    view.show()
    view.show_table(_table([5, 9, 7]))
    picked: list[object] = []
    view.entity_picked.connect(picked.append)
    row = view.model.row_of("Q2")
    assert row is not None
    view.table.setCurrentIndex(view.model.index(row, 0))
    assert picked == ["Q2"]
    view.show_selected("Q3")
    selected = view.table.selectionModel().selectedRows()
    assert [view.model.data(i, Qt.ItemDataRole.UserRole) for i in selected] == ["Q3"]
    view.show_selected(None)
    assert view.table.selectionModel().selectedRows() == []
    view.show_selected("Q404")  # not a member shown: nothing selected, no error
    assert view.table.selectionModel().selectedRows() == []
