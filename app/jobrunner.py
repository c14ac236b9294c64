"""Runs ``core`` jobs off the UI thread and reports back through Qt signals.

Each job runs in a worker thread via :func:`core.jobs.run_job`. Progress reports and
the outcome are emitted from the worker thread; Qt delivers them to the UI thread as
queued signals, so slots may touch widgets freely.

The workers are plain daemon Python threads, not a ``QThreadPool``: a QThreadPool's
C++ destructor waits for its threads while the deleting thread holds the GIL, which a
running Python job needs to finish, so closing a window with a job in flight could
deadlock the process. Daemon threads are never joined implicitly: the application
cancels and waits for its jobs explicitly (:meth:`QtJobRunner.wait_for`), then ends the
idle workers with :meth:`QtJobRunner.stop` (a closed window leaves no thread behind: a
process that opens and closes sessions, or the test suite, would otherwise keep every
worker it ever started).

Python's cyclic garbage collector runs in whichever thread happens to allocate when a
threshold is crossed. With jobs in worker threads that can be a worker, which then
destroys Qt widgets that became garbage on the UI thread: illegal in Qt, and it
deadlocked the test suite (a worker's collection waiting on a Qt lock held by the UI
thread, which waited for the GIL). So, as pyqtgraph does, once a runner exists automatic
collection is switched off and :class:`UiThreadGarbageCollector` runs it from a timer
on the UI thread instead.
"""

from __future__ import annotations

import gc
import itertools
import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal

from core.desktop.logs import get_logger
from core.jobs import (
    CancelToken,
    Job,
    JobFailed,
    JobOutcome,
    JobSucceeded,
    JobWasCancelled,
    Progress,
    run_job,
)

if TYPE_CHECKING:
    from core.store import SessionStore

log = get_logger("jobs")
_ids = itertools.count(1)
# Every pool of this process (a worker thread keeps its pool alive): see stop_all_workers.
_POOLS: weakref.WeakSet[_DaemonPool] = weakref.WeakSet()


def stop_all_workers(timeout_s: float) -> bool:
    """End the worker threads of every runner in this process, waiting up to
    ``timeout_s`` for running tasks: for a host that made runners without a window's
    shutdown (scripts, the test suite between tests). False when one still runs."""
    deadline = time.monotonic() + timeout_s
    return all(pool.stop(max(0.0, deadline - time.monotonic())) for pool in list(_POOLS))


class UiThreadGarbageCollector(QObject):
    """Python's cyclic garbage collection, on the UI thread only (see the module doc).

    Automatic collection is disabled; a timer checks the allocation counts against the
    interpreter's own thresholds and collects the generation a normal run would have.
    """

    def __init__(self, interval_ms: int = 500, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.thresholds = gc.get_threshold()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.check)
        self._timer.start(interval_ms)

    def check(self) -> None:
        counts = gc.get_count()
        generation = -1
        for level in range(3):
            if counts[level] > self.thresholds[level]:
                generation = level
            else:
                break
        if generation >= 0:
            gc.collect(generation)


_collector: UiThreadGarbageCollector | None = None


def collect_garbage_on_ui_thread() -> UiThreadGarbageCollector | None:
    """Install the UI-thread collector once per application (call from the UI thread)."""
    global _collector
    if QCoreApplication.instance() is None or threading.current_thread() is not (
        threading.main_thread()
    ):
        return None
    if _collector is None:
        _collector = UiThreadGarbageCollector(parent=QCoreApplication.instance())
    return _collector


def collect_garbage_anywhere_again() -> None:
    """Undo :func:`collect_garbage_on_ui_thread` once every runner's workers have ended
    (``stop_all_workers``): collect everything now, on this thread (the UI thread), stop
    the timer and switch automatic collection back on; the next runner installs the
    collector again. For a host that goes on running code without an event loop after its
    runners: the test suite between tests, where a command run in the process later (a
    report drawing dozens of figures, each a web of reference cycles) would otherwise
    collect nothing until its end, and grew the process by about 500 MB."""
    global _collector
    if _collector is None or threading.current_thread() is not threading.main_thread():
        return
    _collector._timer.stop()
    _collector.setParent(None)  # owned by this reference alone: deleted with it
    _collector = None
    gc.collect()
    gc.enable()


class JobHandle(QObject):
    """The UI side of one submitted job: signals for its life, and ``cancel()``."""

    progressed = Signal(object)  # Progress
    succeeded = Signal(object)  # JobSucceeded
    failed = Signal(object)  # JobFailed
    cancelled = Signal(object)  # JobWasCancelled
    finished = Signal(object)  # any JobOutcome, after the specific signal
    # Emitted by the worker thread. Because the handle lives in the UI thread, Qt
    # queues them, and the _deliver_* slots below run in the UI thread.
    _from_worker_progress = Signal(object)
    _from_worker_outcome = Signal(object)

    def __init__(self, job: Job[Any], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._from_worker_progress.connect(self._deliver_progress)
        self._from_worker_outcome.connect(self._deliver_outcome)
        self.id = next(_ids)
        self.job = job
        self.token = CancelToken()
        self.outcome: JobOutcome[Any] | None = None
        self.last_progress: Progress | None = None
        self.history_id: int | None = None  # row in the session's job_history, if recorded
        # the session open when it started (the app sets it)
        self.store_at_start: SessionStore | None = None
        # Set by the worker thread as soon as the job's code has returned.
        self.worker_done = threading.Event()

    @property
    def title(self) -> str:
        return self.job.title

    @property
    def done(self) -> bool:
        return self.outcome is not None

    def cancel(self) -> None:
        self.token.cancel()

    def _deliver_progress(self, progress: Progress) -> None:
        self.last_progress = progress
        self.progressed.emit(progress)

    def _deliver_outcome(self, outcome: JobOutcome[Any]) -> None:
        self.outcome = outcome
        if isinstance(outcome, JobSucceeded):
            log.info("job %r done in %.1f s", self.title, outcome.elapsed_s)
            self.succeeded.emit(outcome)
        elif isinstance(outcome, JobFailed):
            log.error("job %r failed: %s\n%s", self.title, outcome.message, outcome.traceback)
            self.failed.emit(outcome)
        elif isinstance(outcome, JobWasCancelled):
            log.info("job %r cancelled after %.1f s", self.title, outcome.elapsed_s)
            self.cancelled.emit(outcome)
        self.finished.emit(outcome)


def _run_in_worker(handle: JobHandle) -> None:
    try:
        outcome = run_job(handle.job, handle.token, handle._from_worker_progress.emit)
    finally:
        handle.worker_done.set()
    try:
        handle._from_worker_outcome.emit(outcome)
    except RuntimeError:  # the handle is gone: a disposable job outlived its window
        log.info("job %r ended after its window closed", handle.job.title)


def _STOP() -> None:
    """Put on a pool's queue once per worker by :meth:`_DaemonPool.stop`: it ends one."""


class _DaemonPool:
    """At most ``max_threads`` daemon threads taking tasks from a queue, started lazily."""

    def __init__(self, max_threads: int) -> None:
        self._max_threads = max(1, max_threads)
        self._tasks: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Condition()
        self._threads = 0
        self._idle = 0  # workers waiting for a task
        self._queued = 0  # tasks put on the queue and not yet taken by a worker
        self._unfinished = 0
        self._workers: list[threading.Thread] = []
        _POOLS.add(self)

    def start(self, task: Callable[[], None]) -> None:
        with self._lock:
            self._unfinished += 1
            self._queued += 1
            # A new thread when the waiting tasks outnumber the idle workers: an idle
            # worker that has not woken up yet is already promised to an earlier task.
            spawn = self._queued > self._idle and self._threads < self._max_threads
            if spawn:
                self._threads += 1
        self._tasks.put(task)
        if spawn:
            worker = threading.Thread(target=self._work, name="taillens-job", daemon=True)
            with self._lock:
                self._workers.append(worker)
            worker.start()

    def stop(self, timeout_s: float) -> bool:
        """End every worker once the tasks before it are done; False when one is still
        running after ``timeout_s`` (a task that ignores its cancel: it ends later). A
        task started later gets a new worker."""
        with self._lock:
            workers, self._workers = self._workers, []
            # Each stop marker counts as a queued task, so a task started after it is
            # not promised to a worker that will take the marker and end.
            self._queued += len(workers)
            for _ in workers:
                self._tasks.put(_STOP)
        deadline = time.monotonic() + timeout_s
        for worker in workers:
            worker.join(max(0.0, deadline - time.monotonic()))
        return not any(worker.is_alive() for worker in workers)

    def wait_for_done(self, timeout_s: float | None) -> bool:
        with self._lock:
            return self._lock.wait_for(lambda: self._unfinished == 0, timeout_s)

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            task = self._tasks.get()
            with self._lock:
                self._idle -= 1
                self._queued -= 1
                if task is _STOP:
                    self._threads -= 1
                    return
            try:
                task()
            except BaseException:  # run_job returns outcomes; never kill a worker
                log.exception("job worker: unexpected error")
            finally:
                with self._lock:
                    self._unfinished -= 1
                    self._lock.notify_all()


class QtJobRunner(QObject):
    """Submit jobs; track them through :class:`JobHandle` signals."""

    job_started = Signal(object)  # JobHandle
    job_finished = Signal(object)  # JobHandle

    def __init__(
        self, max_threads: int = 2, parent: QObject | None = None, *, read_threads: int = 2
    ) -> None:
        super().__init__(parent)
        collect_garbage_on_ui_thread()
        self._pool = _DaemonPool(max_threads)
        # Quiet jobs (a panel's view reads) have their own lane: they never queue behind
        # long jobs (an import, a verbalisation run) holding every worker of the pool.
        self._reads = _DaemonPool(read_threads)
        self.active: dict[int, JobHandle] = {}
        self._held: list[tuple[_DaemonPool, Callable[[], None]]] | None = None  # see hold()

    def submit(self, job: Job[Any]) -> JobHandle:
        handle = JobHandle(job, self)
        # Same thread as the handle: a direct call, right after the handle's own signals.
        handle.finished.connect(lambda _outcome, h=handle: self._finish(h))
        self.active[handle.id] = handle
        log.info("job %r started", job.title)
        self.job_started.emit(handle)
        pool = self._reads if job.quiet else self._pool
        if self._held is not None:
            self._held.append((pool, lambda: _run_in_worker(handle)))
        else:
            pool.start(lambda: _run_in_worker(handle))
        return handle

    def hold(self) -> None:
        """Queue submitted jobs without starting them until :meth:`release` (the window
        holds its start-up jobs until its first paint: a worker thread loading the demo
        data or a large session's scores takes the GIL from the UI thread's imports and
        layout, and the first paint came a second later)."""
        if self._held is None:
            self._held = []

    @property
    def held(self) -> int:
        """How many submitted jobs wait for :meth:`release`."""
        return len(self._held or ())

    def release(self) -> None:
        """Start the jobs held since :meth:`hold`, in the order submitted; submit starts
        jobs at once again."""
        held, self._held = self._held or [], None
        for pool, task in held:
            pool.start(task)

    def cancel(self, job_id: int) -> None:
        handle = self.active.get(job_id)
        if handle is not None:
            handle.cancel()

    def cancel_all(self) -> None:
        for handle in list(self.active.values()):
            handle.cancel()

    def wait_for(self, handles: Iterable[JobHandle], timeout_s: float) -> bool:
        """Block until these jobs' code has returned (their signals follow via the loop)."""
        self.release()  # a held job would never end
        deadline = time.monotonic() + timeout_s
        return all(h.worker_done.wait(max(0.0, deadline - time.monotonic())) for h in handles)

    def wait_for_done(self, timeout_ms: int = -1) -> bool:
        """Block until every worker thread has returned (used at shutdown)."""
        deadline = None if timeout_ms < 0 else time.monotonic() + timeout_ms / 1000
        return all(
            pool.wait_for_done(None if deadline is None else max(0.0, deadline - time.monotonic()))
            for pool in (self._pool, self._reads)
        )

    def stop(self, timeout_s: float = 10) -> bool:
        """Cancel every job, then end the worker threads (at shutdown). A job submitted
        later starts new workers. False when a job's code was still running at
        ``timeout_s``."""
        self.release()
        self.cancel_all()
        deadline = time.monotonic() + timeout_s
        return all(
            pool.stop(max(0.0, deadline - time.monotonic())) for pool in (self._pool, self._reads)
        )

    def _finish(self, handle: JobHandle) -> None:
        self.active.pop(handle.id, None)
        self.job_finished.emit(handle)
