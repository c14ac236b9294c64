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
sentence-transformers MultipleNegativesRankingLoss default) of each text against the
3B candidate graphs, target its own graph; with ``symmetric`` (default) the mean with the
graph → text in-batch term. One epoch draws one reference per graph (a different one each
epoch when a graph has several), so a batch never holds the same graph twice.

The result is written to a temporary folder next to ``out`` and renamed into place only
when complete, with ``taillens-encoder.json`` (data, settings, losses, time); a cancelled
or failed training removes the temporary folder and leaves ``out`` absent.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import UserFacingError
from core.jobs import Job, JobContext
from core.metrics.retrieval import (
    RetrievalPair,
    check_model_folder,
    encoder_fingerprint,
    load_pairs,
)
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
    seed: int = 0
    device: str = "cpu"

    def check(self) -> None:
        if self.epochs < 1:
            raise UserFacingError("--epochs must be at least 1")
        if self.batch_size < 2:
            raise UserFacingError("--batch-size must be at least 2 (in-batch negatives)")
        if not self.learning_rate > 0:
            raise UserFacingError("--lr must be positive")
        if self.max_steps is not None and self.max_steps < 1:
            raise UserFacingError("--max-steps must be at least 1")


@dataclass
class TrainingResult:
    out: Path
    base: str
    pairs: int
    graphs: int
    steps: int
    losses: list[float] = field(default_factory=list)
    elapsed_s: float = 0.0


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


def _embed(model: Any, strings: Sequence[str], device: str) -> Any:
    import torch

    # sentence-transformers ≥ 6 names it ``preprocess``; ``tokenize`` is the older name.
    prepare = getattr(model, "preprocess", None) or model.tokenize
    features = prepare(list(strings))
    features = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in features.items()}
    out = model(features)["sentence_embedding"]
    return torch.nn.functional.normalize(out, dim=-1)


def batch_loss(
    model: Any,
    batch: Sequence[tuple[Triples, str]],
    pools: Sequence[Sequence[str]],
    settings: TrainingSettings,
    rng: random.Random,
) -> Any:
    """The loss of one batch (module doc)."""
    import torch

    graphs = [g for g, _t in batch]
    texts = [t for _g, t in batch]
    candidates = [linearise(g) for g in graphs]
    for kind in ("hard", "inverted"):
        if kind == "hard" and not settings.hard_negatives:
            continue
        if kind == "inverted" and not settings.inverted_negatives:
            continue
        for graph in graphs:
            negative = (
                inverted_negative(graph, rng) if kind == "inverted" else None
            ) or hard_negative(graph, pools, rng)
            if negative is not None:
                candidates.append(linearise(negative))
    text_vec = _embed(model, texts, settings.device)
    graph_vec = _embed(model, candidates, settings.device)
    logits = settings.scale * text_vec @ graph_vec.T
    target = torch.arange(len(batch), device=logits.device)
    loss = torch.nn.functional.cross_entropy(logits, target)
    if settings.symmetric:
        back = settings.scale * graph_vec[: len(batch)] @ text_vec.T
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
) -> TrainingResult:
    """Train from ``base`` on ``pairs`` and save the model folder atomically to ``out``."""
    settings.check()
    if settings.device == "auto":
        from dataclasses import replace

        from core.metrics.retrieval import _auto_device

        settings = replace(settings, device=_auto_device())
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
    import torch
    from sentence_transformers import SentenceTransformer

    started = time.monotonic()
    rng = random.Random(settings.seed)
    torch.manual_seed(settings.seed)
    try:
        model = SentenceTransformer(str(base_path), device=settings.device)
    except Exception as error:  # noqa: BLE001 - any loading failure is the user's folder
        raise UserFacingError(
            f"cannot load the sentence encoder at {base_path}: {error}"
        ) from error
    if settings.max_seq_length:
        model.max_seq_length = min(
            model.max_seq_length or settings.max_seq_length, settings.max_seq_length
        )
    pools = role_pools(list(by_graph))
    per_epoch = len(epoch_batches(by_graph, settings.batch_size, 0, random.Random(0)))
    total = per_epoch * settings.epochs
    if settings.max_steps is not None:
        total = min(total, settings.max_steps)
    optimiser = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate)
    warmup = max(1, int(total * settings.warmup_share))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimiser,
        lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup))),
    )
    model.train()
    losses: list[float] = []
    step = 0
    for epoch in range(settings.epochs):
        for batch in epoch_batches(by_graph, settings.batch_size, epoch, rng):
            if step >= total:
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
    model.eval()
    elapsed = time.monotonic() - started
    if ctx is not None:
        ctx.check_cancelled()
    record = {
        "method": "EREDAT-style contrastive training (Le Scao & Gardent): in-batch, hard "
        "(one subject/predicate/object replaced by another of the same role) and "
        "inverted (one triple's subject and object swapped) negatives",
        "base": base_name,
        "base_path": str(base_path),
        "base_fingerprint": encoder_fingerprint(base_path),
        "data": {**(source or {}), "pairs": len(pairs), "graphs": len(by_graph)},
        "settings": asdict(settings),
        "steps": step,
        "losses": losses,
        "elapsed_s": round(elapsed, 1),
        "linearise": "[S] s [P] p [O] o",
        "torch": torch.__version__,
    }
    _save_atomically(model, out, record)
    return TrainingResult(out, base_name, len(pairs), len(by_graph), step, losses, elapsed)


def _save_atomically(model: Any, out: Path, record: dict[str, Any]) -> None:
    partial = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        model.save(str(partial))
        (partial / RECORD).write_text(
            json.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8"
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
