"""A process killed mid-write loses nothing it committed and leaves a sound file."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from core.store import SessionStore
from core.store.models import Annotator

ROOT = Path(__file__).resolve().parents[2]

WRITER = """
import sys, time
from core.store import SessionStore
from core.store.models import Annotator
store = SessionStore.open(sys.argv[1])
i = 0
while True:
    with store.unit_of_work() as db:
        db.add(Annotator(name=f"a{i}"))
    print(i, flush=True)  # printed only after the commit returned
    i += 1
"""


def test_killed_writer_keeps_every_committed_change(tmp_path: Path) -> None:
    path = tmp_path / "crash.taillens"
    SessionStore.create(path).close()
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    last_committed = -1
    deadline = time.monotonic() + 30
    while last_committed < 50 and time.monotonic() < deadline:
        line = writer.stdout.readline()
        if not line:
            break
        last_committed = int(line)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(10)
    assert last_committed >= 50, "the writer did not get going"

    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with SessionStore.open(path) as store, store.unit_of_work() as db:
        names = {name for (name,) in db.query(Annotator.name)}
    assert {f"a{i}" for i in range(last_committed + 1)} <= names
