"""The report's headline verdict reads TER (an error rate) as lower-is-better."""

from __future__ import annotations

import pytest

from core.report.comparison import Comparison
from core.report.statistics import GroupSummary
from widgets.report.headlines import headline_parts


def _comparison(metric: str, head: float, tail: float) -> Comparison:
    def summary(value: float) -> GroupSummary:
        return GroupSummary(n=10, median=value, q1=value, q3=value, mean=value)

    return Comparison(
        by="tier",
        metric=metric,
        stratum=(),
        group_a="head",
        group_b="long_tail",
        a=summary(head),
        b=summary(tail),
        test=None,
    )


@pytest.mark.parametrize(
    ("metric", "head", "tail", "verdict"),
    [
        ("ter", 40.0, 55.0, "long tail worse"),  # more edits on the tail
        ("ter", 55.0, 40.0, "long tail better"),
        ("chrf++", 55.0, 40.0, "long tail worse"),
    ],
)
def test_verdicts(metric: str, head: float, tail: float, verdict: str) -> None:
    assert verdict in str(headline_parts(_comparison(metric, head, tail), show_model=False))
