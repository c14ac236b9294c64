"""Start-up figures: process start to first painted window, and `taillens --version`.

Each figure is the median of N runs of a fresh process (default 5), measured from
just before the process is spawned. The window runs on Qt's offscreen platform
unless QT_QPA_PLATFORM says otherwise. Targets on a 2-core machine: first paint
under 2 s, --version under 0.5 s. benchmarks/first_paint.py times the first paint
against a bare PySide6 window, pairs interleaved, and prints the ratio.

    .venv/bin/python benchmarks/startup.py [--runs 5] [--executable PATH]

``--executable``: time that ``taillens`` instead of this checkout's (e.g. the bundle
unpacked from the release tarball, or ``opt/taillens/taillens`` of the .deb extracted
with ``dpkg-deb -x``), run from a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


EXECUTABLE: list[str] = []  # set by --executable


def _command() -> list[str]:
    return EXECUTABLE or [sys.executable, "-m", "app"]


def time_first_paint(env: dict[str, str]) -> float:
    started = time.time()
    result = subprocess.run(
        [*_command(), "gui", "--report-first-paint"],
        cwd=env.get("TAILLENS_HOME", ROOT) if EXECUTABLE else ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    for line in result.stdout.splitlines():
        if line.startswith("first_paint_wall_time="):
            return float(line.split("=", 1)[1]) - started
    raise RuntimeError(f"no first-paint report in output:\n{result.stdout}\n{result.stderr}")


def time_version(env: dict[str, str]) -> float:
    script = shutil.which("taillens", path=str(Path(sys.executable).parent))
    command = EXECUTABLE or ([script] if script else [sys.executable, "-m", "app"])
    started = time.perf_counter()
    subprocess.run([*command, "--version"], env=env, capture_output=True, check=True, timeout=60)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--executable", type=Path, help="a taillens to time (a bundle's)")
    args = parser.parse_args()
    if args.executable is not None:
        EXECUTABLE.append(str(args.executable.resolve()))
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, TAILLENS_HOME=home)
        env.setdefault("QT_QPA_PLATFORM", "offscreen")
        time_first_paint(env)  # first run creates the default session: not counted
        paint = [time_first_paint(env) for _ in range(args.runs)]
        version = [time_version(env) for _ in range(args.runs)]
    print(
        f"runs: {args.runs}  platform: {env['QT_QPA_PLATFORM']}  cpus: {os.cpu_count()}  "
        f"taillens: {' '.join(_command())}"
    )
    for name, values, target in (
        ("process start -> first painted window", paint, 2.0),
        ("taillens --version", version, 0.5),
    ):
        median = statistics.median(values)
        verdict = "OK" if median < target else "OVER TARGET"
        spread = ", ".join(f"{v:.3f}" for v in values)
        print(f"{name}: median {median:.3f} s (target < {target} s, {verdict}); runs: {spread}")


if __name__ == "__main__":
    main()
