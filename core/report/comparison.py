"""One group comparison of the bias report (METHODS §8), as plain data: computed by
``core.report.compare``, worded by ``core.report.verdict`` (both import it from here)."""

from __future__ import annotations

from dataclasses import dataclass

from core.report.statistics import BootstrapCI, GroupSummary, MannWhitneyResult


@dataclass(frozen=True)
class Comparison:
    """Group ``a`` against group ``b`` on one metric within one stratum."""

    by: str
    metric: str
    stratum: tuple[tuple[str, str], ...]  # e.g. (("model", "X"), ("lang", "en"))
    group_a: str
    group_b: str
    a: GroupSummary
    b: GroupSummary
    test: MannWhitneyResult | None
    p_adjusted: float | None = None  # set across the report's tests (Settings.correction)
    ci: BootstrapCI | None = None  # 95 % bootstrap intervals of the medians and difference

    @property
    def significant(self) -> bool:
        """p < alpha, with the corrected p-value once the report has corrected it."""
        if self.test is None:
            return False
        p = self.p_adjusted if self.p_adjusted is not None else self.test.p_value
        return p < self.test.alpha

    @property
    def p_value(self) -> float | None:
        return None if self.test is None else self.test.p_value

    @property
    def effect_size(self) -> float | None:
        return None if self.test is None else self.test.effect_size

    def stratum_value(self, dimension: str) -> str:
        return dict(self.stratum).get(dimension, "")
