"""The type checker runs over core and app and passes (settings in pyproject's
[tool.mypy]). Skipped, with the reason, where mypy is not installed (the dev extra has it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# mypy's cache, kept between runs and shared by checkouts, as the bundle's build folder is
# (tests/test_bundle.py): mypy checks each cached module against its source's hash, so a
# fresh clone re-checks only what changed (about 3 s of CPU instead of about 50).
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "taillens-mypy"
pytestmark = pytest.mark.slow


def test_mypy_passes_over_core_and_app() -> None:
    pytest.importorskip("mypy", reason="mypy is in the dev extra: pip install -e .[dev]")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(CACHE)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "Success: no issues found" in result.stdout
