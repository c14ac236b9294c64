"""The session rule: how the UI thread reads and writes the open session.

Nothing on the UI thread waits for SQLite's write lock (another program, or a job of
ours, may hold it for hours):

* **Reads for a view** go through :class:`ViewReads` (``AppController.reads``):
  ``request(key, fn, on_result)`` runs ``fn(store)`` as a quiet job on the runner's
  read lane (never behind long jobs), where the session is read from WAL snapshots
  (``store.snapshot()``, or a deferred read), so a read never waits for a writer. A newer
  request with the same key supersedes an older one: the older one is cancelled and its
  result dropped, as is a result for a session that is no longer open.
* **Writes started from the UI** go through the one :class:`SessionWriter`
  (``AppController.writer``), in the order they were asked for. When nothing is queued
  the write is tried at once without waiting (``store.without_waiting()``: busy timeout
  0), so an edit on a free session lands before the click returns; a write that finds
  the lock held is queued for the writer's thread, which retries until it lands and
  tells the user it is waiting (``waiting``) and when it landed (``caught_up``). What the
  write changed is announced on ``app.changes`` when it lands, and ``on_done`` runs on
  the UI thread. On session change the old session's queued writes still land (the old
  store closes after them, or they are given up after a grace period, with a message
  naming each); at quit :meth:`SessionWriter.flush` waits a bounded time.
"""

from __future__ import annotations

import threading
import time
import traceback
import weakref
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from core.changes import Topic, Topics, topics
from core.desktop.logs import get_logger
from core.errors import UserFacingError
from core.jobs import Job, JobSucceeded
from core.store import SessionLockedError

if TYPE_CHECKING:
    from app.changes import SessionChanges
    from app.jobrunner import JobHandle, QtJobRunner
    from core.store import SessionStore

log = get_logger("session_io")

READ_KIND = "view.read"  # the kind of every view read's (quiet) job
RETRY_INTERVAL_S = 0.2  # between tries of a locked write (each also waits the busy timeout)
RETIRE_GRACE_S = 10.0  # how long a closed session's queued writes still try


class ViewReads(QObject):
    """One helper for every panel's view reads: off the UI thread, newest request wins."""

    def __init__(
        self,
        runner: QtJobRunner,
        current_store: Callable[[], SessionStore | None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._runner = runner
        self._current_store = current_store
        self._latest: dict[str, JobHandle] = {}

    def request(
        self,
        key: str,
        fn: Callable[[SessionStore], Any],
        on_result: Callable[[Any], object],
        *,
        on_error: Callable[[UserFacingError], object] | None = None,
        title: str | None = None,
    ) -> JobHandle | None:
        """Read ``fn(store)`` off the UI thread and hand the result to ``on_result`` on
        it, unless a newer request for ``key`` came first or the session changed. A
        :class:`UserFacingError` goes to ``on_error`` when given (else the window shows
        it, as for any quiet job that fails)."""
        store = self._current_store()
        if store is None:
            return None
        older = self._latest.get(key)
        if older is not None:
            older.cancel()  # superseded: its result will be dropped

        def read(ctx: Any) -> Any:
            ctx.check_cancelled()  # superseded before it started: nothing to read
            try:
                result = fn(store)
            except UserFacingError as error:
                if on_error is None:
                    raise  # the window shows it, as any quiet job's failure
                return _Refused(error)
            ctx.check_cancelled()  # superseded while it read: dropped
            return result

        job = Job(title or f"Read {key}", read, kind=READ_KIND, params={"key": key}, quiet=True)
        handle = self._runner.submit(job)
        self._latest[key] = handle
        handle.finished.connect(
            lambda outcome, h=handle: self._deliver(key, h, store, outcome, on_result, on_error)
        )
        return handle

    def drop(self, key: str) -> None:
        """Forget the read on its way for ``key`` (the view shows something else now)."""
        older = self._latest.pop(key, None)
        if older is not None:
            older.cancel()

    def pending(self, key: str | None = None) -> bool:
        """Whether a read (for ``key``, or any) is still on its way."""
        if key is not None:
            return key in self._latest
        return bool(self._latest)

    def _deliver(
        self,
        key: str,
        handle: JobHandle,
        store: SessionStore,
        outcome: Any,
        on_result: Callable[[Any], object],
        on_error: Callable[[UserFacingError], object] | None,
    ) -> None:
        if self._latest.get(key) is not handle:
            return  # superseded
        del self._latest[key]
        if store is not self._current_store():
            return  # read from a session no longer open
        if not isinstance(outcome, JobSucceeded):
            return  # cancelled, or failed (the window shows a failure)
        if isinstance(outcome.result, _Refused):
            if on_error is not None:
                on_error(outcome.result.error)
        else:
            on_result(outcome.result)


@dataclass(frozen=True)
class _Refused:
    """A read's UserFacingError, carried back to its ``on_error``."""

    error: UserFacingError


@dataclass
class _Write:
    what: str
    fn: Callable[[SessionStore], Any]
    store: SessionStore
    writes: Topics
    on_done: Callable[[Any], object] | None
    on_error: Callable[[UserFacingError], object] | None
    tell: bool  # tell the user while it waits (job history rows do not)
    deadline: float | None = None  # set when its session is closed or the app quits
    waited: bool = False
    close_after: list[SessionStore] = field(default_factory=list)


# Every writer of this process (its thread keeps it alive): see stop_all_writers.
_WRITERS: weakref.WeakSet[SessionWriter] = weakref.WeakSet()


def stop_all_writers(timeout_s: float) -> bool:
    """End the thread of every writer in this process once its queue is empty, waiting
    up to ``timeout_s``: for a host that made writers without a window's shutdown
    (scripts, the test suite between tests). False when one is still writing."""
    deadline = time.monotonic() + timeout_s
    return all(w.stop(max(0.0, deadline - time.monotonic())) for w in list(_WRITERS))


class SessionWriter(QObject):
    """The one writer for edits started from the UI (see the module doc)."""

    waiting = Signal(str)  # what is waiting for the lock (UI thread)
    caught_up = Signal(str)  # a write that waited has landed
    failed = Signal(str, str, str)  # what, message, details (a bug's traceback)
    # From the writer thread, queued into the UI thread: (item, result, error, details).
    _landed = Signal(object, object, object, str)
    _noticed = Signal(object)

    def __init__(
        self,
        changes: SessionChanges,
        current_store: Callable[[], SessionStore | None],
        parent: QObject | None = None,
        *,
        retry_interval_s: float = RETRY_INTERVAL_S,
    ) -> None:
        super().__init__(parent)
        self._changes = changes
        self._current_store = current_store
        self._retry_interval_s = retry_interval_s
        self._cond = threading.Condition()
        self._queue: deque[_Write] = deque()  # taken by the writer thread, in order
        self._outstanding = 0  # queued or landed but not yet delivered on the UI thread
        self._thread: threading.Thread | None = None
        self._stopping = False
        _WRITERS.add(self)
        self._landed.connect(self._deliver)
        self._noticed.connect(self._notice)

    # -- the UI side -----------------------------------------------------------------
    def write(
        self,
        what: str,
        fn: Callable[[SessionStore], Any],
        *,
        writes: Iterable[Topic] = (),
        on_done: Callable[[Any], object] | None = None,
        on_error: Callable[[UserFacingError], object] | None = None,
        tell: bool = True,
        at_once: bool = True,
    ) -> bool | None:
        """Apply ``fn(store)`` to the open session, after every write asked for before.
        ``what`` names the change for the user ("the rating of item 3"). Returns True
        when it landed at once (``on_done`` has run), None when it is queued, False
        when it was refused (no session, or a ``UserFacingError``: ``on_error`` ran, or
        the window was told). ``at_once=False``: always on the writer's thread (a write
        of many rows, e.g. a category's tiers, is never tried on the UI thread)."""
        store = self._current_store()
        if store is None:
            return False
        item = _Write(what, fn, store, topics(writes), on_done, on_error, tell)
        with self._cond:
            idle = self._outstanding == 0
        if idle and at_once:
            try:
                with store.without_waiting():
                    result = fn(store)
            except SessionLockedError:
                log.info("%s: the session is locked; queued for the writer", what)
            except UserFacingError as error:
                self._refuse(item, error)
                return False
            else:
                self._finish(item, result)
                return True
        self._enqueue(item)
        return None

    @property
    def idle(self) -> bool:
        """Nothing queued, and every landed write delivered."""
        with self._cond:
            return self._outstanding == 0

    @property
    def queued(self) -> list[str]:
        with self._cond:
            return [item.what for item in self._queue]

    def retire(self, store: SessionStore) -> None:
        """``store`` is no longer the open session: its queued writes get a grace
        period to land, then it is closed (at once when none is queued)."""
        with self._cond:
            mine = [item for item in self._queue if item.store is store]
            deadline = time.monotonic() + RETIRE_GRACE_S
            for item in mine:
                item.deadline = deadline if item.deadline is None else item.deadline
            if mine:
                mine[-1].close_after.append(store)
                return
        store.close()

    def flush(self, timeout_s: float) -> list[str]:
        """Wait up to ``timeout_s`` for queued writes (at quit); returns what did not
        land (given up). Blocks the calling thread: only for shutdown."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            for item in self._queue:
                item.deadline = deadline if item.deadline is None else min(item.deadline, deadline)
            self._cond.wait_for(lambda: not self._queue, timeout_s)
            return [item.what for item in self._queue]

    def stop(self, timeout_s: float) -> bool:
        """End the writer's thread once its queue is empty (after :meth:`flush`, at
        shutdown); False when it is still writing at ``timeout_s``. A later write starts
        a new thread."""
        with self._cond:
            thread = self._thread
            self._stopping = True
            self._cond.notify_all()
        if thread is not None:
            thread.join(timeout_s)
        return thread is None or not thread.is_alive()

    def _enqueue(self, item: _Write) -> None:
        with self._cond:
            self._stopping = False
            self._outstanding += 1
            self._queue.append(item)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._work, name="taillens-writer", daemon=True
                )
                self._thread.start()
            self._cond.notify_all()

    def _deliver(
        self, item: _Write, result: Any, error: BaseException | None, details: str
    ) -> None:
        with self._cond:
            self._outstanding -= 1
        if error is None:
            self._finish(item, result)
            if item.waited and item.tell:
                self.caught_up.emit(item.what)
        elif isinstance(error, UserFacingError) and not isinstance(error, SessionLockedError):
            self._refuse(item, error)
        elif isinstance(error, SessionLockedError):
            self.failed.emit(
                item.what,
                f"Not saved: {item.what}. {error} The change was given up when the session "
                "was closed.",
                "",
            )
        else:
            self.failed.emit(item.what, f"{item.what}: {error}", details)

    def _finish(self, item: _Write, result: Any) -> None:
        if item.writes and item.store is self._current_store():
            self._changes.announce(item.writes)
        if item.on_done is not None and item.store is self._current_store():
            item.on_done(result)

    def _refuse(self, item: _Write, error: UserFacingError) -> None:
        if item.on_error is not None and item.store is self._current_store():
            item.on_error(error)
        else:
            self.failed.emit(item.what, str(error), "")

    def _notice(self, item: _Write) -> None:
        if item.tell:
            self.waiting.emit(item.what)

    # -- the writer thread ----------------------------------------------------------------
    def _work(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: bool(self._queue) or self._stopping)
                if not self._queue:
                    self._thread = None
                    return
                item = self._queue[0]
            result, error, details = self._attempt(item)
            with self._cond:
                self._queue.popleft()
                self._cond.notify_all()
            for store in item.close_after:
                store.close()
            self._landed.emit(item, result, error, details)

    def _attempt(self, item: _Write) -> tuple[Any, BaseException | None, str]:
        while True:
            try:
                return item.fn(item.store), None, ""
            except SessionLockedError as error:
                # The attempt waited the store's busy timeout: the lock is still held.
                if item.deadline is not None and time.monotonic() >= item.deadline:
                    return None, error, ""
                if not item.waited:
                    item.waited = True
                    self._noticed.emit(item)
                time.sleep(self._retry_interval_s)
            except Exception as error:  # a bug or a user error: reported on the UI thread
                return None, error, traceback.format_exc()
