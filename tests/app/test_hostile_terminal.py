"""What the command line prints of names from a file is shown, never obeyed by the
terminal; a reader that closes the pipe early ends the command quietly."""

from __future__ import annotations

import os
import shlex
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from app.cli import main
from core.store import SessionStore
from tests.cli_process import ROOT

NAMES = ["e\x1b[2Jve", "bell\x07", "cr\rover", "nul\x00x", "csi\x9b31m", "del\x7f"]


@pytest.fixture
def hostile_session(tmp_path: Path) -> Path:
    """A session another program wrote annotator names into: control characters, and
    enough of them that 'session check' prints more than a pipe holds."""
    path = tmp_path / "hostile.taillens"
    SessionStore.create(path).close()
    with closing(sqlite3.connect(path)) as conn:
        conn.executemany(
            "INSERT INTO annotators (name, is_anonymous) VALUES (?, 0)",
            [(f"{NAMES[i % len(NAMES)]} {i}",) for i in range(3000)],
        )
        conn.commit()
    return path


def test_session_check_shows_control_characters_escaped(
    hostile_session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["session", "check", str(hostile_session)]) == 1  # damaged rows found
    out = capsys.readouterr().out
    assert "control character" in out
    for raw in ("\x1b", "\x07", "\x00", "\x9b", "\x7f"):
        assert raw not in out
    assert "\r" not in out.replace("\r\n", "\n")
    assert "\\x1b[2J" in out and "\\x07" in out and "\\x9b31m" in out


def test_a_closed_pipe_ends_the_command_quietly(hostile_session: Path) -> None:
    command = (
        f"{shlex.quote(sys.executable)} -m app session check "
        f"{shlex.quote(str(hostile_session))} | head -1"
    )
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stderr == "", done.stderr
    assert len(done.stdout.splitlines()) == 1
    assert done.returncode in (0, 141)
