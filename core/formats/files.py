"""What every format shares: its error type and the safe way to write an export."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from core.errors import UserFacingError


class FormatError(UserFacingError):
    """A file that cannot be read or written as the format asked for; the message says why."""


def _umask() -> int:
    """The process's umask, read without changing it where the system allows (Linux), as
    ``os.umask`` would briefly change it for every thread."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _usual_mode(path: Path) -> int:
    """The mode a plain ``open(path, "w")`` would give: the existing file's when it is
    replaced, else 0666 less the umask (0644 typically), not the temporary file's 0600."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


@contextmanager
def atomic_output(
    path: Path | str, *, binary: bool = False, newline: str | None = None
) -> Iterator[IO[Any]]:
    """A handle on a temporary file next to ``path``, moved onto ``path`` when the block
    ends; a failure (or cancel) removes it, so an export never leaves half a file."""
    path = Path(path).expanduser()
    if path.is_dir():
        raise FormatError(f"Cannot export to {path}: it is a folder. Give a file name.")
    try:
        handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed before os.replace
            "wb" if binary else "w",
            encoding=None if binary else "utf-8",
            newline=None if binary else newline,
            dir=path.parent,
            prefix=f".{path.name}.",
            suffix=".tmp",
            delete=False,
        )
    except OSError as exc:
        raise FormatError(
            f"Cannot export to {path}: {exc.strerror or exc}. Choose another folder."
        ) from exc
    temporary = Path(handle.name)
    try:
        with handle:
            yield handle
        os.chmod(temporary, _usual_mode(path))
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise FormatError(f"Cannot write {path}: {exc.strerror or exc}.") from exc
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def check_readable(path: Path | str, hint: str = "") -> Path:
    """The path of a file an import can read, or a :class:`FormatError` saying why not
    (missing, a folder, not a regular file, unreadable, empty). ``hint`` says what to give
    instead when the path is not a regular file."""
    path = Path(path).expanduser()
    if not path.exists():
        raise FormatError(f"Cannot import {path}: there is no such file.")
    if path.is_dir():
        raise FormatError(f"Cannot import {path}: it is a folder, not a file.")
    if not path.is_file():
        raise FormatError(
            f"Cannot import {path}: it is not a regular file (a device, pipe or socket)."
            + (f" {hint}" if hint else "")
        )
    try:
        with path.open("rb"):
            pass
    except OSError as exc:
        raise FormatError(f"Cannot read {path.name}: {exc.strerror or exc}.") from exc
    if path.stat().st_size == 0:
        raise FormatError(f"Cannot import {path.name}: the file is empty.")
    return path
