"""WDV's aggregation rules for one item (METHODS §9): the adequacy majority with ties to
the most cautious answer, the adequacy percentage, fluency mean and median, and the
sampling weight of an imported WDV record. The one definition the summaries, the report
and the WDV export (:mod:`core.formats.wdv.writer`) use."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

from core.annotation.types import NO, NOT_SURE, YES

# Adequacy answers from the most cautious to the least: a tie goes to the first of them.
CAUTION_ORDER = (NOT_SURE, NO, YES)


def adequacy_majority(votes: Sequence[int]) -> int | None:
    """The item's adequacy answer as WDV computed it (METHODS §9).

    The answer given by more than half of the votes (a strict majority); without one,
    the most cautious of the answers with the most votes (Not sure over No over Yes).
    With WDV's five votes per item that is exactly "a tie goes to the most cautious of
    the tied answers": ``[0, 0, 1, 1, 2]`` gives No, ``[0, 0, 2, 2, 1]`` Not sure.
    None without votes."""
    if not votes:
        return None
    counts = Counter(int(v) for v in votes)
    answer, n = counts.most_common(1)[0]
    if n * 2 > len(votes):
        return answer
    best = max(counts.values())
    return next(code for code in CAUTION_ORDER if counts.get(code) == best)


def adequacy_percentage(votes: Sequence[int], majority: int | None = None) -> float | None:
    """Share of Yes votes (0-1; Not sure counts as not Yes), and 0 when the item's
    majority (:func:`adequacy_majority`) is Not sure, as WDV computed it. None without
    votes."""
    if not votes:
        return None
    if majority is None:
        majority = adequacy_majority(votes)
    if majority == NOT_SURE:
        return 0.0
    return sum(1 for v in votes if int(v) == YES) / len(votes)


def aggregates(fluency: Sequence[int], adequacy: Sequence[int]) -> dict[str, Any]:
    """One item's aggregates under WDV's names: fluency mean and median, adequacy
    majority (:func:`adequacy_majority`) and percentage (:func:`adequacy_percentage`).

    The one definition used by the annotation summaries, the report and the WDV export."""
    majority = adequacy_majority(adequacy)
    return {
        "fluency_mean": statistics.fmean(fluency) if fluency else None,
        "fluency_median": float(statistics.median(fluency)) if fluency else None,
        "adequacy_majority_voted": majority,
        "adequacy_percentage": adequacy_percentage(adequacy, majority),
    }


def item_aggregates(fluency: Sequence[int], adequacy: Sequence[int]) -> dict[str, Any]:
    """:func:`aggregates` of one item's ratings (kept under this name for callers)."""
    return aggregates(list(fluency), list(adequacy))


def sampling_weight(attributes: Any) -> float | None:
    """The ``sampling_weight`` of an imported WDV record (its stratified-sampling weight),
    else None. Only a positive finite number counts."""
    record = attributes.get("record") if isinstance(attributes, dict) else None
    value = record.get("sampling_weight") if isinstance(record, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None
