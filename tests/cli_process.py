"""Run the ``taillens`` command line in a fresh process, as a user's shell would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def taillens(
    *args: str | Path, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python -m app ARGS`` with this checkout on the path; output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "app", *map(str, args)],
        cwd=cwd or ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def python_script(
    script: str, *args: str | Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python -c SCRIPT ARGS`` in a fresh process with this checkout on the path."""
    return subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
