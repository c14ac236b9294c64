"""Long work as jobs: a function that reports progress and can be cancelled.

A job is plain Python, no Qt: ``run(ctx)`` does the work, calls ``ctx.progress(...)``
as it goes and ``ctx.check_cancelled()`` at safe points. The same job runs

* in the GUI, off the UI thread, through ``app.jobrunner.QtJobRunner``;
* on the command line, in the foreground, through :func:`run_job`;
* in tests, directly.

The outcome is a value, never an exception that escapes: :class:`JobSucceeded`
carries the typed result, :class:`JobFailed` the error with its traceback,
:class:`JobWasCancelled` what the job kept before it stopped.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

from core.changes import Topic

T = TypeVar("T")


class JobCancelled(Exception):
    """Raised inside a job by :meth:`JobContext.check_cancelled` once cancel was asked."""


class CancelToken:
    """Thread-safe flag a UI (or Ctrl+C) sets and a job polls."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


@dataclass(frozen=True)
class Progress:
    """One progress report. ``total`` is None while the amount of work is unknown."""

    done: float
    total: float | None = None
    message: str = ""

    @property
    def fraction(self) -> float | None:
        if not self.total:
            return None
        return max(0.0, min(1.0, self.done / self.total))


ProgressCallback = Callable[[Progress], None]

# A job that may end within this is not given a time left: the first seconds (a model
# loading, a first batch) say little about the rest, and a short job needs none.
TIME_LEFT_AFTER_S = 2.0
# The rate is measured over the reports of the last minute, so a job whose pace changes
# (another metric, a longer text) gets a new estimate within a minute.
TIME_LEFT_WINDOW_S = 60.0


class TimeLeft:
    """How long a job has left, from its progress reports (Qt-free; the status bar and
    the command line use it alike). :meth:`update` takes each report and returns the
    seconds left, or None while there is no honest estimate: the work's size unknown,
    the job younger than ``after_s``, nothing done yet. The pace is the fraction done
    over the reports of the last ``window_s`` seconds; a fraction that goes back (a
    job's next stage counting from zero) starts the measure again."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        *,
        after_s: float = TIME_LEFT_AFTER_S,
        window_s: float = TIME_LEFT_WINDOW_S,
    ) -> None:
        self._clock = clock
        self._after_s = after_s
        self._window_s = window_s
        self._started = clock()
        self._samples: list[tuple[float, float]] = []  # (time, fraction), oldest first

    def update(self, progress: Progress) -> float | None:
        fraction, now = progress.fraction, self._clock()
        if fraction is None:
            self._samples.clear()
            return None
        if self._samples and fraction < self._samples[-1][1]:
            self._samples.clear()
        self._samples.append((now, fraction))
        while len(self._samples) > 2 and now - self._samples[1][0] >= self._window_s:
            self._samples.pop(0)
        if now - self._started < self._after_s or len(self._samples) < 2:
            return None
        (t0, f0), (t1, f1) = self._samples[0], self._samples[-1]
        if f1 <= f0 or t1 <= t0:
            return None
        return (1.0 - f1) * (t1 - t0) / (f1 - f0)


def format_time_left(seconds: float) -> str:
    """``seconds`` as a person says a wait: "about 40 s", "about 3 min", "about 1 h 20 min"."""
    rounded = max(5, round(seconds / 5) * 5)
    if rounded < 60:
        return f"about {rounded} s"
    minutes = max(1, round(seconds / 60))
    if minutes < 60:
        return f"about {minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"about {hours} h {minutes} min" if minutes else f"about {hours} h"


class JobContext:
    """What a running job sees: where to report progress, and whether to stop."""

    def __init__(
        self,
        token: CancelToken | None = None,
        on_progress: ProgressCallback | None = None,
        min_interval_s: float = 0.05,
    ) -> None:
        self.token = token or CancelToken()
        self._on_progress = on_progress
        # Reports are throttled so a tight loop cannot flood the UI's event queue.
        self._min_interval_s = min_interval_s
        self._last_report = 0.0

    @property
    def cancelled(self) -> bool:
        return self.token.cancelled

    def check_cancelled(self) -> None:
        if self.token.cancelled:
            raise JobCancelled()

    def progress(self, done: float, total: float | None = None, message: str = "") -> None:
        if self._on_progress is None:
            return
        now = time.monotonic()
        finished = total is not None and done >= total
        if not finished and now - self._last_report < self._min_interval_s:
            return
        self._last_report = now
        self._on_progress(Progress(done, total, message))


@dataclass(frozen=True)
class JobSucceeded(Generic[T]):
    result: T
    elapsed_s: float


@dataclass(frozen=True)
class JobFailed:
    error: BaseException
    traceback: str
    elapsed_s: float

    @property
    def message(self) -> str:
        text = str(self.error).strip()
        return text or type(self.error).__name__


@dataclass(frozen=True)
class JobWasCancelled:
    elapsed_s: float
    partial: Any = None


JobOutcome = JobSucceeded[T] | JobFailed | JobWasCancelled


@dataclass
class Job(Generic[T]):
    """A named piece of long work. ``run`` receives a :class:`JobContext`.

    ``partial`` may be set by ``run`` (``job.partial = ...``) to hand back what it
    kept when cancelled, e.g. the pages of a fetch that already arrived.
    ``uses_session`` says whether the job reads or writes the open session: those jobs
    are stopped before the application switches to another session; others run on.
    ``quiet`` marks a panel's own housekeeping (reading the session for a view): it is
    not shown in the status bar nor recorded in the job history; a failure is still
    reported.
    ``writes`` declares the parts of the session the job may write
    (:class:`core.changes.Topic`); when it ends (done, cancelled or failed: what it
    committed before stopping is kept) the application tells the panels that show them.
    A job that writes nothing (reads, exports) leaves it empty.
    ``disposable`` marks a job whose result is only shown, never kept (the demo
    snapshot loaded into memory, a tokenizer for a preview): quitting does not wait for
    it (one that cannot be cancelled, such as a snapshot load, held the quit for 10 s).
    """

    title: str
    run: Callable[[JobContext], T]
    kind: str = "job"
    params: dict[str, Any] = field(default_factory=dict)
    partial: Any = None
    uses_session: bool = True
    quiet: bool = False
    writes: frozenset[Topic] = frozenset()
    disposable: bool = False
    # What the job has saved so far, in words ("run 3 keeps 120 texts; the same command
    # resumes it"), said when a write is refused (the disk is full): see run_job.
    kept: Callable[[], str] | None = None


def _with_kept(job: Job[Any], error: Exception) -> Exception:
    """``error`` saying what ``job`` kept, where the error can say it (an error with a
    ``with_kept(words)`` method, such as a session write the disk refused)."""
    with_kept = getattr(error, "with_kept", None)
    if job.kept is None or not callable(with_kept):
        return error
    try:
        kept = job.kept()
    except Exception:  # the words are a courtesy: never hide the failure behind them
        return error
    if not kept:
        return error
    said = with_kept(kept)
    said.__cause__ = error
    return cast(Exception, said)


def run_job(
    job: Job[T],
    token: CancelToken | None = None,
    on_progress: ProgressCallback | None = None,
) -> JobOutcome[T]:
    """Run ``job`` in the calling thread and return its outcome (never raises)."""
    ctx = JobContext(token, on_progress)
    started = time.perf_counter()
    try:
        result = job.run(ctx)
    except JobCancelled:
        return JobWasCancelled(time.perf_counter() - started, job.partial)
    except Exception as exc:  # the outcome carries every failure
        return JobFailed(
            _with_kept(job, exc), traceback.format_exc(), time.perf_counter() - started
        )
    if ctx.cancelled:
        # The job returned normally after cancel was asked: what it returned is partial.
        return JobWasCancelled(time.perf_counter() - started, result)
    return JobSucceeded(result, time.perf_counter() - started)
