"""What TailLens knows about each metric, in one place: its label, description, direction,
axis, precision and what it needs. Every panel, the CLI and the HTML report look here.

Automatic metrics (the scorer's canonical names of :mod:`core.metrics.base`), the app's
human ratings as the report names them (``human_fluency``, ``human_adequacy``) and the
WebNLG 2020 human-evaluation criteria (``webnlg:<criterion>``, :mod:`core.agreement`)
each have a :class:`MetricInfo`. A name not in the registry gets a neutral default
(its own name as label, higher is better, three decimals): :func:`metric_info`.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.metrics.base import (
    BERTSCORE,
    BLEU,
    CHRF,
    ENTITY_PPL,
    ESA,
    HALLUCINATION,
    METEOR,
    PPL,
    ROUGE1,
    ROUGE2,
    ROUGEL,
    SIMILARITY,
    TER,
)


@dataclass(frozen=True)
class MetricInfo:
    name: str  # the ``scores.metric`` column, CLI ``--metrics``, report columns
    label: str  # what tables, plots and headlines call it
    description: str  # a tooltip / help line
    higher_is_better: bool = True  # False: a smaller number is the better text
    log_axis: bool = False  # plotted on a log10 axis (METHODS §8)
    decimals: int = 3  # digits after the point in tables
    needs_reference: bool = False  # scored against the unit's reference texts
    needs_model: bool = False  # needs a causal language model (the run's own or --ppl-model)
    human: bool = False  # a human rating, not computed by the scorer
    counts: bool = False  # a count: whole numbers shown without decimals

    def format(self, value: float | None) -> str:
        """The value as the Scores panel shows it (``—`` for none)."""
        if value is None:
            return "—"
        if self.counts and float(value).is_integer():
            return f"{value:.0f}"
        if self.log_axis and value >= 1000:
            return f"{value:.3g}"
        return f"{value:.{self.decimals}f}"


HUMAN_FLUENCY = "human_fluency"
HUMAN_ADEQUACY = "human_adequacy"
WEBNLG_PREFIX = "webnlg:"

_INFOS = (
    MetricInfo(BLEU, "BLEU", "BLEU (sacrebleu)", decimals=1, needs_reference=True),
    MetricInfo(
        CHRF, "chrF++", "chrF++ (sacrebleu, word order 2)", decimals=1, needs_reference=True
    ),
    MetricInfo(
        TER,
        "TER",
        "TER (sacrebleu; lower is better)",
        higher_is_better=False,
        decimals=1,
        needs_reference=True,
    ),
    MetricInfo(
        METEOR,
        "METEOR",
        "METEOR (nltk; English; needs a local WordNet folder)",
        decimals=1,
        needs_reference=True,
    ),
    MetricInfo(ROUGE1, "ROUGE-1", "ROUGE-1 F", decimals=1, needs_reference=True),
    MetricInfo(ROUGE2, "ROUGE-2", "ROUGE-2 F", decimals=1, needs_reference=True),
    MetricInfo(ROUGEL, "ROUGE-L", "ROUGE-L F", decimals=1, needs_reference=True),
    MetricInfo(
        BERTSCORE,
        "BERTScore",
        "BERTScore F1 (rescaled where a baseline exists)",
        needs_reference=True,
    ),
    MetricInfo(
        PPL,
        "PPL",
        "perplexity of the text under a causal model",
        higher_is_better=False,
        log_axis=True,
        decimals=2,
        needs_model=True,
    ),
    MetricInfo(
        ENTITY_PPL,
        "Entity PPL",
        "perplexity of entity labels alone",
        higher_is_better=False,
        log_axis=True,
        decimals=2,
        needs_model=True,
    ),
    MetricInfo(ESA, "ESA", "entity-based semantic adequacy (ESI@1/ESI@2 per corpus)"),
    MetricInfo(
        HALLUCINATION,
        "Hallucinations",
        "hallucination candidates (count)",
        higher_is_better=False,
        decimals=2,
        counts=True,
    ),
    MetricInfo(
        SIMILARITY, "Graph–text sim.", "graph-text cosine similarity (inversion check in details)"
    ),
    MetricInfo(
        HUMAN_FLUENCY,
        "Fluency (human)",
        "mean of the annotators' fluency ratings (0-5)",
        human=True,
    ),
    MetricInfo(
        HUMAN_ADEQUACY,
        "Adequacy (human, % Yes)",
        "share of the annotators' adequacy answers that are Yes",
        human=True,
    ),
    *(
        MetricInfo(
            f"{WEBNLG_PREFIX}{criterion}",
            f"WebNLG {label} (human)",
            f"WebNLG 2020 human evaluation: {label.lower()}, mean over raters (0-100)",
            human=True,
        )
        for criterion, label in (
            ("correctness", "Correctness"),
            ("data_coverage", "Data coverage"),
            ("fluency", "Fluency"),
            ("relevance", "Relevance"),
            ("text_structure", "Text structure"),
        )
    ),
)
METRICS: dict[str, MetricInfo] = {info.name: info for info in _INFOS}
# The scorer's metrics, in registry order.
AUTOMATIC: tuple[str, ...] = tuple(i.name for i in _INFOS if not i.human)


def metric_info(name: str) -> MetricInfo:
    """The metric's info; a name the registry does not know gets neutral defaults.
    A Scores-panel column ``metric:quality`` is looked up by its metric."""
    known = METRICS.get(name) or METRICS.get(
        name.partition(":")[0] if not name.startswith(WEBNLG_PREFIX) else name
    )
    return known or MetricInfo(name, name, name)


def metric_label(name: str) -> str:
    return metric_info(name).label


def lower_is_better(name: str) -> bool:
    return not metric_info(name).higher_is_better


def format_metric(name: str, value: float | None) -> str:
    return metric_info(name).format(value)


LOWER_IS_BETTER = frozenset(name for name, i in METRICS.items() if not i.higher_is_better)
LOG_METRICS = frozenset(name for name, i in METRICS.items() if i.log_axis)
METRIC_LABELS = {name: i.label for name, i in METRICS.items()}
DESCRIPTIONS = {name: i.description for name, i in METRICS.items() if not i.human}

__all__ = [
    "AUTOMATIC",
    "DESCRIPTIONS",
    "HUMAN_ADEQUACY",
    "HUMAN_FLUENCY",
    "LOG_METRICS",
    "LOWER_IS_BETTER",
    "METRICS",
    "METRIC_LABELS",
    "MetricInfo",
    "format_metric",
    "lower_is_better",
    "metric_info",
    "metric_label",
]
