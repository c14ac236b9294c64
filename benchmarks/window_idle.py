"""How soon the window is idle after launch on a saved session, and its memory with the
Report and Annotate panels open (targets: idle within 3 s; at most 600 MB).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/window_idle.py [--work DIR] [--runs 3]

The session is TailNLG as published, built once through the app's own commands as
``benchmarks/ui_stall.py`` builds it (import, template verbalise, BLEU and chrF++,
an annotator) and kept in ``--work``. Each run is a fresh ``taillens gui SESSION
--report-idle`` process on Qt's offscreen platform with throw-away settings (the
default layout), timed from just before it is spawned to the first moment from which
no job, view read or write ran for a second (``app.gui``: ``IDLE_HOLD_S``); the window
prints its resident memory then and its peak. Two cases:

* **saved session**: the window as it opens (the Explore workspace: the Browser in view,
  so the demo data loads);
* **Report and Annotate open**: ``--show annotate --show report`` (the Report, in
  front, builds at once on a session with scores; Annotate reads its annotators).

Medians of ``--runs``; the load average is printed beside them.
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
sys.path.insert(0, str(ROOT / "benchmarks"))

from ui_stall import build_session  # noqa: E402

CASES = {
    "saved session": (),
    # Annotate raised first, then the Report in front of it (the two share a tab group
    # in the default layout): the report is built, Annotate has read its annotators.
    "Report and Annotate open": ("--show", "annotate", "--show", "report"),
}


def run_once(session: Path, extra: tuple[str, ...]) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    started = time.time()
    done = subprocess.run(
        [sys.executable, "-m", "app", "gui", str(session), "--report-idle", *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise SystemExit(f"the window failed:\n{done.stderr[-2000:]}")
    values = dict(
        line.split("=", 1) for line in done.stdout.splitlines() if "=" in line and line[0] != " "
    )
    return {
        "first_paint_s": float(values["first_paint_wall_time"]) - started,
        "idle_s": float(values["idle_wall_time"]) - started,
        "rss_mb": float(values["rss_mb"]),
        "peak_rss_mb": float(values["peak_rss_mb"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, help="where the session is kept (default: a temp)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="taillens-idle-"))
    work.mkdir(parents=True, exist_ok=True)
    session = work / "tailnlg.taillens"
    if not session.exists():
        print(f"building {session} (TailNLG through the app's commands)…", flush=True)
        build_session(session)
    for name, extra in CASES.items():
        runs = [run_once(session, extra) for _ in range(args.runs)]
        load = os.getloadavg()[0]

        def median(key: str, runs: list[dict[str, float]] = runs) -> float:
            return statistics.median(r[key] for r in runs)

        print(
            f"{name:26s} first paint {median('first_paint_s'):5.2f} s   "
            f"idle {median('idle_s'):5.2f} s (runs: "
            + ", ".join(f"{r['idle_s']:.2f}" for r in runs)
            + f")   RSS at idle {median('rss_mb'):4.0f} MB, peak {median('peak_rss_mb'):4.0f} MB"
            f"   (load {load:.2f})",
            flush=True,
        )


if __name__ == "__main__":
    main()
