"""The longest the window stops answering while another process holds the session's
write lock and a script clicks through every panel (target: at most 100 ms at load ≤ 2).

    QT_QPA_PLATFORM=offscreen PYTHONPATH=$PWD .venv/bin/python benchmarks/ui_stall.py \\
        [--work DIR] [--runs 3] [--top 5]

The session is TailNLG as published (``tailnlg/`` in the data folder), built through the
app's own commands: ``import``, ``verbalise --model template``, ``score --metrics
bleu,chrf++`` and ``annotators --add``. The real window is built and the session opened;
the clicks are run once on the free session (imports, layouts), then a second process
takes ``BEGIN IMMEDIATE`` and holds it while the same clicks run again: every panel
raised, categories picked in the Browser, a tier cut-off moved, a stored unit shown and
a triple overridden, the annotation queue built and an item rated, the Verbalise
settings saved and a unit previewed, Scores refreshed, the Report built, the dataset
statistics asked for. A 10 ms timer on the UI thread records the gap between its ticks
(the stall a user feels); a sampler thread records the UI thread's stack whenever a tick
is over 50 ms late, so each of the worst stalls is printed with what the UI thread was
doing (the innermost frames of TailLens's own code), or, where it was only waiting for
the GIL, what the job and writer threads were running. tests/app/test_ui_never_waits.py
asserts the rule behind this figure (nothing on the UI thread can wait for the lock)
without timing anything.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fixtures.write_lock_holder import HOLDER  # noqa: E402
from tests.shared_data import TAILNLG, benchmark_input  # noqa: E402

LATE_MS = 50  # a tick this late has its stack sampled


def cli(*args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"taillens {' '.join(args)} failed:\n{done.stderr[-2000:]}")


def build_session(path: Path) -> None:
    source = benchmark_input(*TAILNLG)
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    cli("import", str(source), "--session", str(partial), "--quiet")
    cli("verbalise", "--session", str(partial), "--model", "template", "--quiet")
    cli("score", "--session", str(partial), "--metrics", "bleu,chrf++", "--quiet")
    cli("annotators", "--session", str(partial), "--add", "ana")
    partial.rename(path)


class StallWatch:
    """A 10 ms heartbeat on the UI thread, and a thread that samples the UI thread's
    stack while a tick is late."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.gaps: list[tuple[float, int]] = []  # (when the stall ended, its ms)
        self.samples: list[tuple[float, str]] = []  # (when, stack)
        self._last = time.monotonic()
        self._main = threading.main_thread().ident
        self._running = False
        self._sampler = threading.Thread(target=self._sample, name="stall-sampler", daemon=True)

    def start(self) -> None:
        self.gaps.clear()
        self.samples.clear()
        self._last = time.monotonic()
        self._running = True
        self.timer.start()
        if not self._sampler.is_alive():
            self._sampler.start()

    def stop(self) -> None:
        self.timer.stop()
        self._running = False

    def _tick(self) -> None:
        now = time.monotonic()
        self.gaps.append((now, round((now - self._last) * 1000)))
        self._last = now

    def _sample(self) -> None:
        while True:
            time.sleep(0.005)
            if not self._running or (time.monotonic() - self._last) * 1000 < LATE_MS:
                continue
            frames = sys._current_frames()
            stack = _stack(frames.get(self._main))
            # A UI thread found in this script's own wait was not working: it waited for
            # the GIL, so what the job threads were running is the stall's cause.
            if "ui_stall.py" in stack.rpartition("[in ")[2]:
                workers = {t.ident: t.name for t in threading.enumerate()}
                jobs = [
                    _stack(frame)
                    for ident, frame in frames.items()
                    if workers.get(ident, "").startswith("taillens-")
                ]
                stack += " | threads: " + (" ; ".join(jobs) if jobs else "none running")
            self.samples.append((time.monotonic(), stack))

    def worst(self, count: int) -> list[tuple[int, str]]:
        """The ``count`` longest gaps, each with its most frequent sampled stack."""
        found = []
        for ended, ms in sorted(self.gaps, key=lambda g: -g[1])[:count]:
            began = ended - ms / 1000
            stacks = Counter(s for when, s in self.samples if began <= when <= ended)
            found.append((ms, stacks.most_common(1)[0][0] if stacks else "(not sampled)"))
        return found


def _stack(frame) -> str:
    """The innermost frames of TailLens's own code (app, widgets, core), innermost last,
    and the innermost frame of all (a library's, where the time went)."""
    ours, innermost = [], None
    while frame is not None:
        path = Path(frame.f_code.co_filename)
        if innermost is None:
            innermost = f"{path.name}:{frame.f_code.co_name}"
        if ROOT in path.parents and path.parts[len(ROOT.parts)] in ("app", "widgets", "core"):
            ours.append(f"{path.relative_to(ROOT)}:{frame.f_code.co_qualname}")
        frame = frame.f_back
    return " < ".join(ours[:4]) + f"  [in {innermost}]"


def walk(work: Path, session: Path, runs: int, top: int) -> None:
    from PySide6.QtCore import QSettings, Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    from app.gui import build_window
    from core.units.builder.saved import list_units

    def wait(condition, timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                raise SystemExit("the window did not settle")
            app.processEvents()
            time.sleep(0.002)

    def pause(ms: int) -> None:  # as clicks arrive: the event loop runs meanwhile
        end = time.monotonic() + ms / 1000
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.002)

    window, controller = build_window(QSettings(str(work / "s.ini"), QSettings.Format.IniFormat))
    window.resize(1366, 768)
    window.show()
    if not controller.open_session(session):
        raise SystemExit(f"cannot open {session}")
    browser, annotate, units = controller.browser, controller.annotate, controller.units

    def settled() -> bool:
        return (
            not browser.start_up_pending
            and not controller.runner.active
            and not controller.reads.pending()
            and controller.writer.idle
        )

    wait(settled)
    unit_ids = [u.id for u in list_units(controller.store)]
    bpanel, apanel = browser.panel, annotate.panel
    categories = [bpanel.category_combo.itemText(i) for i in range(bpanel.category_combo.count())]

    def rate() -> None:
        apanel.setFocus()
        for key in ("4", "y", Qt.Key.Key_Return):
            QTest.keyClick(apanel, key)

    def steps(round_: int) -> list:
        unit = unit_ids[round_ % len(unit_ids)]
        panels = [lambda key=key: window.raise_panel(key) for key in window.panel_actions]
        return [
            *panels,
            *(lambda c=c: bpanel.category_combo.setCurrentText(c) for c in categories[:3]),
            lambda: bpanel.split_combo.setCurrentIndex(1),
            lambda: bpanel.fraction_spin.setValue(0.3 + 0.05 * round_),
            lambda: units.show_unit(unit),
            lambda: units.override("en", 0, "subject", f"Words written under a lock {round_}"),
            lambda: annotate.choose_annotator(apanel.annotator_combo.findText("ana")),
            apanel.build_button.click,
            rate,
            controller.verbalise.save_settings,
            controller.verbalise.refresh_runs,
            lambda: controller.verbalise.select_unit(unit),
            lambda: controller.scores.refresh(),
            lambda: controller.report.build(),
            controller.show_dataset_statistics,
            *panels,
        ]

    def click_through(round_: int) -> None:
        for step in steps(round_):
            step()
            pause(40)

    click_through(0)  # warm up on the free session: imports, layouts, first reads
    wait(settled)
    watch = StallWatch()
    worst_per_run = []
    for run in range(1, runs + 1):
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(session)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert holder.stdout is not None and holder.stdin is not None
        if holder.stdout.readline().strip() != "holding":
            raise SystemExit("the lock holder did not start")
        watch.start()
        started = time.monotonic()
        click_through(run)
        pause(500)  # the reads and jobs the last clicks started
        watch.stop()
        elapsed = time.monotonic() - started
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(30)
        wait(settled, 300)  # the queued writes land once the lock is gone
        worst = watch.worst(top)
        worst_per_run.append(worst[0][0] if worst else 0)
        print(
            f"run {run}: longest stall {worst_per_run[-1]} ms over {elapsed:.1f} s "
            f"({len(watch.gaps)} ticks, {sum(1 for _, ms in watch.gaps if ms > 100)} over 100 ms)"
        )
        for ms, stack in worst:
            print(f"  {ms:5d} ms  {stack}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"longest stall, median of {runs} runs: {statistics.median(worst_per_run):.0f} ms "
        f"(target ≤ 100 ms at load ≤ 2; load now {load:.1f})"
    )
    controller.shutdown()
    window.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, help="keeps the session between runs")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--top", type=int, default=5, help="stalls printed per run")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="ui-stall-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TAILLENS_HOME", str(work / "home"))
    session = work / "tailnlg.taillens"
    if not session.exists():
        build_session(session)
    walk(work, session, args.runs, args.top)


if __name__ == "__main__":
    main()
