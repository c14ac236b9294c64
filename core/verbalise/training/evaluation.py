"""Evaluation on dev: the dev loss, and BLEU and chrF++ (the app's own metrics,
:mod:`core.metrics.reference`) of texts generated for up to ``eval_limit`` dev graphs
against all their references; the best evaluation so far by ``stop_metric`` and early
stopping after ``patience`` evaluations without a better one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from core.verbalise.training.data import Example, Triples
from core.verbalise.training.model import TrainingModel
from core.verbalise.training.settings import METRIC_NAMES, TrainingSettings

DevGraph = tuple[Triples, str, list[str]]  # graph, language, its references


def dev_graphs(dev: Sequence[Example], limit: int) -> list[DevGraph]:
    """(graph, language, references) per dev entry and language, in a fixed order, at
    most ``limit`` (0: all)."""
    grouped: dict[tuple[int, str], tuple[Triples, list[str]]] = {}
    for e in dev:
        grouped.setdefault((e.unit_id, e.lang), (e.triples, []))[1].append(e.text)
    graphs = [(t, key[1], refs) for key, (t, refs) in sorted(grouped.items())]
    return graphs[:limit] if limit else graphs


def evaluate(
    model: TrainingModel,
    dev: Sequence[Example],
    step: int,
    *,
    check: Callable[[], None],
    progress: Callable[[str], None],
) -> dict[str, Any]:
    """The evaluation at ``step``: dev loss, BLEU, chrF++, the number of graphs and the
    first text. ``check`` raises when cancelled; ``progress`` says how far generation is."""
    from core.metrics.base import ScoringItem
    from core.metrics.reference import Bleu, ChrF

    graphs = dev_graphs(dev, model.settings.eval_limit)
    wanted = {(t, lang) for t, lang, _r in graphs}
    loss = model.dev_loss([e for e in dev if (e.triples, e.lang) in wanted], check)
    texts: list[str] = []
    size = model.settings.batch_size
    for start in range(0, len(graphs), size):
        check()
        progress(f"evaluating on dev: {start}/{len(graphs)} graphs")
        texts += model.generate([(t, lang) for t, lang, _r in graphs[start : start + size]])
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


def judge(
    state: dict[str, Any], found: dict[str, Any], settings: TrainingSettings, *, final: bool
) -> bool:
    """Add the evaluation ``found`` to the training's ``state``: whether it is the best so
    far by ``stop_metric`` (then ``state["best"]`` names it), else one more evaluation
    without progress, which past ``patience`` sets ``state["stopped"]`` (not at the final
    evaluation: there is nothing left to stop)."""
    state["evaluations"].append(found)
    metric = settings.stop_metric
    value = found[metric]
    best = state["best"]
    better = best is None or (value < best["value"] if metric == "loss" else value > best["value"])
    if better:
        state["best"] = {"step": found["step"], "value": value, "metric": metric}
        state["bad_evaluations"] = 0
        return True
    state["bad_evaluations"] += 1
    patience = settings.patience
    if patience and state["bad_evaluations"] >= patience and not final:
        state["stopped"] = (
            f"early stopping at step {found['step']}: no better "
            f"{METRIC_NAMES[metric]} in {patience} evaluations"
        )
    return False
