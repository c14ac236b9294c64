"""Bounds on every SQLite connection to a file from elsewhere (a session the user opens,
a pack to merge, a copy being checked): how long its statements may run and how much
memory they may take.

A file's schema is checked before any row is read (``fileinfo.inspect_file``), but what
is left can still cost: a value of a gigabyte, a CHECK constraint that builds a huge
string for every row ``PRAGMA quick_check`` visits, a page-cache size planted in the
file's header (SQLite applies the header's suggested cache size to every connection).
So every such connection gets, from :func:`bound`:

* SQLite's length limit (``SQLITE_LIMIT_LENGTH``): a value longer than it is refused
  by SQLite itself (``sqlite3.DataError``) before it is copied out of the file;
* a page cache of :data:`CACHE_KIB`, set after the schema is read, so the header's
  suggestion is overridden;
* a progress handler that looks every :data:`PROGRESS_STEPS` SQLite instructions at a
  deadline (:meth:`Guard.within`), at a job's cancel and at Ctrl+C, and stops the
  statement when one of them says so.

:func:`stopped` turns what a stopped statement raised into one line for the user (or a
``KeyboardInterrupt`` / ``JobCancelled``, which end the command or the job as usual).
"""

from __future__ import annotations

import math
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

# Longest the checks and reads of a file from elsewhere may take: quick_check reads a
# session of a gigabyte in a few seconds, a pack of 100,000 ratings reads in one.
STATEMENT_S = 60.0
PROGRESS_STEPS = 20_000  # SQLite instructions between looks at the clock and at Ctrl+C
# Longest value a session may hold: TailLens writes texts, JSON settings and vectors of
# kilobytes; 64 MB leaves room for any of them and refuses a planted gigabyte.
SESSION_VALUE_BYTES = 64_000_000
CACHE_KIB = 16_384  # page cache of one connection


class Guard:
    """The deadline, cancel and Ctrl+C a bounded connection's progress handler obeys."""

    def __init__(self, value_bytes: int) -> None:
        self.value_bytes = value_bytes
        self.seconds = math.inf
        self.deadline = math.inf
        self.cancelled: Callable[[], bool] | None = None
        self.why: list[str] = []

    def look(self) -> int:
        """The progress handler: 1 (stop the statement) once a reason is found."""
        try:
            if self.cancelled is not None and self.cancelled():
                self.why.append("cancel")
            elif time.monotonic() > self.deadline:
                self.why.append("deadline")
        except KeyboardInterrupt:
            self.why.append("interrupt")
        return 1 if self.why else 0

    def arm(self, seconds: float) -> None:
        """Statements from now on end ``seconds`` from now at the latest."""
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.why.clear()

    @contextmanager
    def within(self, seconds: float | None = None) -> Iterator[None]:
        """The statements of the block end ``seconds`` (:data:`STATEMENT_S`) after it
        starts at the latest (an enclosing deadline that ends sooner still holds)."""
        seconds = STATEMENT_S if seconds is None else seconds
        outer = (self.seconds, self.deadline)
        if time.monotonic() + seconds < self.deadline:
            self.arm(seconds)
        try:
            yield
        finally:
            self.seconds, self.deadline = outer


class BoundedConnection(sqlite3.Connection):
    """A ``sqlite3`` connection carrying its :class:`Guard` (pass as ``factory=``)."""

    guard: Guard | None = None


def bound(
    conn: sqlite3.Connection,
    *,
    value_bytes: int | None = None,
    seconds: float | None = None,
) -> Guard:
    """Put ``conn`` under the bounds (length limit, by default
    :data:`SESSION_VALUE_BYTES`; page cache; progress handler), with a deadline of
    ``seconds`` from now over all its statements when given; its guard."""
    guard = Guard(SESSION_VALUE_BYTES if value_bytes is None else value_bytes)
    if seconds is not None:
        guard.arm(seconds)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, guard.value_bytes)
    conn.set_progress_handler(guard.look, PROGRESS_STEPS)
    if isinstance(conn, BoundedConnection):
        conn.guard = guard
    # After the handler: this first statement reads the schema (under the deadline), and
    # the header's suggested cache size, applied with it, is replaced.
    conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    return guard


def guard_of(conn: Any) -> Guard | None:
    """The guard of a bounded ``sqlite3`` connection (or None)."""
    return getattr(conn, "guard", None) if isinstance(conn, BoundedConnection) else None


def stopped(error: BaseException, guard: Guard | None) -> str | None:
    """Why a statement under ``guard`` failed, in words ("it holds a value longer than
    …", "reading it took longer than … s"), or None when the bounds were not the cause.
    A statement stopped by Ctrl+C raises ``KeyboardInterrupt``, one stopped by a job's
    cancel ``JobCancelled``."""
    original = getattr(error, "orig", None) or error
    if guard is None or not isinstance(original, sqlite3.DatabaseError):
        return None
    if isinstance(original, sqlite3.DataError) or "too big" in str(original):
        return f"it holds a value longer than {guard.value_bytes:,} bytes"
    if not isinstance(original, sqlite3.OperationalError) or "interrupt" not in str(original):
        return None
    why = list(guard.why)
    guard.why.clear()
    # No reason recorded: the handler itself raised, and the one exception it can raise
    # is the KeyboardInterrupt of Ctrl+C (Python raises a signal's exception as a Python
    # function is entered, before the handler's own try; sqlite3 then only prints it, if
    # at all, and stops the statement).
    if "interrupt" in why or not why:
        raise KeyboardInterrupt
    if "cancel" in why:
        from core.jobs import JobCancelled

        raise JobCancelled()
    if "deadline" in why:
        return f"reading it took longer than {guard.seconds:g} s"
    return None
