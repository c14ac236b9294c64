"""The application shell: screenshots leave the user's settings alone, ``taillens
FILE.taillens`` opens the session, and the palette follows the system's colour scheme."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from app import gui
from app.cli import main
from core.store import SessionStore
from widgets.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TAILLENS_HOME=str(home), QT_QPA_PLATFORM="offscreen")
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_screenshot_leaves_geometry_layout_and_recent_files_alone(qtbot, tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings_file = home / "config" / gui.SETTINGS_FILE
    settings_file.parent.mkdir(parents=True)
    # The user's own settings: a window they resized, a panel they closed, recent files.
    window = MainWindow(QSettings(str(settings_file), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    window.resize(1111, 777)
    window.docks["units"].close()
    window.add_recent(tmp_path / "mine.taillens")
    window.close()
    window.settings.sync()
    before = settings_file.read_bytes()
    assert b"geometry" in before and b"mine.taillens" in before

    session = tmp_path / "other.taillens"
    SessionStore.create(session).close()
    shot = tmp_path / "shot.png"
    result = run_cli(
        "gui",
        str(session),
        "--screenshot",
        str(shot),
        "--size",
        "1366x768",
        "--show",
        "annotate",
        home=home,
    )
    assert result.returncode == 0, result.stderr
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert settings_file.read_bytes() == before
    assert sorted(p.name for p in settings_file.parent.iterdir()) == [gui.SETTINGS_FILE]


def test_a_session_file_alone_opens_the_window_on_it(monkeypatch, tmp_path: Path) -> None:
    seen: list[argparse.Namespace] = []
    session = tmp_path / "study.taillens"
    # The handler is bound when the parser is built: patch there too.
    import app.cli as cli

    original = cli.build_parser

    def build() -> argparse.ArgumentParser:
        parser = original()
        for action in parser._subparsers._group_actions:  # noqa: SLF001
            action.choices["gui"].set_defaults(handler=lambda args: seen.append(args) or 0)
        return parser

    monkeypatch.setattr(cli, "build_parser", build)
    assert main([str(session)]) == 0
    assert seen[-1].command == "gui" and seen[-1].session == session
    assert main([str(session), "--size", "1366x768"]) == 0
    assert seen[-1].size == "1366x768"
    with pytest.raises(SystemExit) as exit_info:  # anything else is still an argument error
        main(["notes.txt"])
    assert exit_info.value.code == 2


def test_a_session_file_alone_renders_the_session(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = tmp_path / "study.taillens"
    SessionStore.create(session).close()
    shot = tmp_path / "shot.png"
    result = run_cli(str(session), "--screenshot", str(shot), home=home)
    assert result.returncode == 0, result.stderr
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list((home / "data").glob("*.taillens"))  # not the default session
    # A file that is not a session is refused as such (the session was what it opened).
    bad = tmp_path / "bad.taillens"
    bad.write_text("not a session")
    result = run_cli(str(bad), "--screenshot", str(shot), home=home)
    assert result.returncode == 2


def test_palette_follows_the_system_colour_scheme(qapp) -> None:
    app = QApplication.instance()
    window_role = QPalette.ColorRole.Window
    try:
        gui.apply_color_scheme(app, Qt.ColorScheme.Dark)
        palette = app.palette()
        assert palette.color(window_role).lightness() < 80
        assert palette.color(QPalette.ColorRole.WindowText).lightness() > 180
        assert palette.color(QPalette.ColorRole.Base).lightness() < 80
        gui.apply_color_scheme(app, Qt.ColorScheme.Light)
        assert app.palette().color(window_role).lightness() > 180
    finally:
        gui.apply_color_scheme(app, Qt.ColorScheme.Light)
