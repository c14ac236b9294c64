"""Wiring of the Annotate panel's reference modes (METHODS §11): the "Write references"
and "Review translations" tabs (``widgets.annotate.references``) over
``core.references.review``.

The annotator is the Annotate panel's (chosen once, at the top). Queues and samples
are read off the UI thread (``app.reads``); a written reference and a review (with its
correction promoted to gold) go through the session writer and are announced
(REFERENCES, ANNOTATIONS)."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from core.changes import Topic
from core.errors import UserFacingError

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtWidgets import QTabWidget

    from app.context import PanelContext

DEFAULT_SAMPLE = 50  # per language pair, as TailNLG (core.references.review.DEFAULT_SAMPLE)


class ReferencesAnnotateController(QObject):
    """The reference tabs of the Annotate panel: ``tabs`` is its tab widget, ``annotator``
    says who is chosen there (None: nobody yet)."""

    def __init__(
        self,
        ctx: PanelContext,
        tabs: QTabWidget,
        annotator: Callable[[], int | None],
        parent: QObject,
    ) -> None:
        from widgets.annotate.references import ReviewTranslationsView, WriteReferencesView

        super().__init__(parent)
        self.ctx, self.annotator = ctx, annotator
        self.write_view = WriteReferencesView()
        self.review_view = ReviewTranslationsView(DEFAULT_SAMPLE)
        tabs.addTab(self.write_view, "Write references")
        tabs.addTab(self.review_view, "Review translations")
        self.units: list[Any] = []
        self.unit_index = 0
        self.items: list[Any] = []
        self.item_index = 0
        self.write_view.queue_requested.connect(self.load_units)
        self.write_view.save_requested.connect(self.write)
        self.write_view.step_requested.connect(self.step_unit)
        self.review_view.sample_requested.connect(self.load_sample)
        self.review_view.save_requested.connect(self.review)
        self.review_view.step_requested.connect(self.step_item)
        self.review_view.report_requested.connect(self.refresh_report)
        ctx.session_changed.connect(lambda _store: self.reset())

    def reset(self) -> None:
        self.units, self.items = [], []
        self.write_view.show_unit(None, 0, 0)
        self.review_view.show_item(None, 0, 0)

    def _annotator(self, view: Any) -> int | None:
        chosen = self.annotator()
        if chosen is None:
            view.show_message("Choose who you are first (the annotator at the top).")
        return chosen

    # -- writing ---------------------------------------------------------------------------
    def load_units(self, lang: str) -> None:
        from core.references.review import units_to_write

        def shown(units: list[Any]) -> None:
            self.units, self.unit_index = units, 0
            self._show_unit()
            without = sum(1 for u in units if not u.references)
            self.write_view.show_message(
                f"{without} of {len(units)} units have no reference in {lang}."
            )

        self.ctx.reads.request(
            "references.write",
            lambda store: units_to_write(store, lang),
            shown,
            on_error=lambda error: self.write_view.show_message(str(error)),
        )

    def _show_unit(self) -> None:
        unit = self.units[self.unit_index] if self.unit_index < len(self.units) else None
        self.write_view.show_unit(unit, self.unit_index, len(self.units))

    def step_unit(self, step: int) -> None:
        if self.units:
            self.unit_index = max(0, min(len(self.units) - 1, self.unit_index + step))
            self._show_unit()

    def write(self, unit_id: int, lang: str, text: str) -> None:
        from core.references.review import write_reference

        annotator = self._annotator(self.write_view)
        if annotator is None:
            return

        def done(reference_id: Any) -> None:
            self.write_view.show_message(f"Saved as gold reference {reference_id}.")
            self.step_unit(+1)

        self.ctx.undo.write(
            f"the reference of unit {unit_id}",
            lambda store: write_reference(store, annotator, unit_id, lang, text),
            writes={Topic.REFERENCES},
            panel="annotate",
            on_done=done,
            on_error=lambda error: self.write_view.show_message(str(error)),
        )

    # -- reviewing -------------------------------------------------------------------------
    def load_sample(self, n: int) -> None:
        from core.references.review import sample_for_review

        def shown(sample: Any) -> None:
            self.items, self.item_index = list(sample.items), 0
            self._show_item()
            pairs = ", ".join(f"{p} {c}" for p, c in sample.per_pair.items()) or "none"
            self.review_view.show_message(
                (sample.note + ". " if sample.note else "") + f"To review: {pairs}."
            )

        self.ctx.reads.request(
            "references.sample",
            lambda store: sample_for_review(store, n),
            shown,
            on_error=lambda error: self.review_view.show_message(str(error)),
        )

    def _show_item(self) -> None:
        item = self.items[self.item_index] if self.item_index < len(self.items) else None
        self.review_view.show_item(item, self.item_index, len(self.items))

    def step_item(self, step: int) -> None:
        if self.items:
            self.item_index = max(0, min(len(self.items) - 1, self.item_index + step))
            self._show_item()

    def review(self, reference_id: int, flags: dict[str, list[str]], corrected: str | None) -> None:
        from core.references.review import save_review

        annotator = self._annotator(self.review_view)
        if annotator is None:
            return

        def done(result: Any) -> None:
            _annotation, gold = result
            extra = "" if gold is None else f"; correction stored as gold reference {gold}"
            self.review_view.show_message(f"Review saved{extra}.")
            self.step_item(+1)

        def refused(error: UserFacingError) -> None:
            self.review_view.show_message(str(error))

        self.ctx.undo.write(
            f"the review of translation {reference_id}",
            lambda store: save_review(store, annotator, reference_id, flags, corrected),
            writes={Topic.ANNOTATIONS, Topic.REFERENCES},
            panel="annotate",
            on_done=done,
            on_error=refused,
        )

    def refresh_report(self) -> None:
        from core.references.review import review_report

        self.ctx.reads.request(
            "references.report",
            lambda store: [asdict(p) for p in review_report(store).pairs],
            self.review_view.show_summary,
            on_error=lambda error: self.review_view.show_message(str(error)),
        )
