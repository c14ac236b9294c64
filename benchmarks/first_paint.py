"""First paint against a bare PySide6 window: the ratio, pairs interleaved, one run.

Each pair starts two fresh processes, one after the other, each timed from just before
it is spawned to the wall-clock time it prints when its window first paints:

* the reference: a bare PySide6 ``QMainWindow`` with a menu bar, one dock and a central
  widget (the program in ``BARE_WINDOW`` below), which exits once painted;
* TailLens: ``python -m app gui --report-first-paint`` on a session made beforehand.

Running the two in turn, pair after pair, gives both the same machine load. It prints
each side's median, the ratio of the medians (target: at most 4x), and, for TailLens,
the median time from launch to a window with its panels built and the session open.
The window runs on Qt's offscreen platform unless QT_QPA_PLATFORM says otherwise.

    .venv/bin/python benchmarks/first_paint.py [--pairs 7] [--checkout PATH]

``--checkout`` times another checkout's TailLens (e.g. main's, for a before/after).
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
TARGET_RATIO = 4.0

# The reference program: what every PySide6 main window pays (interpreter, Qt, a menu,
# a dock), timed the same way as TailLens.
BARE_WINDOW = """
import sys, time
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication, QDockWidget, QLabel, QMainWindow, QTextEdit

app = QApplication(sys.argv[:1])
window = QMainWindow()
menu = window.menuBar().addMenu("&File")
menu.addAction("&Quit", app.quit)
window.menuBar().addMenu("&View")
dock = QDockWidget("Dock", window)
dock.setObjectName("dock")
dock.setWidget(QLabel("a dock"))
window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
window.setCentralWidget(QTextEdit())
window.statusBar().showMessage("ready")


class Painted(QObject):
    fired = False

    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and not self.fired:
            self.fired = True
            print(f"first_paint_wall_time={time.time():.6f}", flush=True)
            QTimer.singleShot(0, app.quit)
        return False


painted = Painted()
window.installEventFilter(painted)
window.resize(1280, 800)
window.show()
app.exec()
"""


def _run(command: list[str], env: dict[str, str], cwd: Path) -> dict[str, float]:
    """Seconds from spawn to each ``name_wall_time=`` the process printed."""
    started = time.time()
    result = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=True
    )
    times = {}
    for line in result.stdout.splitlines():
        name, _, value = line.partition("_wall_time=")
        if value:
            times[name] = float(value) - started
    if "first_paint" not in times:
        raise RuntimeError(f"no first-paint report:\n{result.stdout}\n{result.stderr}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the TailLens to time")
    args = parser.parse_args()
    checkout = args.checkout.resolve()
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, TAILLENS_HOME=home, PYTHONPATH=str(checkout))
        env.setdefault("QT_QPA_PLATFORM", "offscreen")
        bare = [sys.executable, "-c", BARE_WINDOW]
        taillens = [sys.executable, "-m", "app", "gui", "--report-first-paint"]
        _run(taillens, env, checkout)  # creates the default session, warms the file cache
        _run(bare, env, checkout)
        bare_paint, paint, ready = [], [], []
        for _ in range(args.pairs):
            bare_paint.append(_run(bare, env, checkout)["first_paint"])
            times = _run(taillens, env, checkout)
            paint.append(times["first_paint"])
            if "ready" in times:  # (older code quit at the first paint)
                ready.append(times["ready"])
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"checkout: {checkout}  pairs: {args.pairs}  platform: {env['QT_QPA_PLATFORM']}  "
        f"cpus: {os.cpu_count()}  "
        f"load average (1 min) at the end: {load:.2f}"
    )
    for name, values in (
        ("bare PySide6 window -> first paint", bare_paint),
        ("TailLens -> first paint", paint),
        ("TailLens -> panels built, session open", ready),
    ):
        if not values:
            continue
        spread = ", ".join(f"{v:.3f}" for v in values)
        print(f"{name}: median {statistics.median(values):.3f} s; runs: {spread}")
    ratio = statistics.median(paint) / statistics.median(bare_paint)
    verdict = "OK" if ratio <= TARGET_RATIO else "OVER TARGET"
    print(f"first paint ratio TailLens / bare: {ratio:.2f}x (target <= {TARGET_RATIO}x, {verdict})")


if __name__ == "__main__":
    main()
