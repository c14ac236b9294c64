"""The training loop: AdamW (fused where torch has it), linear warm-up and decay,
gradient clipping at 1 (``transformers.Trainer``'s defaults), batches from
:func:`~core.verbalise.training.data.length_grouped_batches`, each padded to its own
longest. Every ``eval_every`` steps and at the end an evaluation on dev
(:mod:`.evaluation`); the best weights are what is saved.

Resume: the checkpoint (:mod:`.folder`) is written at each evaluation and when cancelled;
epoch order comes from the seed and the epoch alone, so a training resumed from it learns
what an uninterrupted one does.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from core import heavy
from core.jobs import JobCancelled, JobContext
from core.verbalise.training.data import (
    GOOD,
    Split,
    entry_count,
    epoch_examples,
    length_grouped_batches,
)
from core.verbalise.training.evaluation import evaluate, judge
from core.verbalise.training.folder import (
    BEST,
    CHECKPOINT,
    RECORD,
    OutFolder,
    check_resumable,
    identity_of,
    install_model,
    remove_leftovers,
    write_atomically,
    write_json,
)
from core.verbalise.training.model import TrainingModel
from core.verbalise.training.settings import TrainingError, TrainingResult, TrainingSettings

Encoded = list[tuple[list[int], list[int]]]


def fresh_state() -> dict[str, Any]:
    """The loop's state at step 0: what a checkpoint keeps besides the weights."""
    return {
        "step": 0,
        "epoch": 0,
        "losses": [],
        "evaluations": [],
        "best": None,
        "bad_evaluations": 0,
        "tokens": 0,
        "train_s": 0.0,
        "elapsed_s": 0.0,
        "pending_eval": False,
        "stopped": None,
    }


@dataclass
class _Pace:
    """This process's own work, for its ETA and its tokens per second (a resumed
    training's earlier work is in the state, not here)."""

    trained_s: float = 0.0
    tokens: int = 0
    steps: int = 0
    eval_s: float = 0.0
    evals: int = 0


class Trainer:
    """One training: the model, its examples as token ids, the loop's state."""

    def __init__(
        self,
        split: Split,
        base: Path,
        base_name: str,
        out: OutFolder,
        settings: TrainingSettings,
        ctx: JobContext | None,
        source: dict[str, Any],
    ) -> None:
        from core.local_models.loader import check_model_folder

        self.split, self.base, self.base_name = split, base, base_name
        self.folder, self.out = out, out.path
        self.settings, self.ctx, self.source = settings, ctx, source
        self.kind = check_model_folder(base)
        self.identity = identity_of(base, split, settings)
        check_resumable(out, self.identity)
        self.model = TrainingModel(base, self.kind, settings)
        self._epoch_data: tuple[int, Encoded, list[int]] | None = None
        self.total = 0
        self.resumed_from: int | None = None

    def load(self) -> None:
        self.model.load()

    # -- examples ------------------------------------------------------------------------

    def epoch_size(self) -> int:
        """Examples per epoch: every reference ("all") or one per entry ("wdv")."""
        train = self.split.train
        return len(train) if self.settings.sampling == "all" else entry_count(train)

    def epoch_data(self, epoch: int) -> tuple[Encoded, list[int]]:
        """The epoch's examples (:func:`epoch_examples`) as token ids, and their lengths;
        "all" encodes them once."""
        key = 0 if self.settings.sampling == "all" else epoch
        cached = self._epoch_data
        if cached is None or cached[0] != key:
            examples = epoch_examples(
                self.split.train, self.settings.sampling, self.settings.seed, epoch
            )
            encoded = [self.model.encode(e) for e in examples]
            cached = (key, encoded, [len(i) + len(lab) for i, lab in encoded])
            self._epoch_data = cached
        return cached[1], cached[2]

    # -- loop ----------------------------------------------------------------------------

    def _optimiser(self) -> None:
        settings, torch = self.settings, self.model.torch
        with heavy.lock():
            from transformers import get_linear_schedule_with_warmup

        params = self.model.trainable_parameters()
        try:
            optimizer = torch.optim.AdamW(
                params,
                lr=settings.learning_rate,
                weight_decay=settings.weight_decay,
                eps=1e-8,
                fused=True,
            )
        except (RuntimeError, TypeError, ValueError):  # no fused AdamW for this device/torch
            optimizer = torch.optim.AdamW(
                params, lr=settings.learning_rate, weight_decay=settings.weight_decay, eps=1e-8
            )
        self.params = params
        self.optimizer = optimizer
        self.scheduler = get_linear_schedule_with_warmup(
            optimizer, int(self.total * settings.warmup_share), self.total
        )

    def run(self) -> TrainingResult:
        settings = self.settings
        started = time.monotonic()
        per_epoch = math.ceil(self.epoch_size() / settings.batch_size)
        self.total = per_epoch * settings.epochs
        if settings.max_steps is not None:
            self.total = min(self.total, settings.max_steps)
        self._optimiser()
        state = self._resume()
        if self.folder.resume_step is None:
            self.out.mkdir(exist_ok=True)
            self.save_checkpoint(state)  # the folder is this training's from now on
        else:
            self.resumed_from = state["step"]
        pace = _Pace()
        try:
            if state.get("pending_eval"):
                self._evaluate(state, pace)
            while state["step"] < self.total and not state.get("stopped"):
                self._epoch(state, pace, *divmod(state["step"], per_epoch))
            if not state.get("stopped") and (
                not state["evaluations"] or state["evaluations"][-1]["step"] != state["step"]
            ):
                self._evaluate(state, pace, final=True)
        except JobCancelled:
            self.save_checkpoint(state)
            raise
        state["elapsed_s"] = state.get("elapsed_s", 0.0) + time.monotonic() - started
        return self.finish(state, pace)

    def _epoch(self, state: dict[str, Any], pace: _Pace, epoch: int, index: int) -> None:
        """Train on the epoch's batches from the ``index``-th on (past the first: resumed
        mid-epoch), evaluating every ``eval_every`` steps, until the planned steps are
        done or early stopping says so."""
        settings = self.settings
        encoded, lengths = self.epoch_data(epoch)
        batches = length_grouped_batches(
            lengths, settings.batch_size, settings.seed, epoch, settings.group_by_length
        )
        for batch_indices in batches[index:]:
            if state["step"] >= self.total:
                return
            if self.ctx is not None:
                self.ctx.check_cancelled()
            loss = self._step(state, pace, [encoded[i] for i in batch_indices])
            state["epoch"] = epoch
            self.report(state["step"], epoch, loss, pace)
            step = state["step"]
            if settings.eval_every and step % settings.eval_every == 0 and step < self.total:
                self._evaluate(state, pace)
                if state.get("stopped"):
                    return

    def _step(self, state: dict[str, Any], pace: _Pace, items: Encoded) -> float:
        """One optimiser step on ``items``; returns its loss."""
        torch = self.model.torch
        began = time.monotonic()
        batch, tokens = self.model.collate(items)
        loss = self.model.loss(batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, 1.0)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        value = float(loss.detach())
        spent = time.monotonic() - began
        pace.trained_s += spent
        pace.tokens += tokens
        pace.steps += 1
        state["step"] += 1
        state["losses"].append(round(value, 5))
        state["tokens"] += tokens
        state["train_s"] += spent
        return value

    def report(self, step: int, epoch: int, loss: float, pace: _Pace) -> None:
        if self.ctx is None:
            return
        left = self.total - step
        evals_left = left // self.settings.eval_every + 1 if self.settings.eval_every else 1
        per_eval = pace.eval_s / pace.evals if pace.evals else 0.0
        per_step = pace.trained_s / pace.steps if pace.steps else 0.0
        eta = left * per_step + evals_left * per_eval
        self.ctx.progress(
            step,
            self.total,
            f"epoch {epoch + 1}/{self.settings.epochs}, step {step}/{self.total}, "
            f"loss {loss:.3f}, ETA {_duration(eta)}",
        )

    # -- checkpoints ---------------------------------------------------------------------

    def _resume(self) -> dict[str, Any]:
        fresh = fresh_state()
        if self.folder.resume_step is None:
            return fresh
        remove_leftovers(self.out)
        torch = self.model.torch
        try:
            saved = torch.load(self.out / CHECKPOINT, map_location="cpu", weights_only=True)
        except Exception as error:  # noqa: BLE001 - any damage to the file is the same to the user
            raise TrainingError(
                f"{self.out / CHECKPOINT} cannot be read ({type(error).__name__}); "
                "choose a new folder"
            ) from None
        self.model.load_state(saved.pop("model"))
        self.optimizer.load_state_dict(saved.pop("optimizer"))
        self.scheduler.load_state_dict(saved.pop("scheduler"))
        torch.set_rng_state(saved.pop("torch_rng"))
        cuda_rng = saved.pop("cuda_rng", None)
        if cuda_rng is not None and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(cuda_rng)
        return {**fresh, **saved}

    def save_checkpoint(self, state: dict[str, Any]) -> None:
        torch = self.model.torch
        data = {
            **state,
            "model": self.model.trainable_state(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "torch_rng": torch.get_rng_state(),
        }
        if torch.cuda.is_available():
            data["cuda_rng"] = torch.cuda.get_rng_state_all()
        write_atomically(self.out / CHECKPOINT, lambda handle: torch.save(data, handle))
        write_json(self.out / RECORD, self.record(state, finished=False))

    # -- evaluation ----------------------------------------------------------------------

    def _evaluate(self, state: dict[str, Any], pace: _Pace, final: bool = False) -> None:
        """Evaluate (the model in eval mode, torch's RNG put back after, so the training
        draws what it would have without it), keep the best weights, decide early
        stopping, write the checkpoint."""
        began = time.monotonic()
        state["pending_eval"] = True
        torch, model = self.model.torch, self.model.model
        rng = torch.get_rng_state()
        model.eval()
        try:
            with torch.no_grad():
                found = evaluate(
                    self.model,
                    self.split.dev,
                    state["step"],
                    check=self._check_cancelled,
                    progress=lambda words: self._progress(state["step"], words),
                )
        finally:
            model.train()
            torch.set_rng_state(rng)
        if judge(state, found, self.settings, final=final):
            weights = self.model.trainable_state()
            write_atomically(self.out / BEST, lambda handle: torch.save(weights, handle))
        state["pending_eval"] = False
        self.save_checkpoint(state)
        pace.eval_s += time.monotonic() - began
        pace.evals += 1

    def _check_cancelled(self) -> None:
        if self.ctx is not None:
            self.ctx.check_cancelled()

    def _progress(self, step: int, words: str) -> None:
        if self.ctx is not None:
            self.ctx.progress(step, self.total, words)

    # -- the model folder ----------------------------------------------------------------

    def record(self, state: dict[str, Any], *, finished: bool) -> dict[str, Any]:
        """``taillens-training.json``: the method, base, data, settings and figures."""
        return {
            "finished": finished,
            "method": (
                "seq2seq fine-tuning, WDV's input (task prefix + <H> s <R> p <T> o)"
                if self.kind != "causal"
                else "causal LM, LoRA adapters on the chat prompt, merged at the end"
            ),
            "base": self.base_name,
            "base_path": str(self.base),
            "identity": self.identity,
            "data": {**self.source, **self._data_figures()},
            "settings": asdict(self.settings),
            "added_tokens": self.model.added_tokens,
            "device": self.model.device,
            "precision": "bf16 autocast" if self.model.autocast else "float32",
            "steps": state["step"],
            "planned_steps": self.total,
            "stopped": state.get("stopped"),
            "best": state.get("best"),
            "evaluations": state["evaluations"],
            "losses": state["losses"],
            "tokens": state["tokens"],
            "train_s": round(state["train_s"], 2),
            "tokens_per_s": round(state["tokens"] / state["train_s"], 1)
            if state["train_s"]
            else None,
            "torch": self.model.torch.__version__,
        }

    def _data_figures(self) -> dict[str, Any]:
        train, dev = self.split.train, self.split.dev
        return {
            "train_texts": len(train),
            "train_entries": len(Split.entries(train)),
            "train_good_texts": sum(e.comment == GOOD for e in train),
            "examples_per_epoch": self.epoch_size(),
            "dev_texts": len(dev),
            "dev_entries": len(Split.entries(dev)),
            "dev_entry_ids": sorted(Split.entries(dev)),
        }

    def finish(self, state: dict[str, Any], pace: _Pace) -> TrainingResult:
        """Save the best weights as the folder's model, list it, say what was done."""
        from core.local_models.loader import remember_model_folder

        torch = self.model.torch
        self._progress(state["step"], "saving the model")
        best_path = self.out / BEST
        if best_path.is_file():
            self.model.load_state(torch.load(best_path, map_location="cpu", weights_only=True))
        install_model(self.out, self.model.save, self.record(state, finished=True))
        listed = remember_model_folder(self.out)
        train, dev = self.split.train, self.split.dev
        return TrainingResult(
            out=self.out,
            base=self.base_name,
            kind=self.kind,
            train_texts=len(train),
            train_entries=len(Split.entries(train)),
            dev_texts=len(dev),
            dev_entries=len(Split.entries(dev)),
            steps=state["step"],
            planned_steps=self.total,
            resumed_from=self.resumed_from,
            stopped=state.get("stopped"),
            best=state.get("best"),
            evaluations=state["evaluations"],
            losses=state["losses"],
            elapsed_s=state["elapsed_s"],
            tokens=pace.tokens,
            # this process's rate; a run resumed at its end trained nothing: the record's
            tokens_per_s=pace.tokens / pace.trained_s
            if pace.trained_s
            else (state["tokens"] / state["train_s"] if state["train_s"] else 0.0),
            device=self.model.device,
            listed=listed,
        )


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"
