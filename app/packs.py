"""File ▸ Annotation packs…: the team's progress, making packs and merging them
(``core.annotation.packs``; the CLI twin is ``taillens annotations pack|merge|progress``).
Reads go through the view reads, packing and merging run as jobs."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from core.changes import Topic

if TYPE_CHECKING:
    from app.context import PanelContext
    from core.annotation.packs import MergeReport, PackRequest, PackSummary
    from core.jobs import JobOutcome
    from core.store import SessionStore
    from widgets.annotation_packs import AnnotationPacksDialog
    from widgets.main_window import MainWindow


def _progress(store: SessionStore) -> tuple[Any, list[str]]:
    from core.annotation import list_annotators
    from core.annotation.packs import overall_agreement, team_progress

    team = team_progress(store, agreement=overall_agreement)
    names = [a.name for a in list_annotators(store) if not a.is_anonymous]
    return team, names


class PacksController(QObject):
    def __init__(self, ctx: PanelContext, window: MainWindow) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self.window = window
        self.dialog: AnnotationPacksDialog | None = None
        window.annotation_packs_requested.connect(self.open)
        ctx.changes.subscribe({Topic.ANNOTATIONS}, lambda _topics: self.refresh(), self)

    def open(self) -> AnnotationPacksDialog | None:
        from widgets.annotation_packs import AnnotationPacksDialog

        if self.ctx.store is None:
            self.window.show_error("No session", "Open a session to make or merge packs.")
            return None
        if self.dialog is None:
            self.dialog = AnnotationPacksDialog(self.window)
            self.dialog.new_pack_requested.connect(self.make_pack)
            self.dialog.merge_requested.connect(self.merge)
        self.dialog.show_status("")
        self.dialog.show()
        self.dialog.raise_()
        self.refresh()
        return self.dialog

    def refresh(self) -> None:
        dialog = self.dialog
        if dialog is None or not dialog.isVisible():
            return
        self.ctx.reads.request(
            "annotation-packs",
            _progress,
            lambda result: dialog.show_progress(*result),
            title="Read the team's progress",
        )

    def make_pack(self, request: PackRequest) -> None:
        from core.annotation.packs import pack_job
        from core.errors import UserFacingError
        from core.io.output_guard import check_output_target

        store = self.ctx.store
        if store is None:
            return
        try:
            check_output_target(request.out)  # said at once; the job checks again
        except UserFacingError as error:
            self.window.show_error("Cannot write the pack", str(error))
            return
        handle = self.ctx.run_job(pack_job(store, request))
        handle.finished.connect(self._packed)

    def _packed(self, outcome: JobOutcome[PackSummary]) -> None:
        from core.jobs import JobSucceeded
        from core.labels import plural

        if not isinstance(outcome, JobSucceeded):
            return
        s = outcome.result
        text = (
            f"Wrote {s.path.name}: {plural(s.items, 'text')} of {plural(s.units, 'unit')} "
            f"for {s.annotator}" + (f", {s.golden} golden" if s.golden else "")
        )
        if self.dialog is not None:
            self.dialog.show_status(text)
        self.window.show_written("Pack written", text, s.path, "\n".join(s.notes))
        self.refresh()

    def merge(self, paths: list[Path]) -> None:
        from core.annotation.packs import merge_job

        store = self.ctx.store
        if store is None:
            return
        # Each pack's merge is one recorded edit: on the undo stack when the job ends.
        handle = self.ctx.undo.run_recorded(
            self.ctx.run_job, merge_job(store, paths), panel="annotate"
        )
        handle.finished.connect(self._merged)

    def _merged(self, outcome: JobOutcome[list[MergeReport]]) -> None:
        from core.jobs import JobSucceeded

        if not isinstance(outcome, JobSucceeded):
            return
        lines = [r.describe() for r in outcome.result]
        details = "\n".join(
            f"{r.path.name}: conflict: {c.describe()}" for r in outcome.result for c in r.conflicts
        )
        if self.dialog is not None:
            self.dialog.show_status("\n".join(lines))
        bar = self.window.show_message("Packs merged", "; ".join(lines), details)
        latest = self.ctx.undo.latest()
        if latest is not None and latest.kind == "pack merge":
            # What changed, with its Undo (the last pack's merge, as Edit ▸ Undo offers).
            bar.set_actions([("Undo", partial(self.ctx.undo.undo, latest.id))])
        self.refresh()
