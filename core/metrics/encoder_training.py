"""Training the graph–text encoder EREDAT's way (Le Scao & Gardent; METHODS §7).

One sentence encoder embeds both the linearised graph (``[S] s [P] p [O] o …``) and the
text. Each batch holds B (graph, text) pairs with B distinct graphs; every text is
contrasted with

* its own graph (the positive),
* the other B − 1 graphs of the batch (in-batch negatives),
* B *hard* negatives: each pair's graph with one triple's subject, predicate or object
  (role and triple drawn at random) replaced by another value of the same role seen in the
  training data,
* B *inverted* negatives: each pair's graph with one triple's subject and object swapped
  (a triple whose two ends differ; a graph without one gets a second hard negative).

Loss: cross-entropy over the scaled cosines (scale 20, i.e. temperature 0.05, the
sentence-transformers MultipleNegativesRankingLoss default), target its own graph. Each
text's row of the softmax holds its own graph, the B − 1 other graphs of the batch, *its*
hard negative and *its* inverted negative (B + 2 candidates; the text → graph direction,
where the inversion error is measured). With ``shared_negatives`` every row holds all B
hard and B inverted negatives of the batch instead (3B candidates, as
MultipleNegativesRankingLoss does with (anchor, positive, negative) triplets; the setting
of models trained before it existed). With ``symmetric`` (default) the mean with the
graph → text in-batch term. One epoch draws one reference per graph (a different one each
epoch when a graph has several), so a batch never holds the same graph twice.

Cost (what is computed, not what is learned): the texts, graphs and negatives of a step go
through the encoder together, sorted by token length and cut into buckets of
``bucket_size`` strings, each padded only to its own longest string (a bucket's padding
is masked out, so the vectors are those of one padded pass); AdamW runs fused where torch
has it; ``threads`` sets torch's intra-op threads for the training.

The result is written to a temporary folder next to ``out`` and renamed into place only
when complete, with ``taillens-encoder.json`` (data, settings, losses, time); a cancelled
or failed training removes the temporary folder and leaves ``out`` absent.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import heavy
from core.errors import UserFacingError
from core.io import jsonio
from core.jobs import Job, JobContext
from core.metrics.retrieval.encoders import check_model_folder, encoder_fingerprint
from core.metrics.retrieval.pairs import RetrievalPair, load_pairs
from core.metrics.similarity import linearise, resolve_encoder

if TYPE_CHECKING:
    from core.store import SessionStore

RECORD = "taillens-encoder.json"
Triples = tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class TrainingSettings:
    epochs: int = 1
    batch_size: int = 16
    learning_rate: float = 2e-5
    warmup_share: float = 0.1
    scale: float = 20.0
    symmetric: bool = True
    hard_negatives: bool = True
    inverted_negatives: bool = True
    max_seq_length: int | None = 128
    max_steps: int | None = None  # stop after this many optimiser steps
    max_minutes: float | None = None  # stop (and save) after this much training time
    seed: int = 0
    device: str = "cpu"
    shared_negatives: bool = False  # every row holds all the batch's negatives (3B)
    bucket_size: int = 16  # strings per length bucket in a step's forward passes
    threads: int | None = None  # torch intra-op threads while training (None: as is)

    def check(self) -> None:
        if self.epochs < 1:
            raise UserFacingError("--epochs must be at least 1")
        if self.batch_size < 2:
            raise UserFacingError("--batch-size must be at least 2 (in-batch negatives)")
        if not self.learning_rate > 0:
            raise UserFacingError("--lr must be positive")
        if self.max_steps is not None and self.max_steps < 1:
            raise UserFacingError("--max-steps must be at least 1")
        if self.max_minutes is not None and not self.max_minutes > 0:
            raise UserFacingError("--max-minutes must be positive")
        if self.bucket_size < 1:
            raise UserFacingError("--bucket-size must be at least 1")
        if self.threads is not None and self.threads < 1:
            raise UserFacingError("--threads must be at least 1")


@dataclass
class TrainingResult:
    out: Path
    base: str
    pairs: int
    graphs: int
    steps: int
    losses: list[float] = field(default_factory=list)
    elapsed_s: float = 0.0
    evaluations: list[dict[str, Any]] = field(default_factory=list)


# --------------------------------------------------------------------------- negatives


def role_pools(graphs: Sequence[Triples]) -> tuple[list[str], list[str], list[str]]:
    """The distinct subjects, predicates and objects of the data, in first-seen order."""
    pools: tuple[dict[str, None], dict[str, None], dict[str, None]] = ({}, {}, {})
    for triples in graphs:
        for triple in triples:
            for role in range(3):
                pools[role][triple[role]] = None
    return list(pools[0]), list(pools[1]), list(pools[2])


def hard_negative(
    triples: Triples, pools: Sequence[Sequence[str]], rng: random.Random
) -> Triples | None:
    """One triple's subject, predicate or object replaced by another value of the same
    role from the data; None when no role has an alternative."""
    options = [
        (i, role)
        for i in range(len(triples))
        for role in range(3)
        if len(pools[role]) > 1 or (pools[role] and pools[role][0] != triples[i][role])
    ]
    rng.shuffle(options)
    for index, role in options:
        current = triples[index][role]
        for _ in range(8):
            value = pools[role][rng.randrange(len(pools[role]))]
            if value != current:
                triple = list(triples[index])
                triple[role] = value
                out = list(triples)
                out[index] = (triple[0], triple[1], triple[2])
                return tuple(out)
    return None


def inverted_negative(triples: Triples, rng: random.Random) -> Triples | None:
    """One triple (drawn among those whose ends differ) with subject and object swapped."""
    candidates = [i for i, (s, _p, o) in enumerate(triples) if s.strip() != o.strip()]
    if not candidates:
        return None
    index = candidates[rng.randrange(len(candidates))]
    s, p, o = triples[index]
    out = list(triples)
    out[index] = (o, p, s)
    return tuple(out)


def epoch_batches(
    by_graph: dict[Triples, list[str]], batch_size: int, epoch: int, rng: random.Random
) -> list[list[tuple[Triples, str]]]:
    """One reference per graph (the epoch-th, cycling), graphs shuffled, cut in batches."""
    examples = [(graph, texts[epoch % len(texts)]) for graph, texts in by_graph.items()]
    rng.shuffle(examples)
    batches = [examples[i : i + batch_size] for i in range(0, len(examples), batch_size)]
    return [b for b in batches if len(b) >= 2]


# --------------------------------------------------------------------------- training


def _features(model: Any, strings: Sequence[str]) -> dict[str, Any]:
    # sentence-transformers ≥ 6 names it ``preprocess``; ``tokenize`` is the older name.
    prepare = getattr(model, "preprocess", None) or model.tokenize
    return dict(prepare(list(strings)))


def _bucket_features(features: dict[str, Any], rows: Any, left_padded: bool) -> dict[str, Any]:
    """The features of ``rows`` (a tensor of row indices), padding cut to their longest."""
    with heavy.lock():
        import torch

    mask = features["attention_mask"][rows]
    width = int(mask.sum(dim=1).max())
    length = mask.shape[1]
    columns = slice(length - width, length) if left_padded else slice(0, width)
    out: dict[str, Any] = {}
    for key, value in features.items():
        if isinstance(value, torch.Tensor) and value.dim() == 2 and value.shape[1] == length:
            out[key] = value[rows][:, columns]
        elif isinstance(value, torch.Tensor) and value.dim() >= 1:
            out[key] = value[rows]
        else:
            out[key] = value
    return out


def embed_bucketed(model: Any, strings: Sequence[str], device: str, bucket_size: int) -> Any:
    """L2-normalised embeddings of ``strings`` (in their order), with gradients: the
    strings sorted by token length and encoded ``bucket_size`` at a time, each bucket
    padded to its own longest string."""
    with heavy.lock():
        import torch

    features = _features(model, strings)
    lengths = features["attention_mask"].sum(dim=1)
    order = torch.argsort(lengths, descending=True, stable=True)
    left = getattr(getattr(model, "tokenizer", None), "padding_side", "right") == "left"
    parts = []
    for start in range(0, len(strings), bucket_size):
        rows = order[start : start + bucket_size]
        bucket = _bucket_features(features, rows, left)
        bucket = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in bucket.items()}
        parts.append(model(bucket)["sentence_embedding"])
    embedded = torch.cat(parts)
    out = torch.empty_like(embedded)
    out[order.to(embedded.device)] = embedded
    return torch.nn.functional.normalize(out, dim=-1)


def batch_negatives(
    batch: Sequence[tuple[Triples, str]],
    pools: Sequence[Sequence[str]],
    settings: TrainingSettings,
    rng: random.Random,
) -> tuple[list[Triples | None], list[Triples | None]]:
    """Per pair: its hard negative and its inverted negative (a second hard negative when
    no triple can be inverted); None where the setting is off or none can be made."""
    graphs = [g for g, _t in batch]
    hard: list[Triples | None] = [None] * len(graphs)
    inverted: list[Triples | None] = [None] * len(graphs)
    if settings.hard_negatives:
        hard = [hard_negative(g, pools, rng) for g in graphs]
    if settings.inverted_negatives:
        inverted = [inverted_negative(g, rng) or hard_negative(g, pools, rng) for g in graphs]
    return hard, inverted


def batch_loss(
    model: Any,
    batch: Sequence[tuple[Triples, str]],
    pools: Sequence[Sequence[str]],
    settings: TrainingSettings,
    rng: random.Random,
) -> Any:
    """The loss of one batch (module doc): one bucketed forward pass over the texts, the
    graphs and their negatives."""
    with heavy.lock():
        import torch

    size = len(batch)
    texts = [t for _g, t in batch]
    hard, inverted = batch_negatives(batch, pools, settings, rng)
    strings = [linearise(g) for g, _t in batch]
    # column of each pair's negatives among the encoded strings (-1: none)
    columns: list[list[int]] = []
    for negatives in (hard, inverted):
        column = []
        for negative in negatives:
            if negative is None:
                column.append(-1)
            else:
                column.append(len(strings))
                strings.append(linearise(negative))
        columns.append(column)
    vectors = embed_bucketed(model, strings + texts, settings.device, settings.bucket_size)
    graph_vec, text_vec = vectors[: len(strings)], vectors[len(strings) :]
    if settings.shared_negatives:
        logits = settings.scale * text_vec @ graph_vec.T
    else:
        in_batch = settings.scale * text_vec @ graph_vec[:size].T
        own = []
        for column in columns:
            if all(c < 0 for c in column):
                continue
            index = torch.tensor([max(c, 0) for c in column], device=vectors.device)
            score = settings.scale * (text_vec * graph_vec[index]).sum(dim=1)
            missing = torch.tensor([c < 0 for c in column], device=vectors.device)
            own.append(score.masked_fill(missing, float("-inf")).unsqueeze(1))
        logits = torch.cat([in_batch, *own], dim=1)
    target = torch.arange(size, device=logits.device)
    loss = torch.nn.functional.cross_entropy(logits, target)
    if settings.symmetric:
        back = settings.scale * graph_vec[:size] @ text_vec.T
        loss = (loss + torch.nn.functional.cross_entropy(back, target)) / 2
    return loss


def _pairs_by_graph(pairs: Sequence[RetrievalPair]) -> dict[Triples, list[str]]:
    by_graph: dict[Triples, list[str]] = defaultdict(list)
    for pair in pairs:
        if pair.text not in by_graph[pair.triples]:
            by_graph[pair.triples].append(pair.text)
    return dict(by_graph)


def _check_out(out: Path) -> None:
    if out.exists():
        raise UserFacingError(f"{out}: already exists; choose a new folder for the model")
    if not out.parent.is_dir():
        raise UserFacingError(f"{out.parent}: no such folder to write the model in")


def train(
    pairs: Sequence[RetrievalPair],
    base: str | Path | None,
    out: Path,
    settings: TrainingSettings,
    ctx: JobContext | None = None,
    source: dict[str, Any] | None = None,
    *,
    evaluate_every: int = 0,
    on_evaluate: Callable[[int, Any], dict[str, Any] | None] | None = None,
) -> TrainingResult:
    """Train from ``base`` on ``pairs`` and save the model folder atomically to ``out``.

    ``on_evaluate(step, model)``, if given, is called every ``evaluate_every`` steps (and
    after the last) with the model in eval mode and gradients off; what it returns is kept
    in the record's ``evaluations``. It draws on no random state of the training, so the
    training learns the same with or without it."""
    settings.check()
    if settings.device == "auto":
        from dataclasses import replace

        from core.metrics.retrieval.encoders import auto_device

        settings = replace(settings, device=auto_device())
    out = Path(out).expanduser()
    _check_out(out)
    if not pairs:
        raise UserFacingError(
            "no (graph, reference) pairs to train on: the session has no "
            "references with triples in these languages"
        )
    base_path, base_name = resolve_encoder(base)
    check_model_folder(base_path)
    by_graph = _pairs_by_graph(pairs)
    if len(by_graph) < 2:
        raise UserFacingError("training needs at least 2 distinct graphs (in-batch negatives)")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    with heavy.lock():
        import torch

    threads_before = torch.get_num_threads()
    if settings.threads is not None:
        torch.set_num_threads(settings.threads)
    try:
        return _train(
            pairs,
            base_path,
            base_name,
            by_graph,
            out,
            settings,
            ctx,
            source,
            evaluate_every,
            on_evaluate,
        )
    finally:
        torch.set_num_threads(threads_before)


METHOD = (
    "EREDAT-style contrastive training (Le Scao & Gardent): in-batch, hard "
    "(one subject/predicate/object replaced by another of the same role) and "
    "inverted (one triple's subject and object swapped) negatives"
)


def _train(
    pairs: Sequence[RetrievalPair],
    base_path: Path,
    base_name: str,
    by_graph: dict[Triples, list[str]],
    out: Path,
    settings: TrainingSettings,
    ctx: JobContext | None,
    source: dict[str, Any] | None,
    evaluate_every: int,
    on_evaluate: Callable[[int, Any], dict[str, Any] | None] | None,
) -> TrainingResult:
    # Long on purpose: the loop and the record written after it share the loop's state
    # (step, losses, why it stopped, time spent evaluating); the parts with no such state
    # (loading, the optimiser, the schedule, evaluations, saving) are their own functions.
    with heavy.lock():
        import torch
        from sentence_transformers import SentenceTransformer

    started = time.monotonic()
    rng = random.Random(settings.seed)
    torch.manual_seed(settings.seed)
    model = _load_encoder(SentenceTransformer, base_path, settings)
    pools = role_pools(list(by_graph))
    total = _planned_steps(by_graph, settings)
    optimiser = _adamw(torch, model, settings.learning_rate)
    scheduler = _linear_schedule(torch, optimiser, total, settings.warmup_share)
    evaluations = _Evaluations(torch, model, on_evaluate)

    def out_of_time() -> bool:
        limit = settings.max_minutes
        return limit is not None and time.monotonic() - started - evaluations.seconds > limit * 60

    model.train()
    losses: list[float] = []
    step = 0
    stopped = ""
    for epoch in range(settings.epochs):
        for batch in epoch_batches(by_graph, settings.batch_size, epoch, rng):
            if step >= total:
                break
            if out_of_time():
                stopped = f"time limit ({settings.max_minutes:g} min) after step {step}"
                break
            if ctx is not None:
                ctx.check_cancelled()
            loss = batch_loss(model, batch, pools, settings, rng)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            scheduler.step()
            step += 1
            losses.append(float(loss.detach()))
            if ctx is not None:
                ctx.progress(step, total, f"epoch {epoch + 1}, loss {losses[-1]:.3f}")
            if evaluate_every > 0 and step % evaluate_every == 0 and step < total:
                evaluations.run(step)
        if stopped:
            break
    if evaluate_every > 0 or on_evaluate is not None:
        evaluations.run(step)
    model.eval()
    elapsed = time.monotonic() - started - evaluations.seconds
    if ctx is not None:
        ctx.check_cancelled()
    record = {
        "method": METHOD,
        "base": base_name,
        "base_path": str(base_path),
        "base_fingerprint": encoder_fingerprint(base_path),
        "data": {**(source or {}), "pairs": len(pairs), "graphs": len(by_graph)},
        "settings": asdict(settings),
        "steps": step,
        "planned_steps": total,
        "stopped": stopped or None,
        "losses": losses,
        "elapsed_s": round(elapsed, 1),
        "evaluations": evaluations.found,
        "evaluation_s": round(evaluations.seconds, 1),
        "linearise": "[S] s [P] p [O] o",
        "torch": torch.__version__,
    }
    _save_atomically(model, out, record)
    return TrainingResult(
        out, base_name, len(pairs), len(by_graph), step, losses, elapsed, evaluations.found
    )


def _planned_steps(by_graph: dict[Triples, list[str]], settings: TrainingSettings) -> int:
    """Every epoch's batches, or ``max_steps`` where fewer."""
    per_epoch = len(epoch_batches(by_graph, settings.batch_size, 0, random.Random(0)))
    total = per_epoch * settings.epochs
    return total if settings.max_steps is None else min(total, settings.max_steps)


class _Evaluations:
    """The evaluations a training is asked for (``on_evaluate``, the model in eval mode
    and without gradients) and the seconds they took, left out of the training time."""

    def __init__(
        self,
        torch: Any,
        model: Any,
        on_evaluate: Callable[[int, Any], dict[str, Any] | None] | None,
    ) -> None:
        self.torch, self.model, self.on_evaluate = torch, model, on_evaluate
        self.found: list[dict[str, Any]] = []
        self.seconds = 0.0

    def run(self, at: int) -> None:
        if self.on_evaluate is None:
            return
        began = time.monotonic()
        self.model.eval()
        with self.torch.no_grad():
            found = self.on_evaluate(at, self.model)
        self.model.train()
        self.seconds += time.monotonic() - began
        if found is not None:
            self.found.append({"step": at, **found})


def _load_encoder(sentence_transformer: Any, base_path: Path, settings: TrainingSettings) -> Any:
    """The base encoder, its sequence length capped at ``max_seq_length`` where set."""
    try:
        model = sentence_transformer(str(base_path), device=settings.device)
    except Exception as error:  # noqa: BLE001 - any loading failure is the user's folder
        raise UserFacingError(
            f"cannot load the sentence encoder at {base_path}: {error}"
        ) from error
    if settings.max_seq_length:
        model.max_seq_length = min(
            model.max_seq_length or settings.max_seq_length, settings.max_seq_length
        )
    return model


def _linear_schedule(torch: Any, optimiser: Any, total: int, warmup_share: float) -> Any:
    """A linear warm-up over ``warmup_share`` of the ``total`` steps (at least one),
    then a linear decay to 0 at the last."""
    warmup = max(1, int(total * warmup_share))
    return torch.optim.lr_scheduler.LambdaLR(
        optimiser,
        lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup))),
    )


def _adamw(torch: Any, model: Any, lr: float) -> Any:
    """AdamW, fused where this torch and device have it (the same update, fewer passes
    over the weights), else the default implementation."""
    params = list(model.parameters())
    try:
        return torch.optim.AdamW(params, lr=lr, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.AdamW(params, lr=lr)


def _save_atomically(model: Any, out: Path, record: dict[str, Any]) -> None:
    partial = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        model.save(str(partial))
        (partial / RECORD).write_text(
            jsonio.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8"
        )
        _check_out(out)
        os.rename(partial, out)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise


def training_job(
    store: SessionStore,
    out: Path,
    *,
    base: str | None = None,
    settings: TrainingSettings | None = None,
    langs: Sequence[str] | None = None,
    quality: str | None = None,
    session_name: str = "",
) -> Job[TrainingResult]:
    """A job that trains on the session's (graph, reference) pairs. Bad input (existing
    ``out``, a base folder that is not a model, no references) fails before any work."""
    settings = settings or TrainingSettings()
    settings.check()
    out = Path(out).expanduser()
    _check_out(out)
    base_path, _name = resolve_encoder(base)
    check_model_folder(base_path)
    pairs = load_pairs(store, langs=langs, quality=quality)
    if not pairs:
        raise UserFacingError(
            "the session has no references with triples"
            + (f" in {', '.join(langs)}" if langs else "")
            + ": nothing to train on"
        )

    def run(ctx: JobContext) -> TrainingResult:
        return train(
            pairs,
            base,
            out,
            settings,
            ctx,
            source={"session": session_name, "langs": list(langs or ()), "quality": quality},
        )

    return Job(
        "Train graph–text encoder",
        run,
        kind="train-encoder",
        params={"out": str(out), "base": base or "all-MiniLM-L6-v2", "settings": asdict(settings)},
    )
