"""The one decision whether a name from outside may become part of a path.

A name TailLens did not choose (a hub's ETag, commit id or file name, a revision the user
typed, a system or annotator name read from a file) is joined to a folder only after
:func:`path_part` (one file or folder name) or :func:`relative_path` (names separated
by ``/``) accepts it, and what the join gives is checked once more by :func:`inside`
(the path, links resolved, is still in the folder). A refusal is one
:class:`UnsafeNameError` naming the value (escaped) and what it was.

Refused: an empty name, ``.`` and ``..``, an absolute path, a separator (``/`` in a
single name, ``\\`` anywhere), a NUL or other control character, a name over 255 bytes
of UTF-8, and text that is not text (a lone surrogate). Qt-free; the standard library.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from core.errors import UserFacingError

MAX_NAME_BYTES = 255  # what ext4, APFS and NTFS allow for one name
MAX_PATH_PARTS = 32
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_COMMIT = re.compile(r"[0-9a-f]{40}")
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")


class UnsafeNameError(UserFacingError):
    """A name from outside that must not become (part of) a path."""


# What a terminal takes as a command, not text: C0 controls but tab and newline (ESC
# starts an escape sequence, BEL rings, BS and a lone CR overwrite what was shown), DEL,
# the C1 controls (0x9b is a one-character ESC [), and lone surrogates (no encoding).
_TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]|\r(?!\n)")


def _escaped(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape", "backslashreplace").decode("ascii")


def for_terminal(text: str) -> str:
    """``text`` with every character a terminal would act on written as its escape
    (``\\x1b``, ``\\x07``, ``\\r``); newlines, tabs and CR LF pairs are kept."""
    return _TERMINAL_UNSAFE.sub(_escaped, text)


def shown(value: object) -> str:
    """``value`` as it may be printed: control characters escaped, cut at 80."""
    text = ascii(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def _problem(name: str) -> str | None:
    if not name:
        return "it is empty"
    if name in (".", ".."):
        return "it names a folder above or this one"
    if "/" in name or "\\" in name:
        return "it holds a path separator"
    if _CONTROL.search(name) is not None:
        return "it holds a control character"
    if _WINDOWS_DRIVE.match(name):
        return "it names a drive"
    try:
        if len(name.encode("utf-8")) > MAX_NAME_BYTES:
            return f"it is longer than {MAX_NAME_BYTES} bytes"
    except UnicodeEncodeError:
        return "it is not text"
    return None


def path_part(name: object, *, what: str) -> str:
    """``name`` when it may be one file or folder name; else :class:`UnsafeNameError`."""
    if not isinstance(name, str):
        raise UnsafeNameError(f"{what} {shown(name)} is not a name (it is not text)")
    problem = _problem(name)
    if problem is not None:
        raise UnsafeNameError(f"{what} {shown(name)} cannot be used as a file name: {problem}")
    return name


def relative_path(name: object, *, what: str) -> str:
    """``name`` when it is a relative path of safe parts joined by ``/`` (a file in a
    repository: ``onnx/model.onnx``); else :class:`UnsafeNameError`."""
    if not isinstance(name, str):
        raise UnsafeNameError(f"{what} {shown(name)} is not a name (it is not text)")
    if name.startswith("/") or PurePosixPath(name).is_absolute():
        raise UnsafeNameError(f"{what} {shown(name)} cannot be used: it is an absolute path")
    parts = name.split("/")
    if len(parts) > MAX_PATH_PARTS:
        raise UnsafeNameError(f"{what} {shown(name)} cannot be used: it is nested too deeply")
    for part in parts:
        problem = _problem(part)
        if problem is not None:
            raise UnsafeNameError(f"{what} {shown(name)} cannot be used as a path: {problem}")
    return name


def commit_id(value: object, *, what: str = "the commit id") -> str:
    """``value`` when it is a full git commit id (40 lowercase hexadecimal digits)."""
    if not isinstance(value, str) or _COMMIT.fullmatch(value) is None:
        raise UnsafeNameError(f"{what} {shown(value)} is not a commit id (40 hexadecimal digits)")
    return value


def inside(folder: Path | str, path: Path | str, *, what: str = "the path") -> Path:
    """``path`` when, with every link resolved, it lies inside ``folder``."""
    root = Path(os.path.realpath(folder))
    resolved = Path(os.path.realpath(path))
    if resolved != root and root not in resolved.parents:
        raise UnsafeNameError(
            f"{what} {shown(str(path))} leads outside {root} (to {shown(str(resolved))})"
        )
    return Path(path)


__all__ = [
    "MAX_NAME_BYTES",
    "UnsafeNameError",
    "commit_id",
    "for_terminal",
    "inside",
    "path_part",
    "relative_path",
    "shown",
]
