"""An exclusive lock on a folder for one process's long write (a training's output).

``FolderLock`` holds an OS advisory lock (``fcntl.flock``; ``msvcrt.locking`` on Windows)
on a file inside the folder for as long as the work runs. The operating system drops it
when the process ends, killed or not, so a lock is never left stale; a second process
asking for it is refused at once with who holds it (pid and host, written in the file).
"""

from __future__ import annotations

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
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname()}))
        handle.flush()
        self._handle = handle

    def release(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            handle.close()  # closing drops the lock

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
