"""The code is `ruff format` clean and passes `ruff check` (settings in
pyproject's [tool.ruff]). Skipped, with the reason, where ruff is not installed (the dev
extra pins it, so the formatter's output does not drift between versions)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff() -> list[str]:
    pytest.importorskip("ruff", reason="ruff is in the dev extra: pip install -e .[dev]")
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "ruff"]


def test_every_file_is_ruff_format_clean() -> None:
    result = subprocess.run(
        [*_ruff(), "format", "--check", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, (
        "run `ruff format .` on these files:\n" + result.stdout[-4000:] + result.stderr[-2000:]
    )


def test_ruff_check_passes() -> None:
    result = subprocess.run(
        [*_ruff(), "check", "--output-format", "concise", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
