"""The core job API: progress, cancel, typed outcomes, without Qt."""

from __future__ import annotations

import threading

import pytest

from core.jobs import (
    CancelToken,
    Job,
    JobContext,
    JobFailed,
    JobSucceeded,
    JobWasCancelled,
    Progress,
    run_job,
)


def count_to(n: int):
    def run(ctx: JobContext) -> int:
        total = 0
        for i in range(n):
            ctx.check_cancelled()
            total += i
            ctx.progress(i + 1, n, f"item {i + 1}")
        return total

    return run


def test_success_carries_result_and_final_progress() -> None:
    reports: list[Progress] = []
    outcome = run_job(Job("count", count_to(100)), on_progress=reports.append)
    assert isinstance(outcome, JobSucceeded)
    assert outcome.result == sum(range(100))
    # Throttled, but the last report (done == total) always gets through.
    assert reports[-1] == Progress(100, 100, "item 100")
    assert reports[-1].fraction == 1.0
    assert len(reports) < 100


def test_failure_is_an_outcome_with_traceback() -> None:
    def boom(ctx: JobContext) -> None:
        raise ValueError("bad triple in unit 7")

    outcome = run_job(Job("boom", boom))
    assert isinstance(outcome, JobFailed)
    assert outcome.message == "bad triple in unit 7"
    assert "ValueError" in outcome.traceback
    assert "boom" in outcome.traceback


def test_failure_without_message_uses_type_name() -> None:
    def boom(ctx: JobContext) -> None:
        raise MemoryError()

    outcome = run_job(Job("oom", boom))
    assert isinstance(outcome, JobFailed)
    assert outcome.message == "MemoryError"


def test_cancel_stops_at_next_check_and_keeps_partial() -> None:
    token = CancelToken()
    kept: list[int] = []
    job: Job[list[int]] = Job("pages", lambda ctx: [])

    def fetch_pages(ctx: JobContext) -> list[int]:
        for page in range(1000):
            ctx.check_cancelled()
            kept.append(page)
            job.partial = list(kept)
            if page == 4:
                token.cancel()
        return kept

    job.run = fetch_pages
    outcome = run_job(job, token)
    assert isinstance(outcome, JobWasCancelled)
    assert outcome.partial == [0, 1, 2, 3, 4]


def test_cancel_from_another_thread() -> None:
    token = CancelToken()
    started = threading.Event()

    def spin(ctx: JobContext) -> None:
        started.set()
        while True:
            ctx.check_cancelled()

    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(run_job(Job("spin", spin), token)))
    thread.start()
    assert started.wait(5)
    token.cancel()
    thread.join(5)
    assert not thread.is_alive()
    assert isinstance(result[0], JobWasCancelled)


def test_progress_without_total_has_no_fraction() -> None:
    assert Progress(3).fraction is None
    assert Progress(5, 4).fraction == 1.0


def test_a_refused_write_says_what_the_job_kept() -> None:
    """An error that can say what was kept (``with_kept``, e.g. a session write the disk
    refused) gets the job's own words; any other error is handed back as it was."""
    from pathlib import Path

    from core.store import SessionStorageError

    def full(ctx: JobContext) -> None:
        raise SessionStorageError(Path("/d/s.taillens"), "the disk is full")

    outcome = run_job(Job("Verbalise", full, kept=lambda: "Run 3 keeps 12 texts."))
    assert isinstance(outcome, JobFailed)
    assert isinstance(outcome.error, SessionStorageError)
    assert "the disk is full (in /d" in outcome.message and "Run 3 keeps 12 texts." in (
        outcome.message
    )
    assert "The change being saved was not written" not in outcome.message

    def other(ctx: JobContext) -> None:
        raise ValueError("bad")

    outcome = run_job(Job("Other", other, kept=lambda: "never said"))
    assert isinstance(outcome, JobFailed) and outcome.message == "bad"

    def broken_words() -> str:
        raise RuntimeError("the words fail")

    outcome = run_job(Job("Verbalise", full, kept=broken_words))
    assert isinstance(outcome, JobFailed) and "The change being saved" in outcome.message


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_time_left_follows_the_pace_of_the_reports() -> None:
    from core.jobs import TimeLeft

    clock = _Clock()
    left = TimeLeft(clock)
    assert left.update(Progress(0, 100)) is None
    clock.now += 1
    assert left.update(Progress(10, 100)) is None  # too young to say
    clock.now += 3
    # 40 % in 4 s: 6 s for the other 60 %.
    assert left.update(Progress(40, 100)) == pytest.approx(6.0)
    # Unknown size: no estimate; a stage that counts from zero again starts over.
    assert left.update(Progress(5)) is None
    clock.now += 1
    assert left.update(Progress(1, 10)) is None
    clock.now += 2
    assert left.update(Progress(3, 10)) == pytest.approx(7.0)


def test_time_left_measures_the_pace_of_the_last_minute() -> None:
    from core.jobs import TimeLeft

    clock = _Clock()
    slow = TimeLeft(clock)
    slow.update(Progress(0, 1000))
    for step in range(1, 13):  # 40 per 10 s, then 10 per 10 s from the 7th minute on
        clock.now += 10
        slow.update(Progress(40 * min(step, 6) + 10 * max(0, step - 6), 1000))
    clock.now += 10
    estimate = slow.update(Progress(40 * 6 + 10 * 7, 1000))
    # Over the last minute: 60 done in 60 s, 690 to go: 690 s (the whole run's pace
    # would say 690 * 130 / 310 = 289 s).
    assert estimate == pytest.approx(690.0)


def test_time_left_is_said_as_a_person_says_it() -> None:
    from core.jobs import format_time_left

    assert format_time_left(1.2) == "about 5 s"
    assert format_time_left(42) == "about 40 s"
    assert format_time_left(58) == "about 1 min"
    assert format_time_left(181) == "about 3 min"
    assert format_time_left(3600) == "about 1 h"
    assert format_time_left(4800) == "about 1 h 20 min"
