"""The bias report rebuilt after an option change: what the options do not touch is
taken from what was built on the session's current state (per-item values, comparisons,
the study table, the agreement table, the table pages), the result is the one a fresh
build gives, and a write to the session drops it all."""

from __future__ import annotations

import importlib
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from app.gui import build_window
from core.jobs import JobSucceeded
from core.report import ReportCache, ReportRequest, Settings, build_report
from core.report.render import comparison_table, report_json
from core.store import SessionStore
from tests.fixtures import report_session as fixture_module
from tests.fixtures.reads import settle_reads
from tests.fixtures.report_session import ReportSession

report_session = fixture_module.report_session  # registers the fixture here


def tables(report) -> list:
    return report_json(report)["tables"]


def test_an_option_change_computes_only_what_it_touches(report_session: ReportSession) -> None:
    with SessionStore.open(report_session.path) as store:
        cache = ReportCache()
        build_report(store, cache=cache)
        first = list(cache.built)
        assert {"frame", "compare", "study", "headlines", "agreement"} <= set(first)

        # Alpha and the correction decide the marks only: nothing is computed again.
        marks = replace(Settings(), alpha=0.01, correction="bh")
        again = build_report(store, settings=marks, cache=cache)
        assert cache.built == first
        assert tables(again) == tables(build_report(store, settings=marks))

        # Another dimension: its comparisons only.
        by_lang = build_report(store, by=("tier", "lang"), settings=marks, cache=cache)
        assert cache.built[len(first) :] == ["compare"]
        assert tables(by_lang) == tables(build_report(store, by=("tier", "lang"), settings=marks))

        # Another sample size: the tests again, not the values read.
        sampled = replace(marks, sample_size=50)
        build_report(store, settings=sampled, cache=cache)
        assert "frame" not in cache.built[len(first) + 1 :]
        assert {"compare", "study", "headlines"} <= set(cache.built[len(first) + 1 :])


@pytest.fixture
def wired(qtbot, tmp_path: Path, report_session: ReportSession):
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    assert controller.open_session(report_session.path)
    settle_reads(qtbot, controller)
    yield window, controller
    controller.shutdown()


def build(qtbot, report, request: ReportRequest) -> None:
    handle = report.build(request)
    assert handle is not None
    with qtbot.waitSignal(handle.finished, timeout=30_000) as blocker:
        pass
    assert isinstance(blocker.args[0], JobSucceeded)


def test_the_panel_rebuilds_only_what_an_option_change_touches(
    qtbot, wired, monkeypatch, report_session: ReportSession
) -> None:
    _window, controller = wired
    report = controller.report
    build_module = importlib.import_module("core.report.build")
    reads: list[object] = []
    real_load_frame = build_module.load_frame

    def counted(store, **kwargs):
        if threading.get_ident() != threading.main_thread().ident:  # the panel's builds
            reads.append(kwargs)
        return real_load_frame(store, **kwargs)

    monkeypatch.setattr(build_module, "load_frame", counted)
    build(qtbot, report, ReportRequest())
    assert len(reads) == 1
    panel = report.panel
    runs_page = panel.pages["runs"]

    strict = ReportRequest(settings=replace(Settings(), alpha=0.001))
    build(qtbot, report, strict)
    assert len(reads) == 1  # the session's values were not read again
    assert panel.pages["runs"] is runs_page  # a table the change left as it was keeps its page
    with SessionStore.open(report_session.path) as store:
        fresh = build_report(store, settings=strict.settings)
    assert tables(report.view.report) == tables(fresh)  # as a fresh build at that alpha
    shown = panel.pages["compare_tier"].model.table
    assert shown == comparison_table(fresh, "tier")

    # A write to the session: what was built describes the session as it was.
    report.session_written()
    build(qtbot, report, strict)
    assert len(reads) == 2
