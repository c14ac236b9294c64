"""The bias report's protocol settings (METHODS §8): what every comparison, the study
table and the rendered notes read."""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import UserFacingError
from core.report.statistics import (
    CORRECTIONS,
    DEFAULT_ALPHA,
    DEFAULT_CORRECTION,
    DEFAULT_REPETITIONS,
    DEFAULT_RESAMPLES,
    DEFAULT_SAMPLE_SIZE,
    DEFAULT_SEED,
)
from core.vocab import DEFAULT_QUALITY

STUDY_REFERENCES = ("quality", "pooled", "split")


@dataclass(frozen=True)
class Settings:
    repetitions: int = DEFAULT_REPETITIONS
    sample_size: int = DEFAULT_SAMPLE_SIZE
    seed: int = DEFAULT_SEED
    alpha: float = DEFAULT_ALPHA
    study_quality: str = DEFAULT_QUALITY
    statistic: str = "mean"  # of the study table's cells: "mean" or "median"
    # The study table's references: "quality" (study_quality's only), "pooled" (gold and
    # silver together, TailNLG's Table 2) or "split" (a row per quality, its Tables 7-10).
    study_references: str = "quality"
    correction: str = DEFAULT_CORRECTION  # across every test of one report
    bootstrap_resamples: int = DEFAULT_RESAMPLES  # 0: no confidence intervals

    def check(self) -> None:
        if self.correction not in CORRECTIONS:
            raise UserFacingError(
                f"the multiple-testing correction is one of "
                f"{', '.join(CORRECTIONS)}, not {self.correction!r}"
            )
        if self.bootstrap_resamples < 0:
            raise UserFacingError("--bootstrap must be 0 (no intervals) or more resamples")
        if self.repetitions < 1:
            raise UserFacingError("--repetitions must be at least 1")
        if self.sample_size < 2:
            raise UserFacingError("--sample-size must be at least 2")
        if not 0 < self.alpha < 1:
            raise UserFacingError("--alpha must lie between 0 and 1 (e.g. 0.05)")
        if self.statistic not in ("mean", "median"):
            raise UserFacingError("the study table's statistic is 'mean' or 'median'")
        if self.study_references not in STUDY_REFERENCES:
            raise UserFacingError(
                f"the study table's references are {', '.join(map(repr, STUDY_REFERENCES))}"
            )


# The default settings, one shared instance (Settings is frozen): the default argument of
# the functions that take settings.
DEFAULT_SETTINGS = Settings()
