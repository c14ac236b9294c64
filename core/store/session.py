"""Open, create, upgrade and copy session files.

A session is one SQLite file in WAL mode. Every change is its own short transaction
(:meth:`SessionStore.unit_of_work`), committed at once, so there is no unsaved state.

Opening is careful because a user may point at anything: the file is checked from the
outside (header bytes) and then through a read-only connection before anything opens
it for writing, so a file that is refused is left byte for byte as it was.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from sqlalchemy import Connection, Engine, create_engine, event, func, select, update
from sqlalchemy.engine import URL, ExceptionContext
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import ORMExecuteState, Session, sessionmaker, with_loader_criteria
from sqlalchemy.sql.elements import ClauseElement
from sqlalchemy.sql.util import find_tables

import core
from core.files import disk_problem
from core.output_guard import (
    SESSION_APPLICATION_ID,
    check_output_target,
    process_alive,
    register_open_session,
    unregister_open_session,
)
from core.paths import SESSION_SUFFIX
from core.session_info import SessionInfo
from core.store.errors import (
    NotASessionError,
    SessionCorruptError,
    SessionError,
    SessionExistsError,
    SessionLockedError,
    SessionMissingError,
    SessionReadOnlyError,
    SessionStorageError,
    SessionTooNewError,
)
from core.store.integrity import SESSION_INFO_KEY, DamagedRow, Integrity, hidden_ids_param
from core.store.models import Base, JobHistory, SessionMeta

if TYPE_CHECKING:
    from alembic.config import Config

_log = logging.getLogger(__name__)

APPLICATION_ID = SESSION_APPLICATION_ID  # "TLNS", written to the SQLite header of every session
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
SQLITE_MAGIC = b"SQLite format 3\x00"
_HEADER_SIZE = 100
# Execution option read by the "begin" listener: which BEGIN statement to issue (a
# connection that writes in several steps, as scoring does, sets it to "BEGIN IMMEDIATE").
BEGIN_OPTION = "taillens_begin"
# Set by SessionStore.without_waiting(): the "begin" listener sets a busy timeout of 0.
_NO_WAIT: ContextVar[bool] = ContextVar("taillens_no_wait", default=False)


# -- Alembic -------------------------------------------------------------------------


def alembic_config(connection: Connection | None = None) -> Config:
    """Alembic configuration for session files, built in code (no alembic.ini).
    Alembic (about 0.45 s to import) is loaded only to upgrade a file."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("path_separator", "os")
    config.attributes["connection"] = connection
    return config


# The module-level assignments Alembic reads from each migration script.
_REVISION = re.compile(r"^revision\b[^=\n]*=\s*[\"']([^\"']+)[\"']", re.M)
_DOWN_REVISION = re.compile(r"^down_revision\b[^=\n]*=\s*(?:None|[\"']([^\"']+)[\"'])", re.M)


@lru_cache(maxsize=1)
def revision_graph() -> dict[str, str | None]:
    """Each schema revision and the one it upgrades from, read from the migration
    scripts' ``revision`` / ``down_revision`` lines without importing Alembic (checking a
    file on opening needs only this; a test checks it agrees with Alembic's own reading)."""
    graph: dict[str, str | None] = {}
    for script in sorted((MIGRATIONS_DIR / "versions").glob("*.py")):
        text = script.read_text(encoding="utf-8")
        revision, down = _REVISION.search(text), _DOWN_REVISION.search(text)
        if revision is None or down is None:
            raise RuntimeError(f"{script.name}: no revision / down_revision assignment")
        graph[revision.group(1)] = down.group(1)
    return graph


def head_revision() -> str:
    """The schema revision this version of TailLens writes."""
    graph = revision_graph()
    heads = set(graph) - {down for down in graph.values() if down is not None}
    assert len(heads) == 1, f"the migrations must form one line, heads: {sorted(heads)}"
    return heads.pop()


def known_revisions() -> frozenset[str]:
    """Every schema revision this version of TailLens can open (and upgrade)."""
    return frozenset(revision_graph())


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


def _wal_path(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def _shm_path(path: Path) -> Path:
    return path.with_name(path.name + "-shm")


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot change ``path`` nor leave files next to it.

    With no ``-wal`` file the database is self-contained and ``immutable=1`` reads it
    without creating ``-wal``/``-shm`` files (``mode=ro`` would leave them behind). With
    a ``-wal`` file, another program may have it open, so its pages must be read too.
    """
    option = "mode=ro" if _wal_path(path).exists() else "immutable=1"
    return sqlite3.connect(_file_uri(path, option), uri=True, isolation_level=None)


def _file_uri(path: Path, option: str) -> str:
    """A ``file:`` URI naming exactly ``path``: every ``%``, ``?`` and ``#`` in the name
    is percent-quoted (:meth:`Path.as_uri`), so SQLite opens the file the user named."""
    return f"{Path(os.path.abspath(path)).as_uri()}?{option}"


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
    wal = _wal_path(path)
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


def _read_database(path: Path) -> tuple[int, str | None, tuple[str, ...]]:
    """Run quick_check and read application id, revision and table names, read-only."""
    try:
        with closing(_connect_read_only(path)) as conn:
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
            revision: str | None = None
            if "alembic_version" in tables:
                versions = [
                    row[0] for row in conn.execute("SELECT version_num FROM alembic_version")
                ]
                if len(versions) > 1:
                    raise SessionCorruptError(
                        path, f"it records several schema revisions ({', '.join(versions)})"
                    )
                revision = versions[0] if versions else None
    except sqlite3.DatabaseError as exc:
        raise SessionCorruptError(path, str(exc)) from exc
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
    return FileCheck(path, size, page_size, page_count, application_id, revision, tables)


def read_session_info(path: Path | str) -> SessionInfo:
    """Describe a session file read-only: an older one is described, not upgraded."""
    check = inspect_file(path)
    try:
        with closing(_connect_read_only(check.path)) as conn:
            meta: dict[str, str] = {}
            if "session_meta" in check.tables:
                meta = dict(conn.execute("SELECT key, value FROM session_meta").fetchall())
            counts = {
                table: int(conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0])
                for table in check.tables
                if table != "alembic_version"
            }
    except sqlite3.DatabaseError as exc:
        raise SessionCorruptError(check.path, str(exc)) from exc
    return {
        "path": str(check.path),
        "schema_revision": check.revision,
        "head_revision": head_revision(),
        "app_version": core.__version__,
        "created_with": meta.get("created_with"),
        "created_at": meta.get("created_at"),
        "tables": counts,
    }


# -- engines and errors ---------------------------------------------------------------


_NOT_CREATED = "Nothing was left behind (the partly built file was removed)."
_SQLITE_IOERR, _SQLITE_FULL = 10, 13  # primary result codes (extended codes keep them)


def _storage_problem(error: BaseException) -> str | None:
    """Why the disk refused SQLite's write, in words, or None for any other error."""
    code = getattr(error, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    message = str(error).lower()
    if primary == _SQLITE_FULL or "database or disk is full" in message:
        return "the disk is full"
    if primary == _SQLITE_IOERR or "disk i/o error" in message:
        return "the disk reported an input/output error (is it full or removed?)"
    return disk_problem(error)


def translate_error(exc: BaseException, path: Path) -> BaseException:
    """The :class:`SessionError` a database error means for the user, or ``exc`` itself."""
    if isinstance(exc, SessionError):
        return exc
    original = getattr(exc, "orig", exc)
    if isinstance(original, OSError) and disk_problem(original) is not None:
        return SessionStorageError(path, str(disk_problem(original)))
    if not isinstance(original, sqlite3.DatabaseError):
        return exc
    message = str(original).lower()
    problem = _storage_problem(original)
    if problem is not None:
        return SessionStorageError(path, problem)
    if "locked" in message or "busy" in message:
        return SessionLockedError(path)
    if "readonly" in message or "read-only" in message:
        return SessionReadOnlyError(path)
    if "malformed" in message or "not a database" in message:
        return SessionCorruptError(path, str(original))
    return exc


def _standard_json(value: Any) -> str:
    return json.dumps(value, allow_nan=False)


def _make_engine(
    path: Path, busy_timeout_s: float, *, foreign_keys: bool = True, read_only: bool = False
) -> Engine:
    # URL.create, not a "sqlite:///…" string: a name holding %20, %41, ? or # would be
    # parsed as a URL (decoded, or cut at the query) and another file opened.
    url = URL.create("sqlite", database=str(path))
    creator = None
    if read_only:

        def creator() -> sqlite3.Connection:
            # Reads a WAL snapshot under a deferred BEGIN, with query_only on: it never
            # takes the write lock nor changes a row. Opened read-write where it may be,
            # so that, as the last connection to close, it folds the -wal back and removes
            # it (a mode=ro connection would leave empty -wal/-shm files beside the file).
            if os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK):
                return sqlite3.connect(path, timeout=busy_timeout_s, check_same_thread=False)
            return sqlite3.connect(
                _file_uri(path, "mode=ro"),
                uri=True,
                timeout=busy_timeout_s,
                check_same_thread=False,
            )

    engine = create_engine(
        url,
        # JSON columns hold standard JSON only: SQLite's json functions (and every other
        # JSON reader) refuse NaN and Infinity, so writing one is a bug caught here.
        json_serializer=_standard_json,
        # The pool hands a connection to one thread at a time (GUI thread, job threads).
        connect_args={"timeout": busy_timeout_s, "check_same_thread": False},
        **({"creator": creator} if creator is not None else {}),
    )
    busy_ms = max(0, int(busy_timeout_s * 1000))

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        # pysqlite's implicit BEGIN skips DDL and is always deferred; we issue our own
        # (see _on_begin) so migrations are atomic and writers can BEGIN IMMEDIATE.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA foreign_keys={'ON' if foreign_keys else 'OFF'}")
        cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
        if read_only:
            cursor.execute("PRAGMA query_only=ON")
        else:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "handle_error")
    def _on_error(context: ExceptionContext) -> BaseException | None:
        # Any statement or commit on a session the disk refuses (full, over quota, an I/O
        # error) becomes one SessionStorageError, wherever in core the write was made.
        problem = _storage_problem(context.original_exception)
        return None if problem is None else SessionStorageError(path, problem)

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        # Inside SessionStore.without_waiting() a busy lock fails at once (busy timeout 0);
        # the connection's own timeout comes back with its next transaction.
        wanted = 0 if _NO_WAIT.get() else busy_ms
        info = connection.connection.info
        if info.get("busy_ms", busy_ms) != wanted:
            connection.exec_driver_sql(f"PRAGMA busy_timeout={wanted}")
            info["busy_ms"] = wanted
        connection.exec_driver_sql(connection.get_execution_options().get(BEGIN_OPTION, "BEGIN"))

    return engine


def _upgrade(path: Path, busy_timeout_s: float, revision: str = "head") -> None:
    """Run Alembic on ``path`` in one transaction: it fails as a whole or not at all."""
    # Foreign keys off: batch mode rebuilds tables with DROP TABLE, which with foreign
    # keys on would cascade-delete the rows that point at them.
    engine = _make_engine(path, busy_timeout_s, foreign_keys=False)
    try:
        with engine.begin() as connection:
            from alembic import command

            command.upgrade(alembic_config(connection), revision)
            broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise SessionCorruptError(
                    path, f"after the upgrade {len(broken)} rows point at missing rows"
                )
    except DBAPIError as exc:
        translated = translate_error(exc, path)
        if translated is exc:
            raise
        raise translated from exc
    finally:
        engine.dispose()


def _temporary_name(dest: Path, suffix: str) -> Path:
    """A hidden name next to ``dest`` that says which process is writing it, so a later
    run can tell a leftover of a killed process (:func:`clean_leftovers`) from work in
    progress."""
    return dest.with_name(f".{dest.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.{suffix}")


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
    for leftover in (_wal_path(path), _shm_path(path), path):
        with suppress(FileNotFoundError):
            leftover.unlink()
    return True


def _file_digest(path: Path) -> bytes:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.digest()


def _copy_database(
    source: sqlite3.Connection,
    dest: Path,
    expected_revision: str | None,
    same_as: tuple[Path, ...] = (),
) -> Path:
    """Write a consistent, verified copy of ``source`` to ``dest`` (replaced atomically).

    When a file in ``same_as`` already holds exactly the same bytes, no copy is placed
    and that file is returned (an upgrade interrupted and run again keeps one backup).
    """
    partial = _temporary_name(dest, "partial")
    try:
        with closing(sqlite3.connect(partial, isolation_level=None)) as target:
            source.backup(target)
            target.execute("PRAGMA journal_mode=WAL")
        with closing(_connect_read_only(partial)) as check:
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
        problem = _storage_problem(exc)
        if problem is None:
            raise
        raise SessionStorageError(
            dest,
            problem,
            "Nothing was written (the partial copy was removed); the session copied is unchanged.",
            action="write the copy",
        ) from exc
    finally:
        for leftover in (partial, _wal_path(partial), _shm_path(partial)):
            leftover.unlink(missing_ok=True)


def _backup_before_upgrade(path: Path, revision: str) -> Path:
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
        with closing(_connect_read_only(path)) as source:
            dest = _copy_database(source, dest, expected_revision=revision, same_as=earlier)
    except (OSError, sqlite3.DatabaseError) as exc:
        raise SessionError(
            path,
            f"{path.name} needs an upgrade to this version of TailLens, but the backup copy "
            f"{dest.name} could not be written ({exc}); the file was not changed. "
            "Free some disk space or make the folder writable, then try again.",
        ) from exc
    return dest


def _utc_iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    # SQLite's CURRENT_TIMESTAMP is UTC without an offset.
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()


# -- the store ------------------------------------------------------------------------

# Mapped class by table name, for the criteria that hide damaged rows.
_MAPPED_CLASSES: dict[str, Any] = {
    mapper.local_table.name: mapper.class_
    for mapper in Base.registry.mappers
    if hasattr(mapper.local_table, "name")
}


class SessionStore:
    """An open session file. Make one with :meth:`create` or :meth:`open`."""

    head_revision = staticmethod(head_revision)

    def __init__(
        self,
        path: Path,
        *,
        busy_timeout_s: float = 5.0,
        migrated_from: str | None = None,
        backup_path: Path | None = None,
        read_only: bool = False,
    ) -> None:
        self.path = Path(path).resolve()
        self.busy_timeout_s = busy_timeout_s
        self.read_only = read_only
        self.engine = _make_engine(self.path, busy_timeout_s, read_only=read_only)
        self.migrated_from = migrated_from
        self.backup_path = backup_path
        # Each unit of work writes, so it takes the write lock up front: waiting for it is
        # what the busy timeout is for, and a deferred transaction that reads first could
        # fail at once (SQLITE_BUSY_SNAPSHOT) when another window wrote in between. A
        # read-only store reads one WAL snapshot per unit of work and never waits.
        # Every read checks the tables it reads and skips their damaged rows: ORM reads
        # through the listener below, SQL text through integrity.usable_rows.
        self.integrity = Integrity(self.path.name)
        self._sessions = sessionmaker(
            bind=self.engine.execution_options(
                **{BEGIN_OPTION: "BEGIN" if read_only else "BEGIN IMMEDIATE"}
            ),
            expire_on_commit=False,
            info={SESSION_INFO_KEY: self.integrity},
        )
        self._snapshots = sessionmaker(
            bind=self.engine.execution_options(**{BEGIN_OPTION: "BEGIN"}),
            expire_on_commit=False,
            info={SESSION_INFO_KEY: self.integrity},
        )
        for maker in (self._sessions, self._snapshots):
            event.listen(maker, "do_orm_execute", self._skip_damaged_rows)
        self._closed = False
        # Every file writer refuses this file (and its -wal/-shm) while it is open here.
        try:
            self._output_guard: int | None = register_open_session(self.path)
        except OSError:
            self._output_guard = None

    # -- making one ---------------------------------------------------------------------

    @classmethod
    def create(cls, path: Path | str, *, busy_timeout_s: float = 5.0) -> SessionStore:
        """Create a new, empty session file at ``path`` (which must not exist).

        The file is built under a hidden temporary name and linked into place only when
        whole, so a kill at any moment leaves either no file or a complete session; the
        temporary files of a killed run are removed by the next (:func:`clean_leftovers`).
        An empty (0-byte) regular file at ``path`` holds nothing to lose and is replaced.
        """
        path = Path(path).expanduser().resolve()
        clean_leftovers(path)
        if (path.exists() or path.is_symlink()) and not _is_empty_file(path):
            raise SessionExistsError(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SessionError(
                path,
                f"Cannot create the folder {path.parent} for the new session {path.name}: "
                f"{exc.strerror or exc}. Choose another folder.",
            ) from exc
        folder_mode = path.parent.stat().st_mode
        if folder_mode & 0o222 == 0 or not os.access(path.parent, os.W_OK | os.X_OK):
            raise SessionReadOnlyError(path, folder=True)
        # Built under a temporary name and moved into place, so a failure never leaves a
        # half-made session behind under the user's name.
        building = _temporary_name(path, "creating")
        try:
            with closing(sqlite3.connect(building, isolation_level=None)) as conn:
                conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
                conn.execute("PRAGMA journal_mode=WAL")
            _upgrade(building, busy_timeout_s)
            cls._write_creation_meta(building, busy_timeout_s)
            _make_self_contained(building)
            _place_without_overwriting(building, path)
        except SessionStorageError as exc:
            raise SessionStorageError(
                path, exc.problem, _NOT_CREATED, action="create the session"
            ) from exc
        except (OSError, sqlite3.Error) as exc:
            problem = _storage_problem(exc)
            if problem is not None:
                raise SessionStorageError(
                    path, problem, _NOT_CREATED, action="create the session"
                ) from exc
            raise SessionError(
                path,
                f"Cannot create the session {path.name}: {getattr(exc, 'strerror', '') or exc}. "
                f"Check the folder {path.parent} and free disk space.",
            ) from exc
        finally:
            for leftover in (building, _wal_path(building), _shm_path(building)):
                leftover.unlink(missing_ok=True)
        return cls(path, busy_timeout_s=busy_timeout_s)

    @staticmethod
    def _write_creation_meta(path: Path, busy_timeout_s: float) -> None:
        engine = _make_engine(path, busy_timeout_s)
        try:
            with Session(engine) as db, db.begin():
                db.add_all(
                    [
                        SessionMeta(key="created_with", value=core.__version__),
                        SessionMeta(
                            key="created_at",
                            value=datetime.now(UTC).isoformat(timespec="seconds"),
                        ),
                    ]
                )
        finally:
            engine.dispose()

    @classmethod
    def open(
        cls, path: Path | str, *, create: bool = False, busy_timeout_s: float = 5.0
    ) -> SessionStore:
        """Open a session file, upgrading it (after a backup copy) if it is older.

        With ``create``, a missing file is created. Any file that cannot be opened raises
        a :class:`SessionError` subclass and is left unchanged.
        """
        path = Path(path).expanduser()
        clean_leftovers(path)
        if create and ((not path.exists() and not path.is_symlink()) or _is_empty_file(path)):
            try:
                return cls.create(path, busy_timeout_s=busy_timeout_s)
            except SessionExistsError:
                pass  # another process created it meanwhile: open theirs
        check = inspect_file(path, for_writing=True)
        path = check.path
        revision = check.revision
        assert revision is not None  # inspect_file refuses files without one
        if not check.is_known:
            raise SessionTooNewError(path, revision, head_revision())
        if check.is_current:
            return cls(path, busy_timeout_s=busy_timeout_s)
        backup = _backup_before_upgrade(path, revision)
        try:
            _upgrade(path, busy_timeout_s)
        except SessionError:
            raise
        except Exception as exc:
            raise SessionError(
                path,
                f"{path.name} could not be upgraded from schema revision {revision} to "
                f"{head_revision()} ({exc}). The file was left at revision {revision}; a "
                f"copy was kept as {backup.name}.",
            ) from exc
        # Said where the user sees it (the CLI prints this logger's records on stderr).
        _log.warning(
            "%s upgraded from schema revision %s to %s; the old file was kept as %s",
            path.name,
            revision,
            head_revision(),
            backup,
        )
        return cls(path, busy_timeout_s=busy_timeout_s, migrated_from=revision, backup_path=backup)

    @classmethod
    def open_read_only(cls, path: Path | str, *, busy_timeout_s: float = 5.0) -> SessionStore:
        """Open a session for reading only: every unit of work reads a WAL snapshot, so
        it never waits for a writer (an import, a run) nor takes the write lock, and
        nothing is written (an attempt raises :class:`SessionReadOnlyError`).

        A session of an older schema revision is first upgraded as :meth:`open` does
        (after a backup copy): the models read only the current schema.
        """
        check = inspect_file(path)
        assert check.revision is not None  # inspect_file refuses files without one
        if not check.is_known:
            raise SessionTooNewError(check.path, check.revision, head_revision())
        if not check.is_current:
            with cls.open(check.path, busy_timeout_s=busy_timeout_s) as upgraded:
                migrated_from, backup = upgraded.migrated_from, upgraded.backup_path
            store = cls(check.path, busy_timeout_s=busy_timeout_s, read_only=True)
            store.migrated_from, store.backup_path = migrated_from, backup
            return store
        return cls(check.path, busy_timeout_s=busy_timeout_s, read_only=True)

    # -- damaged rows -------------------------------------------------------------------

    def _skip_damaged_rows(self, state: ORMExecuteState) -> None:
        """Before an ORM SELECT runs: check the tables it reads (once per store, in its
        own transaction) and hide every damaged row, and the rows that belong to one,
        from it and from the loads it triggers (core.store.integrity)."""
        statement = state.statement
        if not state.is_select or not isinstance(statement, ClauseElement):
            return
        names = {
            table.name
            for table in find_tables(statement, include_joins=True, include_aliases=True)
            if hasattr(table, "name")
        }
        self.integrity.ensure(state.session.connection(), names)
        criteria = self.integrity.criteria()
        if not criteria:
            return
        options = []
        for name, ids in criteria:
            mapped = _MAPPED_CLASSES.get(name)
            if mapped is not None:
                options.append(
                    with_loader_criteria(
                        mapped,
                        mapped.__table__.c.id.not_in(hidden_ids_param(name, ids)),
                        include_aliases=True,
                    )
                )
        state.statement = state.statement.options(*options)

    def check(self) -> list[DamagedRow]:
        """Check every table of the session; every damaged row found, table by table
        (``taillens session check``). Reads only."""
        with self.snapshot() as db:
            return self.integrity.check_all(db.connection())

    @property
    def damaged_rows(self) -> list[DamagedRow]:
        """The damaged rows the reads so far have skipped."""
        return self.integrity.all_damaged()

    # -- working with it ----------------------------------------------------------------

    @contextmanager
    def unit_of_work(self) -> Iterator[Session]:
        """A short transaction: committed when the block ends, rolled back if it raises.

        A write lock another program holds past the busy timeout raises
        :class:`SessionLockedError`.
        """
        self._check_open()
        db = self._sessions()
        try:
            yield db
            db.commit()
            if not self.read_only and self.integrity.criteria():
                # A write may have removed a damaged row, or reused its id: check again.
                self.integrity.forget()
        except DBAPIError as exc:
            _rollback_quietly(db)
            translated = translate_error(exc, self.path)
            if translated is exc:
                raise
            raise translated from exc
        except BaseException:
            _rollback_quietly(db)
            raise
        finally:
            db.close()

    @contextmanager
    def without_waiting(self) -> Iterator[None]:
        """Within this block (in this thread), a unit of work that finds the write lock
        held raises :class:`SessionLockedError` at once instead of waiting for the busy
        timeout: the UI thread writes through it (``app.session_io.SessionWriter``) and
        hands a refused write to a worker that waits."""
        reset = _NO_WAIT.set(True)
        try:
            yield
        finally:
            _NO_WAIT.reset(reset)

    @contextmanager
    def snapshot(self) -> Iterator[Session]:
        """A read-only unit of work: one WAL snapshot under a deferred BEGIN, so it never
        waits for a writer (an import, a run) nor blocks one. Panels and other readers
        use it; a write inside it raises :class:`SessionReadOnlyError`."""
        self._check_open()
        db = self._snapshots()
        try:
            connection = db.connection()
            connection.exec_driver_sql("PRAGMA query_only=ON")
            try:
                yield db
            finally:
                # Off again before the connection goes back to the pool for writers; one
                # that cannot be switched back is discarded, never reused for a write.
                if not self.read_only:
                    try:
                        connection.exec_driver_sql("PRAGMA query_only=OFF")
                    except DBAPIError:
                        connection.invalidate()
            db.rollback()  # nothing to keep: the snapshot is released
        except DBAPIError as exc:
            _rollback_quietly(db)
            translated = translate_error(exc, self.path)
            if translated is exc:
                raise
            raise translated from exc
        except BaseException:
            _rollback_quietly(db)
            raise
        finally:
            db.close()

    @contextmanager
    def _reading(self) -> Iterator[Connection]:
        self._check_open()
        try:
            with self.engine.connect() as connection:
                yield connection
        except DBAPIError as exc:
            translated = translate_error(exc, self.path)
            if translated is exc:
                raise
            raise translated from exc

    @property
    def schema_revision(self) -> str:
        with self._reading() as connection:
            return str(
                connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()
            )

    def row_counts(self) -> dict[str, int]:
        """Rows in every table of the schema, by table name."""
        with self._reading() as connection:
            return {
                table.name: int(
                    connection.execute(select(func.count()).select_from(table)).scalar_one()
                )
                for table in sorted(Base.metadata.tables.values(), key=lambda t: t.name)
            }

    def get_meta(self, key: str) -> str | None:
        with self._reading() as connection:
            return connection.execute(
                select(SessionMeta.value).where(SessionMeta.key == key)
            ).scalar_one_or_none()

    def set_meta(self, key: str, value: str) -> None:
        with self.unit_of_work() as db:
            db.merge(SessionMeta(key=key, value=value))

    def info(self) -> SessionInfo:
        """A JSON-serialisable description: path, revisions, versions, row counts."""
        return {
            "path": str(self.path),
            "schema_revision": self.schema_revision,
            "head_revision": head_revision(),
            "app_version": core.__version__,
            "created_with": self.get_meta("created_with"),
            "created_at": self.get_meta("created_at"),
            "tables": self.row_counts(),
        }

    # -- job history --------------------------------------------------------------------

    def record_job_start(self, kind: str, title: str, params: dict[str, Any] | None = None) -> int:
        """Note that a long job started on this session; returns the history row id."""
        # Through JSON and back, so a Path or a date in the parameters cannot fail the write.
        safe = json.loads(json.dumps(params or {}, default=str))
        with self.unit_of_work() as db:
            row = JobHistory(kind=kind, title=title, status="running", params=safe)
            db.add(row)
            db.flush()
            return row.id

    def record_job_end(self, history_id: int, status: str, error: str | None = None) -> None:
        """Note how a job ended: 'done', 'failed' or 'cancelled'."""
        with self.unit_of_work() as db:
            db.execute(
                update(JobHistory)
                .where(JobHistory.id == history_id)
                .values(status=status, error=error, finished_at=func.current_timestamp())
            )

    def job_history(self) -> list[dict[str, Any]]:
        """Jobs run on this session, oldest first, as plain dicts."""
        with self._reading() as connection:
            rows = connection.execute(
                select(*JobHistory.__table__.columns).order_by(JobHistory.id)
            ).mappings()
            return [
                {
                    **row,
                    "started_at": _utc_iso(row["started_at"]),
                    "finished_at": _utc_iso(row["finished_at"]),
                }
                for row in rows
            ]

    # -- copying and closing ------------------------------------------------------------

    def copy_to(self, dest: Path | str, *, overwrite: bool = False) -> Path:
        """Write a consistent copy of this session to ``dest``; returns its resolved path.

        The copy is taken with SQLite's backup API, so it includes every committed change
        even while other connections write.
        """
        self._check_open()
        dest = Path(dest).expanduser().resolve()
        if dest == self.path or (dest.exists() and dest.samefile(self.path)):
            raise SessionError(
                dest,
                f"Cannot copy the session {self.path.name} onto itself. Choose another name.",
            )
        if dest.is_dir():
            raise SessionMissingError(dest, is_directory=True)
        if dest.exists() and not overwrite:
            raise SessionError(
                dest,
                f"Cannot save a copy as {dest.name}: that file already exists. Choose another "
                f"name (full path: {dest}).",
            )
        # The guard every writer uses: the open session's own -wal/-shm files are never a
        # destination; another session is replaced only when ``overwrite`` says so.
        check_output_target(dest, force=overwrite)
        if _wal_path(dest).exists():
            # Replacing a database next to its -wal file would let SQLite replay the old
            # file's pages into the new one.
            raise SessionLockedError(dest, "it has unsaved pages in its -wal file")
        dest.parent.mkdir(parents=True, exist_ok=True)
        raw = self.engine.raw_connection()
        try:
            source = raw.driver_connection
            assert isinstance(source, sqlite3.Connection)
            _copy_database(source, dest, expected_revision=None)
        except sqlite3.DatabaseError as exc:
            translated = translate_error(exc, self.path)
            if translated is exc:
                raise
            raise translated from exc
        finally:
            raw.close()
        return dest

    def close(self) -> None:
        """Close every connection; the file is left self-contained (no -wal to carry)."""
        if self._closed:
            return
        self._closed = True
        if self._output_guard is not None:
            unregister_open_session(self._output_guard)
        if self.read_only:
            self.engine.dispose()
            return
        try:
            raw = self.engine.raw_connection()
            try:
                raw.cursor().execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                raw.close()
        except (DBAPIError, sqlite3.DatabaseError):
            pass  # another program is reading; the last connection to close checkpoints
        finally:
            self.engine.dispose()

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise SessionError(
                self.path, f"The session {self.path.name} was closed. Open it again."
            )

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<SessionStore {self.path} ({state})>"


def _rollback_quietly(db: Session) -> None:
    # A failed rollback means the connection is unusable; closing the session discards it.
    with suppress(DBAPIError):
        db.rollback()


def _make_self_contained(path: Path) -> None:
    """Fold the -wal into the database file and flush it to disk, so the file alone is
    the whole session before it is linked under the user's name."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _is_empty_file(path: Path) -> bool:
    """A regular 0-byte file with no -wal beside it (nothing in it to lose)."""
    try:
        return (
            not path.is_symlink()
            and path.is_file()
            and path.stat().st_size == 0
            and not _wal_path(path).exists()
        )
    except OSError:
        return False


def _place_without_overwriting(source: Path, dest: Path) -> None:
    """Move ``source`` to ``dest`` unless ``dest`` appeared meanwhile (an empty file at
    ``dest`` is replaced: it holds nothing)."""
    if _is_empty_file(dest):
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
