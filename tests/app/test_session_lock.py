"""Two windows on one session: the second is told who has it open and chooses
read-only, open anyway, or cancel; a lock left by a killed process is taken over."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from app.gui import build_window
from core.io.session_lock import SessionInUseError, SessionLock, lock_path, read_holder
from core.store import SessionStore

ROOT = Path(__file__).resolve().parents[2]

# Another TailLens process holding the session's lock until its stdin closes.
_HOLDER = """
import sys
from core.io.session_lock import SessionLock
lock = SessionLock.acquire(sys.argv[1])
print("holding", flush=True)
sys.stdin.read()
lock.release()
"""


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "shared.taillens"
    SessionStore.create(path).close()
    return path


@pytest.fixture
def other_process(session: Path):
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(session)],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "holding"
    yield process
    if process.poll() is None:
        process.kill()
    process.wait(timeout=30)


def test_a_live_holder_is_reported_and_a_killed_ones_lock_taken_over(
    session: Path, other_process: subprocess.Popen[str]
) -> None:
    with pytest.raises(SessionInUseError) as caught:
        SessionLock.acquire(session)
    assert caught.value.holder.pid == other_process.pid
    assert "open in another TailLens window" in str(caught.value)

    other_process.send_signal(signal.SIGKILL)  # killed: its lock file stays behind
    other_process.wait(timeout=30)
    assert read_holder(session).pid == other_process.pid
    lock = SessionLock.acquire(session)  # stale: taken over without a word
    assert read_holder(session).pid == os.getpid()
    lock.release()
    assert not lock_path(session).exists()


def test_a_second_window_asks_and_opens_read_only_or_not_at_all(
    qtbot, tmp_path: Path, session: Path, other_process: subprocess.Popen[str], monkeypatch
) -> None:
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    asked: list[tuple[str, str]] = []
    answer = ["cancel"]

    def ask(name: str, holder: str) -> str:
        asked.append((name, holder))
        return answer[0]

    monkeypatch.setattr(window, "ask_session_in_use", ask)
    assert not controller.open_session(session)
    assert controller.store is None
    # Cancelled, not failed: a window opened for this session alone closes (app.gui).
    assert controller.open_cancelled
    assert asked[0][0] == "shared.taillens" and f"process {other_process.pid}" in asked[0][1]

    answer[0] = "read_only"
    assert controller.open_session(session)
    assert controller.store.read_only and "(read-only)" in window.windowTitle()
    assert not controller.open_cancelled
    assert read_holder(session).pid == other_process.pid  # still theirs
    controller.shutdown()
    assert read_holder(session).pid == other_process.pid


def test_the_window_holds_the_lock_while_the_session_is_open(
    qtbot, tmp_path: Path, session: Path
) -> None:
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    assert controller.open_session(session)
    assert read_holder(session).pid == os.getpid()
    other = tmp_path / "other.taillens"
    assert controller.new_session(other)  # switching releases the first
    assert not lock_path(session).exists() and read_holder(other).pid == os.getpid()
    controller.shutdown()
    assert not lock_path(other).exists()


@pytest.mark.slow
def test_a_screenshot_of_a_session_in_use_opens_it_read_only(
    tmp_path: Path, session: Path, other_process: subprocess.Popen[str]
) -> None:
    """`taillens gui --screenshot` has nobody to ask: it never waits on a dialog."""
    shot = tmp_path / "shot.png"
    result = subprocess.run(
        [sys.executable, "-m", "app", "gui", str(session), "--screenshot", str(shot)],
        cwd=ROOT,
        env=dict(
            os.environ,
            PYTHONPATH=str(ROOT),
            QT_QPA_PLATFORM="offscreen",
            TAILLENS_HOME=str(tmp_path / "home"),
        ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert shot.read_bytes()[:4] == b"\x89PNG"
    assert read_holder(session).pid == other_process.pid  # still theirs
