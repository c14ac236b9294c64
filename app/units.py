"""Wiring of the Units panel: the draft being built, entity details, saving.

The draft lives in the session (a ``core.edits.drafts.DraftEdit`` after every change, on
the session's undo stack), so a crash or a restart loses nothing and Edit ▸ Undo steps
back through it; saved units are read back from the session.
Entity details come from the session cache, or are fetched (as a job) from the source
the Browser uses when an entity has not been opened yet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from core.changes import Topic
from core.desktop.logs import get_logger
from core.errors import UserFacingError
from core.jobs import Job, JobContext
from core.labels import plural
from core.units.claim_filters import RULES

if TYPE_CHECKING:
    from app.context import PanelContext
    from app.jobrunner import JobHandle
    from core.store import SessionStore
    from core.units.beam_search import SearchRequest, SearchSummary
    from core.units.builder.draft import UnitDraft
    from core.units.claim_filters import ClaimFilterSettings
    from core.units.sampler import SampleRequest, SampleSummary
    from core.wikidata.records import EntityDetails
    from widgets.units import UnitsPanel

log = get_logger("units")
# The panel's view reads (app.session_io.ViewReads keys): a newer one supersedes.
UNIT_READ = "units.unit"  # a stored unit and its references
DRAFT_READ = "units.draft"  # the draft the session holds, at session open
MORE_READ = "units.more"  # the next page of the units list


class UnitsController(QObject):
    def __init__(self, ctx: PanelContext, panel: UnitsPanel) -> None:
        super().__init__(panel)
        self.ctx, self.panel = ctx, panel
        self.draft: UnitDraft | None = None
        self.details: dict[str, EntityDetails] = {}
        self.focus: str | None = None
        self.overrides: dict[tuple[str, int, str], str] = {}
        self.shown_unit: int | None = None
        self._edits = 0  # draft changes saved: a draft read at session open is then stale
        self._search_model = ""  # the Search… dialog's last model
        from core.units.builder.saved import UNIT_PAGE

        self.page_size = UNIT_PAGE  # units read at a time for the panel's list

        ctx.unit_requested.connect(self.start)  # the Browser's "Start a data unit"
        panel.focus_requested.connect(self.set_focus)
        panel.claim_added.connect(self.add_claim)
        panel.claims_added.connect(self.add_claims)
        panel.triple_moved.connect(self.move)
        panel.triple_removed.connect(self.remove)
        panel.override_requested.connect(self.override)
        panel.save_requested.connect(self.save)
        panel.discard_requested.connect(self.discard)
        panel.unit_selected.connect(self.show_unit)
        panel.unit_selected.connect(ctx.unit_chosen)  # Verbalise follows
        panel.start_requested.connect(self.start_from_qid)
        panel.filters_changed.connect(self.set_filters)
        panel.sample_requested.connect(self.sample)
        panel.search_button.clicked.connect(self.ask_search)
        panel.more_units_requested.connect(self.more_units)
        ctx.session_changed.connect(lambda _store: self.session_opened())
        ctx.undo.undone.connect(self._override_moved)
        ctx.undo.redone.connect(self._override_moved)
        ctx.undo.undone.connect(self._draft_moved)
        ctx.undo.redone.connect(self._draft_moved)
        # Units imported, sampled or saved elsewhere; saved tiers may leave units built
        # under another tier: the list follows at once.
        ctx.changes.subscribe(
            {Topic.UNITS, Topic.REFERENCES, Topic.TIERS}, lambda _topics: self.refresh_units(), self
        )

    # -- session ---------------------------------------------------------------------------
    def session_opened(self) -> None:

        self.details.clear()
        self.draft, self.overrides, self.focus, self.shown_unit = None, {}, None, None
        self.ctx.reads.drop(UNIT_READ)
        if self.ctx.store is None:
            return
        self.panel.clear_draft()  # the session's draft, if any, follows (a view read)
        self.refresh_units()
        self._read_draft()

    def _read_draft(self) -> None:
        from core.units.builder.saved import load_draft, load_draft_overrides
        from core.wikidata.cache import load_entity

        edits = self._edits

        def read(store: SessionStore) -> tuple[Any, Any, dict[str, EntityDetails]]:
            draft = load_draft(store)
            if draft is None:
                return None, {}, {}
            details = {}
            for qid in {
                draft.root_qid,
                *(c.value for c in draft.claims if c.value_type == "wikibase-item" and c.value),
            }:
                found = load_entity(store, qid)
                if found is not None and found.claims:
                    details[qid] = found
            return draft, load_draft_overrides(store), details

        # Off the UI thread: the draft (and its entities' cached details) the session holds.
        self.ctx.reads.request(DRAFT_READ, read, lambda result: self._draft_read(edits, *result))

    def _draft_read(
        self,
        edits: int,
        draft: UnitDraft | None,
        overrides: dict[tuple[str, int, str], str],
        details: dict[str, EntityDetails],
    ) -> None:
        if edits != self._edits:
            return  # the draft was started, changed or discarded while it was read
        if draft is None:
            return
        self.draft, self.overrides = draft, overrides
        self.details.update(details)
        self.focus = draft.root_qid
        if self.shown_unit is None:  # else a stored unit was chosen meanwhile: it stays
            self.refresh()

    def refresh_units(self) -> None:
        """The count (COUNT(*)) and the first page of units; more pages as the view
        scrolls (``more_units``): a large session is never read whole."""
        from core.tiers.stored import unit_tier_changes
        from core.units.builder.saved import count_units, list_units
        from core.units.reference_counts import reference_counts

        size = self.page_size

        def read(store: SessionStore) -> tuple[Any, Any, int, Any]:
            units = list_units(store, limit=size)
            references = reference_counts(store, (u.id for u in units))
            return units, unit_tier_changes(store), count_units(store), references

        # Off the UI thread; a newer refresh (another change) supersedes this one.
        self.ctx.reads.request(
            "units.list",
            read,
            lambda result: self.panel.show_units(
                result[0], result[1], total=result[2], references=result[3]
            ),
        )

    def more_units(self, after_id: int | None) -> None:
        """The page after ``after_id``, read off the UI thread (a sort or a filter asks
        for page after page until all are shown; scrolling, for one)."""
        from core.units.builder.saved import list_units
        from core.units.reference_counts import reference_counts

        size = self.page_size

        def read(store: SessionStore) -> tuple[Any, Any]:
            units = list_units(store, after_id=after_id, limit=size)
            return units, reference_counts(store, (u.id for u in units))

        def show(result: tuple[Any, Any]) -> None:
            if self.panel.last_unit_id() != after_id:
                return  # the list was read again meanwhile: this page belongs to the old one
            self.panel.add_units(result[0], result[1])

        def failed(error: UserFacingError) -> None:
            self.panel.units_model.asked_after = None  # a later scroll asks again
            self.ctx.notify.show_error("Cannot read the units", str(error))

        self.ctx.reads.request(MORE_READ, read, show, on_error=failed)

    # -- building ----------------------------------------------------------------------------
    def start(self, qid: str) -> None:
        """Start a unit rooted at ``qid`` (the Browser's "Start a data unit")."""
        from core.tiers.stored import load_member_tiers
        from core.units.builder.draft import UnitDraft

        store = self.ctx.store
        if store is None:
            return
        category = self.ctx.browser_state.category
        tier = sub_tier = None
        if category is not None:
            tier, sub_tier = load_member_tiers(store, category).get(qid, (None, None))
        self.draft = UnitDraft(qid, category=category, tier=tier, sub_tier=sub_tier)
        self.overrides = {}
        self.shown_unit = None
        self._persist()
        dock = self.ctx.dock("units")
        if dock is not None:
            dock.show()
            dock.raise_()
        self.set_focus(qid)

    def start_from_qid(self, qid: str) -> None:
        from core.wikidata.queries import QueryError, check_qid

        try:
            check_qid(qid)
        except QueryError as error:
            self.ctx.notify.show_error("Not an entity id", str(error))
            return
        self.start(qid)

    def set_filters(self, filters: ClaimFilterSettings) -> None:
        """A rule switched on or off: the candidates follow (claims already in stay)."""
        from dataclasses import replace

        if self.draft is None:
            return
        self.draft = replace(self.draft, filters=filters)
        self._persist()
        self.refresh()

    def sample(self, request: SampleRequest) -> None:
        """Sample units for the Browser's category (members held in the session)."""
        from core.units.sampler import sample_request_job

        store, category = self.ctx.store, self.ctx.browser_state.category
        if store is None or category is None:
            self.ctx.notify.show_error("No category", "Show a category in the Browser first.")
            return
        source = None if self.ctx.source.kind == "cache" else self.ctx.source.source
        job = sample_request_job(store, source, category, request)
        # The units it saves are one recorded edit: on the undo stack when it ends (a
        # stopped sample's too: it keeps the units it saved).
        handle = self.ctx.undo.run_recorded(self.ctx.run_job, job, panel="units")
        handle.succeeded.connect(lambda outcome: self._sampled(outcome.result))

    def _sampled(self, summary: SampleSummary) -> None:
        # The list follows through the job's Topic.UNITS.
        shapes = ", ".join(f"{n} {shape}" for shape, n in summary.shapes.items()) or "none"
        skipped = "\n".join(f"{reason}: {n}" for reason, n in summary.skipped.items())
        self.ctx.notify.show_message(
            "Sampling finished",
            f"{summary.category}: {plural(summary.units, 'unit')} built from "
            f"{plural(summary.entities, 'entity')} ({shapes}). "
            + ("Skipped entities are listed under Details." if skipped else ""),
            skipped,
        )

    def ask_search(self) -> None:
        """The Search… dialog; the root defaults to the Browser's category."""
        from widgets.unit_search import UnitSearchDialog

        dialog = UnitSearchDialog(
            self.panel, category=self.ctx.browser_state.category, model=self._search_model
        )
        if dialog.exec() == dialog.DialogCode.Accepted:
            self.search(dialog.request())

    def search(self, request: SearchRequest) -> JobHandle | None:
        """Run a knowledge beam search (core.units.beam_search) on the Browser's source; bad
        input is refused with a message before anything runs."""
        from core.units.beam_search import search_job
        from core.wikidata.cache import SessionCacheSource

        store = self.ctx.store
        if store is None:
            self.ctx.notify.show_error("No session", "Open a session first.")
            return None
        source = self.ctx.source.source
        if source is None or self.ctx.source.kind == "cache":
            source = SessionCacheSource(store)
        self._search_model = request.model
        try:
            job = search_job(store, source, request)
        except UserFacingError as error:
            self.ctx.notify.show_error("Cannot search", str(error))
            return None
        # The units it saves are one recorded edit: on the undo stack when it ends.
        handle = self.ctx.undo.run_recorded(self.ctx.run_job, job, panel="units")
        handle.succeeded.connect(lambda outcome: self._searched(outcome.result))
        return handle

    def _searched(self, summary: SearchSummary) -> None:
        # The list (and every panel showing units) follows through the job's Topic.UNITS.
        lines = [
            f"{d}: {plural(r['units'], 'unit')}, mean log-likelihood "
            + ("-" if r["mean"] is None else f"{r['mean']:.4f}")
            for d, r in summary.results.items()
        ]
        if summary.delta is not None:
            lines.append(f"δ (head − tail) = {summary.delta:.4f}")
        self.ctx.notify.show_message(
            "Search finished",
            f"{summary.template}: {plural(len(summary.unit_ids), 'unit')} saved from "
            f"{plural(summary.roots, 'root')}.",
            "\n".join(lines),
        )

    def set_focus(self, qid: str) -> None:
        self.focus = qid
        if qid in self.details or self._load_cached(qid):
            self.refresh()
        else:
            self._fetch(qid, then=self.refresh)

    def add_claim(self, index: int) -> None:
        self.add_claims([index])

    def add_claims(self, indices: list[int]) -> None:
        """Add the chosen candidates (rows of the claim picker) in one action."""
        from core.units.builder.candidates import add_candidates, candidates

        if self.draft is None or self.focus is None:
            return
        rows = candidates(self.draft, self.details, self.focus).claims
        chosen = [rows[i] for i in sorted(set(indices)) if 0 <= i < len(rows)]
        before = len(self.draft.claims)
        self.draft, skipped = add_candidates(self.draft, chosen)
        added = self.draft.claims[before:]
        if skipped:
            self.ctx.notify.show_status(
                (f"Added {len(added)}; not added: " if len(chosen) > 1 else "Not added: ")
                + "; ".join(skipped),
                8000,
            )
        if not added:
            return
        self._persist()
        # Load item values now, so they can be followed to build a chain.
        for claim in added:
            value = claim.value
            if (
                claim.value_type == "wikibase-item"
                and value
                and value not in self.details
                and not self._load_cached(value)
            ):
                self._fetch(value, then=self.refresh)
        self.refresh()

    def move(self, position: int, target: int) -> None:
        from core.units.builder.draft import move_triple

        if self.draft is None:
            return
        self.draft, self.overrides = move_triple(self.draft, self.overrides, position, target)
        self._persist()
        self.refresh()

    def remove(self, position: int) -> None:
        from core.units.builder.draft import remove_triple

        if self.draft is None:
            return
        self.draft, self.overrides = remove_triple(self.draft, self.overrides, position)
        self._persist()
        self.refresh()

    def override(
        self, lang: str, position: int, part: str, text: str | None, keep: bool = False
    ) -> None:
        """A person's words for a part of a triple: they name that entity wherever it appears
        in the unit (in ``lang``); with ``keep``, new units of the session use them too."""
        from core.units.builder.draft import claim_entity, override_across
        from core.units.builder.render import keep_label
        from core.units.builder.saved import set_label_override

        store = self.ctx.store
        try:
            if self.shown_unit is not None and store is not None:
                unit = self.shown_unit
                # An edit on the session's undo stack (core applies it as recorded).
                self.ctx.undo.write(
                    f"your words for a {part} of unit {unit}",
                    lambda s: set_label_override(s, unit, lang, position, part, text, keep=keep),
                    writes={Topic.UNITS},
                    panel="units",
                    on_done=lambda _result: self.show_unit(unit),
                    on_error=self._override_refused,
                )
                return
            if self.draft is None:
                return
            self.overrides = override_across(
                self.draft.claims, self.overrides, lang, position, part, text
            )
            if keep and store is not None:
                entity = claim_entity(self.draft.claims[position], part)
                if entity is None:
                    raise UserFacingError(
                        "a literal value cannot be kept for the session: "
                        "only an entity's or a property's words can"
                    )
                self.ctx.undo.write(
                    f"your words for {entity} in new units",
                    lambda s: keep_label(s, lang, entity, text),
                    panel="units",
                    on_done=lambda _result: self.refresh(),
                    on_error=self._override_refused,
                )
        except UserFacingError as error:
            self._override_refused(error)
        self._persist()
        self.refresh()

    def _override_moved(self, entry: Any) -> None:
        """An undo or redo of words for a stored unit landed: the unit shown again."""
        if entry.kind == "unit override" and entry.unit_id == self.shown_unit:
            self.show_unit(entry.unit_id)

    def _override_refused(self, error: UserFacingError) -> None:
        self.ctx.notify.show_error("Override not kept", str(error))

    def save(self) -> int | None:
        from core.edits import GUI
        from core.units.builder.render import kept_labels, render_unit
        from core.units.builder.saved import save_unit

        store, draft = self.ctx.store, self.draft
        if store is None or draft is None:
            return None
        try:
            rendered = render_unit(
                draft, self.details, overrides=self.overrides, kept=kept_labels(store)
            )
        except UserFacingError as error:
            self._not_saved(error)
            return None
        landed: list[int] = []

        def saved(unit_id: int) -> None:
            landed.append(unit_id)
            if self.draft is draft:  # not replaced by another draft while it waited
                self.discard()
            self.show_unit(unit_id)
            self.ctx.notify.show_status("Unit saved", 5000)

        # A recorded edit on the session's undo stack, which clears the draft it was
        # built from in the same transaction (undo takes the unit out and puts the draft
        # back). Announced when it lands: this list, the Session panel, the pickers.
        self.ctx.undo.write(
            f"the unit rooted at {draft.root_qid}",
            lambda s: save_unit(
                s,
                draft,
                rendered,
                category=draft.category,
                source="built in TailLens",
                recorded_as=GUI,
                clears_draft=True,
            ),
            writes={Topic.UNITS},
            panel="units",
            on_done=saved,
            on_error=self._not_saved,
        )
        return landed[0] if landed else None

    def _not_saved(self, error: UserFacingError) -> None:
        self.ctx.notify.show_error("Unit not saved", str(error))

    def discard(self) -> None:
        self.draft, self.overrides, self.focus = None, {}, None
        self._persist()
        self.panel.clear_draft()

    def show_unit(self, unit_id: int) -> None:
        from core.units.builder.saved import load_unit
        from core.units.reference_counts import references_of

        if self.ctx.store is None:
            return
        self.shown_unit = unit_id
        # Off the UI thread; a newer choice supersedes it.
        self.ctx.reads.request(
            UNIT_READ,
            lambda store: (load_unit(store, unit_id), references_of(store, unit_id)),
            lambda result: self._unit_read(unit_id, *result),
        )

    def _unit_read(self, unit_id: int, unit: Any, references: Any) -> None:
        if self.shown_unit != unit_id:
            return  # a draft (or another unit) is shown now
        self.panel.show_stored(unit)
        self.panel.show_references(references)

    # -- showing -------------------------------------------------------------------------
    def refresh(self) -> None:
        from core.units.builder.candidates import candidates
        from core.units.builder.draft import structure
        from core.units.builder.render import kept_labels, label_index, render_unit

        draft = self.draft
        if draft is None:
            self.panel.clear_draft()
            return
        self.shown_unit = None
        labels = label_index(self.details).get("en", {})
        # The root and every item object already loaded can be the focus (to follow it).
        focus = [(draft.root_qid, labels.get(draft.root_qid, draft.root_qid))]
        for claim in draft.claims:
            if (
                claim.value_type == "wikibase-item"
                and claim.value in self.details
                and claim.value not in [q for q, _ in focus]
            ):
                focus.append((claim.value, labels.get(claim.value, claim.value)))
        kept = kept_labels(self.ctx.store) if self.ctx.store is not None else None
        rendered = render_unit(draft, self.details, overrides=self.overrides, kept=kept)
        self.panel.show_filter_settings(draft.filters)
        self.panel.show_draft(
            draft,
            labels.get(draft.root_qid, draft.root_qid),
            structure(draft),
            rendered,
            focus,
            self.focus,
        )
        if self.focus in self.details:
            self.panel.show_candidates(
                candidates(draft, self.details, self.focus), labels, dict(RULES)
            )

    # -- entity details ------------------------------------------------------------------
    def _load_cached(self, qid: str) -> bool:
        from core.wikidata.cache import load_entity

        if self.ctx.store is None:
            return False
        details = load_entity(self.ctx.store, qid)
        if details is None or not details.claims:
            return False
        self.details[qid] = details
        return True

    def _fetch(self, qid: str, then) -> None:
        source, store = self.ctx.source.source, self.ctx.store
        if source is None or store is None or self.ctx.source.kind == "cache":
            self.ctx.notify.show_status(
                f"{qid} has not been opened in this session and no online or demo source "
                "is selected in the Browser",
                8000,
            )
            return

        def fetch(ctx: JobContext) -> Any:
            from core.wikidata.fetch import fetch_entity

            ctx.progress(0, 1, qid)
            return fetch_entity(store, source, qid)

        handle = self.ctx.run_job(
            Job(f"Fetch {qid}", fetch, kind="wikidata.entity", writes=frozenset({Topic.ENTITIES}))
        )

        def arrived(outcome: Any) -> None:
            self.details[qid] = outcome.result
            then()

        handle.succeeded.connect(arrived)

    def _persist(self) -> None:
        """Keep the draft in the session: one edit on the session's undo stack."""
        import json

        from core.edits.drafts import DraftEdit
        from core.units.builder.draft import draft_to_json

        draft, overrides = self.draft, dict(self.overrides)
        self._edits += 1
        rows = [[lang, pos, part, words] for (lang, pos, part), words in overrides.items()]
        if draft is None:
            what = "the unit draft (none)"
        else:
            size = len(draft.claims)
            what = f"the unit draft of {draft.root_qid} ({size} triple{'s' if size != 1 else ''})"
        text = draft_to_json(draft) if draft is not None else ""
        edit = DraftEdit(text, json.dumps(rows), words=what)
        self.ctx.undo.apply(edit, panel="units", what="the unit draft")

    def _draft_moved(self, entry: Any) -> None:
        """An undo or redo of a draft edit, or of a saved unit (which cleared the draft),
        landed: the draft as the session keeps it now."""
        if entry.kind not in ("draft", "unit"):
            return
        self._edits += 1
        self.draft, self.overrides = None, {}
        self.panel.clear_draft()
        if entry.kind == "unit" and entry.unit_id is not None:
            if entry.stands:
                self.show_unit(entry.unit_id)  # saved again: shown as after the save
            elif self.shown_unit == entry.unit_id:
                self.shown_unit = None  # taken out: the draft it came from is shown
        self._read_draft()
