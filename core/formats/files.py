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


@contextmanager
def atomic_output(path: Path | str, *, binary: bool = False,
                  newline: str | None = None) -> Iterator[IO[Any]]:
    """A handle on a temporary file next to ``path``, moved onto ``path`` when the block
    ends; a failure (or cancel) removes it, so an export never leaves half a file."""
    path = Path(path).expanduser()
    if path.is_dir():
        raise FormatError(f"Cannot export to {path}: it is a folder. Give a file name.")
    try:
        handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed before os.replace
            "wb" if binary else "w", encoding=None if binary else "utf-8",
            newline=None if binary else newline, dir=path.parent, prefix=f".{path.name}.",
            suffix=".tmp", delete=False,
        )
    except OSError as exc:
        raise FormatError(
            f"Cannot export to {path}: {exc.strerror or exc}. Choose another folder."
        ) from exc
    temporary = Path(handle.name)
    try:
        with handle:
            yield handle
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise FormatError(f"Cannot write {path}: {exc.strerror or exc}.") from exc
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
