"""A training's settings (with the checks that refuse bad ones), its result and its error."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import UserFacingError

STOP_METRICS = ("chrf", "bleu", "loss")
SAMPLINGS = ("wdv", "all")
METRIC_NAMES = {"chrf": "chrF++", "bleu": "BLEU", "loss": "dev loss"}


class TrainingError(UserFacingError):
    """A training that cannot start or go on, with the reason."""


@dataclass(frozen=True)
class TrainingSettings:
    # METHODS §12 (WDV §4.1): up to 100 epochs, batch 4, learning rate 3e-5 with a linear
    # schedule and no warm-up, Adam without weight decay, patience 15.
    epochs: int = 100
    batch_size: int = 4
    learning_rate: float = 3e-5
    weight_decay: float = 0.0
    warmup_share: float = 0.0
    max_steps: int | None = None  # stop after this many optimiser steps
    eval_every: int = 200  # steps between evaluations on dev (0: at the end only)
    patience: int = 15  # evaluations without a better stop_metric before stopping (0: never)
    stop_metric: str = "chrf"  # chrf | bleu | loss
    dev_share: float = 0.1  # share of the entries held out for dev
    eval_limit: int = 200  # dev graphs verbalised at each evaluation (0: all)
    max_source_tokens: int = 256
    max_target_tokens: int = 128
    group_by_length: bool = True  # batches of similar length (False: plain shuffled batches)
    # wdv: per epoch one example per entry, a (good) reference at random, triples shuffled;
    # all: every reference each epoch, triples in stored order
    sampling: str = "wdv"
    num_beams: int = 3  # beams when verbalising dev graphs (seq2seq)
    max_new_tokens: int = 128
    task_prefix: str | None = None  # seq2seq; None: WDV's "translate from Graph to Text: "
    prompt_preset: str = "tailnlg"  # causal: the chat prompt's preset
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    seed: int = 0
    device: str = "auto"
    threads: int | None = None  # torch intra-op threads while training (None: as is)

    def check(self) -> None:
        positive = {
            "--epochs": self.epochs,
            "--batch-size": self.batch_size,
            "--max-source-tokens": self.max_source_tokens,
            "--max-target-tokens": self.max_target_tokens,
            "--num-beams": self.num_beams,
            "--max-new-tokens": self.max_new_tokens,
            "--lora-r": self.lora_r,
        }
        for name, value in positive.items():
            if value < 1:
                raise TrainingError(f"{name} must be at least 1")
        if not self.learning_rate > 0:
            raise TrainingError("--lr must be positive")
        if self.max_steps is not None and self.max_steps < 1:
            raise TrainingError("--max-steps must be at least 1")
        if self.eval_every < 0 or self.patience < 0 or self.eval_limit < 0:
            raise TrainingError("--eval-every, --patience and --eval-limit must be 0 or more")
        if not 0 < self.dev_share < 1:
            raise TrainingError("--dev-share must be between 0 and 1 (e.g. 0.1)")
        if self.stop_metric not in STOP_METRICS:
            raise TrainingError(f"--stop-on must be one of {', '.join(STOP_METRICS)}")
        if self.sampling not in SAMPLINGS:
            raise TrainingError(f"--sampling must be one of {', '.join(SAMPLINGS)}")
        if not 0 <= self.warmup_share < 1 or self.weight_decay < 0:
            raise TrainingError("warm-up share must be in [0, 1) and weight decay at least 0")
        if self.threads is not None and self.threads < 1:
            raise TrainingError("--threads must be at least 1")
        from core.verbalise.prompts import PromptError, check_preset

        try:
            check_preset(self.prompt_preset)
        except PromptError as error:
            raise TrainingError(str(error)) from None


@dataclass
class TrainingResult:
    out: Path
    base: str
    kind: str
    train_texts: int
    train_entries: int
    dev_texts: int
    dev_entries: int
    steps: int
    planned_steps: int
    resumed_from: int | None
    stopped: str | None
    best: dict[str, Any] | None
    evaluations: list[dict[str, Any]] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    elapsed_s: float = 0.0
    tokens: int = 0
    tokens_per_s: float = 0.0
    device: str = "cpu"
    listed: bool = False  # the folder was added to the model folders Verbalise lists
