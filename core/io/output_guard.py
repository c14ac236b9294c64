"""What every file TailLens writes goes through first: no output ever replaces a session.

``check_output_target(path, force=...)`` is called by ``core.formats.common.atomic_output``
(every export, report, CSV, figure and screenshot) before it writes and again just before
it moves the finished file into place. It refuses, with an :class:`OutputRefusedError`
naming the file:

* a session open in this process (``register_open_session``, called by
  ``core.store.SessionStore``) or one of its ``-wal``/``-shm``/``-journal`` files, however
  the path reaches it (``./``, ``..``, a symlink, a hard link: device and inode are
  compared). ``--force`` does not lift this, as ``cp a a`` refuses with ``-f``: the
  command reads the very file it would replace;
* any other TailLens session (the SQLite header's application id ``TLNS``), its
  ``-wal``/``-shm``/``-journal`` files, and any SQLite write-ahead log or rollback journal
  (by their magic numbers), unless ``force``;
* a folder, a device, a pipe or a socket (the move would replace the node itself);
* any other file (or symbolic link) already there that TailLens did not write, unless
  ``force``: notes, another program's output, a file edited since TailLens wrote it.
  TailLens knows its own files by a record per path (``record_written``, called once a
  file is in place) in the data folder's ``written/``: the file's device, inode, size and
  modification time, so a file changed or replaced since no longer matches. A save dialog
  that asked the user to confirm replacing a file calls ``approve_replacement`` (this
  process only, that file as it is now), which lifts this refusal and no other.

The temporary file an export writes is named ``.NAME.PID-XXXXXXXX.tmp`` beside the target;
``sweep_stale_temporaries`` (run by ``atomic_output`` before each write) removes those of
that target whose process is gone (a killed export), and untagged ones of older versions
after ten minutes. Qt-free: only the standard library, ``core.errors`` and ``core.desktop.paths``
(for the records' folder, imported when first needed).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from core.errors import UserFacingError
from core.io.atomic import write_text_atomically
from core.io.liveness import process_alive

SQLITE_MAGIC = b"SQLite format 3\x00"
SESSION_APPLICATION_ID = 0x544C4E53  # "TLNS"; core.store.fileinfo.APPLICATION_ID is this
_WAL_MAGICS = (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")
_JOURNAL_MAGIC = b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7"
COMPANION_SUFFIXES = ("-wal", "-shm", "-journal")

# A temporary file without a process id (written by an older TailLens) is stale after this.
UNTAGGED_STALE_S = 600.0


class OutputRefusedError(UserFacingError):
    """An output path that would destroy a session (or is otherwise no place for a file)."""


@dataclass(frozen=True)
class _OpenSession:
    path: Path
    device: int
    inode: int


_open_sessions: dict[int, _OpenSession] = {}
_lock = threading.Lock()


def register_open_session(path: Path | str) -> int:
    """Note that ``path`` is a session open in this process; returns a token for
    :func:`unregister_open_session`."""
    path = Path(path)
    info = path.stat()
    entry = _OpenSession(path, info.st_dev, info.st_ino)
    with _lock:
        token = max(_open_sessions, default=0) + 1
        _open_sessions[token] = entry
    return token


def unregister_open_session(token: int) -> None:
    with _lock:
        _open_sessions.pop(token, None)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()  # follows symlinks: a link to the session is the session
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _open_session_files() -> list[tuple[Path, set[tuple[int, int]]]]:
    """Each open session and the (device, inode) pairs of its file and companions now."""
    with _lock:
        entries = list(_open_sessions.values())
    found = []
    for entry in entries:
        ids = {(entry.device, entry.inode)}
        for candidate in (entry.path, *_companions(entry.path)):
            identity = _identity(candidate)
            if identity is not None:
                ids.add(identity)
        found.append((entry.path, ids))
    return found


def _absolute(path: Path) -> Path:
    """``path`` with its folder resolved (``./``, ``..``, symlinked folders), its own
    name kept: the name a new file there would have."""
    try:
        return path.parent.resolve() / path.name
    except OSError:
        return Path(os.path.abspath(path))


def _companions(path: Path) -> list[Path]:
    return [path.with_name(path.name + suffix) for suffix in COMPANION_SUFFIXES]


def _head(path: Path, size: int = 100) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def is_session_file(path: Path | str) -> bool:
    """Whether ``path`` holds a TailLens session: a SQLite header whose application id
    (bytes 68-71) is TailLens's. Reads 100 bytes; opens no database."""
    path = Path(path)
    if not path.is_file():
        return False
    header = _head(path)
    return (
        len(header) >= 72
        and header.startswith(SQLITE_MAGIC)
        and int.from_bytes(header[68:72], "big") == SESSION_APPLICATION_ID
    )


# -- files TailLens wrote ----------------------------------------------------------------------

# The state of a file: (device, inode, size, modification time in ns), from lstat so a
# symbolic link is a file of its own (os.replace would replace the link, not its target).
_State = tuple[int, int, int, int]
_approved: set[tuple[str, _State]] = set()
_RECORD_LIMIT = 4096


def _state(path: Path) -> _State | None:
    try:
        info = path.lstat()
    except OSError:
        return None
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def _record_path(path: Path) -> Path:
    from core.desktop.paths import data_dir

    key = hashlib.sha256(os.fsencode(str(_absolute(path)))).hexdigest()[:32]
    return data_dir() / "written" / f"{key}.json"


def record_written(path: Path | str) -> None:
    """Note that TailLens has just put ``path`` in place (see the module docstring). A
    record that cannot be written only means the next write there needs --force."""
    path = Path(path).expanduser()
    state = _state(path)
    if state is None:
        return
    try:
        record = _record_path(path)
        record.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomically(
            record, json.dumps({"path": str(_absolute(path)), "state": list(state)})
        )
    except OSError:
        pass


def _written_by_taillens(path: Path, state: _State) -> bool:
    try:
        with _record_path(path).open("rb") as handle:
            data = json.loads(handle.read(_RECORD_LIMIT))
        return (
            isinstance(data, dict)
            and data.get("path") == str(_absolute(path))
            and data.get("state") == list(state)
        )
    except (OSError, ValueError, RecursionError):
        return False


def approve_replacement(path: Path | str) -> None:
    """The user confirmed replacing ``path`` (a save dialog asked): it may be replaced in
    this process while it stays as it is now, though TailLens did not write it."""
    path = Path(path).expanduser()
    state = _state(path)
    if state is not None:
        with _lock:
            _approved.add((str(_absolute(path)), state))


def _foreign(path: Path) -> bool:
    """Whether something TailLens did not write (nor the user approved) is at ``path``."""
    state = _state(path)
    if state is None:
        return False
    with _lock:
        if (str(_absolute(path)), state) in _approved:
            return False
    return not _written_by_taillens(path, state)


def _what_it_is(path: Path) -> str | None:
    """Why ``path`` must not be replaced without --force, or None."""
    if is_session_file(path):
        return "it is a TailLens session"
    for suffix in COMPANION_SUFFIXES:
        if path.name.endswith(suffix) and len(path.name) > len(suffix):
            owner = path.with_name(path.name[: -len(suffix)])
            if is_session_file(owner):
                return f"it is part of the TailLens session {owner.name} (its {suffix[1:]} file)"
    if path.is_file():
        header = _head(path, 8)
        if header[:4] in _WAL_MAGICS:
            return "it is a SQLite write-ahead log (a database's -wal file)"
        if header == _JOURNAL_MAGIC:
            return "it is a SQLite rollback journal (a database's -journal file)"
    if _foreign(path):
        what = "a symbolic link" if path.is_symlink() else "a file"
        return f"{what} TailLens did not write is there"
    return None


def check_output_target(path: Path | str, *, force: bool = False) -> Path:
    """The path to write, or an :class:`OutputRefusedError` saying why not (see the module
    docstring). ``force`` allows replacing a session that is not open in this process, and
    any file TailLens did not write."""
    path = Path(path).expanduser()
    if path.is_dir():
        raise OutputRefusedError(f"Cannot write to {path}: it is a folder. Give a file name.")
    if path.exists() and not path.is_file():
        # A move onto /dev/null or a FIFO would replace the device node itself.
        raise OutputRefusedError(
            f"Cannot write to {path}: it is not a regular file (a device, pipe or socket). "
            "Give a file name."
        )
    target = _identity(path)
    where = _absolute(path)
    for session, ids in _open_session_files():
        named = {_absolute(c) for c in (session, *_companions(session))}
        if (target is not None and target in ids) or where in named:
            same = target is not None and _identity(session) == target
            part = "" if same else " (one of its -wal/-shm/-journal files)"
            raise OutputRefusedError(
                f"Refusing to write {path}: it is the session being read, "
                f"{session}{part}. Writing there would destroy the session; "
                "choose another file name (--force does not apply to the open session)."
            )
    if force:
        return path
    reason = _what_it_is(path)
    if reason is not None:
        raise OutputRefusedError(
            f"Refusing to write {path}: {reason}, and writing there would destroy it. "
            "Choose another file name, or give --force to replace it."
        )
    return path


_TAGGED = re.compile(r"\.(?P<pid>\d+)-[0-9a-f]{8}\.tmp\Z")
# Older TailLens: tempfile.NamedTemporaryFile's 8 random characters.
_UNTAGGED = re.compile(r"\.[a-z0-9_]{8}\.tmp\Z")


def sweep_stale_temporaries(path: Path | str) -> list[Path]:
    """Remove temporary files of ``path`` that a killed writer left (``.NAME.PID-HEX8.tmp``
    whose process is gone; an untagged ``.NAME.XXXXXXXX.tmp`` older than ten minutes).
    Files of a running process, and anything else, are left alone. Returns what went."""
    path = Path(path).expanduser()
    prefix = f".{path.name}."
    removed: list[Path] = []
    try:
        names = os.listdir(path.parent)
    except OSError:
        return removed
    now = time.time()
    for name in names:
        if not name.startswith(prefix) or not name.endswith(".tmp"):
            continue
        rest = name[len(prefix) - 1 :]
        tagged = _TAGGED.fullmatch(rest)
        leftover = path.parent / name
        try:
            if tagged is not None:
                if process_alive(int(tagged.group("pid"))):
                    continue
            elif _UNTAGGED.fullmatch(rest) is not None:
                if now - leftover.lstat().st_mtime < UNTAGGED_STALE_S:
                    continue
            else:
                continue
            if not leftover.is_symlink() and leftover.is_file():
                leftover.unlink()
                removed.append(leftover)
        except OSError:
            continue
    return removed
