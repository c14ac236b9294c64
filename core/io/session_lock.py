"""Which TailLens window has a session open: a lock file beside it.

``.~lock.NAME#`` (LibreOffice's convention, so file managers and users recognise it)
holds the process id, host, user and start time of the window that opened the session.
A second window opening the same file is told who has it and chooses: read-only, open
anyway, or cancel. A lock whose process is gone (killed, crashed) on this host is stale
and taken over without a word; one from another host cannot be checked and is reported.

The lock is advice between windows, not a guard on the data: SQLite's own locking keeps
the file consistent whatever is open, and the command line does not take it (batch runs
beside an open window are expected). Windows of one process share the lock.
Qt-free and light (no SQLite, no SQLAlchemy).
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import threading
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from core.errors import UserFacingError
from core.io.atomic import temporary_name
from core.io.bounded import SMALL, loads_json
from core.io.files import open_lock_file, read_lock_file
from core.io.liveness import process_alive

LOCK_PREFIX = ".~lock."
LOCK_SUFFIX = "#"


def lock_path(session: Path | str) -> Path:
    session = Path(session).expanduser().resolve()
    return session.with_name(f"{LOCK_PREFIX}{session.name}{LOCK_SUFFIX}")


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "someone"


@dataclass(frozen=True)
class LockHolder:
    pid: int
    host: str
    user: str
    since: str  # ISO time, to the minute

    @classmethod
    def current(cls) -> LockHolder:
        return cls(
            os.getpid(),
            socket.gethostname(),
            _user(),
            datetime.now().isoformat(sep=" ", timespec="minutes"),
        )

    def is_this_process(self) -> bool:
        return self.pid == os.getpid() and self.host == socket.gethostname()

    def is_stale(self) -> bool:
        """Its process is gone (checked only on this host)."""
        return self.host == socket.gethostname() and not process_alive(self.pid)

    def describe(self) -> str:
        where = "this computer" if self.host == socket.gethostname() else self.host
        return f"{self.user} on {where} (TailLens process {self.pid}, since {self.since})"


class SessionInUseError(UserFacingError):
    """Another live TailLens window has the session open."""

    def __init__(self, session: Path, holder: LockHolder) -> None:
        self.session, self.holder = session, holder
        super().__init__(
            f"{session.name} is open in another TailLens window: {holder.describe()}. "
            "Open it read-only, or close it there first."
        )


def read_holder(session: Path | str) -> LockHolder | None:
    """Who holds the lock of ``session`` (None: no lock, or one that cannot be read)."""
    return read_holder_at(lock_path(session))


_held: dict[Path, int] = {}  # lock files this process holds, with how many windows
_held_lock = threading.Lock()


class SessionLock:
    """This process's hold on a session's lock file; :meth:`release` when the session
    closes. ``owned`` is False where no lock file could be written (a read-only folder):
    the session opens all the same."""

    def __init__(self, path: Path, owned: bool) -> None:
        self.path, self.owned = path, owned
        self._released = False

    @classmethod
    def acquire(cls, session: Path | str) -> SessionLock:
        """Take the lock of ``session``, taking over a stale one; raises
        :class:`SessionInUseError` when another live window holds it."""
        path = lock_path(session)
        me = LockHolder.current()
        with _held_lock:
            if path in _held:
                _held[path] += 1
                return cls(path, owned=True)
            for _attempt in range(3):
                try:
                    created = _create(path, me)
                except OSError:
                    return cls(path, owned=False)
                if created:
                    _held[path] = 1
                    return cls(path, owned=True)
                holder = read_holder(session)
                if holder is not None and not holder.is_this_process() and not holder.is_stale():
                    raise SessionInUseError(Path(session).expanduser().resolve(), holder)
                # Stale (or unreadable, or this process's own from an earlier window
                # that did not release it): taken over, unless another window won the race.
                try:
                    path.unlink(missing_ok=True)
                except OSError:
                    return cls(path, owned=False)
            return cls(path, owned=False)

    def release(self) -> None:
        if self._released or not self.owned:
            return
        self._released = True
        with _held_lock:
            _held[self.path] = _held.get(self.path, 1) - 1
            if _held[self.path] > 0:
                return
            del _held[self.path]
            holder = read_holder_at(self.path)
            if holder is not None and holder.is_this_process():
                self.path.unlink(missing_ok=True)


# A process id is at most 2**22 on Linux and 99,998 on macOS; anything over 2**31 is no pid.
_MAX_PID = (1 << 31) - 1
_MAX_FIELD = 256


def read_holder_at(path: Path) -> LockHolder | None:
    """Who the lock file ``path`` names, or None: no such file, or not a lock TailLens
    wrote (a link, a FIFO, a device, over 64 KB, JSON out of bounds, fields of other
    kinds); such a file is taken over like a stale lock."""
    data = read_lock_file(path)
    if data is None:
        return None
    try:
        held = loads_json(data, name=str(path), limits=SMALL)
    except UserFacingError:
        return None
    if not isinstance(held, dict):
        return None
    pid = held.get("pid")
    texts = [held.get(key) for key in ("host", "user", "since")]
    if not isinstance(pid, int) or isinstance(pid, bool) or not 0 < pid <= _MAX_PID:
        return None
    if not all(isinstance(t, str) and len(t) <= _MAX_FIELD for t in texts):
        return None
    host, user, since = (str(t) for t in texts)
    return LockHolder(pid, host, user, since)


def _create(path: Path, holder: LockHolder) -> bool:
    """Write the lock file whole under a temporary name and link it into place: False
    when a lock file is there already (never a half-written one for a reader)."""
    temporary = temporary_name(path)
    fd = open_lock_file(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(asdict(holder)))
    try:
        os.link(temporary, path)
        return True
    except FileExistsError:
        return False
    except OSError:  # no hard links here (some network or FAT file systems)
        try:
            fd = open_lock_file(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(asdict(holder)))
            return True
        except FileExistsError:
            return False
    finally:
        temporary.unlink(missing_ok=True)
