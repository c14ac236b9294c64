"""Files a user names: the one check before any of them is read, and the words for a
disk that refuses a write.

Every file the app reads because a user named it (an import, a prompt template, a
synonym table, judgments, a system's outputs, settings) goes through
:func:`check_readable` first, and a whole-file read through :func:`read_text` /
:func:`read_bytes`: it must exist, be a regular file (not a folder, device, pipe or
socket), be readable, and be no larger than the limit for its kind; text must be UTF-8.
Each refusal is one sentence that names the file. Reads are bounded even when the size
the system reports is wrong (a file that grows, ``/proc``), so nothing reads without end.

:func:`disk_problem` says in words why the disk refused a write (full, over quota,
read-only, an I/O error), for the messages of session writes and exports alike.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from pathlib import Path

from core.errors import UserFacingError

MB = 1 << 20

# Per kind of file, the most the app reads into memory at once (streamed imports have
# no limit: they read in bounded chunks).
TEMPLATE_LIMIT = 1 * MB  # a prompt template
TABLE_LIMIT = 64 * MB  # a synonym table
# A JSON file of human judgments: parsed whole, it takes about ten times its size in
# memory (the largest published, WebNLG 2020's all-teams file, is 1 MB).
JUDGMENTS_LIMIT = 32 * MB
OUTPUTS_LIMIT = 256 * MB  # a system's outputs, one text a line
SETTINGS_LIMIT = 1 * MB  # a settings file the app wrote itself
CONFIG_LIMIT = 16 * MB  # a JSON file in a model folder (config, weight index)
LOCK_LIMIT = 64 * 1024  # a lock file: a few hundred bytes of JSON


class UnreadableFileError(UserFacingError):
    """A file a user named that cannot be read: the message says which and why."""


def _size(n: int) -> str:
    if n >= 1 << 30:
        return f"{n / (1 << 30):,.1f} GB"
    return f"{n / MB:,.1f} MB" if n >= MB // 10 else f"{n:,} bytes"


def _fail(error: type[UserFacingError], what: str, path: Path, why: str) -> UserFacingError:
    return error(f"Cannot read {what} {path}: {why}")


def check_readable(
    path: Path | str,
    *,
    what: str = "the file",
    limit: int | None = None,
    hint: str = "",
    error: type[UserFacingError] = UnreadableFileError,
    allow_empty: bool = True,
) -> Path:
    """The path of a regular file that can be read, or ``error`` saying why not: there is
    no such file, it is a folder, it is not a regular file (a device, pipe or socket),
    permission is denied, it is larger than ``limit`` bytes, or (``allow_empty`` false) it
    is empty. ``what`` names the file's role ("the prompt template"); ``hint`` says what
    to give instead of something that is not a regular file."""
    path = Path(path).expanduser()
    try:
        info = path.stat()  # follows a link, so a link to a file is that file
    except FileNotFoundError:
        raise _fail(error, what, path, "there is no such file.") from None
    except NotADirectoryError:
        raise _fail(error, what, path, "there is no such file (a part of it is a file).") from None
    except PermissionError:
        raise _fail(error, what, path, "permission denied.") from None
    except OSError as exc:
        raise _fail(error, what, path, f"{exc.strerror or exc}.") from None
    if stat.S_ISDIR(info.st_mode):
        raise _fail(error, what, path, "it is a folder, not a file.")
    if not stat.S_ISREG(info.st_mode):
        raise _fail(
            error,
            what,
            path,
            "it is not a regular file (a device, pipe or socket)." + (f" {hint}" if hint else ""),
        )
    if limit is not None and info.st_size > limit:
        raise _fail(
            error,
            what,
            path,
            f"it is too large ({_size(info.st_size)}; the limit is {_size(limit)}).",
        )
    if not allow_empty and info.st_size == 0:
        raise _fail(error, what, path, "the file is empty.")
    try:
        # O_NONBLOCK: a FIFO swapped in after the stat must not block the open.
        os.close(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)))
    except PermissionError:
        raise _fail(error, what, path, "permission denied.") from None
    except OSError as exc:
        raise _fail(error, what, path, f"{exc.strerror or exc}.") from None
    return path


def read_bytes(
    path: Path | str,
    *,
    limit: int,
    what: str = "the file",
    error: type[UserFacingError] = UnreadableFileError,
) -> bytes:
    """The whole of a checked file (:func:`check_readable`), read no further than
    ``limit`` bytes whatever size the system reports."""
    path = check_readable(path, what=what, limit=limit, error=error)
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise _fail(error, what, path, f"{exc.strerror or exc}.") from None
    if len(data) > limit:
        raise _fail(
            error,
            what,
            path,
            f"it is too large (over {_size(limit)}; the limit is {_size(limit)}).",
        )
    return data


def decode_text(
    data: bytes,
    path: Path | str,
    *,
    what: str = "the file",
    error: type[UserFacingError] = UnreadableFileError,
) -> str:
    """``data`` as UTF-8 (a byte-order mark dropped), or ``error`` naming the line and
    byte where it is not UTF-8 text."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise _fail(
            error,
            what,
            Path(path),
            f"line {line} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start}). Save it as UTF-8 and try again.",
        ) from None


def read_text(
    path: Path | str,
    *,
    limit: int,
    what: str = "the file",
    error: type[UserFacingError] = UnreadableFileError,
) -> str:
    """The text of a checked, bounded UTF-8 file (:func:`read_bytes`, :func:`decode_text`)."""
    return decode_text(
        read_bytes(path, limit=limit, what=what, error=error), path, what=what, error=error
    )


# -- lock files ------------------------------------------------------------------------

_NO_FOLLOW = (
    getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)


def open_lock_file(path: Path | str, flags: int, mode: int = 0o644) -> int:
    """A descriptor of the lock file ``path``, opened without following a link and without
    blocking (``O_NOFOLLOW | O_NONBLOCK``): a link, a FIFO, a device or a folder in its
    place is an OSError, never a wait or a write elsewhere."""
    fd = os.open(path, flags | _NO_FOLLOW, mode)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_lock_file(path: Path | str, limit: int = LOCK_LIMIT) -> bytes | None:
    """The bytes of the lock file ``path`` (at most ``limit``), or None: missing, a link, not
    a regular file, unreadable, or larger than ``limit`` (a lock is a few hundred bytes;
    a link to /dev/zero or a huge file is not one)."""
    try:
        fd = open_lock_file(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit else None


# -- writes the disk refuses ------------------------------------------------------------

_DISK_PROBLEMS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the file system is read-only",
    errno.EIO: "the disk reported an input/output error",
}


def disk_problem(exc: BaseException) -> str | None:
    """Why the disk refused a write, in words ("the disk is full"), or None when ``exc``
    is not such a refusal."""
    if isinstance(exc, OSError):
        return _DISK_PROBLEMS.get(exc.errno or 0)
    return None


def free_space(folder: Path | str) -> str:
    """What is free on the file system holding ``folder`` ("1.2 MB free"), or ""."""
    try:
        return f"{_size(shutil.disk_usage(folder).free)} free"
    except OSError:
        return ""
