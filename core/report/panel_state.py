"""What the Report panel's options hold, without Qt: what the session offers to compare
(its metrics and runs) and what the user chose (dimensions, ticks, the Mann–Whitney
protocol, the study table's references, the correction, the humans' subset).

``widgets/report/options.py`` renders a :class:`ReportOptionsState` and writes the
user's edits into it; :meth:`ReportOptionsState.request` is what Build report asks
``core.report`` for. :meth:`choices` and :meth:`restore` are what the window keeps
across restarts (``app/window_state.py``): the user's choices, not the session's
metrics and runs, which another session does not have. Tests drive it without a window.
"""

from __future__ import annotations

from typing import Any

from core.report import ReportRequest, Settings
from core.state import Field, State

_S = Settings()
DEFAULT_DIMENSIONS = ("tier",)
# The choices the window keeps (which runs and metrics are offered is the session's).
CHOICES = (
    "by",
    "repetitions",
    "sample_size",
    "alpha",
    "seed",
    "study_refs",
    "statistic",
    "correction",
    "bootstrap",
    "where",
)


def study_refs_key(quality: str, references: str) -> str:
    """The study references choice as one value (the combo's item data)."""
    return f"{quality}:{references}"


class ReportOptionsState(State):
    # -- what the session offers ------------------------------------------------------------
    metrics: Field[tuple[tuple[str, int], ...]] = Field(())  # (name, per-item values)
    runs_offered: Field[tuple[tuple[int, str, str], ...]] = Field(())  # (id, model, status)
    # -- what the user chose ----------------------------------------------------------------
    by: Field[tuple[str, ...]] = Field(DEFAULT_DIMENSIONS)
    # Unticked rather than ticked: a metric the session gains later starts ticked.
    unticked_metrics: Field[tuple[str, ...]] = Field(())
    runs: Field[tuple[int, ...]] = Field(())  # none ticked: each model's latest output
    repetitions: Field[int] = Field(_S.repetitions)
    sample_size: Field[int] = Field(_S.sample_size)
    alpha: Field[float] = Field(_S.alpha)
    seed: Field[int] = Field(_S.seed)
    study_refs: Field[str] = Field(study_refs_key(_S.study_quality, _S.study_references))
    statistic: Field[str] = Field(_S.statistic)
    correction: Field[str] = Field(_S.correction)
    bootstrap: Field[int] = Field(_S.bootstrap_resamples)
    where: Field[str] = Field("")  # conditions separated by ';' (correlate --where)

    # -- what the session offers ------------------------------------------------------------
    def offer_runs(self, runs: tuple[tuple[int, str, str], ...]) -> None:
        """The session's runs; ticks are kept for the runs still there."""
        there = {run_id for run_id, _model, _status in runs}
        self.update(runs_offered=tuple(runs), runs=tuple(r for r in self.runs if r in there))

    def ticked_metrics(self) -> tuple[str, ...]:
        unticked = set(self.unticked_metrics)
        return tuple(name for name, _count in self.metrics if name not in unticked)

    # -- what Build report asks for -----------------------------------------------------------
    def request(self) -> ReportRequest:
        """What the options ask for (metrics None: every metric offered is ticked)."""
        ticked = self.ticked_metrics()
        quality, _, references = self.study_refs.partition(":")
        return ReportRequest(
            by=tuple(self.by) or DEFAULT_DIMENSIONS,
            metrics=None if len(ticked) == len(self.metrics) else ticked,
            settings=Settings(
                repetitions=int(self.repetitions),
                sample_size=int(self.sample_size),
                alpha=round(float(self.alpha), 6),
                seed=int(self.seed),
                study_quality=quality or _S.study_quality,
                study_references=references or _S.study_references,
                statistic=self.statistic,
                correction=self.correction,
                bootstrap_resamples=int(self.bootstrap),
            ),
            runs=tuple(self.runs) or None,
            where=tuple(c.strip() for c in self.where.split(";") if c.strip()),
        )

    # -- kept across restarts -------------------------------------------------------------------
    def choices(self) -> dict[str, Any]:
        return {
            name: list(v) if isinstance(v := getattr(self, name), tuple) else v for name in CHOICES
        }

    def restore(self, values: dict[str, Any]) -> None:
        """Choices kept earlier; a value of the wrong kind is skipped (settings written by
        hand, or by another version), so a bad one never stops the panel from opening."""
        kept: dict[str, Any] = {}
        for name in CHOICES:
            if name not in values:
                continue
            value, default = values[name], getattr(type(self), name).default
            if isinstance(default, tuple):
                if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
                    kept[name] = tuple(value)
            elif isinstance(default, float):
                if isinstance(value, int | float) and not isinstance(value, bool):
                    kept[name] = float(value)
            elif isinstance(value, type(default)) and not isinstance(value, bool):
                kept[name] = value
        self.update(**kept)


class ReportState(ReportOptionsState):
    """The options, and what the panel shows of the builds: whether a session is open, a
    build running and its progress, and whether the report shown is out of date."""

    session: Field[bool] = Field(True)  # a session is open: Build report can run
    busy: Field[bool] = Field(False)  # a build is running
    progress: Field[tuple[float, float | None, str] | None] = Field(None)  # done, total, words
    stale: Field[bool] = Field(False)  # what a report is built from changed since

    def can_build(self) -> bool:
        return self.session and not self.busy

    def started(self) -> None:
        self.update(busy=True, progress=None)
