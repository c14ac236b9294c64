"""Group names and orders of the report: they live in :mod:`core.groups` (a leaf module
the annotation aggregates share); re-exported here so callers do not change."""

from core.groups import (
    BUILT_DATASET,
    DATASET_NAMES,
    DIMENSIONS,
    HEAD_WORDS,
    MODEL_TAIL_ORDER,
    SUBTIER_ORDER,
    TIER_ORDER,
    UNKNOWN,
    category_name,
    dataset_name,
    head_tier,
    matches_tier,
    order_key,
    subtier_group,
    tier_group,
)

__all__ = [
    "BUILT_DATASET",
    "DATASET_NAMES",
    "DIMENSIONS",
    "HEAD_WORDS",
    "MODEL_TAIL_ORDER",
    "SUBTIER_ORDER",
    "TIER_ORDER",
    "UNKNOWN",
    "category_name",
    "dataset_name",
    "head_tier",
    "matches_tier",
    "order_key",
    "subtier_group",
    "tier_group",
]
