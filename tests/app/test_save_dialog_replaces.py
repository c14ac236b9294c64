"""A save dialog's answer may replace a file TailLens did not write: Qt's dialog asked the
user first (widgets.save_dialog approves that file as it is). The same file given any
other way (no question asked) is refused with a message, as the CLI refuses it without
--force; a session stays refused either way."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from app.controller import AppController
from core.io.output_guard import is_session_file
from core.store import SessionStore
from widgets.main_window import MainWindow

FOREIGN = "my own notes\n"


@pytest.fixture
def window_and_controller(qtbot, tmp_path: Path):
    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    controller = AppController(window)
    window.show()
    yield window, controller
    controller.shutdown()


def answer(monkeypatch: pytest.MonkeyPatch, path: Path, chosen: str = "CSV (*.csv)") -> None:
    from PySide6.QtWidgets import QFileDialog

    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_a, **_k: (str(path), chosen))


def test_a_file_the_user_confirmed_in_the_dialog_is_replaced(
    qtbot, window_and_controller, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window, controller = window_and_controller
    assert controller.new_session(tmp_path / "open.taillens")
    notes = tmp_path / "notes.csv"
    notes.write_text(FOREIGN, encoding="utf-8")
    # Given without a dialog (nobody asked the user): refused, the file as it was.
    assert controller.export_file(notes, "csv") is None
    assert "TailLens did not write" in window.message_bar.text()
    assert notes.read_text(encoding="utf-8") == FOREIGN
    # Through File ▸ Export…, whose dialog asked before naming it: replaced.
    answer(monkeypatch, notes)
    window.action_export.trigger()
    qtbot.waitUntil(
        lambda: notes.read_text(encoding="utf-8") != FOREIGN and not controller.runner.active,
        timeout=30_000,
    )
    # A session chosen in the dialog stays refused.
    other = tmp_path / "other.taillens"
    SessionStore.create(other).close()
    answer(monkeypatch, other)
    window.action_export.trigger()
    assert "it is a TailLens session" in window.message_bar.text()
    assert is_session_file(other)


def test_a_file_changed_after_the_dialog_is_refused(window_and_controller, tmp_path: Path) -> None:
    from core.io.output_guard import approve_replacement

    window, controller = window_and_controller
    assert controller.new_session(tmp_path / "open.taillens")
    notes = tmp_path / "notes.csv"
    notes.write_text(FOREIGN, encoding="utf-8")
    approve_replacement(notes)
    notes.write_text(FOREIGN + "and more, written after the question\n", encoding="utf-8")
    assert controller.export_file(notes, "csv") is None
    assert "TailLens did not write" in window.message_bar.text()
