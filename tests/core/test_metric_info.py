"""One registry of what is known about each metric (core.metrics.info)."""

from __future__ import annotations

import importlib
import inspect

import pytest

from core.agreement.human import APP_RATINGS, WEBNLG_PREFIX
from core.formats.webnlg.human_eval import WEBNLG_CRITERIA
from core.groups import HUMAN_METRICS, STUDY_METRICS, metric_order
from core.metrics import ALL_METRICS, FACTORIES, GROUPS, MODEL_METRICS, REFERENCE_BASED
from core.metrics.info import (
    AUTOMATIC,
    LOG_METRICS,
    LOWER_IS_BETTER,
    METRICS,
    format_metric,
    metric_info,
    metric_label,
)

METRIC_MODULES = ("reference", "meteor", "bertscore", "perplexity", "esa", "similarity")


def test_every_metric_the_scorer_can_produce_has_an_info() -> None:
    assert set(FACTORIES) == set(ALL_METRICS) == set(AUTOMATIC)
    for names in GROUPS.values():
        assert set(names) <= set(METRICS)


def test_every_metric_class_name_has_an_info() -> None:
    """The ``name`` every metric class writes into ``scores.metric`` (ROUGE's variants
    are set per instance: rouge1/2/L are in ALL_METRICS)."""
    seen = set()
    for module in METRIC_MODULES:
        for _, cls in inspect.getmembers(
            importlib.import_module(f"core.metrics.{module}"), inspect.isclass
        ):
            name = getattr(cls, "name", None)
            if cls.__module__.startswith("core.metrics.") and isinstance(name, str) and name:
                seen.add(name)
                assert name in METRICS, cls
    assert len(seen) >= 8


def test_human_ratings_have_an_info() -> None:
    for name in HUMAN_METRICS:
        assert METRICS[name].human
    assert {f"human_{r}" for r in APP_RATINGS} == set(HUMAN_METRICS)
    for criterion in WEBNLG_CRITERIA.values():
        assert METRICS[WEBNLG_PREFIX + criterion].human


def test_the_facts_the_panels_used_before() -> None:
    assert {"ppl", "entity_ppl", "hallucination", "ter"} == LOWER_IS_BETTER
    assert {"ppl", "entity_ppl"} == LOG_METRICS
    assert {n for n in AUTOMATIC if METRICS[n].needs_reference} == set(REFERENCE_BASED)
    assert {n for n in AUTOMATIC if METRICS[n].needs_model} == set(MODEL_METRICS)
    assert [metric_label(m) for m in STUDY_METRICS] == [
        "BERTScore",
        "BLEU",
        "chrF++",
        "ROUGE-1",
        "ROUGE-2",
        "ROUGE-L",
        "PPL",
    ]
    assert sorted(["ter", "human_adequacy", "bleu", "esa"], key=metric_order) == [
        "bleu",
        "esa",
        "human_adequacy",
        "ter",
    ]


@pytest.mark.parametrize(
    ("column", "value", "text"),
    [
        ("bleu", 41.234, "41.2"),
        ("chrf++:gold", 55.55, "55.5"),
        ("ter", 12.0, "12.0"),
        ("hallucination", 3.0, "3"),
        ("hallucination", 1.5, "1.50"),
        ("ppl", 12.345, "12.35"),
        ("entity_ppl", 123456.0, "1.23e+05"),
        ("bertscore", 0.91234, "0.912"),
        ("esa", 1.0, "1.000"),
        ("unknown_metric", 0.5, "0.500"),
        ("bleu", None, "—"),
    ],
)
def test_numbers_are_shown_to_the_metrics_precision(
    column: str, value: float | None, text: str
) -> None:
    assert format_metric(column, value) == text


def test_an_unknown_name_gets_neutral_defaults() -> None:
    info = metric_info("made_up")
    assert (info.label, info.description, info.higher_is_better) == ("made_up", "made_up", True)
    assert metric_info("webnlg:fluency").label == "WebNLG Fluency (human)"
