"""Workspaces give each task's panel the room it needs, counted in rows.

At 1366 × 768 (the window's client area under a ~30 px title bar) the "Verbalise & score"
workspace shows at least 15 rows of the Scores table with the text and score columns, and
the "Report" workspace the headlines, at least 8 rows of a table and the plot at once. In
the default layout (the panels tabbed in a right-hand dock beside the Browser) they showed
5 and 2. Offscreen, real widgets, real sizes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QRect, QSettings
from PySide6.QtWidgets import QAbstractItemView, QWidget

from core.report import Settings, build_report, plot_specs
from core.store import SessionStore
from tests.fixtures import report_session as fixture_module
from tests.fixtures.report_session import ReportSession
from widgets.main_window import MainWindow
from widgets.scores import ScoreTableRow
from widgets.workspaces import BY_KEY, WORKSPACES

report_session = fixture_module.report_session  # registers the fixture here

LAPTOP = (1366, 768 - 30)  # 1366 × 768, less the window's title bar


def whole_rows(view: QAbstractItemView) -> int:
    """Rows wholly inside the view's viewport (what a person can read)."""
    viewport = view.viewport().rect()
    model = view.model()
    return sum(
        viewport.contains(view.visualRect(model.index(row, 0))) for row in range(model.rowCount())
    )


def on_screen(widget: QWidget, window: QWidget) -> bool:
    """Shown, with at least 150 × 100 px inside the window."""
    if not widget.isVisible():
        return False
    top_left = widget.mapTo(window, widget.rect().topLeft())
    seen = QRect(top_left, widget.size()).intersected(window.rect())
    return seen.width() >= 150 and seen.height() >= 100


@pytest.fixture
def window(qtbot, tmp_path: Path):
    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.resize(*LAPTOP)
    window.show()
    qtbot.waitExposed(window)
    return window


def settle(qtbot, window: MainWindow) -> None:
    for _ in range(3):
        qtbot.wait(30)
        window.layout().activate()


def test_each_workspace_shows_its_panels_and_hides_the_rest(qtbot, window) -> None:
    for workspace in WORKSPACES:
        window.workspaces.apply(workspace.key)
        settle(qtbot, window)
        assert window.workspaces.actions[workspace.key].isChecked()
        shown = {k for k, d in window.workspaces.docks().items() if not d.isHidden()}
        assert shown == set(workspace.panels), workspace.key
        for key in workspace.front:
            assert not window.workspaces.docks()[key].visibleRegion().isEmpty(), key


def test_scores_shows_fifteen_rows_at_1366_by_768(qtbot, window) -> None:
    panel = window.panels["scores"]
    rows = [
        ScoreTableRow(
            key=i,
            cells=(f"Q{i}", "template", "en", 0, "long_tail", f"A text number {i}."),
            scores={"bleu:gold": i / 60, "esa": 0.5},
        )
        for i in range(60)
    ]
    panel.show_rows(rows, ["bleu:gold", "esa"], {}, len(rows))
    # The default layout: Scores tabbed in the right-hand dock beside the Browser.
    window.raise_panel("scores")
    settle(qtbot, window)
    before = whole_rows(panel.table)
    window.workspaces.apply("score")
    settle(qtbot, window)
    after = whole_rows(panel.table)
    assert after >= 15, (before, after)
    # The text and score columns are on screen too (not scrolled off to the right).
    header = panel.table.horizontalHeader()
    model = panel.table_model
    for column in (model.column_of("bleu:gold"), model.columnCount() - 1):
        assert header.sectionViewportPosition(column) < panel.table.viewport().width()


def test_report_shows_headlines_eight_rows_and_the_plot_at_1366_by_768(
    qtbot, window, report_session: ReportSession
) -> None:
    with SessionStore.open(report_session.path) as store:
        report = build_report(store, by=("tier", "lang"), settings=Settings(repetitions=20))
    panel = window.panels["report"]
    window.workspaces.apply("report")
    settle(qtbot, window)
    panel.show_report(report, plot_specs(report), list(report.headlines))
    settle(qtbot, window)
    page = panel.tabs.currentWidget()
    assert page.model.rowCount() >= 8  # the fixture's table has the rows to show
    assert whole_rows(page.view) >= 8
    assert on_screen(panel.headline, window) or panel.headline.isVisible()
    assert panel.headline.visibleRegion().boundingRect().height() >= 20
    assert on_screen(panel.plots.plot, window)


def test_the_report_opens_on_a_dimension_with_rows(qtbot, window, report_session) -> None:
    """The first dimension asked for has no rows (one dataset: nothing to compare, as "By
    tier" on a session without tiers): the panel opens on the next one, not on it."""
    with SessionStore.open(report_session.path) as store:
        report = build_report(store, by=("dataset", "lang"), settings=Settings(repetitions=20))
    panel = window.panels["report"]
    panel.show_report(report, plot_specs(report), list(report.headlines))
    assert panel.pages["compare_dataset"].model.rowCount() == 0
    shown = panel.tabs.currentWidget()
    assert shown is panel.pages["compare_lang"] and shown.model.rowCount() > 0


def test_the_workspaces_are_the_issues_four() -> None:
    assert [w.title.replace("&&", "&") for w in WORKSPACES] == [
        "Explore",
        "Verbalise & score",
        "Annotate",
        "Report",
    ]
    assert "scores" in BY_KEY["score"].panels and "report" in BY_KEY["report"].panels


def test_the_workspace_comes_back_with_its_layout_after_a_restart(qtbot, tmp_path: Path) -> None:
    settings_file = str(tmp_path / "restart.ini")
    first = MainWindow(QSettings(settings_file, QSettings.Format.IniFormat))
    qtbot.addWidget(first)
    first.resize(*LAPTOP)
    first.show()
    qtbot.waitExposed(first)
    first.workspaces.apply("annotate")
    settle(qtbot, first)
    first.close()  # saves the layout

    again = MainWindow(QSettings(settings_file, QSettings.Format.IniFormat))
    qtbot.addWidget(again)
    again.restore_layout()
    again.show()
    qtbot.waitExposed(again)
    settle(qtbot, again)
    assert again.workspaces.current == "annotate"
    assert again.workspaces.actions["annotate"].isChecked()
    assert not again.workspaces.actions["explore"].isChecked()
    shown = {k for k, d in again.workspaces.docks().items() if not d.isHidden()}
    assert shown == set(BY_KEY["annotate"].panels)

    again.reset_layout()  # View ▸ Reset layout: Explore's layout, and Explore marked
    assert again.workspaces.current == "explore"
    assert again.workspaces.actions["explore"].isChecked()


def test_a_panel_shown_from_another_workspace_goes_to_the_workspace_that_keeps_it(
    qtbot, window
) -> None:
    window.workspaces.apply("annotate")
    settle(qtbot, window)
    window.raise_panel("units")  # e.g. Getting started's "Show me the panel"
    settle(qtbot, window)
    # Units belongs to Explore: shown there, not squeezed into Annotate's layout.
    assert window.workspaces.current == "explore"
    assert window.workspaces.actions["explore"].isChecked()
    assert not window.docks["units"].visibleRegion().isEmpty()
    window.workspaces.apply("report")
    settle(qtbot, window)
    window.raise_panel("scores")  # Report holds Scores: it stays
    assert window.workspaces.current == "report"
    window.raise_panel("annotate")  # Annotate's own workspace brings it to the front
    assert window.workspaces.current == "annotate"
