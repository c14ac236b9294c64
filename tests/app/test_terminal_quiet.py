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
