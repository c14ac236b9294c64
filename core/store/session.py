"""Open, create, upgrade and copy session files.

A session is one SQLite file in WAL mode. Every change is its own short transaction
(:meth:`SessionStore.unit_of_work`), committed at once, so there is no unsaved state.

Opening is careful because a user may point at anything: the file is checked from the
outside (header bytes) and then through a read-only connection before anything opens
it for writing, so a file that is refused is left byte for byte as it was.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from sqlalchemy import Connection, event, func, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import ORMExecuteState, Session, sessionmaker, with_loader_criteria
from sqlalchemy.sql.elements import ClauseElement
from sqlalchemy.sql.util import find_tables

import core
from core.io.atomic import temporary_name
from core.io.output_guard import (
    check_output_target,
    register_open_session,
    unregister_open_session,
)
from core.session_info import SessionInfo
from core.store.engine import (
    BEGIN_OPTION,
    NO_WAIT,
    NOT_CREATED,
    make_engine,
    storage_problem,
    translate_error,
)
from core.store.errors import (
    SessionError,
    SessionExistsError,
    SessionLockedError,
    SessionMissingError,
    SessionReadOnlyError,
    SessionStorageError,
    SessionTooNewError,
)
from core.store.fileinfo import APPLICATION_ID, inspect_file, shm_path, wal_path
from core.store.integrity import SESSION_INFO_KEY, DamagedRow, Integrity, hidden_ids_param
from core.store.migrate import head_revision, upgrade
from core.store.models import Base, JobHistory, SessionMeta
from core.store.placing import (
    backup_before_upgrade,
    clean_leftovers,
    copy_database,
    is_empty_file,
    make_self_contained,
    place_without_overwriting,
)

_log = logging.getLogger(__name__)


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
        self.engine = make_engine(self.path, busy_timeout_s, read_only=read_only)
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
        if (path.exists() or path.is_symlink()) and not is_empty_file(path):
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
        building = temporary_name(path, "creating")
        try:
            with closing(sqlite3.connect(building, isolation_level=None)) as conn:
                conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
                conn.execute("PRAGMA journal_mode=WAL")
            upgrade(building, busy_timeout_s)
            cls._write_creation_meta(building, busy_timeout_s)
            make_self_contained(building)
            place_without_overwriting(building, path)
        except SessionStorageError as exc:
            raise SessionStorageError(
                path, exc.problem, NOT_CREATED, action="create the session"
            ) from exc
        except (OSError, sqlite3.Error) as exc:
            problem = storage_problem(exc)
            if problem is not None:
                raise SessionStorageError(
                    path, problem, NOT_CREATED, action="create the session"
                ) from exc
            raise SessionError(
                path,
                f"Cannot create the session {path.name}: {getattr(exc, 'strerror', '') or exc}. "
                f"Check the folder {path.parent} and free disk space.",
            ) from exc
        finally:
            for leftover in (building, wal_path(building), shm_path(building)):
                leftover.unlink(missing_ok=True)
        return cls(path, busy_timeout_s=busy_timeout_s)

    @staticmethod
    def _write_creation_meta(path: Path, busy_timeout_s: float) -> None:
        engine = make_engine(path, busy_timeout_s)
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
        if create and ((not path.exists() and not path.is_symlink()) or is_empty_file(path)):
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
        backup = backup_before_upgrade(path, revision)
        try:
            upgrade(path, busy_timeout_s)
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
        reset = NO_WAIT.set(True)
        try:
            yield
        finally:
            NO_WAIT.reset(reset)

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

    def staging_connection(self) -> Connection:
        """A connection of the session's own for a writer that stages rows in a TEMP
        table of it and puts them in place in one ``BEGIN IMMEDIATE`` transaction
        (``core.metrics.scoring.write``): a TEMP table lives on one connection, and a unit
        of work gives its connection back when its block ends. The caller closes it."""
        self._check_open()
        return self.engine.connect()

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
        if wal_path(dest).exists():
            # Replacing a database next to its -wal file would let SQLite replay the old
            # file's pages into the new one.
            raise SessionLockedError(dest, "it has unsaved pages in its -wal file")
        dest.parent.mkdir(parents=True, exist_ok=True)
        raw = self.engine.raw_connection()
        try:
            source = raw.driver_connection
            assert isinstance(source, sqlite3.Connection)
            copy_database(source, dest, expected_revision=None)
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
        # SQLAlchemy keeps event listeners in a registry of its own: left there, the bound
        # method kept this store, its engine and its connection pool alive for the life of
        # the process (every session opened and closed, each fuzz case, stayed in memory,
        # and the garbage collector's full passes grew with them).
        for maker in (self._sessions, self._snapshots):
            if event.contains(maker, "do_orm_execute", self._skip_damaged_rows):
                event.remove(maker, "do_orm_execute", self._skip_damaged_rows)
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
