"""Panels follow the session through one change notification (app.changes).

Each test drives the whole window (build_window) on a real session file and checks that a
panel other than the one that acted shows the session as it is now: File ▸ Import → the
Units panel; a fetch → the Browser's Compare with; scoring → the Report panel; a rating →
the Scores panel. Then the hub itself: topics, subscriptions, a job's ``writes``.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, QSettings, Qt
from PySide6.QtWidgets import QFileDialog

from app.annotate import QUEUE_READ
from app.changes import SessionChanges
from app.gui import build_window
from core.annotation import QueueFilter, Rating
from core.changes import IMPORT_WRITES, Topic
from core.jobs import Job, JobSucceeded
from core.labels import plural
from tests.fixtures import built_window
from tests.fixtures import report_session as fixture_module
from tests.fixtures.demo import demo_ready
from tests.fixtures.jobs import is_fetch
from tests.fixtures.reads import settle_reads
from tests.fixtures.report_session import ReportSession
from tests.fixtures.webnlg_release_samples import WEBNLG_2017
from tests.shared_data import TAILNLG, require

window_and_controller = built_window.window_and_controller  # registers the fixture here

report_session = fixture_module.report_session  # registers the fixture here


def units_in_session(controller) -> int:
    return controller.store.info()["tables"]["data_units"]


def import_from_the_file_menu(
    qtbot, window, controller, path: Path, chosen_filter: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), chosen_filter))
    monkeypatch.setattr(window, "ask_import_language", lambda target: "")
    window.action_import.trigger()
    qtbot.waitUntil(lambda: not controller.runner.active, timeout=60_000)


def test_file_import_updates_the_units_panel(
    qtbot, window_and_controller, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window, controller = window_and_controller
    assert controller.new_session(tmp_path / "s.taillens")
    units = controller.units.panel
    assert units.units_model.rowCount() == 0
    small = tmp_path / "Airport.xml"
    small.write_text(WEBNLG_2017, encoding="utf-8")
    import_from_the_file_menu(qtbot, window, controller, small, "WebNLG XML (*.xml)", monkeypatch)
    first = units_in_session(controller)
    assert first > 0
    assert units.units_model.rowCount() == first
    assert units.units_label.text() == f"{plural(first, 'unit')} in the session"
    tailnlg = require(*TAILNLG)  # skips where the benchmark is not there
    # The case: a second, larger import while the panel already lists units.
    import_from_the_file_menu(
        qtbot, window, controller, tailnlg, "TailNLG XML (*.xml)", monkeypatch
    )
    now = units_in_session(controller)
    assert now > first + 500
    # The list holds the first page; the count is the session's.
    assert units.units_model.rowCount() == min(now, controller.units.page_size)
    assert units.units_label.text() == f"{plural(now, 'unit')} in the session"
    # The Session panel and the Verbalise panel's unit picker say the same (the picker
    # holds its first page; the count is the session's).
    assert f"{now:,}" in window.overview.label.text()
    verbalise = controller.verbalise.panel
    assert verbalise.scope_radios["all"].text() == f"All units ({now:,})"
    assert verbalise.unit_picker.matches_label.text() == f"{now:,} units"
    assert verbalise.preview_unit.count() == min(now, controller.verbalise.page_size)


def test_compare_with_draws_a_category_fetched_after_it_was_ticked(
    qtbot, window_and_controller, tmp_path: Path
) -> None:
    _window, controller = window_and_controller
    assert controller.new_session(tmp_path / "b.taillens")
    browser = controller.browser
    demo_ready(qtbot, browser)
    panel = browser.panel
    panel.category_combo.setCurrentText("Monument")
    settle_reads(qtbot, controller)
    panel.limit_spin.setValue(150)
    with qtbot.waitSignal(controller.runner.job_finished, timeout=30_000, check_params_cb=is_fetch):
        panel.fetch_button.click()
    settle_reads(qtbot, controller)  # the members, read again off the UI thread
    food = panel.compare_list.findItems("Food", Qt.MatchFlag.MatchExactly)[0]
    food.setCheckState(Qt.CheckState.Checked)  # Food has no members yet: nothing to draw
    settle_reads(qtbot, controller)
    assert "Food" not in panel.overlays and panel.compared() == ["Food"]
    assert [s.name for s in panel.plots.series] == ["Monument"]

    handle = controller.run_job(_food_fetch(browser, 120))
    qtbot.waitUntil(lambda: handle.done, timeout=30_000)
    assert isinstance(handle.outcome, JobSucceeded)
    settle_reads(qtbot, controller)  # Food's members, read off the UI thread
    assert "Food" in panel.overlays
    assert [s.name for s in panel.plots.series] == ["Monument", "Food"]
    assert panel.category == "Monument" and len(panel.model.columns) == 150


def _food_fetch(browser, limit: int) -> Job:
    from core.wikidata.fetch import fetch_category_job

    return fetch_category_job(browser.store, browser.source, browser._category("Food"), limit=limit)


@pytest.fixture
def wired_report(qtbot, tmp_path: Path, report_session: ReportSession):
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    assert controller.open_session(report_session.path)
    yield window, controller
    controller.shutdown()


def test_scoring_offers_the_new_metric_in_the_report_and_marks_it_stale(
    qtbot, wired_report
) -> None:
    _window, controller = wired_report
    report = controller.report
    handle = report.build()
    qtbot.waitUntil(lambda: handle.done, timeout=30_000)
    assert report.view is not None and report.panel.stale_label.isHidden()
    offered = [
        report.panel.metric_list.item(i).data(Qt.ItemDataRole.UserRole)
        for i in range(report.panel.metric_list.count())
    ]
    assert "ter" not in offered

    from core.metrics.scoring import ScoringRequest

    scoring = controller.scores.score(ScoringRequest(metrics=("ter",)))
    assert scoring is not None
    qtbot.waitUntil(lambda: scoring.done, timeout=60_000)
    assert isinstance(scoring.outcome, JobSucceeded)
    settle_reads(qtbot, controller)  # the Report's metrics, listed again off the UI thread
    offered = [
        report.panel.metric_list.item(i).data(Qt.ItemDataRole.UserRole)
        for i in range(report.panel.metric_list.count())
    ]
    assert "ter" in offered
    assert not report.panel.stale_label.isHidden()


def test_a_saved_rating_shows_in_the_scores_panel(qtbot, wired_report) -> None:
    _window, controller = wired_report
    scores, annotate = controller.scores, controller.annotate
    qtbot.waitUntil(lambda: scores.panel.table_model.rowCount() > 0, timeout=10_000)
    assert annotate.add_annotator("eve") is not None
    annotate.build_queue(QueueFilter(target="verbalisations", unrated_only=False))
    qtbot.waitUntil(lambda: not controller.reads.pending(QUEUE_READ), timeout=10_000)
    queue = annotate.queue
    assert queue is not None and len(queue)
    item = queue[0]
    scores.show_text(item.ref.id)
    before = scores.panel.shown_detail
    assert before is not None
    assert not any(line[2].startswith("by eve") for line in before.scores)

    assert annotate.save(0, Rating(fluency=4, adequacy=0))
    detail = scores.panel.shown_detail
    assert ("human rating", "fluency 4, adequacy Yes", "by eve") in detail.scores
    assert "by eve" in scores.panel.unit_view.toPlainText() + scores.panel.text_view.toPlainText()

    annotate.undo()  # an undo is announced too: the rating leaves the detail
    assert not any(line[2] == "by eve" for line in scores.panel.shown_detail.scores)


# -- the hub -------------------------------------------------------------------------------


def test_subscribers_get_only_their_topics_and_worker_threads_are_queued(qtbot) -> None:
    hub = SessionChanges()
    owner = QObject()
    got: list[frozenset[Topic]] = []
    hub.subscribe({Topic.UNITS, Topic.TIERS}, got.append, owner)
    hub.announce({Topic.SCORES})
    hub.announce(set())
    assert got == []
    hub.announce({Topic.UNITS, Topic.SCORES})
    assert got == [frozenset({Topic.UNITS})]  # at once, on the UI thread

    threads: list[bool] = []
    hub.subscribe(
        {Topic.RUNS},
        lambda _t: threads.append(threading.current_thread() is threading.main_thread()),
        owner,
    )
    worker = threading.Thread(target=hub.announce, args=({Topic.RUNS},))
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: threads == [True], timeout=5000)

    owner.deleteLater()  # the subscription goes with its subscriber
    qtbot.waitUntil(lambda: not owner_alive(owner), timeout=5000)
    hub.announce({Topic.UNITS})
    assert got == [frozenset({Topic.UNITS})]


def owner_alive(owner: QObject) -> bool:
    from shiboken6 import isValid

    return isValid(owner)


def test_a_job_announces_what_it_declares_even_when_it_fails(
    qtbot, window_and_controller, tmp_path: Path
) -> None:
    _window, controller = window_and_controller
    assert controller.new_session(tmp_path / "s.taillens")
    heard: list[frozenset[Topic]] = []
    controller.changes.changed.connect(heard.append)

    def fail(_ctx):
        raise RuntimeError("after writing half")

    quiet = controller.run_job(Job("read", lambda _ctx: 1, quiet=True))
    failing = controller.run_job(Job("write", fail, writes=frozenset({Topic.UNITS})))
    qtbot.waitUntil(lambda: quiet.done and failing.done, timeout=10_000)
    assert heard == [frozenset({Topic.UNITS})]


def test_jobs_declare_what_they_write() -> None:
    from core.formats.wdv import importer as wdv_importer
    from core.formats.wdv import writer as wdv_writer
    from core.formats.webnlg import importer, writer

    for job in (importer.import_job(None, "x.xml"), wdv_importer.import_job(None, "x.json")):
        assert job.writes == IMPORT_WRITES
        assert {Topic.UNITS, Topic.REFERENCES} <= job.writes
    for job in (writer.export_job(None, "x.xml"), wdv_writer.export_job(None, "x.json")):
        assert job.writes == frozenset()  # an export changes nothing a panel shows
