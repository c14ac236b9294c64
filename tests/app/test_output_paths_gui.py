"""The GUI's save dialogs refuse a session as core's guard does: File ▸
Export onto the open session or another one, Save a copy onto the session's -wal, a
figure or the HTML report onto a session. The user gets a message; no file changes."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from app.controller import AppController
from core.errors import UserFacingError
from core.io.output_guard import is_session_file
from core.store import SessionStore
from tests.fixtures.reads import settle_reads
from widgets.main_window import MainWindow


@pytest.fixture
def window_and_controller(qtbot, tmp_path: Path):
    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    controller = AppController(window)
    window.show()
    yield window, controller
    controller.shutdown()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def choose(monkeypatch: pytest.MonkeyPatch, module, path: Path, chosen: str = "") -> None:
    """Answer the module's next save dialogs with ``path`` (as the user picking it)."""
    monkeypatch.setattr(
        module.QFileDialog, "getSaveFileName", lambda *_args, **_kw: (str(path), chosen)
    )


def test_export_dialog_refuses_the_open_session_and_another(
    qtbot, window_and_controller, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import widgets.main_window as main_window_module

    window, controller = window_and_controller
    session = tmp_path / "open.taillens"
    assert controller.new_session(session)
    settle_reads(qtbot, controller)  # what opening it reads (the undo history's tail)
    link = tmp_path / "link.csv"
    link.symlink_to(session)
    other = tmp_path / "other.taillens"
    SessionStore.create(other).close()
    for target, words in (
        (session, "it is the session being read"),
        (link, "it is the session being read"),
        (other, "it is a TailLens session"),
    ):
        before = digest(target)
        choose(monkeypatch, main_window_module, target, "CSV (*.csv)")
        window.action_export.trigger()  # File ▸ Export…, answered with the target
        assert not controller.runner.active  # refused before any job
        assert window.message_bar.isVisible() and words in window.message_bar.text()
        assert "Refusing to write" in window.error_log.model.entries[-1].message
        assert digest(target) == before and is_session_file(target)
    # An ordinary file is written as before.
    out = tmp_path / "units.csv"
    choose(monkeypatch, main_window_module, out, "CSV (*.csv)")
    window.action_export.trigger()
    qtbot.waitUntil(lambda: out.exists() and not controller.runner.active, timeout=30_000)


def test_save_a_copy_refuses_the_sessions_wal(
    window_and_controller, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import widgets.main_window as main_window_module

    window, controller = window_and_controller
    session = tmp_path / "open.taillens"
    assert controller.new_session(session)
    wal = tmp_path / "open.taillens-wal"
    choose(monkeypatch, main_window_module, wal)
    window.action_save_copy.trigger()
    assert "it is the session being read" in window.message_bar.text()
    assert controller.store is not None and controller.store.path == session.resolve()
    with controller.store.unit_of_work():
        pass  # still a working session


def test_figure_and_html_report_refuse_a_session(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import widgets.report.panel as report_module
    from app.gui import build_window
    from core.formats.common import atomic_output
    from core.report.figures import save_figure

    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    session = tmp_path / "open.taillens"
    try:
        assert controller.new_session(session)
        before = digest(session)
        # The report panel's HTML… save dialog, answered with the open session.
        choose(monkeypatch, report_module, session)
        controller.report.panel._on_html()
        assert "it is the session being read" in window.message_bar.text()
        assert controller.report.last_export is None
        # Every plot's Export… writes through save_figure → atomic_output: the same guard.
        link = tmp_path / "plot.png"
        link.symlink_to(session)
        hard = tmp_path / "plot.svg"
        hard.hardlink_to(session)
        from matplotlib.figure import Figure  # here: at collection every worker would hold it

        for target in (link, hard):
            with pytest.raises(UserFacingError, match="it is the session being read"):
                save_figure(Figure(), target, force=True)
        with pytest.raises(UserFacingError, match="being read"), atomic_output(session):
            pass
        assert digest(session) == before and is_session_file(session)
    finally:
        controller.shutdown()
