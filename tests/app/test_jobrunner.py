"""The Qt job runner: off the UI thread, progress, cancel, errors, responsiveness."""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import QTimer

from app.jobrunner import QtJobRunner
from core.jobs import Job, JobContext, JobFailed, JobSucceeded, JobWasCancelled


def test_job_runs_off_ui_thread_and_reports_progress(qtbot) -> None:
    runner = QtJobRunner()
    seen_threads: list[object] = []

    def work(ctx: JobContext) -> str:
        seen_threads.append(threading.current_thread())
        for i in range(5):
            ctx.progress(i + 1, 5, f"step {i + 1}")
            time.sleep(0.06)  # longer than the throttle, so every step is reported
        return "done"

    handle = runner.submit(Job("five steps", work))
    progress: list[object] = []
    handle.progressed.connect(progress.append)
    with qtbot.waitSignal(handle.succeeded, timeout=5000) as blocker:
        pass
    outcome = blocker.args[0]
    assert isinstance(outcome, JobSucceeded)
    assert outcome.result == "done"
    assert seen_threads[0] is not threading.main_thread()
    assert [p.message for p in progress][-1] == "step 5"
    assert len(progress) >= 3
    assert not runner.active


def test_failure_is_delivered_as_outcome(qtbot) -> None:
    runner = QtJobRunner()

    def fail(ctx: JobContext) -> None:
        raise RuntimeError("endpoint returned 503 three times")

    handle = runner.submit(Job("fetch", fail))
    with qtbot.waitSignal(handle.failed, timeout=5000) as blocker:
        pass
    outcome = blocker.args[0]
    assert isinstance(outcome, JobFailed)
    assert "503" in outcome.message
    assert "RuntimeError" in outcome.traceback
    assert handle.outcome is outcome


def test_cancel_stops_a_running_job(qtbot) -> None:
    runner = QtJobRunner()
    started = threading.Event()

    def forever(ctx: JobContext) -> None:
        started.set()
        while True:
            ctx.check_cancelled()
            time.sleep(0.001)

    handle = runner.submit(Job("forever", forever))
    assert started.wait(5)
    with qtbot.waitSignal(handle.cancelled, timeout=5000) as blocker:
        runner.cancel(handle.id)
    assert isinstance(blocker.args[0], JobWasCancelled)
    assert runner.wait_for_done(2000)


def test_event_loop_keeps_running_during_cpu_bound_job(qtbot) -> None:
    """A job computes on a worker thread, and the UI thread's timers keep firing while it
    does (the stall in milliseconds is a figure of benchmarks/ui_stall.py, not a test: it
    depends on the machine's load)."""
    runner = QtJobRunner()
    ticks_while_running: list[int] = []
    job_threads: list[threading.Thread] = []
    running = threading.Event()

    def crunch(ctx: JobContext) -> int:
        # Pure-Python arithmetic: holds the GIL as hard as a job can, until the UI
        # thread has ticked enough times (so the test asserts no duration).
        job_threads.append(threading.current_thread())
        running.set()
        total = n = 0
        give_up = time.monotonic() + 60  # a UI thread that never ticks fails, not hangs
        while len(ticks_while_running) < 20 and time.monotonic() < give_up:
            for i in range(10_000):
                total += i * i % 7
            n += 1
            ctx.progress(n, None, "crunching")
            ctx.check_cancelled()
        return total

    def tick() -> None:
        if running.is_set():
            ticks_while_running.append(1)

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tick)
    timer.start()
    handle = runner.submit(Job("crunch", crunch))
    try:
        with qtbot.waitSignal(handle.succeeded, timeout=60_000):
            pass
    finally:
        timer.stop()
        runner.cancel(handle.id)
    assert job_threads and job_threads[0] is not threading.main_thread()
    assert len(ticks_while_running) >= 20


_DELETE_WHILE_RUNNING = r"""
import os, sys, threading, time
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication
import shiboken6
from app.jobrunner import QtJobRunner
from core.jobs import Job

app = QApplication([])
owner = QObject()
runner = QtJobRunner(parent=owner)
started = threading.Event()

def busy(ctx):
    started.set()
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:  # Python code: needs the GIL to finish
        sum(i * i for i in range(1000))
    return "done"

handle = runner.submit(Job("busy", busy))
assert started.wait(5)
shiboken6.delete(owner)  # destroys the runner (and its workers' owner) mid-job
print("deleted", flush=True)
"""


def test_destroying_the_runner_mid_job_does_not_deadlock(tmp_path) -> None:
    """A window closed with a job in flight must not hang the process (seen in CI)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    script = tmp_path / "delete_mid_job.py"
    script.write_text(_DELETE_WHILE_RUNNING)
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        env={**__import__("os").environ, "PYTHONPATH": str(root)},
    )
    assert result.returncode == 0, result.stderr
    assert "deleted" in result.stdout


def test_garbage_is_collected_on_the_ui_thread_only(qtbot) -> None:
    """A job allocating cyclic garbage must never trigger a collection in its thread:
    collecting there would destroy Qt widgets off the UI thread (a deadlock seen in CI)."""
    import gc

    from app.jobrunner import collect_garbage_on_ui_thread

    runner = QtJobRunner()
    assert collect_garbage_on_ui_thread() is not None
    assert not gc.isenabled()
    threads: set[str] = set()

    def record(phase: str, _info: dict) -> None:
        if phase == "start":
            threads.add(threading.current_thread().name)

    def churn(ctx: JobContext) -> int:
        made = 0
        for _ in range(200_000):  # far beyond every generation's threshold
            a: list = []
            a.append(a)  # a reference cycle: only the cyclic collector frees it
            made += 1
        return made

    gc.callbacks.append(record)
    try:
        handle = runner.submit(Job("churn", churn))
        with qtbot.waitSignal(handle.succeeded, timeout=20_000):
            pass
        qtbot.wait(700)  # at least one tick of the UI-thread collector
    finally:
        gc.callbacks.remove(record)
    assert threads, "nothing was collected at all"
    assert threads == {threading.main_thread().name}


def test_two_jobs_submitted_together_run_at_the_same_time(qtbot) -> None:
    """With two threads allowed, a second job must not wait behind the first, also when a
    worker is idle from earlier work (it is promised to the first job)."""
    runner = QtJobRunner(max_threads=2)
    warm = runner.submit(Job("warm-up", lambda ctx: None))
    with qtbot.waitSignal(warm.finished, timeout=5000):
        pass
    assert runner.wait_for([warm], timeout_s=5)
    both_running = threading.Barrier(2, timeout=5)

    def meet(ctx: JobContext) -> str:
        both_running.wait()  # raises BrokenBarrierError if the other job never starts
        return "met"

    first, second = runner.submit(Job("a", meet)), runner.submit(Job("b", meet))
    qtbot.waitUntil(lambda: first.done and second.done, timeout=10_000)
    assert isinstance(first.outcome, JobSucceeded), getattr(first.outcome, "message", "")
    assert isinstance(second.outcome, JobSucceeded), getattr(second.outcome, "message", "")


def test_pool_starts_a_thread_when_tasks_outnumber_idle_workers() -> None:
    """Deterministic twin of the test above: workers are held at the queue, so the idle
    one cannot take the first task before the second arrives."""
    import queue as queue_module

    from app.jobrunner import _DaemonPool

    gate = threading.Event()

    class GatedQueue(queue_module.SimpleQueue):
        def get(self, *args, **kwargs):
            gate.wait(5)
            return super().get(*args, **kwargs)

    pool = _DaemonPool(max_threads=2)
    pool._tasks = GatedQueue()
    gate.set()
    pool.start(gate.clear)  # the worker closes the gate behind itself, then waits at it
    assert pool.wait_for_done(5)
    deadline = time.monotonic() + 5
    while pool._idle != 1 and time.monotonic() < deadline:  # the worker is back at the queue
        time.sleep(0.01)
    pool.start(lambda: None)
    pool.start(lambda: None)
    assert pool._threads == 2  # one idle worker for two tasks: a second thread
    gate.set()
    assert pool.wait_for_done(5)


def test_held_jobs_start_on_release_in_order(qtbot) -> None:
    """The window holds its start-up jobs until its first paint (app.gui.launch)."""
    runner = QtJobRunner(max_threads=1)
    runner.hold()
    started: list[str] = []
    first_ran = threading.Event()

    def note(name: str):
        def run(ctx: JobContext) -> str:
            started.append(name)
            first_ran.set()
            return name

        return run

    first, second = runner.submit(Job("a", note("a"))), runner.submit(Job("b", note("b")))
    assert set(runner.active) == {first.id, second.id}  # known (the job list shows them)
    assert not first_ran.wait(0.3)  # but not started
    runner.release()
    qtbot.waitUntil(lambda: first.done and second.done, timeout=10_000)
    assert started == ["a", "b"]
    third = runner.submit(Job("c", note("c")))  # after release: at once
    qtbot.waitUntil(lambda: third.done, timeout=10_000)


def test_waiting_for_a_held_job_starts_it(qtbot) -> None:
    """Code that waits for jobs (switching sessions) never waits on one that is held."""
    runner = QtJobRunner(max_threads=1)
    runner.hold()
    handle = runner.submit(Job("held", lambda ctx: "done"))
    assert runner.wait_for([handle], timeout_s=10)
    qtbot.waitUntil(lambda: handle.done, timeout=10_000)
    assert isinstance(handle.outcome, JobSucceeded)


def test_a_window_built_holding_jobs_starts_them_on_release(qtbot, tmp_path) -> None:
    """What `launch` does: the panels' start-up jobs (the session's reads) wait for release."""
    from PySide6.QtCore import QSettings

    from app.gui import build_window

    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat), hold_jobs=True
    )
    qtbot.addWidget(window)
    try:
        assert controller.new_session(tmp_path / "held.taillens")
        # The Scores panel asks for its table as the session opens.
        qtbot.waitUntil(
            lambda: "Load scores" in [h.title for h in controller.runner.active.values()],
            timeout=10_000,
        )
        assert controller.runner.held >= 1  # it waits, with the other panels' reads
        assert controller.scores.loading is not None and not controller.scores.loading.done
        controller.runner.release()
        assert controller.runner.held == 0
        qtbot.waitUntil(lambda: controller.scores.loading is None, timeout=30_000)
    finally:
        controller.shutdown()
