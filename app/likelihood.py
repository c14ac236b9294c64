"""Wiring of the Browser's Likelihood tab (LINK, METHODS §3): scoring jobs, reading both
popularity signals for the shown category, storing the model_tail cut-off.

The tab (``widgets.likelihood.LikelihoodPanel``) sits beside the Browser's histogram;
it is refreshed when it is shown, when the Browser shows another category, and after a
scoring job or a cut-off was stored. All reading and writing is done in jobs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from core.changes import Topic
from core.errors import UserFacingError

if TYPE_CHECKING:
    from app.controller import AppController
    from app.jobrunner import JobHandle
    from core.likelihood import CutoffSettings, LikelihoodView
    from core.store import SessionStore
    from widgets.browser import BrowserPanel

TAB_TITLE = "Likelihood"


class LikelihoodController(QObject):
    def __init__(self, app: AppController, browser: BrowserPanel) -> None:
        from widgets.likelihood import LikelihoodPanel

        super().__init__(browser)
        self.app = app
        self.browser = browser
        self.panel = LikelihoodPanel()
        self.tab_index = browser.plots.tabs.addTab(self.panel, TAB_TITLE)
        self.wanted: tuple[str, str] | None = None  # (model, lang) the user picked
        self.last_handle: JobHandle | None = None
        browser.plots.tabs.currentChanged.connect(lambda _i: self.refresh_if_shown())
        browser.category_selected.connect(lambda _name: self.refresh_if_shown())
        app.session_changed.connect(lambda _store: self.refresh_if_shown())
        # Scores and cut-offs written by any job (this tab's or another window's command).
        app.changes.subscribe({Topic.LIKELIHOOD}, lambda _topics: self.refresh_if_shown(), self)
        self.panel.score_requested.connect(self.score)
        self.panel.view_requested.connect(self._show_scores)
        self.panel.cutoff_changed.connect(self.save_cutoff)
        self.panel.entity_requested.connect(self._inspect)

    @property
    def shown(self) -> bool:
        return self.browser.plots.tabs.currentWidget() is self.panel

    def refresh_if_shown(self) -> None:
        if self.shown:
            self.refresh()

    def refresh(self) -> JobHandle | None:
        """Read the shown category's scores (the picked model, else the one the saved
        cut-off is for, else the first) and hand them to the tab."""
        from core.likelihood import load_likelihood_view

        category = self.browser.category
        if self.app.store is None or category is None:
            self.panel.show_view(None)
            return None
        wanted = self.wanted

        def read(store: SessionStore) -> LikelihoodView | None:
            return load_likelihood_view(store, category, wanted)

        handle = self.app.reads.request("likelihood", read, self._arrived)
        self.last_handle = handle
        return handle

    def _arrived(self, view: LikelihoodView | None) -> None:
        if view is None or view.table.category == self.browser.category:
            self.panel.show_view(view)

    def _show_scores(self, model: str, lang: str) -> None:
        self.wanted = (model, lang)
        self.refresh()

    def score(self, model: str, lang: str) -> JobHandle | None:
        """Score the shown category's members (a job; already scored ones are skipped)."""
        from core.likelihood import LikelihoodRequest, likelihood_job

        store, category = self.app.store, self.browser.category
        if store is None or category is None:
            self.app.window.show_error("Nothing to score", "Open a session and a category.")
            return None
        try:
            job = likelihood_job(store, LikelihoodRequest(category, model, lang))
        except UserFacingError as error:
            self.app.window.show_error("Cannot score likelihoods", str(error))
            return None
        handle = self.app.run_job(job)
        self.wanted = (job.params["model"], lang)
        self.last_handle = handle
        return handle

    def save_cutoff(self, settings: CutoffSettings) -> bool | None:
        """Store the model_tail sub-tier of the shown category (through the writer, on its
        thread: it rewrites every member's row)."""
        from core.likelihood import save_model_tail

        category = self.browser.category
        if self.app.store is None or category is None:
            return None
        return self.app.writer.write(
            f"the model_tail cut-off of {category}",
            lambda store: save_model_tail(store, category, settings),
            writes={Topic.LIKELIHOOD},
            at_once=False,
        )

    def _inspect(self, qid: str) -> None:
        if not self.browser.select_qid(qid):  # selecting a row inspects it
            self.browser.entity_requested.emit(qid)
