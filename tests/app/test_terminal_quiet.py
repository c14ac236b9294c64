"""``--quiet`` silences the model stack's own bars and logging, and only while it runs."""

from __future__ import annotations

import os

import pytest

from app.terminal import run_in_terminal
from core.jobs import Job, JobContext

LEVELS: list[int] = []  # transformers' verbosity seen inside each job


def _load_like_transformers(ctx: JobContext) -> int:
    import transformers.utils.logging as transformers_logging

    ctx.progress(0, 1, "loading")
    for _ in transformers_logging.tqdm(range(3), desc="Loading weights"):
        pass
    LEVELS.append(transformers_logging.get_verbosity())
    ctx.progress(1, 1, "loaded")
    return 3


def test_quiet_silences_loading_bars_and_logging(capfd: pytest.CaptureFixture[str]) -> None:
    # Imported here, not at collection, where every worker would hold it.
    transformers_logging = pytest.importorskip("transformers.utils.logging")
    transformers_logging.enable_progress_bar()
    transformers_logging.set_verbosity_warning()
    assert run_in_terminal(Job("Load", _load_like_transformers), quiet=False) == 3
    loud = capfd.readouterr().err
    assert "Loading weights" in loud and "Load:" in loud

    before = {name: os.environ.get(name) for name in ("TQDM_DISABLE", "TRANSFORMERS_VERBOSITY")}
    assert run_in_terminal(Job("Load", _load_like_transformers), quiet=True) == 3
    assert capfd.readouterr().err == ""
    assert LEVELS[-1] == transformers_logging.ERROR and LEVELS[0] != LEVELS[-1]
    # Restored afterwards: a later job in the same process is not silenced behind its back.
    assert transformers_logging.is_progress_bar_enabled()
    assert transformers_logging.get_verbosity() == transformers_logging.WARNING
    assert {name: os.environ.get(name) for name in before} == before


def test_a_bar_after_the_quiet_job_shows_where_tqdm_came_in_during_it() -> None:
    """tqdm reads TQDM_DISABLE once, when first imported: a quiet job that brought it in
    must not switch off every bar of the process after it (a fresh interpreter, where
    nothing imported tqdm before)."""
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "from app.terminal import quiet_libraries\n"
        "with quiet_libraries():\n"
        "    import tqdm\n"
        "for _ in tqdm.tqdm(range(3), desc='after the job'):\n"
        "    pass\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TQDM_")}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "after the job" in done.stderr
