"""Checking a file from the outside before anything opens it for writing: header bytes,
then a read-only connection, so a file that is refused is left byte for byte as it was."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import core
import core.store.bounds as bounds
from core.io.output_guard import (
    SESSION_APPLICATION_ID,
)
from core.session_info import SessionInfo
from core.store.bounds import BoundedConnection, bound, stopped
from core.store.engine import file_uri
from core.store.errors import (
    NotASessionError,
    SessionBoundsError,
    SessionCorruptError,
    SessionError,
    SessionForeignSchemaError,
    SessionMissingError,
    SessionReadOnlyError,
)
from core.store.migrate import head_revision, known_revisions

APPLICATION_ID = SESSION_APPLICATION_ID  # "TLNS", written to the SQLite header of every session


SQLITE_MAGIC = b"SQLite format 3\x00"
_HEADER_SIZE = 100


# -- checking a file from the outside -------------------------------------------------


@dataclass(frozen=True)
class FileCheck:
    """What :func:`inspect_file` found in a file that passed every check."""

    path: Path
    size: int
    page_size: int
    page_count: int | None
    application_id: int
    revision: str | None
    tables: tuple[str, ...] = field(default=())

    @property
    def is_current(self) -> bool:
        return self.revision == head_revision()

    @property
    def is_known(self) -> bool:
        return self.revision in known_revisions()


def wal_path(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def shm_path(path: Path) -> Path:
    return path.with_name(path.name + "-shm")


def connect_bounded(
    path: Path, option: str, *, value_bytes: int | None = None, seconds: float | None = None
) -> BoundedConnection:
    """A connection to ``path`` opened with the URI ``option`` (``mode=rw``, ``mode=ro``,
    ``immutable=1``), in autocommit, under the bounds of a file from elsewhere
    (``core.store.bounds``): no value longer than ``value_bytes``, its statements done
    within ``seconds`` when given, Ctrl+C acts, and no function of the file's schema runs
    unless it is harmless. Its guard is ``conn.guard``."""
    conn = sqlite3.connect(
        file_uri(path, option), uri=True, isolation_level=None, factory=BoundedConnection
    )
    try:
        # A function in a view, trigger or index of the file runs only if it is harmless.
        conn.execute("PRAGMA trusted_schema=OFF")
        bound(conn, value_bytes=value_bytes, seconds=seconds)
    except BaseException:
        conn.close()
        raise
    return conn


def connect_read_only(
    path: Path, *, value_bytes: int | None = None, seconds: float | None = None
) -> BoundedConnection:
    """A connection that cannot change ``path`` nor leave files next to it, under the
    bounds of a file from elsewhere (``core.store.bounds``): no value longer than
    ``value_bytes`` (``bounds.SESSION_VALUE_BYTES``), all its statements done within
    ``seconds`` (``bounds.STATEMENT_S``), Ctrl+C acts.

    With no ``-wal`` file the database is self-contained and ``immutable=1`` reads it
    without creating ``-wal``/``-shm`` files (``mode=ro`` would leave them behind). With
    a ``-wal`` file, another program may have it open, so its pages must be read too.
    """
    option = "mode=ro" if wal_path(path).exists() else "immutable=1"
    return connect_bounded(
        path,
        option,
        value_bytes=value_bytes,
        seconds=bounds.STATEMENT_S if seconds is None else seconds,
    )


@contextmanager
def reading(path: Path) -> Iterator[BoundedConnection]:
    """:func:`connect_read_only`, closed after the block, whose database errors are
    :class:`SessionError`s: :class:`SessionBoundsError` where a bound stopped a
    statement, :class:`SessionCorruptError` otherwise."""
    conn: BoundedConnection | None = None
    try:
        conn = connect_read_only(path)
        yield conn
    except sqlite3.DatabaseError as exc:
        why = stopped(exc, None if conn is None else conn.guard)
        if why is not None:
            raise SessionBoundsError(path, why) from None
        raise SessionCorruptError(path, str(exc)) from exc
    finally:
        if conn is not None:
            conn.close()


def _check_header(path: Path) -> tuple[int, int, int | None]:
    """Check path, size and SQLite header without opening the database.

    Returns (file size, page size, page count or None when the header does not know it).
    """
    if path.is_dir():
        raise SessionMissingError(path, is_directory=True)
    if not path.exists():
        raise SessionMissingError(path)
    if not path.is_file():
        raise NotASessionError(path, "it is not a regular file")
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            header = handle.read(_HEADER_SIZE)
    except OSError as exc:
        raise SessionError(
            path,
            f"Cannot read the session file {path.name}: {exc.strerror or exc}. "
            f"Check its permissions (full path: {path}).",
        ) from exc
    if size == 0:
        raise NotASessionError(path, "the file is empty (0 bytes)")
    if not header.startswith(SQLITE_MAGIC):
        raise NotASessionError(path, "it is not a SQLite database")
    if len(header) < _HEADER_SIZE:
        raise SessionCorruptError(path, "the file ends inside the database header")
    page_size = int.from_bytes(header[16:18], "big")
    if page_size == 1:
        page_size = 65536
    if page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
        raise SessionCorruptError(path, f"invalid page size {page_size} in the header")
    # The in-header page count is only trustworthy when "version-valid-for" matches the
    # change counter (older writers did not maintain it).
    page_count = int.from_bytes(header[28:32], "big") if header[92:96] == header[24:28] else None
    wal = wal_path(path)
    wal_has_pages = wal.exists() and wal.stat().st_size > 0
    # With pages still in a -wal file (a crash, or another program has it open), the main
    # file may legitimately lag behind its header until the next checkpoint.
    if not wal_has_pages:
        if size % page_size:
            raise SessionCorruptError(
                path,
                f"its size ({size:,} bytes) is not a whole number of {page_size}-byte pages; "
                "it was probably cut short",
            )
        if page_count is not None and page_count * page_size > size:
            raise SessionCorruptError(
                path,
                f"it is truncated: the header says {page_count * page_size:,} bytes, "
                f"the file has {size:,}",
            )
    return size, page_size, page_count


def _check_writable(path: Path) -> None:
    # Mode bits as well as os.access: as root (containers, CI) os.access says yes to
    # everything, but a file a user marked read-only must still be refused.
    if path.stat().st_mode & 0o222 == 0 or not os.access(path, os.W_OK):
        raise SessionReadOnlyError(path)
    folder = path.parent
    # WAL mode writes -wal and -shm files next to the session.
    if folder.stat().st_mode & 0o222 == 0 or not os.access(folder, os.W_OK | os.X_OK):
        raise SessionReadOnlyError(path, folder=True)


def _foreign_objects(conn: sqlite3.Connection) -> str:
    """What a session file holds that TailLens never creates, in words ("" for none):
    views and triggers (their SQL runs when a table is read or written: a recursive view
    that never ends, a trigger that writes elsewhere), virtual tables (code of a module
    of its choosing) and generated columns. Read from the schema only: nothing of them
    runs."""
    found = [
        f"{kind} {name!r}" if kind != "table" else f"virtual table {name!r}"
        for kind, name in conn.execute(
            "SELECT type, name FROM sqlite_master WHERE type IN ('view', 'trigger') "
            "OR (type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%') ORDER BY type, name"
        )
    ]
    # A generated column computes its value, by an expression of the file's choosing, at
    # every read; PRAGMA table_info does not even list it (table_xinfo does).
    found += [
        f"generated column '{table}.{column}'"
        for table, column in conn.execute(
            "SELECT m.name, x.name FROM sqlite_master AS m, pragma_table_xinfo(m.name) AS x "
            "WHERE m.type = 'table' AND m.sql NOT LIKE 'CREATE VIRTUAL TABLE%' "
            "AND x.hidden IN (2, 3) ORDER BY m.name, x.cid"
        )
    ]
    if not found:
        return ""
    shown = ", ".join(str(f).encode("unicode_escape").decode("ascii")[:80] for f in found[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    return f"it holds {shown}{more}"


def schema_problems(conn: sqlite3.Connection) -> str:
    """How the tables of a session at the current revision differ from those TailLens
    writes (``core.store.models``), in words ("" when they match): a table missing, a
    column missing, or a column declared with another type affinity."""
    from sqlalchemy.dialects.sqlite import dialect

    from core.store.models import Base

    sqlite_dialect = dialect()
    problems: list[str] = []
    for table in Base.metadata.sorted_tables:
        declared = {
            str(row[1]): str(row[2] or "")
            for row in conn.execute(f'PRAGMA main.table_info("{table.name}")')
        }
        if not declared:
            problems.append(f"no table {table.name}")
            continue
        for column in table.columns:
            if column.name not in declared:
                problems.append(f"no column {table.name}.{column.name}")
                continue
            wanted = _affinity(column.type.compile(dialect=sqlite_dialect))
            if _affinity(declared[column.name]) != wanted:
                problems.append(
                    f"{table.name}.{column.name} is declared {declared[column.name][:30]!r}"
                )
    if not problems:
        return ""
    more = f" and {len(problems) - 5} more" if len(problems) > 5 else ""
    return "its tables are not those of its schema revision: " + "; ".join(problems[:5]) + more


def _affinity(declared: str) -> str:
    """SQLite's column affinity for a declared type (its documented rules, in order)."""
    text = declared.upper()
    if "INT" in text:
        return "INTEGER"
    if any(part in text for part in ("CHAR", "CLOB", "TEXT")):
        return "TEXT"
    if "BLOB" in text or not text:
        return "BLOB"
    if any(part in text for part in ("REAL", "FLOA", "DOUB")):
        return "REAL"
    return "NUMERIC"


def _read_database(path: Path) -> tuple[int, str | None, tuple[str, ...]]:
    """Run quick_check and read application id, revision and table names, read-only."""
    with reading(path) as conn:
        problems = [row[0] for row in conn.execute("PRAGMA quick_check(5)").fetchall()]
        if problems != ["ok"]:
            raise SessionCorruptError(path, "; ".join(str(p) for p in problems))
        application_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        tables = tuple(
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        )
        foreign = _foreign_objects(conn)
        if foreign and application_id == APPLICATION_ID:
            raise SessionForeignSchemaError(path, foreign)
        revision: str | None = None
        if "alembic_version" in tables:
            versions = [row[0] for row in conn.execute("SELECT version_num FROM alembic_version")]
            if len(versions) > 1:
                raise SessionCorruptError(
                    path, f"it records several schema revisions ({', '.join(versions)})"
                )
            revision = versions[0] if versions else None
    return application_id, revision, tables


def inspect_file(path: Path | str, *, for_writing: bool = False) -> FileCheck:
    """Check that ``path`` is a TailLens session without changing it.

    Raises a :class:`SessionError` subclass for a missing, empty, foreign, truncated or
    damaged file, and with ``for_writing`` for a read-only file or folder too. A file
    from a newer TailLens passes: ``check.is_known`` is False.
    """
    path = Path(path).expanduser()
    size, page_size, page_count = _check_header(path)
    path = path.resolve()
    if for_writing:
        _check_writable(path)
    application_id, revision, tables = _read_database(path)
    # The application id is what makes a file a session: another program's database
    # may have an alembic_version table of its own (at any revision, even one of ours),
    # and nothing may be written to it, not even a switch to WAL or a backup copy.
    if application_id != APPLICATION_ID:
        if application_id:
            what = f"a database of another program (application id {application_id:#x})"
        elif tables:
            what = "a SQLite database of another program"
        else:
            what = "an empty SQLite database"
        raise NotASessionError(path, f"it is {what}")
    if revision is None:
        raise SessionCorruptError(
            path, "it has no schema revision; it was probably not created completely"
        )
    if revision == head_revision():
        with reading(path) as conn:
            problems = schema_problems(conn)
        if problems:
            raise SessionForeignSchemaError(path, problems)
    return FileCheck(path, size, page_size, page_count, application_id, revision, tables)


def read_session_info(path: Path | str) -> SessionInfo:
    """Describe a session file read-only: an older one is described, not upgraded."""
    check = inspect_file(path)
    with reading(check.path) as conn:
        meta: dict[str, str] = {}
        if "session_meta" in check.tables:
            meta = dict(conn.execute("SELECT key, value FROM session_meta").fetchall())
        counts = {
            table: int(conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0])
            for table in check.tables
            if table != "alembic_version"
        }
    return {
        "path": str(check.path),
        "schema_revision": check.revision,
        "head_revision": head_revision(),
        "app_version": core.__version__,
        "created_with": meta.get("created_with"),
        "created_at": meta.get("created_at"),
        "tables": counts,
    }
