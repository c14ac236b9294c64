"""The Scores panel's Retrieval dialog: its jobs (core.metrics.retrieval.job) and results."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from core.errors import UserFacingError
from core.jobs import Job, JobContext, JobFailed, JobSucceeded
from widgets.retrieval_dialog import RetrievalDialog, RetrievalOptions

if TYPE_CHECKING:
    from app.context import PanelContext
    from app.jobrunner import JobHandle
    from core.metrics.retrieval.job import RetrievalSummary
    from core.metrics.retrieval.ranking import GraphHit
    from widgets.scores import ScoresPanel


class RetrievalController(QObject):
    """Opens the dialog from the Scores panel and runs its two requests as jobs."""

    def __init__(
        self,
        ctx: PanelContext,
        panel: ScoresPanel,
        rows: Callable[[], Sequence[Any]],
        parent: QObject | None = None,
    ) -> None:
        """``panel``: the Scores panel it opens from; ``rows``: the rows it shows."""
        super().__init__(parent)
        self.ctx, self.panel, self._rows = ctx, panel, rows
        self.dialog: RetrievalDialog | None = None
        self.handle: JobHandle | None = None
        panel.retrieval_requested.connect(self.open_dialog)

    def open_dialog(self) -> RetrievalDialog | None:
        if self.ctx.store is None:
            self.ctx.notify.show_error("No session", "Open a session first.")
            return None
        if self.dialog is None:
            self.dialog = RetrievalDialog(self.panel)
            self.dialog.find_requested.connect(self.find)
            self.dialog.worst_requested.connect(self.worst)
            self.dialog.cancel_requested.connect(self.cancel)
            self.dialog.output_chosen.connect(self.panel.select_text)
        self.dialog.set_text_available(self._selected() is not None)
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def _selected(self) -> Any:
        key = self.panel.selected_key()
        return next((r for r in self._rows() if r.verbalisation_id == key), None)

    def _start(self, job: Job[Any], message: str, done: Any) -> JobHandle | None:
        assert self.dialog is not None
        if self.handle is not None and not self.handle.done:
            self.ctx.notify.show_error(
                "Retrieval already running", "Wait for it to finish or cancel it first."
            )
            return None
        handle = self.handle = self.ctx.run_job(job)
        dialog = self.dialog
        dialog.job_started(message)
        handle.progressed.connect(lambda p: dialog.job_progress(p.done, p.total, p.message))
        handle.finished.connect(lambda outcome: self._finished(outcome, done))
        return handle

    def _finished(self, outcome: Any, done: Any) -> None:
        if self.dialog is None:
            return
        if isinstance(outcome, JobSucceeded):
            done(outcome.result)
        elif isinstance(outcome, JobFailed):
            self.dialog.job_finished(f"Failed: {outcome.message}")
        else:
            self.dialog.job_finished("Cancelled; the encodings made so far are cached.")

    def find(self, options: RetrievalOptions) -> JobHandle | None:
        """The graphs closest to the selected text, in its language."""
        from core.metrics.retrieval.encoders import open_encoder
        from core.metrics.retrieval.ranking import find_graphs

        store, row = self.ctx.store, self._selected()
        if store is None or self.dialog is None:
            return None
        if row is None or not (row.text or "").strip():
            self.ctx.notify.show_error("No text", "Select a text in the Scores table first.")
            return None
        try:
            encoder = open_encoder(options.encoder)
        except UserFacingError as error:
            self.ctx.notify.show_error("Cannot retrieve", str(error))
            return None
        top, text, lang = options.top, row.text, row.lang

        def run(ctx: JobContext) -> list[GraphHit]:
            return find_graphs(store, text, encoder, lang=lang, k=top, ctx=ctx)

        def shown(hits: list[GraphHit]) -> None:
            assert self.dialog is not None
            self.dialog.show_graphs(hits, row.unit_id, row.verbalisation_id)

        return self._start(
            Job(
                "Find the graph behind a text",
                run,
                kind="retrieval",
                params={"verbalisation": row.verbalisation_id},
            ),
            "Encoding the session's graphs…",
            shown,
        )

    def worst(self, options: RetrievalOptions) -> JobHandle | None:
        """Retrieval over one run's outputs; list those that match their graph worst."""
        from core.metrics.retrieval.job import RetrievalRequest, retrieval_job

        store = self.ctx.store
        if store is None or self.dialog is None:
            return None
        filters = self.panel.filters()
        row = self._selected()
        run_id = filters.run_id or (row.run_id if row is not None else None)
        if run_id is None:
            self.ctx.notify.show_error(
                "Choose a run",
                "Choose a run in the Scores panel's run filter (or select one of its texts).",
            )
            return None
        lang = filters.lang
        try:
            job = retrieval_job(
                store,
                RetrievalRequest(
                    run_id=run_id,
                    langs=(lang,) if lang else None,
                    encoder=options.encoder,
                    inversion=False,
                ),
            )
        except UserFacingError as error:
            self.ctx.notify.show_error("Cannot retrieve", str(error))
            return None
        top = options.top

        def shown(summary: RetrievalSummary) -> None:
            assert self.dialog is not None
            self.dialog.show_worst(summary, run_id, top)

        return self._start(job, f"Retrieval over run {run_id}…", shown)

    def cancel(self) -> None:
        if self.handle is not None and not self.handle.done:
            self.handle.cancel()
