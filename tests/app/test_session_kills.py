"""A session file appears only whole: kill -9 during its creation, many times.

A helper process imports TailLens once, then forks one child per kill; each child
creates a session (``session new``, or the import that creates one) and is killed with
SIGKILL after a seeded random delay spread over the time creation takes. After each
kill the path holds either nothing or a whole, current session; the next run (opening
with ``create``, as ``import`` does) leaves no temporary file behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from core.store import SessionStore, clean_leftovers, inspect_file
from tests.fixtures.webnlg_xml import xml_file

ROOT = Path(__file__).resolve().parents[2]

FORKER = r"""
import json, os, random, signal, sys, time
from app.cli import main
import core.store  # noqa: F401  (imported before forking, so children start at once)

plan = json.loads(sys.argv[1])
random.seed(plan["seed"])

def child(command):
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os._exit(main(command))

def timed(command):
    pid = os.fork()
    if pid == 0:
        child(command)
    started = time.monotonic()
    os.waitpid(pid, 0)
    return time.monotonic() - started

results = []
for i, job in enumerate(plan["jobs"]):
    if i == 0 or plan["jobs"][i - 1]["kind"] != job["kind"]:
        # Calibrate: how long one unkilled run of this kind takes, on a scratch path.
        span = timed([a.replace("{path}", job["scratch"]) for a in job["command"]])
    delay = random.uniform(0, span * 1.1)
    pid = os.fork()
    if pid == 0:
        child([a.replace("{path}", job["path"]) for a in job["command"]])
    if job.get("unkilled"):
        delay = None  # the control: it runs to its end, however long that takes here
    else:
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    killed = os.WIFSIGNALED(status)
    results.append({"path": job["path"], "delay": delay, "killed": killed})
print(json.dumps(results))
"""


def describe(path: Path) -> str:
    """What a kill left at ``path``: 'nothing' or 'whole session' (anything else fails)."""
    if not path.exists() and not path.is_symlink():
        return "nothing"
    check = inspect_file(path)  # raises for an empty, partial or schema-less file
    assert check.is_current
    with SessionStore.open_read_only(path) as store:
        assert store.get_meta("created_with")
        store.row_counts()
    return "whole session"


@pytest.mark.slow
def test_kill_9_during_session_creation_leaves_nothing_or_a_whole_session(
    tmp_path: Path,
) -> None:
    source = xml_file(tmp_path, uids=tuple(f"E{i}" for i in range(40)))
    jobs = []
    kills_each = 15
    for kind, command in (
        ("session new", ["session", "new", "{path}"]),
        ("import", ["import", str(source), "--session", "{path}", "--quiet"]),
    ):
        scratch = tmp_path / f"scratch-{kind[0]}"
        scratch.mkdir()
        for i in range(kills_each + 1):
            folder = tmp_path / f"{kind[0]}{i}"
            folder.mkdir()
            jobs.append(
                {
                    "kind": kind,
                    "command": command,
                    "path": str(folder / "k.taillens"),
                    "scratch": str(scratch / f"c{i}.taillens"),
                    "unkilled": i == kills_each,
                }
            )
    done = subprocess.run(
        [sys.executable, "-c", FORKER, json.dumps({"seed": 11, "jobs": jobs})],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert len(results) == len(jobs)

    outcomes: Counter[tuple[str, str, bool]] = Counter()
    for job, result in zip(jobs, results, strict=True):
        path = Path(result["path"])
        left = describe(path)
        if job["unkilled"]:
            assert not result["killed"] and left == "whole session"
        others = sorted(set(os.listdir(path.parent)) - {path.name})
        outcomes[(job["kind"], left, bool(others))] += 1
        # The next run cleans what the killed one left and ends with one whole session.
        SessionStore.open(path, create=True).close()
        assert describe(path) == "whole session"
        assert os.listdir(path.parent) == [path.name], "temporary files left behind"
    print("\nkills against session creation (kind, what was left, temporary files):")
    for key, count in sorted(outcomes.items()):
        print(f"  {key}: {count}")
    killed = sum(r["killed"] for r in results)
    print(f"  killed before finishing: {killed} of {len(results)}")
    # Every kill left one of the two (checked above); the seeded delays start near 0, so
    # some kill came before anything was written, and each kind's unkilled control run
    # (however slow the machine) left a whole session.
    assert {left for _, left, _ in outcomes} == {"nothing", "whole session"}


def test_leftovers_of_a_dead_process_are_cleaned_and_a_live_ones_kept(tmp_path: Path) -> None:
    path = tmp_path / "s.taillens"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead_pid = int(dead.stdout)
    stale = [
        tmp_path / f".s.taillens.{dead_pid}-0123abcd.creating{end}" for end in ("", "-wal", "-shm")
    ]
    untagged = tmp_path / ".s.taillens.89abcdef.creating"  # an older TailLens's name
    live = tmp_path / f".s.taillens.{os.getpid()}-fedcba98.creating"
    partial = tmp_path / f".s.backup-rev0003-20260101-000000.taillens.{dead_pid}-0a0b0c0d.partial"
    unrelated = tmp_path / ".other.taillens.99999-01234567.creating"
    for leftover in (*stale, untagged, live, partial, unrelated):
        leftover.write_bytes(b"x")
    old = time.time() - 3600
    os.utime(untagged, (old, old))

    removed = clean_leftovers(path)
    assert sorted(removed) == sorted([*stale, untagged, partial])
    assert live.exists() and unrelated.exists()
    SessionStore.open(path, create=True).close()
    assert sorted(os.listdir(tmp_path)) == sorted([path.name, live.name, unrelated.name])


def test_an_empty_file_at_the_path_is_no_obstacle_to_creating(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 0-byte file (what a crash of another program, or `touch`, leaves) holds nothing:
    creating a session there replaces it; only opening an existing session refuses it."""
    from app.cli import main

    source = xml_file(tmp_path)
    for command in (
        ["session", "new", "{path}"],
        ["import", str(source), "--session", "{path}", "--quiet"],
    ):
        folder = tmp_path / command[0]
        folder.mkdir()
        path = folder / "k.taillens"
        path.write_bytes(b"")
        assert main(["session", "info", str(path)]) == 2
        assert "the file is empty (0 bytes)" in capsys.readouterr().err
        assert path.read_bytes() == b""
        assert main([arg.replace("{path}", str(path)) for arg in command]) == 0, (
            capsys.readouterr().err
        )
        assert describe(path) == "whole session"
        assert os.listdir(folder) == ["k.taillens"]
    # Not when a -wal beside it may hold its pages.
    path = tmp_path / "w.taillens"
    path.write_bytes(b"")
    (tmp_path / "w.taillens-wal").write_bytes(b"x" * 32)
    assert main(["session", "new", str(path)]) == 2
    assert path.read_bytes() == b""
