"""What group a verbalisation falls in: tier, sub-tier, language, model, quality, category;
and the order and labels of metrics.

One place for the words of CONVENTIONS.md (qualities, languages and model names are
core.vocab's), shared by the report and the annotation aggregates (it imports only the
metrics registry and core.vocab, so both can import it).
TailNLG's ``top_head`` counts as ``head``; a unit's category is the session's category,
else the category attribute of an imported TailNLG/WebNLG entry.
"""

from __future__ import annotations

from typing import Any

# Labels and the rest of what is known about a metric: core.metrics.info (the registry).
from core.metrics.info import HUMAN_ADEQUACY, HUMAN_FLUENCY
from core.metrics.info import METRIC_LABELS as METRIC_LABELS
from core.metrics.info import metric_label as metric_label
from core.vocab import LANGUAGES, QUALITIES, UNKNOWN

# Orders in which groups are listed and paired (the first of a dimension is the baseline).
TIER_ORDER = ("head", "torso", "long_tail")
SUBTIER_ORDER = (
    "head",
    "torso",
    "rare_claims",
    "long_tail",
    "long_tail_en",
    "long_tail_it",
    "long_tail_es",
)
# By the model's likelihood (LINK): a unit's root entity in its category (core.tiers.likelihood).
MODEL_TAIL_ORDER = ("model_head", "model_tail")
DIMENSIONS = ("tier", "subtier", "lang", "model", "quality", "category", "dataset", "model_tail")
# Where a unit comes from: a benchmark file's format, else built from Wikidata in the app.
DATASET_NAMES = {"tailnlg": "TailNLG", "webnlg": "WebNLG", "wdv": "WDV"}
BUILT_DATASET = "Wikidata"
HEAD_WORDS = frozenset({"head", "top_head"})

# Metrics: the columns of the TailNLG study's tables, in their order; the human judgments.
STUDY_METRICS = ("bertscore", "bleu", "chrf++", "rouge1", "rouge2", "rougeL", "ppl")
HUMAN_METRICS = (HUMAN_FLUENCY, HUMAN_ADEQUACY)


def metric_order(metric: str) -> tuple[int, str]:
    """Sort key of a metric: the study's columns, then the others, then alphabetical."""
    known = (*STUDY_METRICS, "entity_ppl", "esa", "hallucination", "similarity", *HUMAN_METRICS)
    return (known.index(metric), metric) if metric in known else (len(known), metric)


def head_tier(tier: str | None) -> str | None:
    """TailNLG's ``top_head`` is the head; any other tier (or None) as it is."""
    return "head" if tier in HEAD_WORDS else tier


def tier_group(tier: str | None) -> str:
    """head / torso / long_tail (``top_head`` is head); ``(none)`` when the unit has none."""
    if tier is None or tier == "":
        return UNKNOWN
    return head_tier(tier) or UNKNOWN


def subtier_group(tier: str | None, sub_tier: str | None) -> str:
    """The sub-tier for long-tail units (long_tail_en/it/es), else the tier; TailNLG's
    ``rare_claims`` (head entities with rarely stated claims, tier ``top_head``) is always
    a group of its own, never folded into head."""
    group = tier_group(tier)
    if sub_tier == "rare_claims":
        return sub_tier
    if group == "head" or not sub_tier or sub_tier in HEAD_WORDS:
        return group
    return sub_tier


def dataset_name(attributes: Any) -> str:
    """The benchmark a unit was imported from (TailNLG, WebNLG, WDV: the ``format`` its
    import recorded), else ``Wikidata`` for a unit built or sampled in the app."""
    fmt = attributes.get("format") if isinstance(attributes, dict) else None
    if isinstance(fmt, str) and fmt:
        return DATASET_NAMES.get(fmt, fmt)
    return BUILT_DATASET


def category_name(category_id: int | None, attributes: Any, categories: dict[int, str]) -> str:
    """The session's category of a unit, else the one its imported entry named."""
    if category_id is not None and category_id in categories:
        return categories[category_id]
    entry = attributes.get("entry") if isinstance(attributes, dict) else None
    name = entry.get("category") if isinstance(entry, dict) else None
    if not name and isinstance(attributes, dict) and isinstance(attributes.get("record"), dict):
        name = attributes["record"].get("theme_label")  # a WDV record's theme
    return str(name) if name else UNKNOWN


def order_key(dimension: str, value: str) -> tuple[int, str]:
    """Sort key: the dimension's canonical order first, then alphabetical."""
    order = {
        "tier": TIER_ORDER,
        "subtier": SUBTIER_ORDER,
        "lang": LANGUAGES,
        "quality": QUALITIES,
        "model_tail": MODEL_TAIL_ORDER,
    }.get(dimension, ())
    return (order.index(value), value) if value in order else (len(order), value)


def matches_tier(wanted: set[str], tier: str | None, sub_tier: str | None) -> bool:
    """Whether a unit is in one of the ``wanted`` tiers or sub-tiers (head = top_head)."""
    return bool(
        wanted & {tier_group(tier), subtier_group(tier, sub_tier), tier or "", sub_tier or ""}
    )
