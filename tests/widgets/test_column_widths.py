"""Columns sized to their content at 1366 × 768: no header text elided (Qt cuts a header
that is narrower than its words to "tem…"), the runs table's cells whole, and the
Browser's Tier column on screen (it showed "Tie" and "hea" at the table's right edge)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication, QHeaderView, QStyle, QTableView

from app.gui import build_window
from core.wikidata.records import CategoryTable
from tests.fixtures import report_session as fixture_module
from tests.fixtures.reads import settle_reads
from tests.fixtures.report_session import ReportSession
from widgets.entity_table import COL_TIER

report_session = fixture_module.report_session  # registers the fixture here


def _header_room(header: QHeaderView, column: int) -> int:
    """The width Qt draws a header's words in (QCommonStyle's SE_HeaderLabel: the
    section less the header margin on each side, less the sort arrow's room on the
    sorted section); words wider than this are elided."""
    margin = header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
    room = header.sectionSize(column) - 2 * margin
    if header.isSortIndicatorShown() and header.sortIndicatorSection() == column:
        room -= header.height() // 2 + 2 * margin
    return room


def elided_headers(view: QTableView) -> list[str]:
    header = view.horizontalHeader()
    model = view.model()
    cut = []
    for column in range(header.count()):
        if header.isSectionHidden(column):
            continue
        text = str(model.headerData(column, Qt.Orientation.Horizontal) or "")
        widest = max(header.fontMetrics().horizontalAdvance(line) for line in text.split("\n"))
        if widest > _header_room(header, column):
            cut.append(text)
    return cut


def off_screen_columns(view: QTableView) -> list[str]:
    """Columns not wholly inside the table's viewport (scrolled or cut at its edge)."""
    header = view.horizontalHeader()
    width = view.viewport().width()
    return [
        str(view.model().headerData(column, Qt.Orientation.Horizontal))
        for column in range(header.count())
        if not header.isSectionHidden(column)
        and (
            header.sectionViewportPosition(column) < 0
            or header.sectionViewportPosition(column) + header.sectionSize(column) > width
        )
    ]


def _cities(n: int = 300) -> CategoryTable:
    counts = np.round(np.random.default_rng(3).lognormal(1.5, 1.2, n)).astype(np.int64) + 1
    return CategoryTable(
        "City",
        qids=[f"Q{990_000_000 + i}" for i in range(n)],
        # Long labels, as the demo's "Fenareto International Airport".
        labels=[f"Fenareto International Airport {i}" for i in range(n)],
        statements=counts,
        sitelinks=counts * 3,
        has_en=np.ones(n, bool),
        has_it=np.arange(n) % 2 == 0,
        has_es=np.arange(n) % 3 == 0,
    )


@pytest.fixture
def window_1366(qtbot, tmp_path: Path, report_session: ReportSession):
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    assert controller.open_session(report_session.path)
    window.resize(1366, 768)
    window.show()
    qtbot.waitExposed(window)
    window.resize(1366, 768)
    settle_reads(qtbot, controller)
    yield window, controller
    controller.shutdown()


def _settle(qtbot) -> None:
    for _ in range(3):
        qtbot.wait(20)
        QApplication.processEvents()


def test_the_browser_table_shows_every_column_whole_at_1366(qtbot, window_1366) -> None:
    window, _controller = window_1366
    panel = window.panels["browser"]
    panel.show_category("City", _cities())
    _settle(qtbot)
    table = panel.table
    assert elided_headers(table) == []
    assert off_screen_columns(table) == []
    # The Tier column holds its longest words ("long tail · en only").
    model = panel.model
    words = {str(model.data(model.index(r, COL_TIER))) for r in range(model.rowCount())}
    assert "long tail · en only" in words
    widest = max(table.fontMetrics().horizontalAdvance(w) for w in words)
    assert table.columnWidth(COL_TIER) >= widest + 8
    # Room permitting (a wider window), labels are whole again (up to 240 px).
    window.resize(1920, 1080)
    _settle(qtbot)
    assert table.columnWidth(0) > 200


@pytest.mark.parametrize("workspace", ["explore", "score"])
def test_the_runs_table_is_whole_at_1366(qtbot, window_1366, workspace: str) -> None:
    window, controller = window_1366
    window.workspaces.apply(workspace)
    window.raise_panel("verbalise")
    panel = window.panels["verbalise"]
    panel.tabs.setCurrentIndex(panel.tabs.count() - 1)  # Results
    view = panel.results.runs_view
    qtbot.waitUntil(lambda: view.model().rowCount() == 2, timeout=30_000)
    _settle(qtbot)
    assert view.isVisible()
    assert elided_headers(view) == []
    assert off_screen_columns(view) == []
    model = view.model()
    for column in range(model.columnCount()):
        for row in range(model.rowCount()):
            text = str(model.data(model.index(row, column)))
            # Cell words fit their column (the style's cell margins are 3 px a side).
            assert view.fontMetrics().horizontalAdvance(text) + 6 <= view.columnWidth(column), text
    # No column stretched across the table: each is as wide as its words need.
    assert view.columnWidth(model.columnCount() - 1) < view.viewport().width() // 2


def test_a_narrowed_label_is_whole_in_its_tooltip(qtbot, window_1366) -> None:
    window, _controller = window_1366
    panel = window.panels["browser"]
    panel.show_category("City", _cities())
    _settle(qtbot)
    model = panel.model
    index = model.index(0, 0)
    label = model.data(index)
    assert label.startswith("Fenareto International Airport")
    assert panel.table.fontMetrics().horizontalAdvance(label) > panel.table.columnWidth(0)
    assert model.data(index, Qt.ItemDataRole.ToolTipRole) == label


def elided_combos(window) -> list[str]:
    """Visible combo boxes whose chosen words are wider than the box's text field (Qt
    cuts them: "With or without re…")."""
    from PySide6.QtWidgets import QComboBox, QStyleOptionComboBox

    cut = []
    for combo in window.findChildren(QComboBox):
        if not combo.isVisible() or not combo.currentText() or combo.isEditable():
            continue
        option = QStyleOptionComboBox()
        combo.initStyleOption(option)
        field = combo.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox,
            option,
            QStyle.SubControl.SC_ComboBoxEditField,
            combo,
        )
        if combo.fontMetrics().horizontalAdvance(combo.currentText()) > field.width():
            owner = combo.parent()
            while owner is not None and owner.parent() is not None and not owner.objectName():
                owner = owner.parent()
            where = owner.objectName() if owner is not None else ""
            cut.append(
                f"{combo.currentText()} ({where or type(combo.parent()).__name__}): "
                f"{combo.fontMetrics().horizontalAdvance(combo.currentText())} > {field.width()}"
            )
    return cut


@pytest.mark.parametrize("size", [(1366, 768), (1024, 640)])
def test_the_units_filters_and_every_visible_choice_are_whole(
    qtbot, window_1366, size: tuple[int, int]
) -> None:
    window, _controller = window_1366
    window.resize(*size)
    window.raise_panel("units")
    _settle(qtbot)
    filters = window.panels["units"].unit_filters
    assert filters and all(combo.isVisible() for combo in filters.values())
    assert elided_combos(window) == []


@pytest.mark.parametrize("workspace", ["explore", "annotate", "report"])
def test_no_visible_table_cuts_a_header_at_1366(qtbot, window_1366, workspace: str) -> None:
    window, _controller = window_1366
    window.workspaces.apply(workspace)
    window.panels["browser"].show_category("City", _cities())
    _settle(qtbot)
    cut = {
        view.objectName() or type(view.parent()).__name__: elided_headers(view)
        for view in window.findChildren(QTableView)
        if view.isVisible() and view.model() is not None
    }
    assert {name: words for name, words in cut.items() if words} == {}
