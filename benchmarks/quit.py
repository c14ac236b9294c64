"""Quit time: from File ▸ Quit (the main window closed) to the process's exit.

A fresh ``taillens gui`` process on the default session (Qt's offscreen platform unless
QT_QPA_PLATFORM says otherwise) waits until its start-up jobs are done and nothing
runs, then closes its window as File ▸ Quit does; the figure is the wall time from the
close to the process's end, median of N runs (default 5). Target: under 0.5 s with no
job running.

    .venv/bin/python benchmarks/quit.py [--runs 5]
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


def child() -> int:
    """The GUI, closing its window once idle (run in the measured process)."""
    from PySide6.QtCore import QTimer

    from app import gui
    from app.cli import main
    from app.controller import AppController
    from widgets.main_window import MainWindow

    app = gui.get_application()

    def quit_when_idle() -> None:
        window = next((w for w in app.topLevelWidgets() if isinstance(w, MainWindow)), None)
        controller = window.findChild(AppController) if window is not None else None
        if controller is None or controller.runner.active or controller.browser.start_up_pending:
            QTimer.singleShot(100, quit_when_idle)
            return
        print(f"quit_wall_time={time.time():.6f}", flush=True)
        window.close()

    QTimer.singleShot(1500, quit_when_idle)
    return main(["gui"])  # as `taillens gui` runs


def time_quit(env: dict[str, str]) -> float:
    result = subprocess.run(
        [sys.executable, __file__, "--child"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    ended = time.time()
    for line in result.stdout.splitlines():
        if line.startswith("quit_wall_time="):
            return ended - float(line.split("=", 1)[1])
    raise RuntimeError(f"no quit report in output:\n{result.stdout}\n{result.stderr}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sys.exit(child())
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, TAILLENS_HOME=home, PYTHONPATH=str(ROOT))
        env.setdefault("QT_QPA_PLATFORM", "offscreen")
        time_quit(env)  # the first run creates the default session: not counted
        times = [time_quit(env) for _ in range(args.runs)]
    print(
        f"quit (window closed to process exit), median of {args.runs}: "
        f"{statistics.median(times):.3f} s (min {min(times):.3f}, max {max(times):.3f})"
    )


if __name__ == "__main__":
    main()
