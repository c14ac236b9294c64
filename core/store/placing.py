"""Placing session files safely: hidden temporary names, leftovers of killed runs,
copies and backups, and linking a finished file into place without overwriting."""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from contextlib import closing, suppress
from datetime import datetime
from pathlib import Path

from core.desktop.paths import SESSION_SUFFIX
from core.io.atomic import temporary_name
from core.io.liveness import process_alive
from core.store.engine import storage_problem
from core.store.errors import (
    SessionError,
    SessionExistsError,
    SessionStorageError,
)
from core.store.fileinfo import connect_read_only, shm_path, wal_path

_TEMPORARY = re.compile(r"\.(?P<pid>\d+-)?[0-9a-f]{8}\.(creating|partial)(-wal|-shm|-journal)?\Z")
# A leftover without a process id (written by an older TailLens) is stale after this long.
_UNTAGGED_STALE_S = 600.0


def clean_leftovers(path: Path | str) -> list[Path]:
    """Remove temporary files a killed TailLens left next to ``path``: a session being
    created (``.NAME.PID-XXXX.creating``) or a backup being copied (``….partial``), with
    their ``-wal``/``-shm``. Files of a process still running are left alone. Returns
    what was removed."""
    path = Path(path).expanduser()
    folder = path.parent
    prefixes = (f".{path.name}.", f".{path.stem}.backup-")
    removed: list[Path] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    now = datetime.now().timestamp()
    for name in names:
        if not name.startswith(prefixes):
            continue
        match = _TEMPORARY.search(name)
        if match is None:
            continue
        leftover = folder / name
        pid = match.group("pid")
        try:
            if pid is not None:
                if process_alive(int(pid[:-1])):
                    continue
            elif now - leftover.stat().st_mtime < _UNTAGGED_STALE_S:
                continue
            leftover.unlink()
            removed.append(leftover)
        except OSError:
            continue
    return removed


def file_identity(path: Path | str) -> tuple[int, int] | None:
    """(device, inode) of ``path`` (symlinks followed), or None when there is none."""
    try:
        info = Path(path).stat()
    except OSError:
        return None
    return info.st_dev, info.st_ino


def discard_new_session(path: Path | str, identity: tuple[int, int] | None) -> bool:
    """Remove the session a command created at ``path`` (with its -wal/-shm) after the
    work it was created for failed, so a failed import leaves no empty session behind.
    Only the very file created (``identity``, from :func:`file_identity` right after
    creating it) is removed; the store must be closed. Returns whether it was."""
    path = Path(path).expanduser()
    if identity is None or file_identity(path) != identity:
        return False  # replaced meanwhile (another process's file): not ours to remove
    for leftover in (wal_path(path), shm_path(path), path):
        with suppress(FileNotFoundError):
            leftover.unlink()
    return True


def _file_digest(path: Path) -> bytes:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.digest()


def copy_database(
    source: sqlite3.Connection,
    dest: Path,
    expected_revision: str | None,
    same_as: tuple[Path, ...] = (),
) -> Path:
    """Write a consistent, verified copy of ``source`` to ``dest`` (replaced atomically).

    When a file in ``same_as`` already holds exactly the same bytes, no copy is placed
    and that file is returned (an upgrade interrupted and run again keeps one backup).
    """
    partial = temporary_name(dest, "partial")
    try:
        with closing(sqlite3.connect(partial, isolation_level=None)) as target:
            source.backup(target)
            target.execute("PRAGMA journal_mode=WAL")
        with closing(connect_read_only(partial)) as check:
            ok = check.execute("PRAGMA quick_check").fetchone()[0]
            revision = check.execute("SELECT version_num FROM alembic_version").fetchone()[0]
        if ok != "ok" or (expected_revision is not None and revision != expected_revision):
            raise SessionError(
                dest, f"The copy {dest} could not be verified ({ok}); it was not written."
            )
        size = partial.stat().st_size
        candidates = [c for c in same_as if c.is_file() and c.stat().st_size == size]
        if candidates:
            digest = _file_digest(partial)
            for candidate in candidates:
                if _file_digest(candidate) == digest:
                    return candidate
        os.replace(partial, dest)
        return dest
    except (OSError, sqlite3.Error) as exc:
        problem = storage_problem(exc)
        if problem is None:
            raise
        raise SessionStorageError(
            dest,
            problem,
            "Nothing was written (the partial copy was removed); the session copied is unchanged.",
            action="write the copy",
        ) from exc
    finally:
        for leftover in (partial, wal_path(partial), shm_path(partial)):
            leftover.unlink(missing_ok=True)


def backup_before_upgrade(path: Path, revision: str) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base = f"{path.stem}.backup-rev{revision}-{stamp}"
    dest = path.with_name(base + SESSION_SUFFIX)
    counter = 1
    while dest.exists():
        counter += 1
        dest = path.with_name(f"{base}-{counter}{SESSION_SUFFIX}")
    # Backups of this file at this revision from earlier tries (an upgrade killed after
    # its backup was written): one with the same bytes is used again, not duplicated.
    earlier = tuple(
        sorted(
            candidate
            for candidate in path.parent.iterdir()
            if candidate.name.startswith(f"{path.stem}.backup-rev{revision}-")
            and candidate.name.endswith(SESSION_SUFFIX)
        )
    )
    try:
        with closing(connect_read_only(path)) as source:
            dest = copy_database(source, dest, expected_revision=revision, same_as=earlier)
    except (OSError, sqlite3.DatabaseError) as exc:
        raise SessionError(
            path,
            f"{path.name} needs an upgrade to this version of TailLens, but the backup copy "
            f"{dest.name} could not be written ({exc}); the file was not changed. "
            "Free some disk space or make the folder writable, then try again.",
        ) from exc
    return dest


def make_self_contained(path: Path) -> None:
    """Fold the -wal into the database file and flush it to disk, so the file alone is
    the whole session before it is linked under the user's name."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def is_empty_file(path: Path) -> bool:
    """A regular 0-byte file with no -wal beside it (nothing in it to lose)."""
    try:
        return (
            not path.is_symlink()
            and path.is_file()
            and path.stat().st_size == 0
            and not wal_path(path).exists()
        )
    except OSError:
        return False


def place_without_overwriting(source: Path, dest: Path) -> None:
    """Move ``source`` to ``dest`` unless ``dest`` appeared meanwhile (an empty file at
    ``dest`` is replaced: it holds nothing)."""
    if is_empty_file(dest):
        os.replace(source, dest)
        return
    try:
        # A hard link fails if dest exists, where a rename would silently replace it.
        os.link(source, dest)
    except FileExistsError as exc:
        raise SessionExistsError(dest) from exc
    except OSError:
        if dest.exists():
            raise SessionExistsError(dest) from None
        os.replace(source, dest)
    else:
        source.unlink()
