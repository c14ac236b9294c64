"""The window paints first, as a shell, and brings the panels and the session in behind it:
nothing heavy is imported before the first paint, and the shell becomes the
whole window, with the saved layout kept. Timings are in benchmarks/first_paint.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QLabel

from app import gui
from widgets.panels import PANELS

ROOT = Path(__file__).resolve().parents[2]
MUST_WAIT = ("sqlalchemy", "pyqtgraph", "numpy", "core.store")


def _reported(output: str) -> dict[str, list[str]]:
    found = {}
    for line in output.splitlines():
        name, _, value = line.partition("_heavy_modules=")
        if _:
            found[name] = [m for m in value.split(",") if m]
    return found


def test_nothing_heavy_is_imported_before_the_first_paint(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = dict(os.environ, TAILLENS_HOME=str(home), QT_QPA_PLATFORM="offscreen")
    result = subprocess.run(
        [sys.executable, "-m", "app", "gui", "--report-first-paint"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    reported = _reported(result.stdout)
    assert set(reported) == {"first_paint", "ready"}, result.stdout
    assert [m for m in MUST_WAIT if m in reported["first_paint"]] == []
    # The same check sees them once the panels are built and the session is open.
    assert set(MUST_WAIT) <= set(reported["ready"])
    assert list((home / "data").glob("*.taillens"))  # the default session was opened


def test_report_idle_prints_when_the_window_stopped_working_and_its_memory(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    env = dict(os.environ, TAILLENS_HOME=str(home), QT_QPA_PLATFORM="offscreen")
    result = subprocess.run(
        [sys.executable, "-m", "app", "gui", "--report-idle", "--show", "report"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    values = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    # Idle comes after the session is open (the start-up jobs released then), and the
    # peak memory is at least the memory then.
    assert float(values["idle_wall_time"]) >= float(values["ready_wall_time"])
    assert float(values["ready_wall_time"]) >= float(values["first_paint_wall_time"])
    assert 0 < int(values["rss_mb"]) <= int(values["peak_rss_mb"])


def test_the_shell_takes_its_panels_in_the_saved_layout(qapp, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    window, controller = gui.build_window(settings)
    window.show()
    window.docks["units"].close()  # the user's layout: a panel closed
    window.close()  # saves the layout
    controller.shutdown()

    shell = gui.build_shell(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    shell.restore_layout()
    shell.show()
    assert shell.panels == {}
    assert {s.key for s in PANELS} <= set(shell.docks)
    assert all(isinstance(shell.docks[s.key].widget(), QLabel) for s in PANELS)
    assert shell.docks["units"].isHidden()

    controller = gui.wire_window(shell)
    for _ in range(3):
        qapp.processEvents()
    assert set(shell.panels) == {s.key for s in PANELS}
    assert all(shell.docks[s.key].widget() is shell.panels[s.key] for s in PANELS)
    assert shell.docks["units"].isHidden()  # the saved layout still holds
    assert shell.panels["browser"].isVisible()
    assert controller.browser is not None
    shell.close()
    controller.shutdown()


def test_a_screenshot_over_the_session_it_opens_is_still_refused(tmp_path: Path) -> None:
    """The screenshot's target is checked before the window shows and again once the
    session is open (it opens after the first paint): --force never writes over it."""
    from core.store import SessionStore

    session = tmp_path / "study.taillens"
    SessionStore.create(session).close()
    env = dict(os.environ, TAILLENS_HOME=str(tmp_path / "home"), QT_QPA_PLATFORM="offscreen")
    result = subprocess.run(
        [sys.executable, "-m", "app", "gui", str(session), "--screenshot", str(session)]
        + ["--force"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "it is the session being read" in result.stderr
    assert "Traceback" not in result.stderr
    assert session.read_bytes()[:16] == b"SQLite format 3\x00"  # no PNG over it
    SessionStore.open(session).close()
