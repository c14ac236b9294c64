"""The folder lock: refused while held (by this process or another), released when the
holder ends, however it ends (SIGKILL included), never left stale."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from core.io.folder_lock import LOCK_NAME, FolderBusy, FolderLock

HOLD = """
import sys, time
from pathlib import Path
from core.io.folder_lock import FolderLock
lock = FolderLock(Path(sys.argv[1]), "training")
lock.acquire()
print("held", flush=True)
time.sleep(60)
"""


def test_held_in_this_process_refused_then_free(tmp_path: Path) -> None:
    with (
        FolderLock(tmp_path / "out", "training"),
        pytest.raises(FolderBusy, match=f"process {os.getpid()} on "),
    ):
        FolderLock(tmp_path / "out", "training").acquire()
    with FolderLock(tmp_path / "out", "training"):
        pass


@pytest.mark.skipif(os.name == "nt", reason="SIGKILL is POSIX")
def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path / "out")],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        with pytest.raises(FolderBusy, match=f"process {child.pid} on "):
            FolderLock(tmp_path / "out", "training").acquire()
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    # acquire() never waits (a held lock is refused at once, as above): taking it now
    # shows the killed holder's lock went with its process.
    with FolderLock(tmp_path / "out", "training"):
        holder = json.loads((tmp_path / "out" / LOCK_NAME).read_text(encoding="utf-8"))
        assert holder["pid"] == os.getpid()


@pytest.mark.skipif(os.name == "nt", reason="fcntl is POSIX")
def test_a_file_system_without_locks_goes_on_unlocked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NFS without a lock daemon answers ENOLCK: that is no other training holding the
    folder, so the work goes on (with a warning), not "another training is writing"."""
    import errno
    import fcntl

    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    with FolderLock(tmp_path / "out", "training") as lock:
        assert lock.path.is_file()


def test_a_lock_file_removed_under_a_waiting_opener_is_not_a_second_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The holder removes its file on release. A process that opened that file just before
    locks a file no longer in the folder: it must not count, or it and a process that made
    a new file would both hold the folder."""
    import core.io.folder_lock as folder_lock

    folder = tmp_path / "out"
    first = FolderLock(folder, "training")
    first.acquire()
    first.release()
    assert not (folder / LOCK_NAME).exists()  # a released lock leaves nothing behind
    opened = folder_lock.open_lock_file
    swaps = []

    def open_then_swap(path: Path, flags: int, *args: object) -> int:
        fd = opened(path, flags, *args)
        if not swaps:  # between our open and our lock, another holder came and went
            swaps.append(path)
            os.unlink(path)
            (folder / LOCK_NAME).write_text("{}", encoding="utf-8")
        return fd

    monkeypatch.setattr(folder_lock, "open_lock_file", open_then_swap)
    lock = FolderLock(folder, "training")
    lock.acquire()
    try:
        held = os.fstat(lock._handle.fileno())  # type: ignore[union-attr]
        now = os.stat(folder / LOCK_NAME)
        assert swaps and (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)
    finally:
        lock.release()
