"""What the Train dialog decides, without Qt (``train-verbaliser`` in the GUI).

:class:`TrainState` holds the form (base model, folder, settings) and the training's
course (phase, progress, the last line, the evaluations so far); the dialog
(``widgets/train_dialog.py``) renders it and writes the user's edits into it; the
controller (``app/train.py``) starts the job from :meth:`TrainState.settings` and writes
the job's progress and outcome back through :meth:`progressed` and :meth:`finished`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.state import Field, State
from core.verbalise.training.settings import TrainingSettings

IDLE, RUNNING, CANCELLING, DONE, CANCELLED, FAILED = (
    "idle",
    "running",
    "cancelling",
    "done",
    "cancelled",
    "failed",
)
_DEFAULTS = TrainingSettings()
_NO_BASE = "Choose the model to start from."


class TrainState(State):
    base = Field("")  # a model folder or a cached hub id
    out = Field("")  # the folder to train into (new, empty, or one to resume)
    epochs = Field(_DEFAULTS.epochs)
    batch_size = Field(_DEFAULTS.batch_size)
    learning_rate = Field(_DEFAULTS.learning_rate)
    max_steps = Field(0)  # 0: the epochs decide
    eval_every = Field(_DEFAULTS.eval_every)
    patience = Field(_DEFAULTS.patience)
    stop_metric = Field(_DEFAULTS.stop_metric)
    sampling = Field(_DEFAULTS.sampling)  # wdv | all (METHODS §12)
    dev_share = Field(_DEFAULTS.dev_share)
    eval_limit = Field(_DEFAULTS.eval_limit)
    num_beams = Field(_DEFAULTS.num_beams)
    max_new_tokens = Field(_DEFAULTS.max_new_tokens)
    device = Field(_DEFAULTS.device)

    phase = Field(IDLE)
    done = Field(0.0)
    total = Field(0.0)
    message = Field("")  # the last progress line (step, loss, ETA) or the outcome
    trained = Field("")  # the folder of the last finished training
    # derived: why Start cannot be pressed now ("" when it can); derive() keeps it
    problem = Field(_NO_BASE)

    def derive(self, changed: set[str]) -> None:
        if not self.base.strip():
            problem = _NO_BASE
        elif not self.out.strip():
            problem = "Choose a folder for the trained model."
        elif self.phase in (RUNNING, CANCELLING):
            problem = "A training is running."
        else:
            problem = ""
        self.problem = problem

    @property
    def running(self) -> bool:
        return self.phase in (RUNNING, CANCELLING)

    def settings(self) -> TrainingSettings:
        """The job's settings; :meth:`TrainingSettings.check` says what is wrong."""
        settings = TrainingSettings(
            epochs=int(self.epochs),
            batch_size=int(self.batch_size),
            learning_rate=float(self.learning_rate),
            max_steps=int(self.max_steps) or None,
            eval_every=int(self.eval_every),
            patience=int(self.patience),
            stop_metric=str(self.stop_metric),
            sampling=str(self.sampling),
            dev_share=float(self.dev_share),
            eval_limit=int(self.eval_limit),
            num_beams=int(self.num_beams),
            max_new_tokens=int(self.max_new_tokens),
            device=str(self.device),
        )
        settings.check()
        return settings

    def out_path(self) -> Path:
        return Path(self.out.strip()).expanduser()

    def started(self, resuming_from: int | None = None) -> None:
        first = f"Resuming from step {resuming_from}…" if resuming_from else "Loading the model…"
        self.update(phase=RUNNING, done=0.0, total=0.0, message=first)

    def progressed(self, done: float, total: float | None, message: str) -> None:
        self.update(done=float(done), total=float(total or 0.0), message=message)

    def cancelling(self) -> None:
        if self.phase == RUNNING:
            self.update(phase=CANCELLING, message="Cancelling: writing the checkpoint…")

    def finished(self, outcome: str, result: Any = None, error: str = "") -> None:
        """``outcome`` DONE (``result`` a TrainingResult), CANCELLED or FAILED (``error``)."""
        if outcome == DONE and result is not None:
            best = result.best or {}
            evaluation = next(
                (e for e in result.evaluations if e["step"] == best.get("step")), None
            )
            figures = (
                f"; kept step {evaluation['step']}: BLEU {evaluation['bleu']:.2f}, chrF++ "
                f"{evaluation['chrf']:.2f}, dev loss {evaluation['loss']:.3f}"
                if evaluation
                else ""
            )
            message = (
                f"Trained {result.steps} steps on {result.train_texts:,} texts "
                f"({result.tokens_per_s:,.0f} tokens/s on {result.device}){figures}. "
                f"The model is in {result.out} and in Verbalise's model list."
            )
            self.update(phase=DONE, message=message, trained=str(result.out))
        elif outcome == CANCELLED:
            self.update(
                phase=CANCELLED,
                message=f"Cancelled. {self.out_path()} keeps a checkpoint: Start with the same "
                "settings resumes it.",
            )
        else:
            self.update(phase=FAILED, message=f"Failed: {error}")
