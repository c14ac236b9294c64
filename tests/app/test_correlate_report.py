"""The Report panel's "Metrics vs humans" section, fed by core.correlate in the build job."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt

from app.gui import build_window
from core.correlate import TABLE_COLUMNS, correlate, import_webnlg_judgments, table_rows
from core.jobs import JobSucceeded
from core.report import ReportRequest, build_report
from core.store import SessionStore
from tests.core.correlate_data import build, write_release


@pytest.fixture
def judged(tmp_path: Path) -> Path:
    path = tmp_path / "s.taillens"
    build(path)
    with SessionStore.open(path) as store:
        import_webnlg_judgments(store, [write_release(tmp_path / "release")])
    return path


def test_the_report_holds_the_agreement_table(judged: Path) -> None:
    with SessionStore.open(judged) as store:
        report = build_report(store, by=("model",))
        expected = table_rows(correlate(store))
    table = next(t for t in report.tables() if t.name == "agreement")
    assert table.columns == TABLE_COLUMNS and list(table.rows) == expected
    assert {row[0] for row in table.rows} == {"text", "system", "system-corpus"}
    assert "agreement" in [t["name"] for t in report.to_json()["tables"]]


def test_a_report_without_judgments_has_no_agreement_table(tmp_path: Path) -> None:
    path = tmp_path / "s.taillens"
    build(path)
    with SessionStore.open(path) as store:
        assert all(t.name != "agreement" for t in build_report(store, by=("model",)).tables())


def test_the_panel_shows_the_section(qtbot, tmp_path: Path, judged: Path) -> None:
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    try:
        assert controller.open_session(judged)
        handle = controller.report.build(ReportRequest(by=("model",)))
        with qtbot.waitSignal(handle.finished, timeout=30_000) as blocker:
            pass
        assert isinstance(blocker.args[0], JobSucceeded)
        panel = controller.report.panel
        titles = [panel.tabs.tabText(i) for i in range(panel.tabs.count())]
        assert "Metrics vs humans" in titles
        model = panel.pages["agreement"].model
        with SessionStore.open(judged) as store:
            expected = table_rows(correlate(store))
        assert model.rowCount() == len(expected)
        header = [
            model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())
        ]
        assert header == list(TABLE_COLUMNS)
        assert [model.raw(r, 0) for r in range(model.rowCount())] == [e[0] for e in expected]
    finally:
        controller.shutdown()
