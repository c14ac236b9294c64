"""SQLAlchemy engines for session files (WAL, busy timeout, the BEGIN listener) and the
translation of SQLite errors into the store's user-facing errors."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL, ExceptionContext

from core.io.files import disk_problem
from core.store.bounds import BoundedConnection, bound, guard_of, stopped
from core.store.errors import (
    SessionBoundsError,
    SessionCorruptError,
    SessionError,
    SessionLockedError,
    SessionReadOnlyError,
    SessionStorageError,
    SessionValueTooLongError,
)

# Execution option read by the "begin" listener: which BEGIN statement to issue (a
# connection that writes in several steps, as scoring does, sets it to "BEGIN IMMEDIATE").
BEGIN_OPTION = "taillens_begin"
# Set by SessionStore.without_waiting(): the "begin" listener sets a busy timeout of 0.
NO_WAIT: ContextVar[bool] = ContextVar("taillens_no_wait", default=False)


def file_uri(path: Path, option: str) -> str:
    """A ``file:`` URI naming exactly ``path``: every ``%``, ``?`` and ``#`` in the name
    is percent-quoted (:meth:`Path.as_uri`), so SQLite opens the file the user named."""
    return f"{Path(os.path.abspath(path)).as_uri()}?{option}"


# -- engines and errors ---------------------------------------------------------------


NOT_CREATED = "Nothing was left behind (the partly built file was removed)."
_SQLITE_IOERR, _SQLITE_FULL = 10, 13  # primary result codes (extended codes keep them)


def storage_problem(error: BaseException) -> str | None:
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
    problem = storage_problem(original)
    if problem is not None:
        return SessionStorageError(path, problem)
    if "locked" in message or "busy" in message:
        return SessionLockedError(path)
    if "readonly" in message or "read-only" in message:
        return SessionReadOnlyError(path)
    if "malformed" in message or "not a database" in message:
        return SessionCorruptError(path, str(original))
    return exc


def _is_utf8(value: Any) -> int:
    """1 when ``value`` (a blob of a TEXT value's bytes) is UTF-8 Python can decode."""
    if not isinstance(value, bytes):
        return 1
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return 0
    return 1


def _are_utf8(*values: Any) -> int:
    """1 when every one of ``values`` passes :func:`_is_utf8`: the integrity check asks
    once per row for all of a table's text columns (a call into Python each was most of
    the check of the scores table)."""
    for value in values:
        if isinstance(value, bytes):
            try:
                value.decode("utf-8")
            except UnicodeDecodeError:
                return 0
    return 1


def _json_is_text(value: Any) -> int:
    """1 when the JSON text ``value`` holds no lone surrogate escape (``"\\ud800"``:
    valid JSON, but a string no UTF-8 writer can write again)."""
    if not isinstance(value, str):
        return 1
    from core.io.bounded import DEFAULT, check_value

    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return 1  # not JSON: the JSON check says so
    return 0 if check_value(parsed, DEFAULT) is not None else 1


def _standard_json(value: Any) -> str:
    return json.dumps(value, allow_nan=False)


def _dbapi_connection(context: ExceptionContext) -> Any:
    fairy = None if context.connection is None else context.connection.connection
    return None if fairy is None else fairy.dbapi_connection


def make_engine(
    path: Path, busy_timeout_s: float, *, foreign_keys: bool = True, read_only: bool = False
) -> Engine:
    """An engine for the session file ``path``: every connection set up by
    :func:`_connection_setup`, errors translated by :func:`_error_translator`, BEGIN
    issued by :func:`_begin_issuer`."""
    # URL.create, not a "sqlite:///…" string: a name holding %20, %41, ? or # would be
    # parsed as a URL (decoded, or cut at the query) and another file opened.
    url = URL.create("sqlite", database=str(path))
    creator = _read_only_creator(path, busy_timeout_s) if read_only else None
    engine = create_engine(
        url,
        # JSON columns hold standard JSON only: SQLite's json functions (and every other
        # JSON reader) refuse NaN and Infinity, so writing one is a bug caught here.
        json_serializer=_standard_json,
        # The pool hands a connection to one thread at a time (GUI thread, job threads).
        connect_args={
            "timeout": busy_timeout_s,
            "check_same_thread": False,
            "factory": BoundedConnection,
        },
        **({"creator": creator} if creator is not None else {}),
    )
    busy_ms = max(0, int(busy_timeout_s * 1000))
    event.listen(engine, "connect", _connection_setup(busy_ms, foreign_keys, read_only))
    event.listen(engine, "handle_error", _error_translator(path))
    event.listen(engine, "begin", _begin_issuer(busy_ms))
    return engine


def _read_only_creator(path: Path, busy_timeout_s: float) -> Callable[[], sqlite3.Connection]:
    def creator() -> sqlite3.Connection:
        # Reads a WAL snapshot under a deferred BEGIN, with query_only on: it never
        # takes the write lock nor changes a row. Opened read-write where it may be,
        # so that, as the last connection to close, it folds the -wal back and removes
        # it (a mode=ro connection would leave empty -wal/-shm files beside the file).
        if os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK):
            return sqlite3.connect(
                path,
                timeout=busy_timeout_s,
                check_same_thread=False,
                factory=BoundedConnection,
            )
        return sqlite3.connect(
            file_uri(path, "mode=ro"),
            uri=True,
            timeout=busy_timeout_s,
            check_same_thread=False,
            factory=BoundedConnection,
        )

    return creator


def _connection_setup(
    busy_ms: int, foreign_keys: bool, read_only: bool
) -> Callable[[sqlite3.Connection, object], None]:
    def on_connect(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        # pysqlite's implicit BEGIN skips DDL and is always deferred; we issue our own
        # (see _begin_issuer) so migrations are atomic and writers can BEGIN IMMEDIATE.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA foreign_keys={'ON' if foreign_keys else 'OFF'}")
        cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
        # A session may come from elsewhere: SQL functions with side effects never run
        # from its schema (TailLens's own schema has no view or trigger that would need it).
        cursor.execute("PRAGMA trusted_schema=OFF")
        # A session may come from elsewhere: no value longer than a session holds, a page
        # cache of our size (not the file header's), Ctrl+C stops any statement, and the
        # checks of its rows (core.store.integrity) run under a deadline.
        bound(dbapi_connection)
        # For the integrity checks: text another program stored that is not UTF-8 (an
        # encoded lone surrogate) fails every read of its row in Python.
        dbapi_connection.create_function("taillens_utf8", 1, _is_utf8, deterministic=True)
        dbapi_connection.create_function("taillens_utf8_all", -1, _are_utf8, deterministic=True)
        dbapi_connection.create_function("taillens_json_text", 1, _json_is_text, deterministic=True)
        if read_only:
            cursor.execute("PRAGMA query_only=ON")
        else:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    return on_connect


def _error_translator(path: Path) -> Callable[[ExceptionContext], BaseException | None]:
    def on_error(context: ExceptionContext) -> BaseException | None:
        # Any statement or commit on a session the disk refuses (full, over quota, an I/O
        # error) becomes one SessionStorageError, wherever in core the write was made.
        problem = storage_problem(context.original_exception)
        if problem is not None:
            return SessionStorageError(path, problem)
        # A statement a bound stopped: Ctrl+C and a job's cancel end as they do anywhere
        # (stopped raises them), a deadline or an over-long value is one line.
        guard = guard_of(_dbapi_connection(context))
        why = stopped(context.original_exception, guard)
        if why is None:
            return None
        if guard is not None and isinstance(context.original_exception, sqlite3.DataError):
            statement = (context.statement or "").lstrip()[:7].upper()
            if statement.startswith(("INSERT", "UPDATE", "REPLACE")):
                return SessionValueTooLongError(path, guard.value_bytes)
        return SessionBoundsError(path, why)

    return on_error


def _begin_issuer(busy_ms: int) -> Callable[[Connection], None]:
    def on_begin(connection: Connection) -> None:
        # Inside SessionStore.without_waiting() a busy lock fails at once (busy timeout 0);
        # the connection's own timeout comes back with its next transaction.
        wanted = 0 if NO_WAIT.get() else busy_ms
        info = connection.connection.info
        if info.get("busy_ms", busy_ms) != wanted:
            connection.exec_driver_sql(f"PRAGMA busy_timeout={wanted}")
            info["busy_ms"] = wanted
        connection.exec_driver_sql(connection.get_execution_options().get(BEGIN_OPTION, "BEGIN"))

    return on_begin
