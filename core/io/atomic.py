"""The one temporary-name scheme and the one atomic write of TailLens.

Every file TailLens writes whole (an export, a lock file, a desktop entry, a session
being created or backed up, a training's checkpoint record) is written first under a
hidden name beside its target, ``.NAME.PID-HEX8.SUFFIX``, then renamed into place. The
process id in the name lets a later run tell a killed writer's leftover (its process is
gone: :func:`core.io.liveness.process_alive`) from work in progress, and the eight hex
digits keep two writers of one process apart. Each cleaner recognises the suffixes of
what it writes (``core.io.output_guard``: ``.tmp``; ``core.store.placing``:
``.creating`` and ``.partial``), and also the names older TailLens wrote.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def temporary_name(path: Path, suffix: str = "tmp") -> Path:
    """The hidden name beside ``path`` that this process writes first:
    ``.NAME.PID-HEX8.SUFFIX``."""
    return path.with_name(f".{path.name}.{os.getpid()}-{os.urandom(4).hex()}.{suffix}")


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """Call ``write(temporary)`` and rename the result over ``path``: a reader sees the
    old file or the new one, never half of one. The temporary file goes if ``write``
    fails."""
    temporary = temporary_name(path)
    try:
        write(temporary)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_text_atomically(path: Path, text: str) -> None:
    """:func:`write_atomically` for UTF-8 text."""
    write_atomically(path, lambda temporary: temporary.write_text(text, encoding="utf-8"))
