"""Wiring of the Browser panel: sources, fetch jobs, the session cache, the inspector.

The panel asks (category selected, fetch, inspect, switch source); this controller
answers by calling ``core.wikidata`` and, for anything that may take long, running a
job. During a fetch each page lands in the session and the panel reloads the
category from there, so the view builds up live and always shows what is saved.

It follows the panel's :class:`core.wikidata.browser_state.BrowserState`: a category picked in
the shared selection is loaded into the state (its saved tier settings, its members), an
entity picked is read (or fetched) for the inspector, a Compare-with tick loads that
category, and a tier edit is saved from the state. The save is debounced (written 0.8 s
after the last edit) and takes the category's tiers *as edited*, so it writes the
category the edit was made in; a pending save is written at once when the user picks
another category, when the session changes and at quit (``flush``).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal

from core.changes import Topic
from core.desktop.logs import get_logger
from core.jobs import Job, JobContext
from core.wikidata.categories import Category, default_categories
from core.wikidata.records import CategoryTable

if TYPE_CHECKING:
    from app.context import PanelContext
    from app.jobrunner import JobHandle
    from core.store import SessionStore
    from core.tiers.cutoffs import TierSettings
    from core.wikidata.browser_state import CategoryTiers
    from core.wikidata.sources import WikidataSource
    from widgets.browser import BrowserPanel

log = get_logger("browser")

RELOAD_INTERVAL_MS = 250  # at most four reloads a second while pages arrive
SAVE_DELAY_MS = 800  # tiers are written this long after the last edit
STARTUP_DELAY_MS = 300  # the first source is opened this long after start-up
# The panel's view reads (app.session_io.ViewReads keys): a newer one supersedes.
SESSION_READ = "browser.session"  # the session's categories and the one to show
CATEGORY_READ = "browser.category"  # the category shown: members and tier settings
OVERLAY_READ = "browser.overlay"  # a Compare-with category's members (one key each)


class _WaitRelay(QObject):
    """Carries a source's 'waiting N s (429 Retry-After)' from a worker to the UI thread."""

    waiting = Signal(float, str)


class BrowserController(QObject):
    def __init__(self, ctx: PanelContext, panel: BrowserPanel) -> None:
        super().__init__(panel)
        self.ctx = ctx
        self.panel = panel
        self._wait_relay = _WaitRelay(self)
        self._wait_relay.waiting.connect(self._show_wait)
        self._reload_timer = QTimer(self)
        self._reload_timer.setSingleShot(True)
        self._reload_timer.setInterval(RELOAD_INTERVAL_MS)
        self._reload_timer.timeout.connect(self.members_changed)
        # Tiers are saved once the user stops moving lines, off the UI thread.
        self._save_timer = QTimer(self)
        self._save_timer.setSingleShot(True)
        self._save_timer.setInterval(SAVE_DELAY_MS)
        self._save_timer.timeout.connect(self.flush)
        self._pending: CategoryTiers | None = None  # tiers edited, not yet saved
        self._loading = False
        self.state = panel.state
        self.selection = panel.state.selection

        panel.set_categories(list(default_categories()))
        self.selection.subscribe(lambda _n, _old, new: self._category_picked(new), ("category",))
        self.selection.subscribe(lambda _n, _old, new: self.inspect(new), ("entity",))
        self.state.watch(self._state_changed)
        panel.fetch_requested.connect(self.fetch)
        panel.source_requested.connect(self.use_source)
        panel.demo_requested.connect(self.start_demo)
        panel.category_save_requested.connect(self.save_category)
        panel.start_unit_requested.connect(ctx.unit_requested)  # the Units panel starts it
        # What was edited in the old session is written to it before it closes.
        ctx.session_closing.connect(lambda _store: self.flush())
        ctx.session_changed.connect(lambda _store: self.open_session_category())
        ctx.undo.undone.connect(self._tiers_reverted)
        ctx.undo.redone.connect(self._tiers_reverted)
        # Members fetched (by this panel or any job): the table, the plots and every
        # ticked Compare-with category are read again from the session.
        ctx.changes.subscribe({Topic.MEMBERS}, lambda _topics: self.members_changed(), self)
        # After the first paint (a live source may ask for a contact). With self as
        # context, the call is dropped if this controller is gone by then.
        self.start_up_pending = True
        QTimer.singleShot(STARTUP_DELAY_MS, self, self._use_initial_source)

    def _use_initial_source(self) -> None:
        self.start_up_pending = False
        self.use_source(self.panel.source_combo.currentData(), "")

    @property
    def store(self) -> SessionStore | None:
        return self.ctx.store

    # The source is published on the context (``PanelContext.source``) for the panels
    # that fetch with it.
    @property
    def source(self) -> WikidataSource | None:
        return self.ctx.source.source

    @source.setter
    def source(self, source: WikidataSource | None) -> None:
        self.ctx.source.source = source

    @property
    def source_kind(self) -> str:
        return self.ctx.source.kind

    @source_kind.setter
    def source_kind(self, kind: str) -> None:
        self.ctx.source.kind = kind

    # -- sources -----------------------------------------------------------------------------
    @staticmethod
    def ask_contact(parent: Any) -> str | None:  # tests replace this (no modal dialog)
        from app.contact import ask_contact

        return ask_contact(parent)

    def use_source(self, kind: str, url: str) -> None:
        from core.wikidata.sources import SourceError

        if kind == "embedded":
            self._use_embedded()
            return
        from app.contact import contact_for_live
        from core.wikidata.open_source import open_source

        try:
            spec = url if kind == "endpoint" else kind
            contact = contact_for_live(
                self.ctx.settings,
                spec,
                self.ctx.notify.parent_widget,
                ask=self.ask_contact,
            )
            self.source = open_source(
                spec, self.store, on_wait=self._wait_relay.waiting.emit, contact=contact
            )
        except SourceError as error:
            self.ctx.notify.show_error("Cannot use this source", str(error))
            return
        self._set_source(kind)

    def _use_embedded(self) -> None:
        # The demo snapshot (seconds of CPU, about 380 MB) loads in the first job that
        # reads it, not when it is chosen: a window showing a saved session never loads
        # it (core.wikidata.open_source.LazyDemoSource).
        from core.wikidata.open_source import LazyDemoSource

        self.source = LazyDemoSource()
        self._set_source("embedded")

    def start_demo(self) -> None:
        """ "Start with the demo": the demo data as the source (loaded by the fetch),
        the shown category fetched from it, then every other category the demo holds
        (one job, under a second each once the snapshot is loaded): after the demo,
        each category shows its distribution, not "No entities… press Fetch"."""
        panel = self.panel
        index = panel.source_combo.findData("embedded")
        if panel.source_combo.currentIndex() != index:
            panel.source_combo.setCurrentIndex(index)  # asks for the source (use_source)
        if self.source_kind != "embedded":
            self._use_embedded()
        name = panel.category_combo.currentText()
        limit = panel.limit_spin.value()
        handle = self.fetch(name, limit) if name else None
        if handle is not None:
            handle.succeeded.connect(lambda _outcome: self._fetch_demo_categories(name, limit))

    def _fetch_demo_categories(self, shown: str, limit: int) -> None:
        """The demo's categories (the default ones, as this session defines them) other
        than ``shown``, fetched from the demo data in one job."""
        from core.wikidata.fetch import fetch_categories_job

        store, source = self.store, self.source
        if store is None or source is None or self.source_kind != "embedded":
            return  # the user moved on (another session or source) meanwhile
        names = [c.name for c in default_categories() if c.name != shown]
        categories = [self._category(name) for name in names]
        job = fetch_categories_job(
            store, source, categories, limit=limit, title="Fetch the demo's other categories"
        )
        handle = self.ctx.run_job(job)
        # On finished, not succeeded: the runner's "done in x s" line comes between the
        # two and replaced this one at once.
        handle.finished.connect(lambda outcome: self._demo_categories_done(len(names) + 1, outcome))

    def _demo_categories_done(self, count: int, outcome: Any) -> None:
        from core.jobs import JobSucceeded

        if isinstance(outcome, JobSucceeded):
            self.ctx.notify.show_status(
                f"The demo data's {count} categories are in the session: pick one under "
                "Category, or tick them in Compare with",
                10_000,
            )

    def _set_source(self, kind: str) -> None:
        self.source_kind = kind
        self.selection.source = kind
        texts = {
            "embedded": "DEMO DATA (synthetic, offline)",
            "live": "LIVE: query.wikidata.org",
            "cache": "OFFLINE: session cache",
        }
        text = texts.get(kind) or f"ENDPOINT: {getattr(self.source, 'url', '')}"
        self.panel.set_source_badge(kind, text)

    def _show_wait(self, seconds: float, reason: str) -> None:
        self.ctx.notify.show_status(
            # Rounded up: a countdown that says "0 s" while still waiting reads as stuck.
            f"{reason}: retrying in {math.ceil(seconds)} s",
            int(max(1.0, seconds) * 1000) + 500,
        )

    # -- categories --------------------------------------------------------------------------
    # Every read of the session for this panel is a view read (app.session_io): off the
    # UI thread, a newer request (another category picked) superseding an older one.
    def _columns(self, store: SessionStore, name: str) -> CategoryTable:
        """``name``'s members as ``store`` holds them (on the view read's thread)."""
        from core.wikidata.cache import load_category

        started = time.perf_counter()
        table = load_category(store, name)
        log.debug(
            "loaded %s (%d) in %.0f ms", name, len(table), (time.perf_counter() - started) * 1000
        )
        return table

    def _category_picked(self, name: str | None) -> None:
        if name and name != self.state.category:
            self.show_category(name)

    def show_category(self, name: str, *, reload_settings: bool = False) -> None:
        """Load ``name`` into the state: its saved tier settings when it is not the
        category shown (or ``reload_settings``), and its members as the session holds
        them, read off the UI thread (:meth:`_category_read` shows them). A pending tier
        save of the category shown before is handed to the writer first."""
        from core.tiers.stored import load_tier_settings
        from core.wikidata.category_store import remember_category

        store = self.store
        if store is None:
            self._category_read(name, (None, CategoryTable.empty(name)))
            return
        with_settings = reload_settings or name != self.state.category
        if with_settings:
            self.flush()
            if not store.read_only:  # a session opened read-only is left as it is
                self.ctx.writer.write(
                    f"{name} as the category last viewed",
                    lambda store: remember_category(store, name),
                )
        defaults = self.ctx.preferences
        tier_defaults = defaults.tier_settings() if defaults is not None else None

        def read(store: SessionStore) -> tuple[TierSettings | None, CategoryTable]:
            settings = load_tier_settings(store, name, tier_defaults) if with_settings else None
            return settings, self._columns(store, name)

        self.ctx.reads.request(
            CATEGORY_READ, read, lambda result: self._category_read(name, result)
        )

    def _category_read(self, name: str, result: tuple[TierSettings | None, CategoryTable]) -> None:
        settings, table = result
        state = self.state
        self._loading = True  # showing re-tiers: that is not a change to save
        try:
            with self.selection.batch(), state.batch():
                self.selection.category = name
                state.load(name, table, settings)
                if self.selection.entity not in table.qids:
                    self.selection.entity = None  # the inspector shows no other category's
        finally:
            self._loading = False

    def _state_changed(self, changes: Any) -> None:
        if "settings" in changes and not self._loading:
            self._tiers_edited()
        if "compared" in changes:
            old, new = changes["compared"]
            for name in new:
                if name not in old:
                    self.show_overlay(name)

    def _tiers_edited(self) -> None:
        """The user changed the tiers: they are saved when the edits stop, for the
        category they were made in (captured now)."""
        if self.state.tiers is not None:
            self._pending = self.state.tiers
            self._save_timer.start()

    def flush(self) -> None:
        """Hand a pending tier save to the session's writer now (on a category switch, a
        session change and quit: the writer lands it before the old session closes)."""
        self._save_timer.stop()
        tiers, self._pending = self._pending, None
        if tiers is not None and self.store is not None:
            self._save(tiers)

    def save_tiers(self) -> None:
        """Write the shown category's settings and every member's tier now."""
        self._pending = self.state.tiers
        self.flush()

    def _save(self, tiers: CategoryTiers) -> None:
        """Write ``tiers`` (settings and every member's tier) as one edit on the session's
        undo stack, on the writer's thread (a write of many rows)."""
        from core.edits.tiers import TierEdit

        if not len(tiers.qids) or self.store is None or self.store.read_only:
            return  # a session opened read-only is left as it is
        category = tiers.category
        edit = TierEdit.from_codes(
            category, tiers.settings, list(tiers.qids), tiers.codes.copy(), tiers.sub_tiers.copy()
        )
        self.ctx.undo.apply(edit, panel="browser", what=f"the tiers of {category}", at_once=False)

    def _tiers_reverted(self, entry: Any) -> None:
        """An undo or redo of a tier edit landed: the category shown takes the settings
        the session holds now, from the edit's own record (no read, no reload of the
        members: the state re-tiers as after a drag; showing them saves nothing)."""
        from core.tiers.cutoffs import TierSettings

        name = self.state.category
        if entry.kind != "tiers" or name is None or entry.target.get("category") != name:
            return
        self._save_timer.stop()
        self._pending = None
        state = entry.before if entry.status == "undone" else entry.after
        saved = state.get("settings") if isinstance(state, dict) else None
        defaults = self.ctx.preferences.tier_settings() if self.ctx.preferences else None
        try:
            settings = TierSettings(**saved) if isinstance(saved, dict) else None
        except (TypeError, ValueError):
            settings = None  # written by hand: shown as load_tier_settings shows it
        self._loading = True  # the session holds these already
        try:
            self.state.settings = settings or defaults or TierSettings()
        finally:
            self._loading = False

    def open_session_category(self) -> None:
        """After a session opens: the category last viewed in it, else one it has data for
        (read off the UI thread, then shown as any category picked)."""
        from core.wikidata.category_store import category_to_show, session_categories

        if self.store is None:
            return
        self._pending = None  # written to the old session as it closed
        self._save_timer.stop()

        def read(store: SessionStore) -> tuple[list[Category], str]:
            categories = session_categories(store)
            return categories, category_to_show(store, [c.name for c in categories])

        self.ctx.reads.request(SESSION_READ, read, self._session_categories_read)

    def _session_categories_read(self, result: tuple[list[Category], str]) -> None:
        categories, name = result
        self.panel.set_categories(categories)
        self.show_category(name, reload_settings=True)
        for ticked in self.state.compared:  # as this session holds them
            self.show_overlay(ticked)

    def reload_category(self) -> None:
        name = self.state.category or self.selection.category
        if name:
            self.show_category(name)

    def show_overlay(self, name: str) -> None:
        """A Compare-with category, its members read off the UI thread."""
        if self.store is None:
            self.panel.show_overlay(name, CategoryTable.empty(name))
            return
        self.ctx.reads.request(
            f"{OVERLAY_READ}:{name}",
            lambda store: self._columns(store, name),
            lambda table: self.panel.show_overlay(name, table),
        )

    def members_changed(self) -> None:
        """The shown category and the ticked Compare-with ones, as the session has them
        now (a category ticked before it had members is drawn once they arrive)."""
        self.reload_category()
        for name in self.state.compared:
            self.show_overlay(name)

    def fetch(self, name: str, limit: int) -> JobHandle | None:
        """Fetch ``name`` into the session (a job; its handle, or None when there is no
        session or source, which the user is told)."""
        from core.wikidata.fetch import fetch_category_job

        if self.store is None:
            self.ctx.notify.show_error("No session", "Open or create a session first.")
            return None
        if self.source is None:
            self.ctx.notify.show_error(
                "No source",
                "Choose where to fetch from: demo data, the live service or an "
                "endpoint (the demo data may still be loading).",
            )
            return None
        category = self._category(name)
        job = fetch_category_job(self.store, self.source, category, limit=limit)
        handle = self.ctx.run_job(job)
        handle.progressed.connect(lambda _p: self._reload_timer.start())
        # The final reload comes with the job's Topic.MEMBERS (members_changed).
        handle.finished.connect(lambda _o: self._fetch_finished(name))
        if name != self.state.category:
            self.ctx.notify.show_status(
                f"Fetching {name}: its curve is drawn as members arrive", 10_000
            )
        return handle

    def _fetch_finished(self, name: str) -> None:
        """New members get their tiers in the session too: the shown category's as the
        state has them, another's (a Compare-with one) under its saved settings."""
        from core.tiers.stored import NoMembersError, retier_category

        self._reload_timer.stop()
        if name == self.state.category:
            self.reload_category()
            self._pending = self.state.tiers
            self._save_timer.start()
            return
        store = self.store
        if store is None:
            return

        def run(ctx: JobContext) -> int:
            ctx.progress(0, 1, name)
            try:
                return retier_category(store, name)[1]
            except NoMembersError:
                return 0

        # A recorded tier edit: on the undo stack once the job ends, as a tier change
        # made in the panel is.
        self.ctx.undo.run_recorded(
            self.ctx.run_job,
            Job(
                f"Save tiers of {name}",
                run,
                kind="tiers.save",
                params={"category": name},
                writes=frozenset({Topic.TIERS}),
            ),
            panel="browser",
        )

    def _category(self, name: str) -> Category:
        from core.wikidata.category_store import find_category

        return find_category(self.store, name)

    def save_category(self, category: Category, confirm=None) -> bool:
        """Save a new or edited category; a changed pattern drops old members, so the
        user confirms first (``confirm(question) -> bool``, a dialog by default)."""
        from core.errors import UserFacingError
        from core.wikidata.cache import fetched_count
        from core.wikidata.category_store import (
            check_category,
            find_category,
            save_category,
            session_categories,
        )

        store = self.store
        if store is None:
            return False
        try:
            # Refused at once, not after the writes queued before it have landed.
            check_category(category)
        except UserFacingError as error:
            self.ctx.notify.show_error("Category not saved", str(error))
            return False
        try:
            existing = find_category(store, category.name)
        except UserFacingError:
            existing = None
        held = fetched_count(store, category.name)
        if existing is not None and existing.pattern != category.pattern and held:
            question = (
                f"The session holds {held:,} members of {category.name} found with the "
                "old pattern. Saving the new pattern removes them; fetch again "
                "afterwards. Save?"
            )
            if not (confirm or self._ask)(question):
                return False

        def saved(dropped: int) -> None:
            if self.store is None:
                return
            self.panel.set_categories(session_categories(self.store))
            self.show_category(category.name, reload_settings=True)
            # Dropped members: the shown table is read again (members_changed) and so is
            # a ticked Compare-with copy of them.
            if dropped:
                self.ctx.changes.announce({Topic.MEMBERS})
                self.ctx.notify.show_status(
                    f"{category.name}: pattern saved; {dropped:,} old members removed", 10_000
                )

        return (
            self.ctx.undo.write(
                f"the category {category.name}",
                lambda s: save_category(s, category),
                writes={Topic.CATEGORIES},
                panel="browser",
                on_done=saved,
                on_error=lambda error: self.ctx.notify.show_error("Category not saved", str(error)),
            )
            is not False
        )

    def _ask(self, question: str) -> bool:
        from PySide6.QtWidgets import QMessageBox

        answer = QMessageBox.question(
            self.ctx.notify.parent_widget, "Change the pattern?", question
        )
        return answer == QMessageBox.StandardButton.Yes

    # -- entities ----------------------------------------------------------------------------
    def inspect(self, qid: str | None) -> None:
        """Show ``qid`` in the inspector (None: nothing), from the session, else fetched."""
        from core.wikidata.cache import load_entity

        if qid is None or self.store is None:
            self.panel.show_entity(None)
            return
        details = load_entity(self.store, qid)
        if details is not None and details.claims:
            self.panel.show_entity(details)
            return
        source = self.source
        if source is None or self.source_kind == "cache":
            self.panel.show_entity(details)
            return
        store = self.store

        def fetch_one(ctx: JobContext):  # -> EntityDetails
            from core.wikidata.fetch import fetch_entity

            ctx.progress(0, 1, qid)
            return fetch_entity(store, source, qid)

        handle = self.ctx.run_job(
            Job(
                f"Fetch {qid}",
                fetch_one,
                kind="wikidata.entity",
                writes=frozenset({Topic.ENTITIES}),
            )
        )
        handle.succeeded.connect(lambda outcome: self._entity_arrived(qid, outcome.result))

    def _entity_arrived(self, qid: str, details: Any) -> None:
        if self.selection.entity == qid:
            self.panel.show_entity(details)
