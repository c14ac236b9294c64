"""The Report panel's "Metrics vs humans" section, fed by core.agreement in the build job."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt

from app.gui import build_window
from core.agreement.correlate import correlate
from core.agreement.judgments import import_webnlg_judgments
from core.agreement.table import TABLE_COLUMNS, table_rows
from core.jobs import JobSucceeded
from core.report import ReportRequest, build_report
from core.report.render import report_json, report_tables
from core.store import SessionStore
from tests.fixtures.correlation_session import build, write_release


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
    table = next(t for t in report_tables(report) if t.name == "agreement")
    assert table.columns == TABLE_COLUMNS and list(table.rows) == expected
    assert {row[0] for row in table.rows} == {"text", "system", "system-corpus"}
    assert "agreement" in [t["name"] for t in report_json(report)["tables"]]


def test_a_report_without_judgments_has_no_agreement_table(tmp_path: Path) -> None:
    path = tmp_path / "s.taillens"
    build(path)
    with SessionStore.open(path) as store:
        assert all(t.name != "agreement" for t in report_tables(build_report(store, by=("model",))))


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


def test_the_report_correlates_over_the_texts_where_a_condition_holds(judged: Path) -> None:
    """``ReportRequest.where`` (the panel's "Humans where", ``report --where``) narrows the
    agreement table as ``correlate --where`` does; a field the session lacks is said in
    the report's notes, not a silently missing table."""
    from core.agreement.correlate import CorrelationRequest

    with SessionStore.open(judged) as store:
        where = ("bleu:gold<60",)
        report = build_report(store, by=("model",), where=where)
        expected = table_rows(correlate(store, CorrelationRequest(where=where)))
        everything = table_rows(correlate(store))
        table = next(t for t in report_tables(report) if t.name == "agreement")
        assert list(table.rows) == expected and expected != everything
        assert "where bleu:gold<60" in table.note
        wrong = build_report(store, by=("model",), where=("nonsense.field>1",))
    assert all(t.name != "agreement" for t in report_tables(wrong))
    assert any("metrics against human judgments not computed" in n for n in wrong.notes)


def test_the_panel_sends_its_condition_and_refuses_an_unreadable_one(
    qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    from widgets.report.panel import ReportPanel

    panel = ReportPanel()
    qtbot.addWidget(panel)
    sent: list = []
    panel.build_requested.connect(sent.append)
    said: list[str] = []
    monkeypatch.setattr(
        "widgets.report.panel.QMessageBox.information",
        lambda _parent, title, text: said.append(f"{title}: {text}"),
    )
    panel.where_edit.setText(" esa.undetected>=1 ; tier=long_tail ;")
    panel._on_build()
    assert sent and sent[-1].where == ("esa.undetected>=1", "tier=long_tail")
    panel.where_edit.setText("esa.undetected about 1")
    panel._on_build()
    assert len(sent) == 1 and said and "FIELD OP VALUE" in said[-1]


def test_report_where_on_the_command_line(judged: Path, tmp_path: Path) -> None:
    from tests.cli_process import taillens

    done = taillens(
        "report", "--session", judged, "--by", "model", "--where", "bleu:gold<60", "--json"
    )
    assert done.returncode == 0, done.stderr
    import json

    tables = {t["name"]: t for t in json.loads(done.stdout)["tables"]}
    assert "where bleu:gold<60" in tables["agreement"]["note"]
    bad = taillens("report", "--session", judged, "--where", "bleu about 3")
    assert bad.returncode == 2 and "FIELD OP VALUE" in bad.stderr


def test_the_panel_shows_the_condition_as_written(qtbot, tmp_path: Path, judged: Path) -> None:
    """The table's note quotes the condition as typed ("<" and "'" included): it showed
    "&lt;" once, escaped into a label that took it for plain text."""
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    try:
        assert controller.open_session(judged)
        handle = controller.report.build(ReportRequest(by=("model",), where=("bleu:gold<60",)))
        with qtbot.waitSignal(handle.finished, timeout=30_000) as blocker:
            pass
        assert isinstance(blocker.args[0], JobSucceeded)
        note = controller.report.panel.pages["agreement"].note.text()
        assert "where bleu:gold<60" in note and "&lt;" not in note and "&#x27;" not in note
    finally:
        controller.shutdown()
