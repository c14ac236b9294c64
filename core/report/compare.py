"""Group comparisons of the bias report (METHODS §8), as plain data.

A comparison puts two groups of one dimension (tier, sub-tier, language, model, quality,
category) side by side on one metric, **within** a stratum of the other dimensions:
per-item scores of the same model (METHODS §8), the same language, and the same
reference quality (gold and silver are never mixed). Comparing languages therefore
happens within each model and quality; comparing models within each language; and so on.

Every result is a frozen :class:`Comparison`; ``core.report.build`` gathers them into a
report and ``core.report.render`` lays them out.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from itertools import combinations
from typing import Any

import numpy as np

from core.errors import UserFacingError
from core.groups import DIMENSIONS, UNKNOWN, metric_order, order_key
from core.report.comparison import Comparison
from core.report.data import Observation, ScoreFrame
from core.report.settings import DEFAULT_SETTINGS, Settings
from core.report.statistics import bootstrap_medians_cis, finite, mann_whitney_protocol, summarise

STRATA = ("model", "lang", "quality")
# Dimensions whose first group (in canonical order) is the baseline every other is
# compared with; the others compare every pair when there are few groups.
BASELINE_DIMENSIONS = frozenset({"tier", "subtier"})
ALL_PAIRS_UP_TO = 4
# The headlines: head against long tail, languages pooled (core.report.verdict words them).
ALL_LANGUAGES = "all languages"
HEADLINE_PAIR = ("head", "long_tail")

# (metric, stratum key) -> group -> per-item values
Buckets = dict[tuple[str, tuple[str, ...]], dict[str, list[float]]]
# Each pair's two arrays and its own bootstrap seed, for one batched bootstrap.
BootstrapInput = tuple[np.ndarray, np.ndarray, list[int]]


def _bootstrap_seed(seed: int, *key: str) -> list[int]:
    """A comparison's own seed: the report's seed and a stable digest of what it compares,
    so its intervals do not change when other comparisons are added or left out."""
    digest = hashlib.sha256("\x1f".join(key).encode()).digest()
    return [seed, int.from_bytes(digest[:8], "big")]


def default_pairs(dimension: str, values: Sequence[str]) -> list[tuple[str, str]]:
    """Which groups to compare when the user named none (see module constants)."""
    ordered = sorted(
        (v for v in set(values) if v != UNKNOWN), key=lambda v: order_key(dimension, v)
    )
    if len(ordered) < 2:
        return []
    if dimension in BASELINE_DIMENSIONS or len(ordered) > ALL_PAIRS_UP_TO:
        return [(ordered[0], other) for other in ordered[1:]]
    return list(combinations(ordered, 2))


def compare(
    frame: ScoreFrame,
    by: str,
    *,
    metrics: Sequence[str] | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    settings: Settings = DEFAULT_SETTINGS,
) -> list[Comparison]:
    """Every comparison of ``by``'s groups on each metric, within each stratum."""
    if by not in DIMENSIONS:
        raise UserFacingError(f"Cannot compare by {by!r}: choose from {', '.join(DIMENSIONS)}.")
    if not pairs and by != "quality" and _fewer_than_two_groups(frame, by):
        # Nothing to compare where the items have fewer than two known groups (a
        # session without tiers, say): told before every value is sorted into buckets.
        return []
    strata = tuple(d for d in STRATA if d != by)
    buckets = _buckets(frame, by, strata, set(metrics) if metrics else None)
    results: list[Comparison] = []
    bootstrap: list[BootstrapInput] = []
    for metric, key in sorted(buckets, key=lambda k: (metric_order(k[0]), k[1])):
        groups = buckets[(metric, key)]
        stratum = tuple((d, v) for d, v in zip(strata, key, strict=True) if v)
        chosen = pairs if pairs else default_pairs(by, list(groups))
        results += _compare_stratum(by, metric, stratum, groups, chosen, settings, bootstrap)
    if bootstrap:  # every interval in one go: the same numbers as one call per pair
        intervals = bootstrap_medians_cis(bootstrap, resamples=settings.bootstrap_resamples)
        results = [replace(c, ci=ci) for c, ci in zip(results, intervals, strict=True)]
    return results


def _fewer_than_two_groups(frame: ScoreFrame, by: str) -> bool:
    items = {id(o.item): o.item for o in frame.observations}.values()
    return len({getattr(item, by) for item in items} - {None, UNKNOWN}) < 2


def _buckets(
    frame: ScoreFrame, by: str, strata: tuple[str, ...], wanted: set[str] | None
) -> Buckets:
    """The values of each metric and stratum, by ``by``'s group.

    An item's group and stratum are the same for all its values of one quality: made
    once per item and quality (the frame keeps its items alive, so ids stay unique).
    A stratum key is the item's fields of STRATA, the quality in its place, None as ""."""
    buckets: Buckets = defaultdict(lambda: defaultdict(list))
    by_quality = by == "quality"
    fields = [d for d in strata if d != "quality"]
    quality_at = strata.index("quality") if "quality" in strata else None
    placed: dict[tuple[int, str | None], tuple[str | None, tuple[str, ...]]] = {}
    for o in frame.observations:
        metric = o.metric
        if wanted is not None and metric not in wanted:
            continue
        item, quality = o.item, o.quality
        where = placed.get((id(item), quality))
        if where is None:
            parts = [getattr(item, d) for d in fields]
            if quality_at is not None:
                parts.insert(quality_at, quality)
            where = placed[(id(item), quality)] = (
                quality if by_quality else getattr(item, by),
                tuple([part or "" for part in parts]),
            )
        group, key = where
        if group is None:  # e.g. quality of a metric that has none
            continue
        buckets[(metric, key)][group].append(o.value)
    return buckets


def _compare_stratum(
    by: str,
    metric: str,
    stratum: tuple[tuple[str, str], ...],
    groups: dict[str, list[float]],
    chosen: Sequence[tuple[str, str]],
    settings: Settings,
    bootstrap: list[BootstrapInput],
) -> list[Comparison]:
    """The chosen pairs of one metric and stratum; each pair's bootstrap input is
    appended to ``bootstrap`` (in the order of the comparisons returned)."""
    # A group compared with several others (a baseline) is made an array and
    # summarised once.
    arrays: dict[str, np.ndarray] = {}
    summaries: dict[str, Any] = {}
    results = []
    for a, b in chosen:
        if a not in groups or b not in groups:
            continue
        for g in (a, b):
            if g not in arrays:
                arrays[g] = finite(groups[g])
                summaries[g] = summarise(arrays[g])
        if settings.bootstrap_resamples:
            seed = _bootstrap_seed(settings.seed, by, metric, repr(stratum), a, b)
            bootstrap.append((arrays[a], arrays[b], seed))
        test = mann_whitney_protocol(
            arrays[a],
            arrays[b],
            repetitions=settings.repetitions,
            sample_size=settings.sample_size,
            seed=settings.seed,
            alpha=settings.alpha,
        )
        results.append(
            Comparison(
                by=by,
                metric=metric,
                stratum=stratum,
                group_a=a,
                group_b=b,
                a=summaries[a],
                b=summaries[b],
                test=test,
            )
        )
    return results


def headline_comparisons(
    frame: ScoreFrame, metrics: tuple[str, ...] | list[str], settings: Settings
) -> list[Comparison]:
    """Head against long tail on each metric, per model, languages pooled.

    Reference-based metrics use the study table's reference quality only (gold and silver
    are never mixed); reference texts' own scores stay out (they are not a model's).
    """
    quality = settings.study_quality
    pooled_items: dict[int, Any] = {}
    observations = []
    for o in frame.observations:
        if o.metric not in metrics or o.item.is_reference:
            continue
        if o.quality is not None and o.quality != quality:
            continue
        if o.item.tier not in HEADLINE_PAIR:  # no other tier enters these comparisons
            continue
        item = pooled_items.get(id(o.item))
        if item is None:
            item = pooled_items[id(o.item)] = replace(o.item, lang=ALL_LANGUAGES)
        observations.append(Observation(o.metric, o.value, o.quality, item))
    return compare(
        ScoreFrame(observations=observations),
        "tier",
        metrics=list(metrics),
        pairs=[HEADLINE_PAIR],
        settings=settings,
    )
