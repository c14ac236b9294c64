"""Running a core job in the terminal: progress on stderr, Ctrl+C cancels cleanly."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext, suppress
from typing import Any, TypeVar

from core.errors import UserFacingError
from core.io.safe_names import for_terminal
from core.jobs import (
    CancelToken,
    Job,
    JobFailed,
    JobSucceeded,
    Progress,
    TimeLeft,
    format_time_left,
    run_job,
)

T = TypeVar("T")


class JobCancelledByUser(UserFacingError):
    """Ctrl+C (SIGINT) or SIGTERM stopped a job; it kept what it finished. The CLI exits
    with 128 + ``signum`` (130, 143), as shells do for a command a signal ended."""

    def __init__(self, message: str, signum: int = signal.SIGINT) -> None:
        super().__init__(message)
        self.signum = int(signum)


# The signals that cancel a terminal job: Ctrl+C, and a polite request to stop (kill,
# systemd, a container's shutdown). A second one gets the default behaviour.
_STOPPING = tuple(s for s in (signal.SIGINT, getattr(signal, "SIGTERM", None)) if s is not None)


_QUIET_ENV = {
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",  # huggingface_hub downloads
    "TRANSFORMERS_VERBOSITY": "error",  # transformers' logging, read when it is imported
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    "TQDM_DISABLE": "1",  # the bars of a process the job starts (tqdm >= 4.66)
}


@contextmanager
def quiet_libraries() -> Iterator[None]:
    """Silence the model stack's own progress bars and logging ("Loading weights",
    downloads) while a ``--quiet`` job runs: through the environment for libraries imported
    later, and through their switches for those already imported; restored afterwards."""
    # tqdm reads TQDM_* once, when it is imported, into its defaults: imported first under
    # TQDM_DISABLE, every later bar of the process stayed off. Imported before the switch,
    # its own defaults stay the user's; the libraries' switches below silence their bars.
    # (It comes with nltk, a base dependency; without it there is nothing to keep.)
    with suppress(ImportError):
        import tqdm  # noqa: F401

    saved = {name: os.environ.get(name) for name in _QUIET_ENV}
    os.environ.update(_QUIET_ENV)
    undo: list[Any] = []
    transformers_logging = sys.modules.get("transformers.utils.logging")
    if transformers_logging is not None:
        if transformers_logging.is_progress_bar_enabled():
            transformers_logging.disable_progress_bar()
            undo.append(transformers_logging.enable_progress_bar)
        level = transformers_logging.get_verbosity()
        transformers_logging.set_verbosity_error()
        undo.append(lambda: transformers_logging.set_verbosity(level))
    hub = sys.modules.get("huggingface_hub.utils")
    if hub is not None and not hub.are_progress_bars_disabled():
        hub.disable_progress_bars()
        undo.append(hub.enable_progress_bars)
    try:
        yield
    finally:
        for step in reversed(undo):
            step()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_in_terminal(job: Job[T], quiet: bool = False) -> T:
    """Run ``job`` in the foreground. A failure re-raises its error; Ctrl+C or SIGTERM
    cancels the job (it keeps what it finished) and raises :class:`JobCancelledByUser`."""
    token = CancelToken()
    started = time.monotonic()
    interactive = sys.stderr.isatty()

    time_left = TimeLeft()

    def report(progress: Progress) -> None:
        left = time_left.update(progress)
        if quiet:
            return
        fraction = progress.fraction
        done = f"{progress.done:,.0f}" + (f"/{progress.total:,.0f}" if progress.total else "")
        if progress.message and not progress.total:
            done = ""  # a bare count beside a note that names its own ("1 1 units")
        percent = f" {fraction:4.0%}" if fraction is not None else ""
        elapsed = time.monotonic() - started
        head = " ".join(x for x in (done + percent, progress.message) if x.strip())
        timing = f"{elapsed:.0f} s" + (
            f", {format_time_left(left)} left" if left is not None else ""
        )
        line = for_terminal(f"{job.title}: {head.strip()} ({timing})")
        if interactive:
            sys.stderr.write("\r\033[K" + line)
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    received: list[int] = []
    previous = {signum: signal.getsignal(signum) for signum in _STOPPING}

    def restore() -> None:
        for signum, handler in previous.items():
            signal.signal(signum, handler)

    def on_signal(signum: int, _frame: Any) -> None:
        received.append(signum)
        token.cancel()
        restore()  # a second Ctrl+C (or SIGTERM) gets the default behaviour

    for signum in _STOPPING:
        signal.signal(signum, on_signal)
    try:
        with quiet_libraries() if quiet else nullcontext():
            outcome = run_job(job, token, report)
    finally:
        restore()
        if interactive and not quiet:
            sys.stderr.write("\n")
    if isinstance(outcome, JobSucceeded):
        return outcome.result
    if isinstance(outcome, JobFailed):
        raise outcome.error
    raise JobCancelledByUser(
        f"{job.title}: cancelled; what finished before is kept",
        received[0] if received else signal.SIGINT,
    )
