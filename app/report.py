"""Wiring of the Report panel: build the bias report as a job, show it, export it.

``core.report`` does the work (load per-item values, compare with the METHODS §8
protocol, lay out the tables, plot specs, CSV and HTML); this controller runs it off
the UI thread through ``PanelContext.run_job`` (app.context) and hands the plain results to
``widgets.report.panel.ReportPanel``. Besides the report, the job computes the panel's
headlines: head against long tail per metric and model, all languages pooled, with
the very same protocol (``core.report.compare``), so a live demo reads the long-tail
gap in one line per metric.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer

from core.changes import Topic
from core.desktop.logs import get_logger
from core.jobs import Job, JobContext, JobSucceeded
from core.report.build import ReportCache

if TYPE_CHECKING:
    from app.context import PanelContext
    from app.jobrunner import JobHandle
    from core.report import BiasReport, Comparison, PlotSpec, ReportRequest
    from core.store import SessionStore
    from widgets.report.panel import ReportPanel

log = get_logger("report")

# What a report is built from: scores, ratings, the texts and the units (with the tier
# each unit was built under: the Browser's saved tiers, Topic.TIERS, do not change it),
# and each member's model_tail sub-tier (the report's "Model likelihood" dimension).
AVAILABLE_READ = "report.available"  # the view read of the metrics and runs to report on
REPORT_TOPICS = frozenset(
    {
        Topic.SCORES,
        Topic.ANNOTATIONS,
        Topic.RUNS,
        Topic.UNITS,
        Topic.REFERENCES,
        Topic.LIKELIHOOD,
    }
)


@dataclass(frozen=True)
class ReportView:
    """What one build hands the panel."""

    report: BiasReport
    specs: list[PlotSpec]
    headlines: list[Comparison]


def headline_comparisons(report: BiasReport) -> list[Comparison]:
    """Head against long tail on each metric of the report, per model, languages pooled
    (computed and corrected with the report's other tests by core.report)."""
    return list(report.headlines)


class ReportController(QObject):
    def __init__(self, ctx: PanelContext, panel: ReportPanel) -> None:
        super().__init__(panel)
        self.ctx, self.panel = ctx, panel
        self.view: ReportView | None = None
        self.handle: JobHandle | None = None  # the build running
        # What the builds made on the session's current state (core.report.ReportCache),
        # so an option change rebuilds only the parts it touches; a new one whenever the
        # session is opened or written.
        self.cache = ReportCache()
        self.last_export: JobHandle | None = None
        # What the session holds, as last listed (None: not listed yet).
        self.metrics: list[tuple[str, int]] | None = None
        self._auto_built_for: object | None = None  # the store last built automatically

        panel.build_requested.connect(self.build)
        panel.cancel_requested.connect(self.cancel)
        panel.csv_requested.connect(lambda folder: self.export_csv(Path(folder)))
        panel.html_requested.connect(lambda path: self.export_html(Path(path)))
        panel.figures_requested.connect(self.export_figures)
        ctx.session_changed.connect(lambda _store: self.session_opened())
        ctx.changes.subscribe(REPORT_TOPICS, lambda _topics: self.session_written(), self)
        self.dock = ctx.dock("report")
        if self.dock is not None:
            self.dock.visibilityChanged.connect(self._on_visibility)

    # -- session -----------------------------------------------------------------------------
    def session_opened(self) -> None:
        self.view = None
        self.handle = None
        self.cache = ReportCache()
        self.metrics = None
        self.panel.set_busy(False)
        self.panel.clear()
        self.refresh_available()
        # Built at once only where it can be seen: a Report tabbed behind another panel
        # builds when its tab is clicked (a whole report at every start, unseen, cost
        # seconds of CPU before the window was idle).
        if self.ctx.in_view("report"):
            QTimer.singleShot(0, self, self.build_when_shown)

    def refresh_available(
        self, then: Callable[[list[tuple[str, int]]], object] | None = None
    ) -> None:
        """List the session's metrics and runs off the UI thread (a view read: the newest
        wins) and show them; ``then(metrics)`` runs once they are shown."""
        store = self.ctx.store
        if store is None:
            self.metrics = []
            self.panel.set_available([], session=False)
            if then is not None:
                then([])
            return
        from core.report.data import available_metrics, available_runs

        def read(store: SessionStore) -> tuple[list[tuple[str, int]], list[Any]] | None:
            try:
                return available_metrics(store), available_runs(store)
            except Exception as error:  # a locked session must not break the panel
                log.warning("could not list the session's metrics: %s", error)
                return None

        def listed(result: tuple[list[tuple[str, int]], list[Any]] | None) -> None:
            if result is not None:
                self.metrics, runs = result
                self.panel.set_runs(runs)
                self.panel.set_available(self.metrics)
            if then is not None:
                then(self.metrics or [])

        self.ctx.reads.request(AVAILABLE_READ, read, listed)

    def _on_visibility(self, visible: bool) -> None:
        if visible:
            QTimer.singleShot(0, self, self.build_when_shown)

    def build_when_shown(self) -> None:
        """The first time the panel is seen on a session with scores, build at once with
        the default options (a demo needs no clicks); later builds are the user's."""
        store = self.ctx.store
        if not self._may_build_itself(store):
            return

        def listed(metrics: list[tuple[str, int]]) -> None:
            if metrics and store is self.ctx.store and self._may_build_itself(store):
                self._auto_built_for = store
                self.build()

        self.refresh_available(then=listed)

    def _may_build_itself(self, store: SessionStore | None) -> bool:
        return not (
            store is None
            or self.view is not None
            or self.handle is not None
            or self._auto_built_for is store
        )

    # -- building ----------------------------------------------------------------------------
    def build(self, request: ReportRequest | None = None) -> JobHandle | None:
        """Build the report as a job for ``request`` (default: the panel's options)."""
        from core.report import plot_specs
        from widgets.report.panel import NO_SCORES_MESSAGE

        store = self.ctx.store
        if store is None:
            return None
        if self.handle is not None:
            return self.handle  # one build at a time
        if self.metrics == []:  # the session's metrics, as last listed: none
            self.panel.clear()
            self.panel.show_message(NO_SCORES_MESSAGE)
            return None
        cache = self.cache
        job = (request if request is not None else self.panel.request()).job(store, cache)
        build_report = job.run

        def run(ctx: JobContext) -> ReportView | None:
            from core.report.data import available_metrics

            if not available_metrics(store):  # read here, not on the UI thread
                return None
            report = build_report(ctx)
            ctx.check_cancelled()
            ctx.progress(1, 1, "plots")
            specs = cache.get(
                ("plots", report.frame.picked_runs, report.metrics, report.settings.study_quality),
                lambda: plot_specs(report),
            )
            return ReportView(report, specs, headline_comparisons(report))

        job.run = run  # type: ignore[assignment]  # the same job, now returning a ReportView
        handle = self.ctx.run_job(job)
        self.handle = handle
        self.panel.set_busy(True)
        handle.progressed.connect(self.panel.show_progress)
        handle.finished.connect(lambda outcome, h=handle: self._built(h, outcome))
        return handle

    def cancel(self) -> None:
        if self.handle is not None:
            self.handle.cancel()

    def _built(self, handle: JobHandle, outcome: Any) -> None:
        if handle is not self.handle:
            return  # a build of a session no longer open
        self.handle = None
        self.panel.set_busy(False)
        if isinstance(outcome, JobSucceeded) and outcome.result is None:
            from widgets.report.panel import NO_SCORES_MESSAGE

            self.panel.clear()
            self.panel.show_message(NO_SCORES_MESSAGE)
        elif isinstance(outcome, JobSucceeded):
            self.view = outcome.result
            self.panel.show_report(self.view.report, self.view.specs, self.view.headlines)

    def session_written(self) -> None:
        """What a report is built from changed: list the metrics and runs again, and say
        so on a report already shown (it is not rebuilt behind the user's back)."""
        if self.ctx.store is None:
            return
        self.cache = ReportCache()  # what was built describes the session as it was
        self.refresh_available()
        if self.view is not None:
            self.panel.mark_stale()

    # -- export ------------------------------------------------------------------------------
    def export_csv(self, folder: Path) -> JobHandle | None:
        """Every table as CSV into ``folder`` (core's write_csv, as a job)."""
        from core.report import write_csv

        if self.view is None:
            return None
        report = self.view.report
        job = Job(
            f"Export report tables to {folder.name}",
            lambda _ctx: write_csv(report, folder),
            kind="report.csv",
            params={"folder": str(folder)},
            uses_session=False,
        )
        handle = self.last_export = self.ctx.run_job(job)
        handle.finished.connect(
            lambda outcome: self._exported(
                outcome, lambda paths: f"{len(paths)} CSV files written to {folder}", folder
            )
        )
        return handle

    def export_html(self, path: Path) -> JobHandle | None:
        """The self-contained HTML report (core's write_html, as a job)."""
        from core.errors import UserFacingError
        from core.io.output_guard import check_output_target
        from core.report import write_html

        try:  # a session (the open one above all) is refused before any work
            check_output_target(path)
        except UserFacingError as error:
            self.ctx.notify.show_error("Report not exported", str(error))
            return None
        if self.view is None:
            return None
        report = self.view.report
        job = Job(
            f"Export HTML report {path.name}",
            lambda _ctx: write_html(report, path),
            kind="report.html",
            params={"file": str(path)},
            uses_session=False,
        )
        handle = self.last_export = self.ctx.run_job(job)
        handle.finished.connect(
            lambda outcome: self._exported(
                outcome,
                lambda written: (
                    f"Report written to {written.path} ({written.tables} "
                    f"tables, {written.plots} plots)"
                ),
                path,
            )
        )
        return handle

    def export_figures(self, job: Job) -> JobHandle:
        """Every plot as PNG, SVG and PDF (the panel's All…): a core job, off the UI
        thread (about a second per plot at 300 dpi)."""
        handle = self.last_export = self.ctx.run_job(job)
        handle.finished.connect(
            lambda outcome: self._exported(
                outcome,
                lambda written: (
                    f"{len(written)} figure files written to "
                    f"{written[0].parent if written else 'the folder'}"
                ),
                None,
            )
        )
        return handle

    def _exported(self, outcome: Any, describe: Any, target: Path | None) -> None:
        # On finished, after the runner's own "done in x s" line, so this one stays.
        if isinstance(outcome, JobSucceeded):
            text = describe(outcome.result)
            self.ctx.notify.show_status(text, 15_000)
            written = outcome.result
            if target is None and isinstance(written, list) and written:
                target = Path(written[0]).parent  # the figures' folder
            if target is not None:  # with Open and Show in folder
                self.ctx.notify.show_written("Export finished", text, Path(target))
