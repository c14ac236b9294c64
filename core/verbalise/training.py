"""Fine-tuning a graph-to-text verbaliser on the session's references.

Two kinds of model, each trained on exactly the input the verbaliser later gives it:

* **seq2seq** (T5, BART, mT5, …), all weights: WDV's setup (Ribeiro et al.'s T5
  convention), the task prefix and the ``<H> s <R> p <T> o`` linearisation built by
  :func:`core.verbalise.prompts.seq2seq_input`, the reference as the target. ``<H>``,
  ``<R>`` and ``<T>`` are added to the vocabulary where the tokenizer does not know them
  (T5's has no ``<``: they would all read as ``<unk>``), as Ribeiro et al. did.
* **causal** LMs, with LoRA adapters (``peft``; without it a clear refusal): the unit's
  chat prompt (the run's prompt preset, wrapped in the model's chat template by
  :func:`core.local_models.loader.prompt_token_ids`) and, as the reply, the answer marker with the
  reference in brackets (what :func:`~core.verbalise.prompts.parse_reply` reads); the
  loss is on the reply only. The adapters are merged into the weights at the end, so the
  folder is a plain model.

Data: every reference with triples in its unit's language (``load_pairs``). Train and dev
are split **by entry**: a unit's references all go to one side, and so do units with the
same graph (a union of units and graphs), so no graph is both learnt and evaluated on.
Each epoch (``sampling`` "wdv", METHODS §12) trains on one example per entry (unit and
language): one of its references drawn at random, only those WebNLG marks good
(``comment="good"``) where the entry has any, and its triples in a random order, both by
a generator seeded from the seed and the epoch alone (:func:`epoch_examples`);
``sampling`` "all" trains on every reference with the triples in their stored order.

Loop: AdamW (fused where torch has it), linear warm-up and decay, gradient clipping at 1
(``transformers.Trainer``'s defaults); batches of examples of similar length (shuffled
mega-batches of 50 batches sorted by length, as ``group_by_length`` does), each padded to
its own longest. Every ``eval_every`` steps and at the end: the dev loss, and BLEU and
chrF++ (the app's own metrics, :mod:`core.metrics.reference`) of texts generated for up to
``eval_limit`` dev graphs against all their references; early stopping after ``patience``
evaluations without a better ``stop_metric``; the best weights are what is saved.

Resume: the folder holds ``checkpoint.pt`` (weights, optimizer, scheduler, torch RNG, step,
losses, evaluations, best so far) written atomically (a temporary file renamed over the
old) at each evaluation and when cancelled; running the same training into the same
folder again continues from it (another base, other data or other settings are refused).
Epoch order comes from the seed and the epoch alone, so a resumed training learns what an
uninterrupted one does. A finished folder is a model like any other (``config.json`` is
written last), with ``README.md`` (a model card: data, settings, figures) and
``taillens-training.json``; the checkpoint is then removed.
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import secrets
import shutil
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import heavy
from core.errors import UserFacingError
from core.io import jsonio
from core.io.folder_lock import LOCK_NAME, FolderLock
from core.jobs import Job, JobCancelled, JobContext

if TYPE_CHECKING:
    from core.store import SessionStore

CHECKPOINT = "checkpoint.pt"
BEST = "best.pt"
RECORD = "taillens-training.json"
CARD = "README.md"
STOP_METRICS = ("chrf", "bleu", "loss")
SAMPLINGS = ("wdv", "all")
GOOD = "good"  # WebNLG's lex comment for a reference fit to train on
GRAPH_TOKENS = ("<H>", "<R>", "<T>")
# Settings a resumed training may change: where it runs, not what it learns.
_FREE_SETTINGS = frozenset({"device", "threads"})
_METRIC_NAMES = {"chrf": "chrF++", "bleu": "BLEU", "loss": "dev loss"}

Triples = tuple[tuple[str, str, str], ...]


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


@dataclass(frozen=True)
class Example:
    """One reference and its unit's graph, in the reference's language."""

    unit_id: int
    lang: str
    triples: Triples
    text: str
    reference_id: int
    comment: str | None = None  # WebNLG's lex comment ("good", "bad", "toFix"), if any


@dataclass(frozen=True)
class Split:
    train: tuple[Example, ...]
    dev: tuple[Example, ...]

    @staticmethod
    def entries(examples: Sequence[Example]) -> set[int]:
        return {e.unit_id for e in examples}


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


# --------------------------------------------------------------------------- data


def load_examples(
    store: SessionStore, *, langs: Sequence[str] | None = None, quality: str | None = None
) -> list[Example]:
    """The session's references with their unit's triples in the reference's language and
    the WebNLG ``comment`` their ``lex`` element had (``lex comment="good"``), if any."""
    from core.formats.webnlg.writer import lex_attributes
    from core.metrics.retrieval import load_pairs

    pairs = load_pairs(store, langs=langs, quality=quality)
    extras = lex_attributes(store, sorted({p.unit_id for p in pairs}))
    return [
        Example(
            p.unit_id,
            p.lang,
            p.triples,
            p.text.strip(),
            p.text_id,
            extras.get(p.text_id, {}).get("comment"),
        )
        for p in pairs
    ]


def split_by_entry(examples: Sequence[Example], dev_share: float, seed: int) -> Split:
    """Train and dev with no entry (unit) in both, and no graph in both: units that share
    a graph are one group. Groups are drawn in an order fixed by ``seed`` until dev holds
    ``dev_share`` of the entries (at least one group; train keeps at least one)."""
    parent: dict[Any, Any] = {}

    def find(node: Any) -> Any:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for example in examples:
        a, b = find(("unit", example.unit_id)), find(("graph", example.lang, example.triples))
        if a != b:
            parent[max(a, b, key=repr)] = min(a, b, key=repr)
    groups: dict[Any, set[int]] = defaultdict(set)
    for example in examples:
        groups[find(("unit", example.unit_id))].add(example.unit_id)
    if len(groups) < 2:
        raise TrainingError(
            "training needs references of at least 2 entries with different graphs "
            "(one for training, one for dev)"
        )

    def order(units: set[int]) -> str:
        return hashlib.sha256(f"{seed}:{min(units)}".encode()).hexdigest()

    ranked = sorted(groups.values(), key=order)
    total = sum(len(g) for g in ranked)
    dev_units: set[int] = set()
    for units in ranked[:-1]:
        if dev_units and len(dev_units) + len(units) > dev_share * total:
            break
        dev_units |= units
    return Split(
        tuple(e for e in examples if e.unit_id not in dev_units),
        tuple(e for e in examples if e.unit_id in dev_units),
    )


def data_fingerprint(examples: Sequence[Example]) -> str:
    digest = hashlib.sha256()
    for e in sorted(examples, key=lambda e: e.reference_id):
        fields: list[Any] = [e.reference_id, e.unit_id, e.lang, e.text, e.triples]
        if e.comment is not None:  # (a reference without one hashes as before comments)
            fields.append(e.comment)
        digest.update(jsonio.dumps(fields).encode())
    return digest.hexdigest()[:16]


def epoch_examples(
    examples: Sequence[Example], sampling: str, seed: int, epoch: int
) -> list[Example]:
    """What an epoch trains on (METHODS §12). ``sampling`` "all": ``examples`` as they are.
    "wdv" (WDV §4.1): one example per entry (unit and language), in the entries' order:
    one of its references at random, among those WebNLG marks good where it has any, with
    the entry's triples in a random order; the generator is seeded from ``seed`` and
    ``epoch`` alone, so the epoch draws the same examples whenever it is replayed."""
    if sampling == "all":
        return list(examples)
    entries: dict[tuple[int, str], list[Example]] = defaultdict(list)
    for example in examples:
        entries[(example.unit_id, example.lang)].append(example)
    rng = random.Random(f"wdv:{seed}:{epoch}")
    drawn: list[Example] = []
    for key in sorted(entries):
        references = sorted(entries[key], key=lambda e: e.reference_id)
        good = [e for e in references if e.comment == GOOD]
        chosen = rng.choice(good or references)
        triples = list(chosen.triples)
        rng.shuffle(triples)
        drawn.append(replace(chosen, triples=tuple(triples)))
    return drawn


def entry_count(examples: Sequence[Example]) -> int:
    """Entries (unit and language) among ``examples``: a "wdv" epoch's size."""
    return len({(e.unit_id, e.lang) for e in examples})


def length_grouped_batches(
    lengths: Sequence[int], batch_size: int, seed: int, epoch: int, group: bool = True
) -> list[list[int]]:
    """An epoch's batches (example indices): shuffled by (seed, epoch) alone, cut into
    mega-batches of 50 batches, each sorted by length and cut into batches, the batches
    shuffled again: little padding, and the same order whenever the epoch is replayed.
    ``group`` False: the shuffled order cut into batches."""
    rng = random.Random(f"{seed}:{epoch}")
    order = list(range(len(lengths)))
    rng.shuffle(order)
    if not group:
        return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    mega = batch_size * 50
    batches: list[list[int]] = []
    for start in range(0, len(order), mega):
        chunk = sorted(order[start : start + mega], key=lambda i: -lengths[i])
        batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    rng.shuffle(batches)
    return batches


# --------------------------------------------------------------------------- the folder


@dataclass(frozen=True)
class OutFolder:
    """What ``--out`` holds: nothing yet, or an unfinished training to resume."""

    path: Path
    resume_step: int | None  # None: a new training
    record: dict[str, Any] | None


def check_out(out: Path) -> OutFolder:
    out = Path(out).expanduser()
    if not out.exists():
        if not out.parent.is_dir():
            raise TrainingError(f"{out.parent}: no such folder to write the model in")
        return OutFolder(out, None, None)
    if not out.is_dir():
        raise TrainingError(f"{out}: is a file; choose a new folder for the model")
    if (out / "config.json").is_file():
        raise TrainingError(
            f"{out}: already holds a model; choose a new folder for the trained model"
        )
    if (out / CHECKPOINT).is_file():
        record = _read_record(out)
        return OutFolder(out, int(record.get("steps", 0)), record)
    leftovers = [p for p in out.iterdir() if not _is_leftover(p)]
    if leftovers:
        raise TrainingError(
            f"{out}: not empty ({leftovers[0].name}, …) and no training to resume; "
            "choose a new or empty folder"
        )
    return OutFolder(out, None, None)


def _is_leftover(path: Path) -> bool:
    """A temporary file or folder of this module (a killed write), or the folder's lock."""
    return path.name == LOCK_NAME or (
        path.name.startswith(".") and (path.name.endswith(".tmp") or ".final-" in path.name)
    )


def _read_record(out: Path) -> dict[str, Any]:
    from core.io import bounded, files

    path = out / RECORD
    try:
        # The folder is the user's to name: what is there may come from anywhere.
        record = bounded.read_json(path, limit=files.SETTINGS_LIMIT, limits=bounded.SMALL)
    except (UserFacingError, OSError):
        raise TrainingError(
            f"{out}: holds a checkpoint but its {RECORD} is missing or damaged; choose a new folder"
        ) from None
    if not isinstance(record, dict):
        raise TrainingError(f"{path}: damaged (not a JSON object); choose a new folder")
    return record


def check_resumable(folder: OutFolder, identity: dict[str, Any]) -> None:
    """Refuse to resume a training of another base, other data or other settings."""
    if folder.record is None:
        return
    before = folder.record.get("identity") or {}
    differences = []
    for key in ("kind", "base_fingerprint", "data_fingerprint"):
        if before.get(key) != identity.get(key):
            differences.append(key.replace("_", " "))
    old, new = before.get("settings") or {}, identity.get("settings") or {}
    if old:  # trainings from before the setting sampled every reference
        old = {"sampling": "all", **old}
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            differences.append(f"{key} {old.get(key)!r} → {new.get(key)!r}")
    if differences:
        raise TrainingError(
            f"{folder.path}: holds a training (step {folder.resume_step}) of another "
            f"setup ({'; '.join(differences)}): run it with the same settings to resume, "
            "or choose a new folder"
        )


def identity_of(base: Path, split: Split, settings: TrainingSettings) -> dict[str, Any]:
    """What a checkpoint may only be resumed with: the base model's kind and weights, the
    data and every setting but where it runs."""
    from core.local_models.loader import check_model_folder, model_fingerprint

    return {
        "kind": check_model_folder(base),
        "base_fingerprint": model_fingerprint(base)[:16],
        "data_fingerprint": data_fingerprint([*split.train, *split.dev]),
        "settings": {k: v for k, v in asdict(settings).items() if k not in _FREE_SETTINGS},
    }


def _remove_leftovers(out: Path) -> None:
    for path in out.iterdir():
        if _is_leftover(path):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def _write_atomically(path: Path, write: Any) -> None:
    """``write(handle)`` into a temporary file beside ``path``, synced, renamed over it."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        with temporary.open("wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _write_json(path: Path, data: dict[str, Any]) -> None:
    text = jsonio.dumps(data, indent=2, ensure_ascii=False).encode("utf-8")
    _write_atomically(path, lambda handle: handle.write(text))


def require_lora() -> None:
    import importlib.util

    if importlib.util.find_spec("peft") is None:
        from core.desktop.install import pip_hint

        raise TrainingError(
            "a causal model is fine-tuned with LoRA adapters, which need peft, and peft is "
            f"not installed: {pip_hint('peft')} (or train a seq2seq model such as T5)"
        )


# --------------------------------------------------------------------------- training


class _Trainer:
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

    # -- model ---------------------------------------------------------------------------

    def load(self) -> None:
        from core.local_models.loader import CAUSAL, load_model, select_device

        with heavy.lock():
            import torch

        self.torch = torch
        torch.manual_seed(self.settings.seed)  # LoRA's and new embeddings' first values
        self.device = select_device(self.settings.device)
        loaded = load_model(self.base, device=self.device, dtype="float32")
        self.model, self.tokenizer = loaded.model, loaded.tokenizer
        self.added_tokens: list[str] = []
        if self.kind == CAUSAL:
            require_lora()
            with heavy.lock():
                from peft import LoraConfig, get_peft_model

            self.model = get_peft_model(
                self.model,
                LoraConfig(
                    r=self.settings.lora_r,
                    lora_alpha=self.settings.lora_alpha,
                    lora_dropout=self.settings.lora_dropout,
                    target_modules="all-linear",
                    task_type="CAUSAL_LM",
                ),
            )
        else:
            unknown = [t for t in GRAPH_TOKENS if self._unknown(t)]
            if unknown:
                self.tokenizer.add_tokens(unknown)
                self.model.resize_token_embeddings(len(self.tokenizer))
                self.added_tokens = unknown
        self.model.to(self.device)
        self.model.train()
        self.autocast = self.device.startswith("cuda") and torch.cuda.is_bf16_supported()

    def _unknown(self, token: str) -> bool:
        ids = self.tokenizer(token, add_special_tokens=False)["input_ids"]
        unk = self.tokenizer.unk_token_id
        return len(ids) != 1 or (unk is not None and ids[0] == unk)

    def trainable_state(self) -> dict[str, Any]:
        names = {n for n, p in self.model.named_parameters() if p.requires_grad}
        return {
            k: v.detach().to("cpu", copy=True)
            for k, v in self.model.state_dict().items()
            if self.kind != "causal" or k in names
        }

    def load_state(self, state: dict[str, Any]) -> None:
        strict = self.kind != "causal"
        self.model.load_state_dict(state, strict=strict)

    # -- examples ------------------------------------------------------------------------

    def source_text(self, triples: Triples, lang: str) -> str:
        from core.verbalise.prompts import render_prompt, seq2seq_input, templates_for

        if self.kind == "causal":
            if not hasattr(self, "_templates"):
                from core.vocab import LANGUAGES

                self._templates = templates_for(LANGUAGES, None, self.settings.prompt_preset)
            return render_prompt(self._templates[lang], triples, lang)
        return seq2seq_input(triples, lang, self.settings.task_prefix)

    def source_ids(self, triples: Triples, lang: str) -> list[int]:
        from core.local_models.loader import prompt_token_ids

        text = self.source_text(triples, lang)
        if self.kind == "causal":
            return prompt_token_ids(self.tokenizer, text)[-self.settings.max_source_tokens :]
        ids = self.tokenizer(text, truncation=True, max_length=self.settings.max_source_tokens)
        return list(ids["input_ids"])

    def encode(self, example: Example) -> tuple[list[int], list[int]]:
        """(input ids, label ids): for causal models one sequence, the prompt masked."""
        from core.verbalise.prompts import ANSWER_MARKERS

        source = self.source_ids(example.triples, example.lang)
        limit = self.settings.max_target_tokens
        if self.kind == "causal":
            reply = f"{ANSWER_MARKERS.get(example.lang, ANSWER_MARKERS['en'])} [{example.text}]"
            ids = list(self.tokenizer(reply, add_special_tokens=False)["input_ids"])[:limit]
            ids.append(self.tokenizer.eos_token_id)
            return source + ids, [-100] * len(source) + ids
        target = self.tokenizer(text_target=example.text, truncation=True, max_length=limit)
        return source, list(target["input_ids"])

    def collate(self, items: Sequence[tuple[list[int], list[int]]]) -> tuple[dict[str, Any], int]:
        """A padded batch on the device and its number of real tokens (inputs + labels
        of a seq2seq model; the sequence of a causal one)."""
        torch = self.torch
        pad = self.tokenizer.pad_token_id
        width = max(len(i) for i, _l in items)
        ids = torch.full((len(items), width), pad, dtype=torch.long)
        mask = torch.zeros((len(items), width), dtype=torch.long)
        label_width = max(len(lab) for _i, lab in items)
        labels = torch.full((len(items), label_width), -100, dtype=torch.long)
        tokens = 0
        for row, (inputs, targets) in enumerate(items):
            ids[row, : len(inputs)] = torch.tensor(inputs)
            mask[row, : len(inputs)] = 1
            labels[row, : len(targets)] = torch.tensor(targets)
            tokens += len(inputs) + (0 if self.kind == "causal" else len(targets))
        batch = {"input_ids": ids, "attention_mask": mask, "labels": labels}
        return {k: v.to(self.device) for k, v in batch.items()}, tokens

    def epoch_size(self) -> int:
        """Examples per epoch: every reference ("all") or one per entry ("wdv")."""
        train = self.split.train
        return len(train) if self.settings.sampling == "all" else entry_count(train)

    def epoch_data(self, epoch: int) -> tuple[list[tuple[list[int], list[int]]], list[int]]:
        """The epoch's examples (:func:`epoch_examples`) as token ids, and their lengths;
        "all" encodes them once."""
        key = 0 if self.settings.sampling == "all" else epoch
        cached = getattr(self, "_epoch_data", None)
        if cached is None or cached[0] != key:
            examples = epoch_examples(
                self.split.train, self.settings.sampling, self.settings.seed, epoch
            )
            encoded = [self.encode(e) for e in examples]
            cached = (key, encoded, [len(i) + len(lab) for i, lab in encoded])
            self._epoch_data = cached
        return cached[1], cached[2]

    # -- loop ----------------------------------------------------------------------------

    def run(self) -> TrainingResult:
        torch, settings = self.torch, self.settings
        started = time.monotonic()
        per_epoch = math.ceil(self.epoch_size() / settings.batch_size)
        total = per_epoch * settings.epochs
        if settings.max_steps is not None:
            total = min(total, settings.max_steps)
        self.total = total
        with heavy.lock():
            from transformers import get_linear_schedule_with_warmup

        params = [p for p in self.model.parameters() if p.requires_grad]
        try:
            optimizer = torch.optim.AdamW(
                params,
                lr=settings.learning_rate,
                weight_decay=settings.weight_decay,
                eps=1e-8,
                fused=True,
            )
        except (RuntimeError, TypeError, ValueError):
            optimizer = torch.optim.AdamW(
                params, lr=settings.learning_rate, weight_decay=settings.weight_decay, eps=1e-8
            )
        scheduler = get_linear_schedule_with_warmup(
            optimizer, int(total * settings.warmup_share), total
        )
        self.optimizer, self.scheduler = optimizer, scheduler
        state = self._resume()
        step: int = state["step"]
        self.resumed_from = step if self.folder.resume_step is not None else None
        if self.folder.resume_step is None:
            self.out.mkdir(exist_ok=True)
            self.save_checkpoint(state)  # the folder is this training's from now on
        trained_s, tokens_now, steps_now, eval_s, evals_now = 0.0, 0, 0, 0.0, 0
        stopped: str | None = state.get("stopped")
        try:
            if state.get("pending_eval"):
                eval_s += self.evaluate_into(state)
                evals_now += 1
            while step < total and not stopped:
                epoch, index = divmod(step, per_epoch)
                encoded, lengths = self.epoch_data(epoch)
                batches = length_grouped_batches(
                    lengths, settings.batch_size, settings.seed, epoch, settings.group_by_length
                )
                for batch_indices in batches[index:]:
                    if step >= total:
                        break
                    if self.ctx is not None:
                        self.ctx.check_cancelled()
                    began = time.monotonic()
                    batch, tokens = self.collate([encoded[i] for i in batch_indices])
                    with torch.autocast("cuda", torch.bfloat16, enabled=self.autocast):
                        loss = self.model(**batch).loss
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(params, 1.0)
                    optimizer.step()
                    scheduler.step()
                    optimizer.zero_grad(set_to_none=True)
                    step += 1
                    value = float(loss.detach())
                    trained_s += time.monotonic() - began
                    tokens_now += tokens
                    steps_now += 1
                    state["step"], state["epoch"] = step, epoch
                    state["losses"].append(round(value, 5))
                    state["tokens"] += tokens
                    state["train_s"] += time.monotonic() - began
                    self.report(step, total, epoch, value, trained_s / steps_now, eval_s, evals_now)
                    if settings.eval_every and step % settings.eval_every == 0 and step < total:
                        state["pending_eval"] = True
                        eval_s += self.evaluate_into(state)
                        evals_now += 1
                        stopped = state.get("stopped")
                        if stopped:
                            break
                if stopped:
                    break
            if not stopped and (
                not state["evaluations"] or state["evaluations"][-1]["step"] != step
            ):
                state["pending_eval"] = True
                eval_s += self.evaluate_into(state, final=True)
        except JobCancelled:
            self.save_checkpoint(state)
            raise
        elapsed = time.monotonic() - started
        state["elapsed_s"] = state.get("elapsed_s", 0.0) + elapsed
        return self.finish(state, step, total, tokens_now, trained_s)

    def report(
        self,
        step: int,
        total: int,
        epoch: int,
        loss: float,
        per_step: float,
        eval_s: float,
        evals: int,
    ) -> None:
        if self.ctx is None:
            return
        left = total - step
        evals_left = left // self.settings.eval_every + 1 if self.settings.eval_every else 1
        per_eval = eval_s / evals if evals else 0.0
        eta = left * per_step + evals_left * per_eval
        self.ctx.progress(
            step,
            total,
            f"epoch {epoch + 1}/{self.settings.epochs}, step {step}/{total}, "
            f"loss {loss:.3f}, ETA {_duration(eta)}",
        )

    def _resume(self) -> dict[str, Any]:
        fresh: dict[str, Any] = {
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
        if self.folder.resume_step is None:
            return fresh
        _remove_leftovers(self.out)
        torch = self.torch
        try:
            saved = torch.load(self.out / CHECKPOINT, map_location="cpu", weights_only=True)
        except Exception as error:  # noqa: BLE001 - any damage to the file is the same to the user
            raise TrainingError(
                f"{self.out / CHECKPOINT} cannot be read ({type(error).__name__}); "
                "choose a new folder"
            ) from None
        self.load_state(saved.pop("model"))
        self.optimizer.load_state_dict(saved.pop("optimizer"))
        self.scheduler.load_state_dict(saved.pop("scheduler"))
        torch.set_rng_state(saved.pop("torch_rng"))
        cuda_rng = saved.pop("cuda_rng", None)
        if cuda_rng is not None and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(cuda_rng)
        return {**fresh, **saved}

    def save_checkpoint(self, state: dict[str, Any]) -> None:
        torch = self.torch
        data = {
            **state,
            "model": self.trainable_state(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "torch_rng": torch.get_rng_state(),
        }
        if torch.cuda.is_available():
            data["cuda_rng"] = torch.cuda.get_rng_state_all()
        _write_atomically(self.out / CHECKPOINT, lambda handle: torch.save(data, handle))
        _write_json(self.out / RECORD, self.record(state, finished=False))

    # -- evaluation ----------------------------------------------------------------------

    def dev_graphs(self) -> list[tuple[Triples, str, list[str]]]:
        """(graph, language, references) per dev entry and language, in a fixed order,
        at most ``eval_limit``."""
        grouped: dict[tuple[int, str], tuple[Triples, list[str]]] = {}
        for e in self.split.dev:
            grouped.setdefault((e.unit_id, e.lang), (e.triples, []))[1].append(e.text)
        graphs = [(t, key[1], refs) for key, (t, refs) in sorted(grouped.items())]
        limit = self.settings.eval_limit
        return graphs[:limit] if limit else graphs

    def evaluate_into(self, state: dict[str, Any], final: bool = False) -> float:
        """Evaluate, keep the best weights, decide early stopping, write the checkpoint.
        Returns the seconds it took."""
        began = time.monotonic()
        torch = self.torch
        rng = torch.get_rng_state()
        self.model.eval()
        try:
            with torch.no_grad():
                found = self.evaluate(state["step"])
        finally:
            self.model.train()
            torch.set_rng_state(rng)
        state["evaluations"].append(found)
        metric = self.settings.stop_metric
        value = found[metric]
        best = state["best"]
        better = best is None or (
            value < best["value"] if metric == "loss" else value > best["value"]
        )
        if better:
            state["best"] = {"step": found["step"], "value": value, "metric": metric}
            state["bad_evaluations"] = 0
            weights = self.trainable_state()
            _write_atomically(self.out / BEST, lambda handle: torch.save(weights, handle))
        else:
            state["bad_evaluations"] += 1
            patience = self.settings.patience
            if patience and state["bad_evaluations"] >= patience and not final:
                state["stopped"] = (
                    f"early stopping at step {found['step']}: no better "
                    f"{_METRIC_NAMES[metric]} in {patience} evaluations"
                )
        state["pending_eval"] = False
        self.save_checkpoint(state)
        return time.monotonic() - began

    def evaluate(self, step: int) -> dict[str, Any]:
        from core.metrics.base import ScoringItem
        from core.metrics.reference import Bleu, ChrF

        graphs = self.dev_graphs()
        loss = self.dev_loss({(t, lang) for t, lang, _r in graphs})
        texts: list[str] = []
        size = self.settings.batch_size
        for start in range(0, len(graphs), size):
            if self.ctx is not None:
                self.ctx.check_cancelled()
                self.ctx.progress(
                    step, self.total, f"evaluating on dev: {start}/{len(graphs)} graphs"
                )
            texts += self.generate([(t, lang) for t, lang, _r in graphs[start : start + size]])
        items = [
            ScoringItem(text=text, lang=lang, references=tuple(refs))
            for text, (_t, lang, refs) in zip(texts, graphs, strict=True)
        ]
        bleu, chrf = Bleu().corpus_score(items), ChrF().corpus_score(items)
        return {
            "step": step,
            "loss": round(loss, 5),
            "bleu": round(bleu.value or 0.0, 2) if bleu else 0.0,
            "chrf": round(chrf.value or 0.0, 2) if chrf else 0.0,
            "graphs": len(graphs),
            "example": texts[0] if texts else "",
        }

    def dev_loss(self, graphs: set[tuple[Triples, str]]) -> float:
        torch = self.torch
        examples = [e for e in self.split.dev if (e.triples, e.lang) in graphs]
        total_loss, total_tokens = 0.0, 0
        size = self.settings.batch_size
        for start in range(0, len(examples), size):
            if self.ctx is not None:
                self.ctx.check_cancelled()
            batch, _tokens = self.collate([self.encode(e) for e in examples[start : start + size]])
            labels = batch["labels"]
            shifted = labels[:, 1:] if self.kind == "causal" else labels
            count = int((shifted != -100).sum())
            with torch.autocast("cuda", torch.bfloat16, enabled=self.autocast):
                loss = self.model(**batch).loss
            total_loss += float(loss) * count
            total_tokens += count
        return total_loss / total_tokens if total_tokens else float("nan")

    def generate(self, graphs: Sequence[tuple[Triples, str]]) -> list[str]:
        from core.verbalise.prompts import parse_reply

        torch, tokenizer = self.torch, self.tokenizer
        ids = [self.source_ids(t, lang) for t, lang in graphs]
        causal = self.kind == "causal"
        side = tokenizer.padding_side
        tokenizer.padding_side = "left" if causal else "right"
        try:
            batch = tokenizer.pad({"input_ids": ids}, padding=True, return_tensors="pt")
        finally:
            tokenizer.padding_side = side
        batch = {k: v.to(self.device) for k, v in batch.items()}
        with torch.autocast("cuda", torch.bfloat16, enabled=self.autocast):
            output = self.model.generate(
                **batch,
                do_sample=False,
                num_beams=1 if causal else self.settings.num_beams,
                max_new_tokens=self.settings.max_new_tokens,
                pad_token_id=tokenizer.pad_token_id,
            )
        if causal:
            output = output[:, batch["input_ids"].shape[1] :]
        texts = tokenizer.batch_decode(output.cpu(), skip_special_tokens=True)
        if causal:
            return [parse_reply(t).text or "" for t in texts]
        return [t.strip() for t in texts]

    # -- the model folder ----------------------------------------------------------------

    def record(self, state: dict[str, Any], *, finished: bool) -> dict[str, Any]:
        train, dev = self.split.train, self.split.dev
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
            "data": {
                **self.source,
                "train_texts": len(train),
                "train_entries": len(Split.entries(train)),
                "train_good_texts": sum(e.comment == GOOD for e in train),
                "examples_per_epoch": self.epoch_size(),
                "dev_texts": len(dev),
                "dev_entries": len(Split.entries(dev)),
                "dev_entry_ids": sorted(Split.entries(dev)),
            },
            "settings": asdict(self.settings),
            "added_tokens": getattr(self, "added_tokens", []),
            "device": self.device,
            "precision": "bf16 autocast" if self.autocast else "float32",
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
            "torch": self.torch.__version__,
        }

    def finish(
        self, state: dict[str, Any], step: int, total: int, tokens_now: int, trained_s: float
    ) -> TrainingResult:
        torch = self.torch
        if self.ctx is not None:
            self.ctx.progress(step, total, "saving the model")
        best_path = self.out / BEST
        if best_path.is_file():
            self.load_state(torch.load(best_path, map_location="cpu", weights_only=True))
        model = self.model
        if self.kind == "causal":
            model = model.merge_and_unload()
        model.eval()
        record = self.record(state, finished=True)
        partial = self.out / f".final-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            model.save_pretrained(partial)
            self.tokenizer.save_pretrained(partial)
            (partial / CARD).write_text(model_card(record), encoding="utf-8")
            (partial / RECORD).write_text(
                jsonio.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8"
            )
            # config.json last: a folder with one is a whole model (the model list's test)
            names = sorted(p.name for p in partial.iterdir() if p.name != "config.json")
            for name in [*names, "config.json"]:
                os.replace(partial / name, self.out / name)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
        for name in (CHECKPOINT, BEST):
            (self.out / name).unlink(missing_ok=True)
        from core.local_models.loader import remember_model_folder

        listed = remember_model_folder(self.out)
        return TrainingResult(
            out=self.out,
            base=self.base_name,
            kind=self.kind,
            train_texts=len(self.split.train),
            train_entries=len(Split.entries(self.split.train)),
            dev_texts=len(self.split.dev),
            dev_entries=len(Split.entries(self.split.dev)),
            steps=step,
            planned_steps=total,
            resumed_from=self.resumed_from,
            stopped=state.get("stopped"),
            best=state.get("best"),
            evaluations=state["evaluations"],
            losses=state["losses"],
            elapsed_s=state["elapsed_s"],
            tokens=tokens_now,
            # this process's rate; a run resumed at its end trained nothing: the record's
            tokens_per_s=tokens_now / trained_s
            if trained_s
            else (state["tokens"] / state["train_s"] if state["train_s"] else 0.0),
            device=self.device,
            listed=listed,
        )


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def model_card(record: dict[str, Any]) -> str:
    """README.md of a trained folder: Hugging Face's front matter, then the data, the
    settings and the figures in words and tables."""
    data, settings = record["data"], record["settings"]
    kind = record["identity"]["kind"]
    best = record.get("best") or {}
    langs = data.get("langs") or []
    lines = [
        "---",
        f"base_model: {record['base']}",
        "library_name: transformers",
        "pipeline_tag: " + ("text-generation" if kind == "causal" else "text2text-generation"),
        "tags: [graph-to-text, data-to-text, webnlg, taillens]",
    ]
    if langs:
        lines.append(f"language: [{', '.join(langs)}]")
    lines += [
        "---",
        "",
        f"# Graph-to-text verbaliser fine-tuned from {record['base']}",
        "",
        f"Trained with TailLens `train-verbaliser`: {record['method']}.",
        "Use it in TailLens's Verbalise panel or with `taillens verbalise --model` this folder.",
        "",
        "## Data",
        "",
        f"- session: {data.get('session') or '(not named)'}; languages: "
        f"{', '.join(langs) or 'all'}; references: {data.get('quality') or 'gold and silver'}",
        f"- train: {data['train_texts']:,} texts of {data['train_entries']:,} entries; "
        f"dev: {data['dev_texts']:,} texts of {data['dev_entries']:,} entries "
        "(split by entry: no entry, and no graph, in both)",
    ]
    if settings.get("sampling", "all") == "wdv":
        good = data.get("train_good_texts", 0)
        lines.append(
            f"- each epoch: {data.get('examples_per_epoch', 0):,} examples, one per entry "
            "(WDV §4.1): one of its references at random"
            + (f" (among the {good:,} WebNLG marks good, where an entry has any)" if good else "")
            + ", its triples in a random order"
        )
    else:
        lines.append("- each epoch: every reference, the triples in their stored order")
    if kind != "causal":
        prefix = settings.get("task_prefix")
        lines.append(
            "- input: "
            + (repr(prefix) if prefix is not None else "WDV's 'translate from Graph to Text: '")
            + " then `<H> subject <R> predicate <T> object` per triple"
            + (
                f"; tokens added: {' '.join(record['added_tokens'])}"
                if record["added_tokens"]
                else ""
            )
        )
    else:
        lines.append(
            f"- input: the {settings['prompt_preset']} chat prompt; reply: answer marker + [text]"
        )
    lines += [
        "",
        "## Settings",
        "",
        "| setting | value |",
        "| --- | --- |",
        *(f"| {k} | {v} |" for k, v in settings.items()),
        f"| device | {record['device']} ({record['precision']}) |",
        "",
        "## Figures",
        "",
        f"- steps: {record['steps']:,} of {record['planned_steps']:,} planned"
        + (f" ({record['stopped']})" if record.get("stopped") else ""),
        f"- training time: {record['train_s']:.0f} s, {record['tokens']:,} tokens"
        + (f", {record['tokens_per_s']:,.0f} tokens/s" if record.get("tokens_per_s") else ""),
    ]
    if best:
        lines.append(
            f"- kept: the weights of step {best['step']} (best dev "
            f"{_METRIC_NAMES[best['metric']]} {best['value']})"
        )
    if record["losses"]:
        losses = record["losses"]
        lines.append(f"- training loss: {losses[0]:.4f} at step 1, {losses[-1]:.4f} at the last")
    if record["evaluations"]:
        lines += [
            "",
            "Dev set (BLEU and chrF++ by sacrebleu, corpus level, all references of a graph):",
            "",
            "| step | dev loss | BLEU | chrF++ | graphs |",
            "| ---: | ---: | ---: | ---: | ---: |",
            *(
                f"| {e['step']} | {e['loss']:.4f} | {e['bleu']:.2f} | {e['chrf']:.2f} | "
                f"{e['graphs']} |"
                for e in record["evaluations"]
            ),
        ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- entry points


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
        trainer = _Trainer(split, path, str(base), folder, settings, ctx, source or {})
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
