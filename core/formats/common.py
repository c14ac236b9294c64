"""What every format shares: its error type and the safe way to write an export."""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from core.errors import UserFacingError
from core.io import files
from core.io.atomic import temporary_name
from core.io.output_guard import (
    OutputRefusedError,
    check_output_target,
    record_written,
    sweep_stale_temporaries,
)

__all__ = [
    "FORMULA_PREFIXES",
    "CsvWriter",
    "FormatError",
    "OutputRefusedError",
    "atomic_output",
    "check_readable",
    "spreadsheet_safe",
]


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


def _why(exc: OSError, path: Path) -> str:
    """Why a write failed: the disk's refusal in words, with where and what is free."""
    problem = files.disk_problem(exc)
    if problem is None:
        return str(exc.strerror or exc)
    free = files.free_space(path.parent)
    return f"{problem} (writing in {path.parent}{'; ' + free if free else ''})"


@contextmanager
def atomic_output(
    path: Path | str, *, binary: bool = False, newline: str | None = None, force: bool = False
) -> Iterator[IO[Any]]:
    """A handle on a temporary file next to ``path``, moved onto ``path`` when the block
    ends; a failure (or cancel) removes it, so an export never leaves half a file.

    Every file TailLens writes comes through here. ``path`` is checked first, and again
    just before the move, by :func:`core.io.output_guard.check_output_target`: a session open
    in this process (or its -wal/-shm files) is never replaced, another TailLens session
    or a file TailLens did not write only with ``force``. Temporary files of ``path`` left
    by a killed writer are removed first (:func:`core.io.output_guard.sweep_stale_temporaries`);
    the file in place is recorded as TailLens's (:func:`core.io.output_guard.record_written`)."""
    path = Path(path).expanduser()
    if path.is_dir():
        raise FormatError(f"Cannot export to {path}: it is a folder. Give a file name.")
    check_output_target(path, force=force)
    sweep_stale_temporaries(path)
    temporary = temporary_name(path)
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        handle: IO[Any] = (
            os.fdopen(descriptor, "wb")
            if binary
            else os.fdopen(descriptor, "w", encoding="utf-8", newline=newline)
        )
    except OSError as exc:
        raise FormatError(
            f"Cannot export to {path}: {_why(exc, path)}. Choose another folder."
        ) from exc
    try:
        with handle:
            yield handle
        os.chmod(temporary, _usual_mode(path))
        # Again at the last moment: a session may have been put there meanwhile.
        check_output_target(path, force=force)
        os.replace(temporary, path)
        record_written(path)  # so the next export there replaces it without --force
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        kept = f"{path.name} was left as it was" if path.exists() else "nothing was written"
        raise FormatError(f"Cannot write {path}: {_why(exc, path)}; {kept}.") from exc
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def check_readable(path: Path | str, hint: str = "") -> Path:
    """The path of a file an import can read, or a :class:`FormatError` saying why not
    (missing, a folder, not a regular file, unreadable, empty):
    :func:`core.io.files.check_readable`,
    the one check every file a user names goes through. ``hint`` says what to give
    instead when the path is not a regular file."""
    return files.check_readable(
        path, what="the file", hint=hint, error=FormatError, allow_empty=False
    )


# -- CSV for spreadsheets -----------------------------------------------------------------------

# A cell starting with one of these is read as a formula by Excel, LibreOffice and Google
# Sheets (OWASP "CSV Injection"); tab and carriage return are in OWASP's list too.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
SAFE_CELLS_NOTE = (
    "text cells starting with = + - @ tab or CR are prefixed with ' so spreadsheets show "
    "them as text (--raw-csv writes them as they are)"
)
RAW_CELLS_NOTE = "raw: cells written as they are, unsafe to open in a spreadsheet"


def spreadsheet_safe(value: Any) -> Any:
    """``value`` with a ``'`` in front when it is text a spreadsheet would run as a
    formula (OWASP); anything else, numbers the app computed among them, as it is."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


class CsvWriter:
    """The one CSV writer of TailLens (``csv.writer`` over an :func:`atomic_output`
    handle): text cells are made :func:`spreadsheet_safe` unless ``raw``, and
    ``neutralised`` counts the cells that were. ``convert`` turns each non-text value
    into what is written (e.g. a float into its ``repr``) after that decision, so a
    negative number stays a number. Rows are sequences, or mappings with ``fieldnames``."""

    def __init__(
        self,
        handle: IO[str],
        *,
        raw: bool = False,
        fieldnames: Sequence[str] | None = None,
        convert: Callable[[Any], Any] | None = None,
    ) -> None:
        self._writer = csv.writer(handle)
        self.raw = raw
        self.fieldnames = tuple(fieldnames) if fieldnames is not None else None
        self._convert = convert
        self.neutralised = 0

    @property
    def note(self) -> str:
        return RAW_CELLS_NOTE if self.raw else SAFE_CELLS_NOTE

    def _cell(self, value: Any) -> Any:
        if isinstance(value, str):
            if self.raw:
                return value
            safe = spreadsheet_safe(value)
            if safe is not value:
                self.neutralised += 1
            return safe
        return self._convert(value) if self._convert is not None else value

    def writeheader(self) -> None:
        if self.fieldnames is None:
            raise ValueError("writeheader needs fieldnames")
        self.writerow(self.fieldnames)

    def writerow(self, row: Sequence[Any] | Mapping[str, Any]) -> None:
        if isinstance(row, Mapping):
            if self.fieldnames is None:
                raise ValueError("a mapping row needs fieldnames")
            row = [row.get(name, "") for name in self.fieldnames]
        self._writer.writerow([self._cell(value) for value in row])

    def writerows(self, rows: Iterable[Sequence[Any] | Mapping[str, Any]]) -> None:
        for row in rows:
            self.writerow(row)


# What an import that failed on a refused write (the disk is full) kept: it is one
# transaction, so nothing (Job.kept).
IMPORT_KEPT = (
    "Nothing of this import was saved (it is written in one transaction): the session "
    "is as it was before it."
)
