"""The controller wires window, store and jobs: open, create, copy, fail cleanly."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest

from core.jobs import Job, JobContext
from core.store import SessionStore
from tests.fixtures import controller_window
from tests.fixtures.reads import settle_reads
from tests.shared_data import TAILNLG, require

window_and_controller = controller_window.window_and_controller  # registers the fixture here


def test_new_open_and_save_as(window_and_controller, tmp_path: Path) -> None:
    window, controller = window_and_controller
    first = tmp_path / "first.taillens"
    assert controller.new_session(first)
    assert window.session_label.text() == f"Session: {first.resolve()}"
    copy = tmp_path / "copy.taillens"
    assert controller.save_copy(copy, switch=False)
    assert controller.store.path == first.resolve()
    assert controller.save_copy(tmp_path / "moved.taillens", switch=True)
    assert controller.store.path == (tmp_path / "moved.taillens").resolve()
    assert controller.open_session(copy)
    assert str(copy.resolve()) in window.recent_files()


@pytest.mark.parametrize(
    ("content", "mode"),
    [(b"hello", 0o644), (b"SQLite format 3\x00" + b"\x00" * 50, 0o644), (None, 0)],
)
def test_bad_file_keeps_current_session_and_shows_message(
    window_and_controller, tmp_path: Path, content: bytes | None, mode: int
) -> None:
    window, controller = window_and_controller
    good = tmp_path / "good.taillens"
    assert controller.new_session(good)
    bad = tmp_path / "bad.taillens"
    if content is not None:
        bad.write_bytes(content)
        bad.chmod(mode)
        digest = hashlib.sha256(content).hexdigest()
    assert not controller.open_session(bad)
    assert controller.store is not None and controller.store.path == good.resolve()
    assert window.last_message is not None and window.last_message.isVisible()
    assert "bad.taillens" in window.last_message.text()
    assert window.error_log.model.entries
    if content is not None:
        assert hashlib.sha256(bad.read_bytes()).hexdigest() == digest


def test_read_only_session_is_refused_untouched(window_and_controller, tmp_path: Path) -> None:
    window, controller = window_and_controller
    path = tmp_path / "ro.taillens"
    SessionStore.create(path).close()
    path.chmod(0o444)
    before = path.read_bytes()
    assert not controller.open_session(path)
    assert "read-only" in window.last_message.text().lower()
    assert path.read_bytes() == before


def test_job_progress_failure_and_history(qtbot, window_and_controller, tmp_path: Path) -> None:
    window, controller = window_and_controller
    assert controller.new_session(tmp_path / "jobs.taillens")

    def slow(ctx: JobContext) -> int:
        for i in range(3):
            ctx.progress(i + 1, 3, "step")
            time.sleep(0.06)
        return 3

    handle = controller.run_job(Job("Three steps", slow, kind="test"))
    assert window.job_status.isVisible()
    with qtbot.waitSignal(handle.finished, timeout=5000):
        pass
    assert not window.job_status.isVisible()

    def broken(ctx: JobContext) -> None:
        raise OSError("endpoint unreachable")

    handle = controller.run_job(Job("Fetch City", broken, kind="fetch"))
    with qtbot.waitSignal(handle.finished, timeout=5000):
        pass
    assert window.error_dock.isVisible()
    entry = window.error_log.model.entries[-1]
    assert entry.source == "Fetch City" and entry.message == "endpoint unreachable"
    assert "OSError" in entry.details

    history = controller.store.job_history()
    assert [(h["title"], h["status"]) for h in history] == [
        ("Three steps", "done"),
        ("Fetch City", "failed"),
    ]
    assert history[1]["error"] == "endpoint unreachable"


def test_failure_is_written_to_the_log_file(qtbot, window_and_controller, taillens_home) -> None:
    from core.desktop.logs import log_file, setup_logging

    setup_logging()
    _window, controller = window_and_controller

    def broken(ctx: JobContext) -> None:
        raise ValueError("malformed page 3")

    handle = controller.run_job(Job("Import", broken))
    with qtbot.waitSignal(handle.finished, timeout=5000):
        pass
    text = log_file().read_text(encoding="utf-8")
    assert "malformed page 3" in text and "Traceback" in text


def test_import_and_export_from_the_file_menu(qtbot, window_and_controller, tmp_path) -> None:
    tailnlg = require(*TAILNLG)
    window, controller = window_and_controller
    assert window.action_import.isEnabled() and window.action_export.isEnabled()
    assert controller.new_session(tmp_path / "units.taillens")
    window.import_requested.emit(str(tailnlg), "tailnlg")  # as File ▸ Import… does
    qtbot.waitUntil(lambda: not controller.runner.active, timeout=30_000)
    qtbot.waitUntil(
        lambda: window.last_message is not None and "615 units" in window.last_message.text(),
        timeout=5000,
    )
    assert controller.store.info()["tables"]["data_units"] == 615
    out = tmp_path / "out.xml"
    window.export_requested.emit(str(out), "tailnlg")
    qtbot.waitUntil(lambda: out.exists() and not controller.runner.active, timeout=30_000)
    assert out.read_bytes().count(b"<entry ") == 615


def test_a_malformed_import_is_reported_and_changes_nothing(
    qtbot, window_and_controller, tmp_path
) -> None:
    window, controller = window_and_controller
    assert controller.new_session(tmp_path / "units.taillens")
    bad = tmp_path / "bad.xml"
    bad.write_text("<benchmark><entries><entry eid='1'></entries>", encoding="utf-8")
    window.import_requested.emit(str(bad), "tailnlg")
    qtbot.waitUntil(lambda: not controller.runner.active, timeout=30_000)
    # A user error: the message bar in the window (kept in the log), not the error log
    # panel, which is for bugs.
    qtbot.waitUntil(lambda: window.message_bar.isVisible(), timeout=5000)
    assert "bad.xml" in window.message_bar.text()
    assert not window.error_dock.isVisible()
    assert "bad.xml" in window.error_log.model.entries[-1].message
    assert controller.store.info()["tables"]["data_units"] == 0


def test_export_status_shows_the_summary_and_skipped_units(
    qtbot, window_and_controller, tmp_path
) -> None:
    from core.formats.wdv import import_wdv
    from core.store.models import DataUnit, UnitTriple
    from tests.fixtures.wdv_records import wdv_records, write_wdv

    window, controller = window_and_controller
    assert controller.new_session(tmp_path / "units.taillens")
    import_wdv(controller.store, write_wdv(tmp_path / "wdv.json", wdv_records()))
    out = tmp_path / "out.ttl"
    window.export_requested.emit(str(out), "turtle")
    # The summary stays: the runner's own "done in x s" line does not replace it.
    qtbot.waitUntil(
        lambda: (
            window.statusBar().currentMessage()
            == ("Exported to out.ttl: 3 entries, 3 units, 0 references, 0 errors")
        ),
        timeout=30_000,
    )
    # Nothing skipped: the message offers the file (Open, Show in folder).
    assert window.last_message is not None and not window.last_message.detailedText()
    assert [b.text() for b in window.last_message.action_buttons] == ["Open", "Show in folder"]
    assert window.message_bar.isVisible()
    window.last_message = None

    with controller.store.unit_of_work() as db:
        pair = DataUnit(uid="pair", origin="built", size=2, shape="sibling", root_qid="Q90")
        pair.triples = [
            UnitTriple(
                lang="en", tripleset="main", position=i, subject="Paris", predicate=p, object=o
            )
            for i, (p, o) in enumerate([("country", "France"), ("mayor", "X")])
        ]
        db.add(pair)
    window.export_requested.emit(str(tmp_path / "out.json"), "wdv")
    qtbot.waitUntil(lambda: window.last_message is not None, timeout=30_000)
    assert window.statusBar().currentMessage() == (
        "Exported to out.json: 3 entries, 4 units, 0 references, 1 error"
    )
    assert window.last_message.windowTitle() == "Export finished"
    assert "not exported" in window.last_message.text()
    assert window.last_message.detailedText().startswith("unit pair: 2 triples")


def test_quiet_jobs_stay_out_of_the_status_bar_and_history(
    qtbot, window_and_controller, tmp_path: Path
) -> None:
    """A panel's housekeeping (reading the session for a view) is not the user's work."""
    window, controller = window_and_controller
    assert controller.new_session(tmp_path / "quiet.taillens")
    window.statusBar().showMessage("the user's last message")
    before = len(controller.store.job_history())

    handle = controller.run_job(Job("Load scores", lambda ctx: 1, kind="panel.load", quiet=True))
    assert not window.job_status.isVisible()
    with qtbot.waitSignal(handle.finished, timeout=5000):
        pass
    assert window.statusBar().currentMessage() == "the user's last message"
    assert len(controller.store.job_history()) == before

    def broken(ctx: JobContext) -> None:
        raise OSError("session file vanished")

    handle = controller.run_job(Job("Load scores", broken, kind="panel.load", quiet=True))
    with qtbot.waitSignal(handle.finished, timeout=5000):
        pass
    assert window.error_log.model.entries[-1].message == "session file vanished"
    assert len(controller.store.job_history()) == before


def test_a_full_disk_during_an_import_is_a_message_not_a_bug(
    qtbot, window_and_controller, tmp_path
) -> None:
    """SQLITE_FULL (here from PRAGMA max_page_count, as a full disk gives it) during the
    import job: the window says the disk is full and what was kept, in the message bar and
    the error log, without a traceback; the session is as it was."""
    from sqlalchemy import event

    tailnlg = require(*TAILNLG)
    window, controller = window_and_controller
    assert controller.new_session(tmp_path / "full.taillens")
    engine = controller.store.engine
    before = controller.store.info()["tables"]
    # The new session's own reads (its undo history) finish first: adding a listener while
    # a worker thread opens a connection changes the list SQLAlchemy is reading.
    settle_reads(qtbot, controller)

    @event.listens_for(engine, "connect")
    def _limit(connection, _record) -> None:
        connection.execute("PRAGMA max_page_count=1")  # no more than the file has

    engine.dispose()  # every connection from now on has the limit

    window.import_requested.emit(str(tailnlg), "tailnlg")
    qtbot.waitUntil(lambda: not controller.runner.active, timeout=30_000)
    entry = window.error_log.model.entries[-1]
    assert "the disk is full" in entry.message and "Nothing of this import was saved" in (
        entry.message
    )
    assert entry.details == ""  # a message for the user, not a bug report
    assert not window.error_dock.isVisible()
    event.remove(engine, "connect", _limit)
    engine.dispose()
    after = controller.store.info()["tables"]
    assert after.pop("job_history") == before.pop("job_history") + 1  # the job's own row
    assert after == before


def test_a_user_facing_error_escaping_a_slot_is_shown_as_its_message(
    window_and_controller,
) -> None:
    import sys

    from app.gui import install_excepthook
    from core.store import SessionStorageError

    window, _controller = window_and_controller
    previous = sys.excepthook
    install_excepthook(window)
    try:
        error = SessionStorageError(Path("/x/s.taillens"), "the disk is full")
        sys.excepthook(type(error), error, None)
    finally:
        sys.excepthook = previous
    entry = window.error_log.model.entries[-1]
    assert entry.message.startswith("Cannot save to the session s.taillens: the disk is full")
    assert entry.details == "" and not window.error_dock.isVisible()
