"""Running a core job in the terminal: progress on stderr, Ctrl+C cancels cleanly."""

from __future__ import annotations

import signal
import sys
import time
from typing import Any, TypeVar

from core.errors import UserFacingError
from core.jobs import CancelToken, Job, JobFailed, JobSucceeded, Progress, run_job

T = TypeVar("T")


class JobCancelledByUser(UserFacingError):
    pass


def run_in_terminal(job: Job[T], quiet: bool = False) -> T:
    """Run ``job`` in the foreground. A failure re-raises its error; Ctrl+C cancels the
    job (it keeps what it finished) and raises :class:`JobCancelledByUser`."""
    token = CancelToken()
    started = time.monotonic()
    interactive = sys.stderr.isatty()

    def report(progress: Progress) -> None:
        if quiet:
            return
        fraction = progress.fraction
        done = f"{progress.done:,.0f}" + (f"/{progress.total:,.0f}" if progress.total else "")
        if progress.message and not progress.total:
            done = ""  # a bare count beside a note that names its own ("1 1 units")
        percent = f" {fraction:4.0%}" if fraction is not None else ""
        elapsed = time.monotonic() - started
        head = " ".join(x for x in (done + percent, progress.message) if x.strip())
        line = f"{job.title}: {head.strip()} ({elapsed:.0f} s)"
        if interactive:
            sys.stderr.write("\r\033[K" + line)
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def on_interrupt(_signum: int, _frame: Any) -> None:
        token.cancel()  # a second Ctrl+C gets Python's default behaviour
        signal.signal(signal.SIGINT, previous)

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        outcome = run_job(job, token, report)
    finally:
        signal.signal(signal.SIGINT, previous)
        if interactive and not quiet:
            sys.stderr.write("\n")
    if isinstance(outcome, JobSucceeded):
        return outcome.result
    if isinstance(outcome, JobFailed):
        raise outcome.error
    raise JobCancelledByUser(f"{job.title}: cancelled; what finished before is kept")
