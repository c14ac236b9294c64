"""The head-against-long-tail headlines of a report and their verdict, in words.

One place for what the Report panel, ``taillens report`` and the HTML report say: per
metric and model, all languages pooled, head against long tail with the METHODS §8
protocol, the corrected p-value deciding "significant", and which side is worse (for
perplexities and hallucinations lower is better).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.metrics.info import lower_is_better, metric_label

if TYPE_CHECKING:
    from core.report.comparison import Comparison


@dataclass(frozen=True)
class Verdict:
    direction: str  # "long tail worse" | "long tail better" | "no difference"
    significant: bool
    worse: bool | None  # None: no difference in the centres

    @property
    def state(self) -> str:
        return "significant" if self.significant else "not significant"

    def __str__(self) -> str:
        return f"{self.state}: {self.direction}"


def centre(summary: Any) -> float | None:
    """What a headline compares: the median (the mean when there is no median)."""
    return summary.median if summary.median is not None else summary.mean


def verdict(c: Comparison) -> Verdict:
    """Whether the long tail (group b) is worse than the head (group a) on ``c.metric``,
    and whether the difference is significant after the report's correction."""
    head, tail = centre(c.a), centre(c.b)
    if head is None or tail is None or head == tail:
        return Verdict("no difference", c.significant, None)
    worse = (tail < head) != lower_is_better(c.metric)
    return Verdict("long tail worse" if worse else "long tail better", c.significant, worse)


def format_value(value: Any) -> str:
    """A number as the report shows it: to a readable precision; booleans yes/blank."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if value == 0:
            return "0"
        if abs(value) < 1e-3:
            return f"{value:.1e}"
        if abs(value) < 1:
            return f"{value:.3f}"
        if abs(value) < 1000:
            return f"{value:.2f}"
        return f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def format_p(p: float | None, label: str = "p") -> str:
    if p is None:
        return f"{label} n/a"
    return f"{label} = {p:.1e}" if p < 1e-3 else f"{label} = {p:.3f}"


def adjusted_label(correction: str) -> str:
    return {"holm": "Holm p", "bh": "BH q"}.get(correction, "p")


def headline_scope(c: Comparison, *, show_model: bool) -> str:
    scope = []
    if show_model and c.stratum_value("model"):
        scope.append(c.stratum_value("model"))
    if c.stratum_value("quality"):
        scope.append(f"{c.stratum_value('quality')} refs")
    return ", ".join(scope)


def p_text(c: Comparison, correction: str) -> str:
    """``p = 0.003, Holm p = 0.012``: the raw p and, when corrected, the corrected one."""
    text = format_p(c.p_value)
    if correction != "none" and c.p_adjusted is not None:
        text += f", {format_p(c.p_adjusted, adjusted_label(correction))}"
    return text


def ci_text(c: Comparison) -> str:
    """``difference 40.00 [27.50, 52.50]`` (95 % bootstrap interval), or empty."""
    if c.ci is None:
        return ""
    low, high = c.ci.difference
    return (
        f"difference {format_value(c.ci.median_difference)} "
        f"[{format_value(low)}, {format_value(high)}]"
    )


def headline_text(c: Comparison, *, show_model: bool = False, correction: str = "none") -> str:
    """e.g. ``BLEU (model-a, gold refs): head 62.50 vs long tail 22.50, p = 1.6e-04,
    Holm p = 3.1e-03 (significant; long tail worse)``."""
    scope = headline_scope(c, show_model=show_model)
    v = verdict(c)
    return (
        f"{metric_label(c.metric)}{f' ({scope})' if scope else ''}: head "
        f"{format_value(centre(c.a))} vs long tail {format_value(centre(c.b))}, "
        f"{p_text(c, correction)} ({v.state}; {v.direction})"
    )


def headlines_table_rows(headlines: list[Comparison], correction: str) -> list[str]:
    show_model = len({c.stratum_value("model") for c in headlines}) > 1
    return [
        headline_text(c, show_model=show_model, correction=correction)
        + (f"; {ci_text(c)}" if c.ci is not None else "")
        for c in headlines
    ]
