"""Wiring of the Browser's Likelihood tab (LINK, METHODS §3): scoring jobs, reading both
popularity signals for the shown category, storing the model_tail cut-off.

The tab (``widgets.likelihood.LikelihoodPanel``) sits beside the Browser's histogram;
it is refreshed when it is shown, when the Browser shows another category (the
Browser's ``BrowserState.category``), and after a scoring job or a cut-off was stored.
Its Wikidata tiers are the Browser's as the user sets them (``BrowserState.tiers``,
live), not the ones last saved; an entity picked here is the shared selection's. All
reading and writing is done in jobs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from core.changes import Topic
from core.errors import UserFacingError

if TYPE_CHECKING:
    from app.context import PanelContext
    from app.jobrunner import JobHandle
    from core.store import SessionStore
    from core.tiers.model_tail import CutoffSettings, LikelihoodView
    from widgets.browser import BrowserPanel

TAB_TITLE = "Likelihood"


class LikelihoodController(QObject):
    def __init__(self, ctx: PanelContext, browser: BrowserPanel) -> None:
        from widgets.likelihood import LikelihoodPanel

        super().__init__(browser)
        self.ctx = ctx
        # The tab sits among the Browser's plots (where it is shown); what it follows is
        # the Browser's state, shared on the context.
        self.tabs = browser.plots.tabs
        self.panel = LikelihoodPanel()
        self.tab_index = self.tabs.addTab(self.panel, TAB_TITLE)
        self.wanted: tuple[str, str] | None = None  # (model, lang) the user picked
        self.last_handle: JobHandle | None = None
        self.tabs.currentChanged.connect(lambda _i: self.refresh_if_shown())
        state = ctx.browser_state
        state.subscribe(lambda *_change: self.refresh_if_shown(), ("category",))
        state.subscribe(lambda *_change: self._follow_tiers(), ("tiers",))
        ctx.session_changed.connect(lambda _store: self.refresh_if_shown())
        # Scores and cut-offs written by any job (this tab's or another window's command).
        ctx.changes.subscribe({Topic.LIKELIHOOD}, lambda _topics: self.refresh_if_shown(), self)
        self.panel.score_requested.connect(self.score)
        self.panel.view_requested.connect(self._show_scores)
        self.panel.cutoff_changed.connect(self.save_cutoff)
        self.panel.entity_requested.connect(self._inspect)

    @property
    def shown(self) -> bool:
        return self.tabs.currentWidget() is self.panel

    def refresh_if_shown(self) -> None:
        if self.shown:
            self.refresh()

    def refresh(self) -> JobHandle | None:
        """Read the shown category's scores (the picked model, else the one the saved
        cut-off is for, else the first) and hand them to the tab."""
        from core.tiers.model_tail import load_likelihood_view

        category = self.ctx.browser_state.category
        if self.ctx.store is None or category is None:
            self.panel.show_view(None)
            return None
        wanted = self.wanted

        def read(store: SessionStore) -> LikelihoodView | None:
            return load_likelihood_view(store, category, wanted)

        handle = self.ctx.reads.request("likelihood", read, self._arrived)
        self.last_handle = handle
        return handle

    def _arrived(self, view: LikelihoodView | None) -> None:
        from dataclasses import replace

        if view is None:
            self.panel.show_view(None)
        elif view.table.category == self.ctx.browser_state.category:
            tiers = self._tiers_for(view.table.qids)
            if tiers is not None:
                view = replace(view, table=replace(view.table, tiers=tiers))
            self.panel.show_view(view)

    def _tiers_for(self, qids: list[str]) -> list[str | None] | None:
        """The Browser's current Wikidata tier of each of ``qids`` (None when the Browser
        shows no tiers of this category)."""
        tiers = self.ctx.browser_state.tiers
        view = self.panel.view
        if tiers is None or tiers.category != self.ctx.browser_state.category:
            return None
        if view is not None and view.table.category != tiers.category:
            return None
        by_qid = tiers.tier_by_qid()
        return [by_qid.get(qid) for qid in qids]

    def _follow_tiers(self) -> None:
        view = self.panel.view
        if view is None or view.table.category != self.ctx.browser_state.category:
            return
        tiers = self._tiers_for(view.table.qids)
        if tiers is not None:
            self.panel.set_wikidata_tiers(tiers)

    def _show_scores(self, model: str, lang: str) -> None:
        self.wanted = (model, lang)
        self.refresh()

    def score(self, model: str, lang: str) -> JobHandle | None:
        """Score the shown category's members (a job; already scored ones are skipped)."""
        from core.tiers.likelihood import LikelihoodRequest, likelihood_job

        store, category = self.ctx.store, self.ctx.browser_state.category
        if store is None or category is None:
            self.ctx.notify.show_error("Nothing to score", "Open a session and a category.")
            return None
        try:
            job = likelihood_job(store, LikelihoodRequest(category, model, lang))
        except UserFacingError as error:
            self.ctx.notify.show_error("Cannot score likelihoods", str(error))
            return None
        handle = self.ctx.run_job(job)
        self.wanted = (job.params["model"], lang)
        self.last_handle = handle
        return handle

    def save_cutoff(self, settings: CutoffSettings) -> bool | None:
        """Store the model_tail sub-tier of the shown category (through the writer, on its
        thread: it rewrites every member's row)."""
        from core.tiers.model_tail import save_model_tail

        category = self.ctx.browser_state.category
        if self.ctx.store is None or category is None:
            return None
        return self.ctx.undo.write(
            f"the model_tail cut-off of {category}",
            lambda store: save_model_tail(store, category, settings),
            writes={Topic.LIKELIHOOD},
            panel="browser",
            at_once=False,
        )

    def _inspect(self, qid: str) -> None:
        self.ctx.browser_state.selection.entity = qid  # the Browser's row and inspector follow
