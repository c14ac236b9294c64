"""The Train dialog's state, without Qt."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import UserFacingError
from core.verbalise.training.settings import TrainingResult
from core.verbalise.training_state import CANCELLED, DONE, FAILED, RUNNING, TrainState


def test_start_waits_for_a_base_and_a_folder_and_for_a_running_training() -> None:
    state = TrainState()
    assert "model to start from" in state.problem
    state.base = "t5-small"
    assert "folder" in state.problem
    state.out = "~/models/t5-webnlg"
    assert state.problem == "" and state.out_path() == Path.home() / "models" / "t5-webnlg"
    state.started()
    assert state.phase == RUNNING and state.problem == "A training is running."
    state.progressed(3, 12, "epoch 1/3, step 3/12, loss 4.2, ETA 0:09")
    assert (state.done, state.total) == (3.0, 12.0) and "ETA" in state.message
    state.cancelling()
    state.finished(CANCELLED)
    assert state.problem == "" and "resumes it" in state.message
    state.finished(FAILED, error="boom")
    assert state.message == "Failed: boom"


def test_settings_come_from_the_form_and_are_checked() -> None:
    state = TrainState(base="b", out="o", epochs=2, max_steps=0, stop_metric="bleu")
    settings = state.settings()
    assert settings.epochs == 2 and settings.max_steps is None and settings.stop_metric == "bleu"
    assert settings.sampling == "wdv"  # METHODS §12: one example per entry per epoch
    state.sampling = "all"
    assert state.settings().sampling == "all"
    state.sampling = "every"
    with pytest.raises(UserFacingError, match="--sampling must be one of wdv, all"):
        state.settings()
    state.sampling = "wdv"
    state.max_steps = 50
    assert state.settings().max_steps == 50
    state.dev_share = 0.0
    with pytest.raises(UserFacingError, match="--dev-share"):
        state.settings()


def test_a_finished_training_says_what_it_kept() -> None:
    state = TrainState(base="b", out="o")
    result = TrainingResult(
        out=Path("o"), base="b", kind="seq2seq", train_texts=50, train_entries=20,
        dev_texts=10, dev_entries=4, steps=12, planned_steps=12, resumed_from=None,
        stopped=None, best={"step": 8, "value": 30.0, "metric": "chrf"},
        evaluations=[{"step": 8, "loss": 3.1, "bleu": 4.5, "chrf": 30.0}],
        tokens_per_s=1234.0,
    )  # fmt: skip
    state.finished(DONE, result)
    assert state.phase == DONE and state.trained == "o"
    assert "kept step 8: BLEU 4.50, chrF++ 30.00" in state.message
