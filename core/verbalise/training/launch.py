"""The entry points of a training: :func:`training_job` (the CLI's and the GUI's job, its
bad input refused before any work), :func:`check_request` (the cheap checks alone) and
:func:`train` (one training, in the calling thread)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import heavy
from core.io.folder_lock import FolderLock
from core.jobs import Job, JobContext
from core.verbalise.training.data import Example, Split, load_examples, split_by_entry
from core.verbalise.training.folder import (
    CHECKPOINT,
    OutFolder,
    check_out,
    check_resumable,
    identity_of,
)
from core.verbalise.training.model import require_lora
from core.verbalise.training.settings import TrainingError, TrainingResult, TrainingSettings
from core.verbalise.training.trainer import Trainer

if TYPE_CHECKING:
    from core.store import SessionStore


def train(
    split: Split,
    base: str | Path,
    out: Path,
    settings: TrainingSettings,
    ctx: JobContext | None = None,
    source: dict[str, Any] | None = None,
) -> TrainingResult:
    """Train ``base`` on ``split`` into the folder ``out`` (a new one, or one holding an
    unfinished training of the same setup, which is resumed)."""
    from core.local_models.loader import resolve_model

    settings.check()
    check_out(Path(out))  # before the folder is made: a file there, no parent, a model
    # One training per folder: a second process (or a second job of the GUI) writing the
    # same checkpoint would corrupt both. The lock goes with the process, killed or not.
    with FolderLock(Path(out).expanduser(), "training"):
        folder = check_out(Path(out))  # again: another training may have written it
        path = resolve_model(base)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        trainer = Trainer(split, path, str(base), folder, settings, ctx, source or {})
        with heavy.lock():
            import torch

        threads = torch.get_num_threads()
        if settings.threads is not None:
            torch.set_num_threads(settings.threads)
        try:
            trainer.load()
            return trainer.run()
        finally:
            torch.set_num_threads(threads)


def check_request(out: Path, base: str, settings: TrainingSettings) -> OutFolder:
    """The cheap checks of a training (no session read, no weights loaded): the settings,
    the folder, the base model's folder and kind, ``peft`` for a causal one."""
    from core.heavy import require_model_stack
    from core.local_models.loader import CAUSAL, check_model_folder, resolve_model

    settings.check()
    folder = check_out(Path(out))
    if check_model_folder(resolve_model(base)) == CAUSAL:
        require_lora()
    require_model_stack("training a verbaliser", "torch", "transformers")
    return folder


def training_job(
    store: SessionStore | None,
    out: Path,
    *,
    base: str,
    settings: TrainingSettings | None = None,
    langs: Sequence[str] | None = None,
    quality: str | None = None,
    session_name: str = "",
    examples: Sequence[Example] | None = None,
) -> Job[TrainingResult]:
    """A job that fine-tunes ``base`` on the session's references (or ``examples``, read
    from it already: the GUI reads them off the UI thread) into ``out``. Bad input (a
    folder that holds something else, a base that is not a model, a causal model without
    peft, too few entries, a checkpoint of another setup) fails here, before any work."""
    from core.local_models.loader import resolve_model

    settings = settings or TrainingSettings()
    folder = check_request(Path(out), base, settings)
    if examples is None:
        if store is None:
            raise TrainingError("no session to read the references from")
        examples = load_examples(store, langs=langs, quality=quality)
    if not examples:
        raise TrainingError(
            "the session has no references with triples"
            + (f" in {', '.join(langs)}" if langs else "")
            + ": nothing to train on"
        )
    split = split_by_entry(examples, settings.dev_share, settings.seed)
    source = {"session": session_name, "langs": list(langs or ()), "quality": quality}
    check_resumable(folder, identity_of(resolve_model(base), split, settings))

    def run(ctx: JobContext) -> TrainingResult:
        return train(split, base, folder.path, settings, ctx, source)

    return Job(
        f"Train verbaliser from {Path(str(base)).name}",
        run,
        kind="train-verbaliser",
        params={"out": str(folder.path), "base": str(base), "settings": asdict(settings)},
        uses_session=False,
        kept=lambda: f"{folder.path / CHECKPOINT} keeps the training; the same command resumes it",
    )
