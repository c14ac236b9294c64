"""A display that is set but does not answer (``DISPLAY=:N`` with no X server there, a
Wayland socket that is gone) is one line and exit 2 from ``taillens gui``, before Qt
aborts the process; a compositor that answers lets the window start."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from app.display import unreachable_display

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11/Wayland: Linux")


def _silent_x_display() -> str:
    """A display number with no X server on its socket (file or abstract)."""
    for number in range(4917, 5017):
        path = f"/tmp/.X11-unix/X{number}"
        answered = False
        for address in ("\0" + path, path):
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    sock.connect(address)
                    answered = True
            except OSError:
                pass
        if not answered:
            return f":{number}"
    raise AssertionError("no free X display number")


def _gui(tmp_path: Path, **display: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "XDG_RUNTIME_DIR")
    }
    env.update(display, TAILLENS_HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "app", "gui"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_an_x_display_with_no_server_is_one_line_and_exit_2(tmp_path: Path) -> None:
    display = _silent_x_display()
    result = _gui(tmp_path, DISPLAY=display)
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("taillens: cannot reach the display: DISPLAY=" + display)
    assert "--screenshot" in lines[0]


def test_a_wayland_socket_that_is_gone_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = _gui(tmp_path, WAYLAND_DISPLAY="wayland-7", XDG_RUNTIME_DIR=str(tmp_path))
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "WAYLAND_DISPLAY=wayland-7" in lines[0]


def test_a_compositor_that_answers_is_reachable(tmp_path: Path) -> None:
    # A short folder: a Unix socket's path has a limit of about 100 bytes.
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tl-") as runtime:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(os.path.join(runtime, "wayland-1"))
        listener.listen(1)
        try:
            env = {"WAYLAND_DISPLAY": "wayland-1", "XDG_RUNTIME_DIR": runtime}
            assert unreachable_display(env) is None
            # Reachable Wayland wins over an X display that is gone (Qt falls back).
            assert unreachable_display({**env, "DISPLAY": _silent_x_display()}) is None
            gone = {"WAYLAND_DISPLAY": "wayland-2", "XDG_RUNTIME_DIR": runtime}
            assert "WAYLAND_DISPLAY=wayland-2" in (unreachable_display(gone) or "")
        finally:
            listener.close()
    assert unreachable_display({}) is None  # nothing set: the caller's own message
