"""core/io/atomic.py and core/io/liveness.py: one temporary-name scheme, one liveness rule."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from core.io.atomic import temporary_name, write_atomically, write_text_atomically
from core.io.liveness import owner_alive, process_alive

# What a temporary name ends with: the writer's process id, 8 hex digits, the suffix.
TEMPORARY_NAME = re.compile(r"\.(?P<pid>\d+)-[0-9a-f]{8}\.(?P<suffix>[\w-]+)\Z")


def test_temporary_name_is_hidden_beside_and_names_this_process(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    first, second = temporary_name(target), temporary_name(target, "partial")
    assert first.parent == tmp_path and first.name.startswith(".out.csv.")
    match = TEMPORARY_NAME.search(first.name)
    assert match is not None and int(match["pid"]) == os.getpid() and match["suffix"] == "tmp"
    assert TEMPORARY_NAME.search(second.name)["suffix"] == "partial"  # type: ignore[index]
    assert temporary_name(target) != first  # two writers of one process do not collide


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    write_text_atomically(target, "old")

    def half(temporary: Path) -> None:
        temporary.write_text("ne", encoding="utf-8")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomically(target, half)
    assert target.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_liveness_of_this_a_dead_and_a_foreign_process() -> None:
    assert process_alive(os.getpid()) and owner_alive(os.getpid(), socket.gethostname()) == "alive"
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = int(child.stdout)  # ended and reaped: its pid is free (reuse within a test is
    # possible in principle; then the /proc check still tells a non-Python process apart)
    assert owner_alive(dead, socket.gethostname()) in {"gone", "alive"}
    if not process_alive(dead):
        assert owner_alive(dead, socket.gethostname()) == "gone"
    assert owner_alive(os.getpid(), "another-host.example") == "unknown"
    assert not process_alive(0) and not process_alive(-5)
