"""Verbalise ▸ Results as a user opening a session with runs sees it at 1366 × 768: the
summary says how many runs the session holds (not "No run yet" above a list of runs),
and each output row is as tall as its wrapped text at the width its column has."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from app.gui import build_window
from tests.fixtures import report_session as fixture_module
from tests.fixtures.reads import settle_reads
from tests.fixtures.report_session import ReportSession

report_session = fixture_module.report_session  # registers the fixture here


@pytest.fixture
def opened(qtbot, tmp_path: Path, report_session: ReportSession):
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    qtbot.waitExposed(window)
    assert controller.open_session(report_session.path)
    settle_reads(qtbot, controller)
    yield window, controller
    controller.shutdown()


def test_the_summary_counts_the_sessions_runs(qtbot, opened) -> None:
    window, _controller = opened
    panel = window.panels["verbalise"]
    qtbot.waitUntil(lambda: panel.results.runs_model.rowCount() == 2, timeout=30_000)
    text = panel.summary_label.text()
    assert "No run yet" not in text
    assert "2 runs" in text


def test_output_rows_fit_their_text_once_the_tab_is_shown(qtbot, opened) -> None:
    window, controller = opened
    panel = window.panels["verbalise"]
    view = panel.results.outputs_view
    # The outputs arrive while the Results tab is hidden (the Model tab is in front).
    qtbot.waitUntil(lambda: view.model().rowCount() > 0, timeout=30_000)
    assert not view.isVisible()
    window.workspaces.apply("score")
    panel.tabs.setCurrentIndex(panel.tabs.count() - 1)  # Results
    for _ in range(3):
        qtbot.wait(20)
        QApplication.processEvents()
    assert view.isVisible()
    for row in range(view.model().rowCount()):
        # As tall as the text needs at the text column's width now, not as it was
        # sized while hidden (hundreds of pixels: a blank band).
        fitted = max(view.sizeHintForRow(row), view.verticalHeader().sectionSizeHint(row))
        assert view.rowHeight(row) == fitted, row
        assert view.rowHeight(row) < view.viewport().height() // 2
