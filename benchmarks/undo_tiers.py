"""Undo and redo of a tier change in the window, on a 12,915-unit session: how long the
UI thread is busy (target: at most 100 ms) and how long until the change has landed.

    QT_QPA_PLATFORM=offscreen PYTHONPATH=$PWD .venv/bin/python benchmarks/undo_tiers.py \\
        [--units 12915] [--category City] [--runs 5] [--work DIR]

The session is built as ``large_session.py`` builds it (the TailNLG benchmark imported
through core, its units copied up to --units), then a category's members are fetched
with the app's own command (``taillens fetch City --limit 2000``, from the bundled
data). The real window opens the session, the Browser shows the category and its head
fraction is changed (a tier edit on the session's undo stack); then Edit ▸ Undo and
Edit ▸ Redo are triggered --runs times each. Per action it prints: the time the trigger
call takes on the UI thread, the longest gap of a 5 ms heartbeat timer on the UI thread
from the trigger until the change has landed and the Browser shows it (the stall a user
feels: the trigger, the landed write's delivery and the Browser's reaction included),
and the time until then (the write itself runs on the session writer's thread). Then
``core.edits.undo_edit`` / ``redo_edit`` alone, on the same file, without a window.
Medians (and the worst) over the runs; the machine may be shared, so figures are noisy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

TARGET_MS = 100.0


def cli(*args: str | Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app", *map(str, args)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"taillens {' '.join(map(str, args))} failed:\n{done.stderr[-2000:]}")


def build_session(path: Path, units: int, category: str) -> None:
    from large_session import build  # the 12,915-unit session of the other benchmarks

    from tests.shared_data import TAILNLG, benchmark_input

    benchmark_input(*TAILNLG)  # exits saying how to get the data when it is missing
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    build(partial, units)
    cli("fetch", category, "--session", partial, "--limit", "2000", "--quiet")
    partial.rename(path)


def measure_window(session: Path, work: Path, category: str, runs: int) -> dict[str, list[float]]:
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    from app.gui import build_window

    def wait(condition, timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                raise SystemExit("the window did not settle")
            app.processEvents()
            time.sleep(0.001)

    window, controller = build_window(QSettings(str(work / "s.ini"), QSettings.Format.IniFormat))
    window.resize(1366, 768)
    window.show()
    if not controller.open_session(session):
        raise SystemExit(f"cannot open {session}")
    browser = controller.browser
    panel = browser.panel

    def settled() -> bool:
        return (
            not browser.start_up_pending
            and not controller.runner.active
            and not controller.reads.pending()
            and controller.writer.idle
            and not controller.undo.busy
        )

    wait(settled)
    panel.category_combo.setCurrentText(category)
    wait(settled)
    members = len(panel.model.columns)
    panel.split_combo.setCurrentIndex(panel.split_combo.findData("head_tail"))
    panel.fraction_spin.setValue(0.3)
    wait(
        lambda: settled() and window.action_undo.text().startswith(f"&Undo the tiers of {category}")
    )
    wait(lambda: not browser._save_timer.isActive() and settled())
    print(
        f"{category}: {members:,} members in the Browser; undo offers {window.action_undo.text()!r}"
    )

    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append((now - last[0]) * 1000)
        last[0] = now

    heartbeat = QTimer()
    heartbeat.setInterval(5)
    heartbeat.timeout.connect(tick)
    heartbeat.start()
    figures: dict[str, list[float]] = {k: [] for k in ("undo", "redo")}
    details: dict[str, list[tuple[float, float, float]]] = {k: [] for k in ("undo", "redo")}
    for _ in range(runs):
        for name, action in (("undo", window.action_undo), ("redo", window.action_redo)):
            want = "pareto" if name == "undo" else "head_tail"
            wait(settled)
            gaps.clear()
            last[0] = started = time.perf_counter()
            action.trigger()
            call_ms = (time.perf_counter() - started) * 1000
            wait(lambda w=want: settled() and panel.split_combo.currentData() == w)
            total_ms = (time.perf_counter() - started) * 1000
            tick()  # the gap up to now counts too
            stall = max([call_ms, *gaps])
            figures[name].append(stall)
            details[name].append((call_ms, stall, total_ms))
    heartbeat.stop()
    for name, rows in details.items():
        calls, stalls, totals = zip(*rows, strict=True)
        print(
            f"  {name}: trigger call {statistics.median(calls):.1f} ms; longest UI-thread stall "
            f"{statistics.median(stalls):.1f} ms (worst {max(stalls):.1f}); landed and shown "
            f"after {statistics.median(totals):.0f} ms (median of {len(rows)})"
        )
    controller.shutdown()
    window.close()
    return figures


def measure_core(session: Path, runs: int) -> None:
    from core.edits import history, redo_edit, undo_edit
    from core.store import SessionStore

    with SessionStore.open(session) as store:
        entry = [e for e in history(store, kinds=["tiers"]) if e.stands][-1]
        times: dict[str, list[float]] = {"undo_edit": [], "redo_edit": []}
        for _ in range(runs):
            for name, fn in (("undo_edit", undo_edit), ("redo_edit", redo_edit)):
                started = time.perf_counter()
                fn(store, entry.id)
                times[name].append((time.perf_counter() - started) * 1000)
    members = len(entry.after["tiers"])
    for name, values in times.items():
        print(
            f"  core {name} ({members:,} member rows, on the writer's thread in the window): "
            f"{statistics.median(values):.0f} ms median of {len(values)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=12915)
    parser.add_argument("--category", default="City")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work", type=Path, help="keep the session here (built once)")
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    with tempfile.TemporaryDirectory(prefix="undo-tiers-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        session = work / f"undo-{args.units}.taillens"
        if not session.exists():
            build_session(session, args.units, args.category)
        import sqlite3

        with sqlite3.connect(session) as conn:
            units = conn.execute("SELECT count(*) FROM data_units").fetchone()[0]
        print(f"session: {units:,} units ({session.name})")
        figures = measure_window(session, work, args.category, args.runs)
        measure_core(session, args.runs)
        worst = max(statistics.median(v) for v in figures.values())
        verdict = "within" if worst <= TARGET_MS else "over"
        print(f"UI-thread stall per undo/redo: {worst:.1f} ms median, {verdict} {TARGET_MS:.0f} ms")


if __name__ == "__main__":
    main()
