"""An exclusive lock on a folder for one process's long write (a training's output).

``FolderLock`` holds an OS advisory lock (``fcntl.flock``; ``msvcrt.locking`` on Windows)
on a file inside the folder for as long as the work runs. The operating system drops it
when the process ends, killed or not, so a lock is never left stale; a second process
asking for it is refused at once with who holds it (pid and host, written in the file).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from pathlib import Path
from types import TracebackType
from typing import IO, Self

from core.desktop.logs import get_logger
from core.errors import UserFacingError
from core.io.bounded import SMALL, loads_json
from core.io.files import LOCK_LIMIT, open_lock_file

log = get_logger("folder_lock")

LOCK_NAME = ".taillens.lock"


class FolderBusy(UserFacingError):
    """Another process holds the folder."""


def _try_lock(handle: IO[str]) -> bool:
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:  # EWOULDBLOCK: another holds it
        return False
    except OSError as error:  # ENOLCK and the like: a file system without locks (NFS)
        log.warning("no lock on %s (%s): going on without one", handle.name, error)
    return True


class FolderLock:
    """``with FolderLock(folder, "training"):`` — the folder is created if need be."""

    def __init__(self, folder: Path, what: str) -> None:
        self.folder, self.what = Path(folder), what
        self.path = self.folder / LOCK_NAME
        self._handle: IO[str] | None = None

    def acquire(self) -> None:
        self.folder.mkdir(exist_ok=True)
        # The holder removes the file when it lets go (release): a process that opened the
        # old file just before may then lock a file no longer in the folder, while a third
        # creates a new one. So a lock counts only on the file that is in the folder now.
        for _attempt in range(100):
            if self._acquire_once():
                return
        raise FolderBusy(f"{self.folder}: its lock file {LOCK_NAME} keeps changing; try again")

    def _acquire_once(self) -> bool:
        try:
            # Not following a link, not waiting on a FIFO: a lock is a regular file.
            fd = open_lock_file(self.path, os.O_RDWR | os.O_CREAT)
        except OSError as error:
            raise FolderBusy(
                f"{self.folder}: its lock file {LOCK_NAME} cannot be used "
                f"({error.strerror or error}); remove it, or choose another folder"
            ) from None
        handle = os.fdopen(fd, "a+", encoding="utf-8")
        if not _try_lock(handle):
            handle.seek(0)
            try:
                holder = loads_json(handle.read(LOCK_LIMIT) or "{}", name=LOCK_NAME, limits=SMALL)
            except UserFacingError:
                holder = {}
            handle.close()
            who = (
                f" (process {holder.get('pid')} on {holder.get('host')})"
                if isinstance(holder, dict) and holder.get("pid")
                else ""
            )
            raise FolderBusy(
                f"{self.folder}: another {self.what} is writing here{who}; wait for it to "
                "finish, or choose another folder"
            )
        try:
            here = os.stat(self.path)
        except FileNotFoundError:
            here = None
        mine = os.fstat(handle.fileno())
        if here is None or (here.st_dev, here.st_ino) != (mine.st_dev, mine.st_ino):
            handle.close()  # the file we locked was removed by its last holder: again
            return False
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname()}))
        handle.flush()
        self._handle = handle
        return True

    def release(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            # Removed while still held, so nobody can lock it in between; closing drops
            # the lock. A killed holder leaves the file, which the next holder removes.
            # Already gone, or a folder that refuses: the next holder reuses the file.
            with contextlib.suppress(OSError):
                os.unlink(self.path)
            handle.close()

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.release()
