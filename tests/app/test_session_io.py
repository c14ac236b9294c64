"""The session rule's two helpers (app.session_io): one writer, one view-read helper."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from app.changes import SessionChanges
from app.jobrunner import QtJobRunner
from app.session_io import SessionWriter, ViewReads
from core.changes import Topic
from core.errors import UserFacingError
from core.jobs import Job
from core.store import SessionStore
from tests.fixtures.write_lock_holder import HOLDER, ROOT


@pytest.fixture
def store(tmp_path: Path):
    with SessionStore.create(tmp_path / "w.taillens", busy_timeout_s=0.3) as store:
        yield store


class Holder:
    """Another process with BEGIN IMMEDIATE open on the session until release()."""

    def __init__(self, path: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(path)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "holding"

    def release(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.write("\n")
            self.process.stdin.flush()
            self.process.wait(30)


def meta_writer(key: str, value: str):
    return lambda store: store.set_meta(key, value)


def test_writes_land_at_once_on_a_free_session(qtbot, store) -> None:
    changes = SessionChanges()
    writer = SessionWriter(changes, lambda: store)
    heard: list[object] = []
    changes.changed.connect(heard.append)
    done: list[object] = []
    assert writer.write("a", meta_writer("k", "1"), writes={Topic.UNITS}, on_done=done.append)
    assert store.get_meta("k") == "1" and done == [None]
    assert heard == [frozenset({Topic.UNITS})] and writer.idle


def test_a_locked_session_queues_writes_in_order_and_says_so(qtbot, store) -> None:
    changes = SessionChanges()
    writer = SessionWriter(changes, lambda: store, retry_interval_s=0.05)
    waiting: list[str] = []
    caught_up: list[str] = []
    writer.waiting.connect(waiting.append)
    writer.caught_up.connect(caught_up.append)
    order: list[str] = []
    holder = Holder(store.path)
    try:
        for n in range(3):
            # Never waits: the first is refused at once (busy timeout 0), the rest queue.
            assert (
                writer.write(
                    f"write {n}", meta_writer("k", str(n)), on_done=lambda _r, n=n: order.append(n)
                )
                is None
            )
        assert writer.queued == ["write 0", "write 1", "write 2"]
        qtbot.waitUntil(lambda: waiting == ["write 0"], timeout=5_000)
        assert store.get_meta("k") is None and order == []
    finally:
        holder.release()
    qtbot.waitUntil(lambda: writer.idle, timeout=10_000)
    assert order == [0, 1, 2] and store.get_meta("k") == "2"
    assert caught_up == ["write 0"]


def test_a_refused_write_is_reported_not_dropped_silently(qtbot, store) -> None:
    writer = SessionWriter(SessionChanges(), lambda: store)
    refused: list[str] = []

    def bad(_store):
        raise UserFacingError("no such annotator")

    assert writer.write("x", bad, on_error=lambda e: refused.append(str(e))) is False
    assert refused == ["no such annotator"]
    failed: list[tuple[str, str, str]] = []
    writer.failed.connect(lambda *args: failed.append(args))
    assert writer.write("the rating of item 2", bad) is False
    assert failed == [("the rating of item 2", "no such annotator", "")]


def test_a_closed_sessions_queued_writes_land_then_it_closes(qtbot, store, tmp_path) -> None:
    current: list[SessionStore | None] = [store]
    writer = SessionWriter(SessionChanges(), lambda: current[0], retry_interval_s=0.05)
    holder = Holder(store.path)
    try:
        assert writer.write("old", meta_writer("k", "old")) is None
        current[0] = None  # another session opened
        writer.retire(store)
        assert not store.closed  # its write still waits
    finally:
        holder.release()
    qtbot.waitUntil(lambda: writer.idle, timeout=10_000)
    assert store.closed
    with SessionStore.open(store.path) as again:
        assert again.get_meta("k") == "old"


def test_flush_gives_up_after_its_time_and_names_what_was_lost(qtbot, store) -> None:
    writer = SessionWriter(SessionChanges(), lambda: store, retry_interval_s=0.05)
    holder = Holder(store.path)
    try:
        writer.write("the category last viewed", meta_writer("k", "v"))
        assert writer.flush(0.5) == ["the category last viewed"]
    finally:
        holder.release()


def test_a_newer_view_read_supersedes_an_older_one(qtbot, store) -> None:
    runner = QtJobRunner()
    reads = ViewReads(runner, lambda: store)
    release = threading.Event()
    shown: list[str] = []

    def slow(_store) -> str:
        release.wait(10)
        return "old"

    first = reads.request("panel", slow, shown.append)
    second = reads.request("panel", lambda _store: "new", shown.append)
    assert first is not None and second is not None and first.token.cancelled
    qtbot.waitUntil(lambda: second.done, timeout=10_000)
    release.set()
    qtbot.waitUntil(lambda: first.done, timeout=10_000)
    assert shown == ["new"] and not reads.pending()


def test_view_reads_never_queue_behind_long_jobs(qtbot, store) -> None:
    runner = QtJobRunner(max_threads=2)
    reads = ViewReads(runner, lambda: store)
    stop = threading.Event()
    long_jobs = [runner.submit(Job(f"long {n}", lambda _ctx: stop.wait(30))) for n in range(3)]
    shown: list[int] = []
    try:
        reads.request("units", lambda s: s.row_counts()["data_units"], shown.append)
        qtbot.waitUntil(lambda: shown == [0], timeout=10_000)
        assert not any(h.done for h in long_jobs)
    finally:
        stop.set()
    assert runner.wait_for_done(10_000)
