"""The Scores panel's controller: refreshes, pages, the selected text, scoring jobs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from app.retrieval import RetrievalController
from app.scores.detail import text_detail
from app.scores.dialog import MODELS_KIND, find_choices
from app.scores.notes import ModelNotes
from app.scores.reads import (
    LOAD_TITLE,
    MORE_KIND,
    MORE_TITLE,
    READ_KEY,
    ScoresData,
    ScoresView,
    load_scores,
    summary_rows,
    table_row,
)
from app.scores.synonyms import open_synonyms
from core.changes import Topic
from core.errors import UserFacingError
from core.jobs import Job, JobFailed, JobSucceeded, JobWasCancelled
from core.labels import plural
from core.metrics.score_pages import (
    KEY_COLUMNS,
    PAGE_SIZE,
    ScoresFilter,
    ScoreSort,
    read_page,
    read_row,
    read_scores,
)

if TYPE_CHECKING:
    from app.context import PanelContext
    from app.jobrunner import JobHandle
    from core.metrics.scoring import (
        ScoringRequest,
        SentenceScoreRow,
    )
    from core.store import SessionStore
    from widgets.scores import ScoresPanel


# What the table and summary show: texts, their scores, references and units (a unit's
# tier is its own, kept when the Browser's tiers move: Topic.TIERS changes nothing here).
TABLE_TOPICS = frozenset({Topic.RUNS, Topic.SCORES, Topic.REFERENCES, Topic.UNITS})
# What the selected text's detail shows besides: its ratings and its unit's references.
DETAIL_TOPICS = frozenset({Topic.ANNOTATIONS, Topic.REFERENCES, Topic.SCORES})


class ScoresController(QObject):
    def __init__(self, ctx: PanelContext, panel: ScoresPanel) -> None:
        super().__init__(panel)
        self.ctx, self.panel = ctx, panel
        self.rows: list[SentenceScoreRow] = []  # the texts in the table (pages loaded)
        self.data: ScoresData | None = None  # the last read of the choices, for filters
        self.view: ScoresView | None = None  # the last refresh shown (its filter and sort)
        self.loading: JobHandle | None = None  # the newest refresh job, while it runs
        self.fetching: JobHandle | None = None  # the next page's job, while it runs
        self.models_handle: JobHandle | None = None  # the Score… dialog's model scan
        self.page_size = PAGE_SIZE
        self._generation = 0  # bumped by each refresh: older results are stale
        self._read_pending = False  # a read was asked for and has not been shown yet
        self.handle: JobHandle | None = None
        self.model_notes = ModelNotes()  # which models the scores come from
        self.shown_text: int | None = None  # the verbalisation in the detail

        panel.filters_changed.connect(lambda _f: self.refresh(reload=False))
        panel.sort_changed.connect(lambda _s: self.refresh(reload=False))
        panel.more_requested.connect(self.fetch_more)
        panel.text_selected.connect(self.show_text)
        panel.score_dialog_requested.connect(self.open_dialog)
        panel.synonyms_requested.connect(self.open_synonyms)
        panel.score_requested.connect(self.score)
        panel.cancel_requested.connect(self.cancel)
        panel.export_texts_requested.connect(lambda path: self.export_texts(Path(path)))
        ctx.session_changed.connect(lambda _store: self.session_opened())
        # Failed and cancelled jobs too: a verbalise run keeps the texts it finished.
        ctx.changes.subscribe(TABLE_TOPICS, lambda _topics: self.refresh(), self)
        ctx.changes.subscribe(DETAIL_TOPICS, lambda _topics: self._detail_changed(), self)
        self.retrieval = RetrievalController(ctx, panel, lambda: self.rows, self)

    # -- session and refresh -------------------------------------------------------------
    def session_opened(self) -> None:
        self.data = None
        self.shown_text = None
        self.panel.show_detail(None)
        self.refresh()

    def refresh(self, *, reload: bool = True) -> JobHandle | None:
        """Table, summary, filters and notes: a view read (off the UI thread) reads the
        choices again (``reload``, else those last read are kept) and page 1 with the
        figures, and :meth:`_loaded` shows the result."""
        self._generation += 1
        self.loading = self.fetching = None
        store = self.ctx.store
        if store is None:
            self.rows, self.data, self.view, self._read_pending = [], None, None, False
            self.panel.set_filter_choices([], [], [])
            self.panel.show_rows([], [], {}, 0)
            self.panel.show_summary([], [], {})
            self.panel.show_notes("", "")
            return None
        # A filter change while a read is on its way waits for that read: it asks again.
        cached = self.data
        if reload or self._read_pending or cached is None or cached.store is not store:
            cached, self._read_pending = None, True
        # The filters and the table's sort: page 1 comes sorted as the table shows it.
        chosen, sort = self.panel.filters(), self.panel.sort_spec()

        def read(store: SessionStore) -> ScoresView:
            data = cached if cached is not None else load_scores(store)
            return self.build_view(data, chosen, sort)

        # The session rule's view read (app.session_io): a newer refresh supersedes this
        # one (cancelled, its result dropped), as does another session.
        handle = self.ctx.reads.request(READ_KEY, read, self._loaded, title=LOAD_TITLE)
        self.loading = handle
        if handle is not None:
            # A read that fails or is superseded leaves what is shown as it is.
            handle.finished.connect(lambda _o, h=handle: self._read_ended(h))
        return handle

    def _read_ended(self, handle: JobHandle) -> None:
        if self.loading is handle:
            self.loading = None

    def _loaded(self, view: ScoresView) -> None:
        self.loading = None
        self.show_view(view)

    def show_view(self, view: ScoresView) -> None:
        """Hand a refresh's plain rows to the panel (the only part on the UI thread)."""
        data = view.data
        self.data, self.view, self._read_pending = data, view, False
        self.rows = list(view.rows)
        self.panel.set_filter_choices(
            [(run_id, f"run {run_id}: {name} ({n:,})") for run_id, name, n in data.runs],
            data.langs,
            data.tiers,
        )
        self.panel.show_rows(
            view.table,
            view.columns,
            view.tips,
            data.total,
            ranges=view.ranges,
            scored=view.scored,
            sorted_by=view.sorted_by,
            matching=view.matching,
        )
        self.panel.show_notes(*view.notes)
        self.panel.show_summary(view.summary, view.summary_columns, view.tips)

    def build_view(
        self, data: ScoresData, chosen: ScoresFilter, sort: ScoreSort | None = None
    ) -> ScoresView:
        """Page 1 of the texts that pass ``chosen`` in ``sort``'s order, the figures of
        all of them and the summary, formatted for the panel (reads ``data.store``; runs
        in the job)."""
        # As the panel's combos do: a choice that no longer exists falls back to "All".
        chosen = replace(
            chosen,
            run_id=chosen.run_id if chosen.run_id in {r[0] for r in data.runs} else None,
            lang=chosen.lang if chosen.lang in data.langs else None,
            tier=chosen.tier if chosen.tier in data.tiers else None,
        )
        shown = self.view
        if shown is not None and shown.data is data and shown.chosen == chosen:
            # Only the sort changed (a header click): the figures and the summary stay.
            used = sort if sort is None or sort.column in (*KEY_COLUMNS, *shown.columns) else None
            rows = read_page(data.store, chosen, used, limit=self.page_size, columns=shown.columns)
            table = [table_row(r) for r in rows]
            return replace(shown, rows=rows, table=table, sorted_by=used)
        page = read_scores(data.store, chosen, sort, limit=self.page_size)
        tips = self.model_notes.column_tips(page.columns, data.stored)
        summary, summary_columns = summary_rows(page.summary)
        return ScoresView(
            data=data,
            rows=page.rows,
            table=[table_row(r) for r in page.rows],
            columns=page.columns,
            ranges=page.ranges,
            scored=page.scored,
            matching=page.matching,
            tips=tips,
            summary=summary,
            summary_columns=summary_columns,
            notes=self.model_notes.notes(data.stored),
            chosen=chosen,
            sorted_by=page.sorted_by,
        )

    def fetch_more(self, offset: int) -> JobHandle | None:
        """The next page of the table (scrolled to its end) in a job, in the order and
        under the filters of the rows shown; a refresh meanwhile drops it."""
        view, store = self.view, self.ctx.store
        if view is None or store is None or view.data.store is not store:
            return None
        if self.fetching is not None and not self.fetching.done:
            return self.fetching
        generation = self._generation
        chosen, sort, size, columns = view.chosen, view.sorted_by, self.page_size, view.columns
        handle = self.ctx.run_job(
            Job(
                MORE_TITLE,
                lambda _ctx: read_page(
                    store, chosen, sort, offset=offset, limit=size, columns=columns
                ),
                kind=MORE_KIND,
                params={"panel": "scores", "offset": offset},
                quiet=True,
            )
        )
        self.fetching = handle
        handle.finished.connect(
            lambda outcome, h=handle, g=generation, o=offset: self._more(h, g, o, outcome)
        )
        return handle

    def _more(self, handle: JobHandle, generation: int, offset: int, outcome: Any) -> None:
        if generation != self._generation or handle is not self.fetching:
            return  # the table was read again meanwhile
        self.fetching = None
        rows: list[SentenceScoreRow] = []
        if isinstance(outcome, JobSucceeded) and offset == len(self.rows):
            rows = outcome.result
        self.rows.extend(rows)
        self.panel.append_rows([table_row(r) for r in rows])

    def _detail_changed(self) -> None:
        if self.shown_text is not None:
            self.show_text(self.shown_text)

    def open_synonyms(self) -> Any:
        """The ESA synonym editor (app.scores.synonyms)."""
        return open_synonyms(self.ctx, self.panel)

    # -- one text ------------------------------------------------------------------------
    def show_text(self, verbalisation_id: int) -> None:
        store = self.ctx.store
        row = next((r for r in self.rows if r.verbalisation_id == verbalisation_id), None)
        if row is None and store is not None:
            row = read_row(store, verbalisation_id)  # not in a page loaded (a retrieval pick)
        if store is None or row is None:
            self.shown_text = None
            self.panel.show_detail(None)
            return
        self.shown_text = verbalisation_id
        self.panel.show_detail(text_detail(store, row))

    # -- scoring -------------------------------------------------------------------------
    def open_dialog(self) -> JobHandle | None:
        """Find the choices in a job; the dialog opens when they are there."""
        store = self.ctx.store
        if store is None:
            self.ctx.notify.show_error("No session", "Open a session to score.")
            return None
        if self.models_handle is not None and not self.models_handle.done:
            return self.models_handle  # a second click while the first scan runs
        data = self.data
        job = Job(
            "Find local models",
            lambda _ctx: find_choices(store, data, self.model_notes),
            kind=MODELS_KIND,
            uses_session=data is None or data.store is not store,
            quiet=True,
        )
        handle = self.models_handle = self.ctx.run_job(job)
        handle.finished.connect(lambda outcome, h=handle: self._choices_found(h, store, outcome))
        return handle

    def _choices_found(self, handle: JobHandle, store: SessionStore, outcome: Any) -> None:
        if handle is not self.models_handle:
            return
        self.models_handle = None
        if isinstance(outcome, JobSucceeded) and store is self.ctx.store:
            self.panel.open_score_dialog(outcome.result)

    def score(self, request: ScoringRequest) -> JobHandle | None:
        """Run the scoring job for the dialog's ``request``; bad input is a message."""
        from core.metrics.scoring import score_job

        store = self.ctx.store
        if store is None:
            return None
        if self.handle is not None and not self.handle.done:
            self.ctx.notify.show_error(
                "Scoring already running", "Wait for it to finish or cancel it first."
            )
            return None
        try:
            if request.run_ids is not None and not request.run_ids:
                raise UserFacingError("choose at least one run to score")
            if request.langs is not None and not request.langs:
                raise UserFacingError("choose at least one language to score")
            job = score_job(store, request)
        except UserFacingError as error:
            self.ctx.notify.show_error("Cannot score", str(error))
            return None
        handle = self.ctx.run_job(job)
        self.handle = handle
        self.panel.job_started(f"Scoring {', '.join(job.params['metrics'])}")
        handle.progressed.connect(lambda p: self.panel.job_progress(p.done, p.total, p.message))
        handle.finished.connect(self._scored)
        return handle

    def export_texts(self, path: Path) -> JobHandle | None:
        """The per-text table of the session to ``path`` (.csv, .jsonl, .parquet), as a
        core job (core.formats.texts_table); a refused path or format is a message."""
        from core.formats.texts_table import export_texts_job
        from core.io.output_guard import check_output_target

        store = self.ctx.store
        if store is None:
            return None
        try:  # a session (the open one above all) is refused before any work
            check_output_target(path)
            job = export_texts_job(store, path)
        except UserFacingError as error:
            self.ctx.notify.show_error("Texts not exported", str(error))
            return None
        handle = self.ctx.run_job(job)
        handle.finished.connect(lambda outcome: self._texts_exported(path, outcome))
        return handle

    def _texts_exported(self, path: Path, outcome: Any) -> None:
        # On finished, after the runner's own "done in x s" line, so this one stays.
        if isinstance(outcome, JobSucceeded):
            message = f"{path.name}: {outcome.result.texts_line()}"
            self.ctx.notify.show_status(message, 15_000)
            # Every export confirms the same way: the message with Open and Show in folder.
            self.ctx.notify.show_written("Export finished", message, path)

    def cancel(self) -> None:
        if self.handle is not None and not self.handle.done:
            self.handle.cancel()

    def _scored(self, outcome: Any) -> None:
        notes: list[str] = []
        if isinstance(outcome, JobSucceeded):
            summary = outcome.result
            written = ", ".join(f"{k} {v:,}" for k, v in summary.rows_written.items())
            message = (
                f"Scored {plural(summary.texts, 'text')} in {outcome.elapsed_s:.1f} s"
                + (f" (rows: {written})" if written else "")
                + "."
            )
            notes = list(summary.notes)
        elif isinstance(outcome, JobWasCancelled):
            message = (
                "Scoring cancelled: each metric keeps either all its old scores or all "
                "its new ones."
            )
        elif isinstance(outcome, JobFailed):
            message = f"Scoring failed: {outcome.message}"
        else:
            message = ""
        self.panel.job_finished(message, notes)
