"""Wiring of the Annotate panel: who rates, the queue, saving, undo, promotion, agreement.

Every save, undo and promotion is one committed transaction in ``core.annotation``,
announced through ``app.changes`` (Topic.ANNOTATIONS; a promotion adds Topic.REFERENCES)
so the Scores and Report panels follow; the controller keeps only the
:class:`core.annotation.AnnotationQueue` (the items and the undo stack of this sitting).
The last annotator and filter are remembered per session
file in the user's settings (not in the session, which several people may share), so
reopening a session puts the annotator back where they were.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, fields
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from core.annotation import AnnotationError, QueueFilter, QueueOptions, Rating
from core.changes import Topic
from core.desktop.logs import get_logger
from core.errors import UserFacingError
from core.labels import plural

# The fields of a rating put back in the form after an undo (core.edits.ratings' state).
RESTORED_FIELDS = (
    "fluency",
    "adequacy",
    "blame",
    "blame_other",
    "checks",
    "error_taxonomy",
    "corrected_text",
)

if TYPE_CHECKING:
    from app.context import PanelContext
    from core.annotation import AnnotationQueue, AnnotatorInfo
    from core.annotation.packs.manifest import PackInfo
    from core.store import SessionStore
    from widgets.annotate import AnnotatePanel

log = get_logger("annotate")
# The panel's view reads (app.session_io.ViewReads keys): a newer one supersedes.
QUEUE_READ = "annotate.queue"  # builds the queue
OPEN_READ = "annotate.open"  # the annotators and the filter's options, at session open
ANNOTATORS_READ = "annotate.annotators"  # the same, when an annotator is chosen
OPTIONS_READ = "annotate.options"  # the filter's options, when texts are added
_FILTER_FIELDS = {f.name for f in fields(QueueFilter)}


class AnnotateController(QObject):
    def __init__(self, ctx: PanelContext, panel: AnnotatePanel) -> None:
        super().__init__(panel)
        self.ctx, self.panel = ctx, panel
        self.annotator_id: int | None = None
        self.queue: AnnotationQueue | None = None
        self.index: int | None = None
        self._annotators: list[AnnotatorInfo] = []  # as last read
        self._options_owed = False  # an annotator was chosen; the filter's options follow

        panel.annotator_chosen.connect(self.choose_annotator)
        panel.annotator_added.connect(self.add_annotator)
        panel.queue_requested.connect(self.build_queue)
        panel.save_requested.connect(self.save)
        panel.item_requested.connect(self.show)
        panel.undo_requested.connect(self.undo)
        panel.redo_requested.connect(self.redo)
        ctx.undo.changed.connect(self._can_undo)
        ctx.undo.undone.connect(lambda entry: self._rating_moved(entry, undone=True))
        ctx.undo.redone.connect(lambda entry: self._rating_moved(entry, undone=False))
        panel.promote_requested.connect(self.promote)
        panel.golden_requested.connect(self.set_golden)
        panel.agreement_requested.connect(self.refresh_agreement)
        ctx.session_changed.connect(lambda _store: self.session_opened())
        # New texts or units: the filter offers them; ratings written elsewhere (an
        # import of WDV records): the Agreement tab, when it is the one shown.
        ctx.changes.subscribe(
            {Topic.RUNS, Topic.REFERENCES, Topic.UNITS}, lambda _topics: self._texts_changed(), self
        )
        ctx.changes.subscribe({Topic.ANNOTATIONS}, lambda _topics: self._ratings_changed(), self)
        # The reference modes (METHODS §11): Write references, Review translations.
        from app.references_annotate import ReferencesAnnotateController

        self.references = ReferencesAnnotateController(
            ctx, panel.tabs, lambda: self.annotator_id, self
        )

    # -- session and annotator ---------------------------------------------------------
    def session_opened(self) -> None:
        from core.annotation import list_annotators, queue_options

        self.annotator_id, self.queue, self.index = None, None, None
        self._annotators = []
        self.panel.clear_item("Choose who you are, then build a queue.")
        self.panel.show_progress(0, 0)
        self._can_undo()
        for key in (ANNOTATORS_READ, OPTIONS_READ):
            self.ctx.reads.drop(key)  # the previous session's
        if self.ctx.store is None:
            self.panel.show_annotators([], None)
            return
        # Off the UI thread: who annotates, and what the filter offers (one cheap query).
        self.ctx.reads.request(
            OPEN_READ,
            lambda store: (list_annotators(store), queue_options(store)),
            lambda result: self._opened(*result),
        )

    def _opened(self, annotators: list[AnnotatorInfo], options: QueueOptions) -> None:
        self._annotators = annotators
        remembered = self._remembered()
        named = {a.name: a.id for a in annotators if not a.is_anonymous}
        self.panel.show_annotators(annotators, None)
        if remembered.get("annotator") in named:
            self._select(named[remembered["annotator"]], options)
            self.panel.show_annotators(annotators, self.annotator_id)
            spec = _queue_filter(remembered.get("filter"))
            if spec is not None:
                self.panel.set_queue_filter(spec)
                self.build_queue(self.panel.queue_filter())
        else:
            from core.annotation.packs.manifest import pack_info

            # An annotation pack opened for the first time: its annotator is chosen and
            # the guidelines are a click away (core.annotation.packs).
            self.ctx.reads.request(
                "annotate-pack", pack_info, lambda info: self._pack_opened(info, named)
            )

    def _pack_opened(self, info: PackInfo | None, named: dict[str, int]) -> None:
        if info is None or info.annotator not in named:
            return
        # Where its annotator works: Annotate's workspace, as them, the queue built
        # (blind as the pack was made): the file is there to be rated.
        self.ctx.show_task("annotate")
        self.choose_annotator(named[info.annotator])
        self.panel.state.blind = info.blind
        self.build_queue(self.panel.queue_filter())
        self.ctx.notify.show_message(
            "Annotation pack",
            f"This pack holds {info.items} texts for {info.annotator} to rate; the queue "
            "is built. Ratings are saved as you go; send this file back when done."
            + (" The guidelines are under Details." if info.guidelines else ""),
            info.guidelines,
        )

    def _texts_changed(self) -> None:
        from core.annotation import queue_options

        if self.ctx.store is not None and self.annotator_id is not None:
            self.ctx.reads.request(OPTIONS_READ, queue_options, self._options_read)

    def _options_read(self, options: QueueOptions) -> None:
        if self.annotator_id is not None:
            self.panel.show_filter_options(options)

    def _ratings_changed(self) -> None:
        if self.panel.tabs.currentIndex() == 1:  # Agreement
            self.refresh_agreement()

    def choose_annotator(self, annotator_id: int) -> None:
        """``-1``: keep whoever was chosen (a cancelled "New annotator…"). The annotators
        and the filter's options follow as a view read (off the UI thread)."""
        from core.annotation import list_annotators, queue_options

        if self.ctx.store is None:
            return
        if annotator_id >= 0 and annotator_id != self.annotator_id:
            self._select(annotator_id, None)
        self.ctx.reads.request(
            ANNOTATORS_READ,
            lambda store: (list_annotators(store), queue_options(store)),
            lambda result: self._annotators_read(*result),
        )

    def _select(self, annotator_id: int, options: QueueOptions | None) -> None:
        """``annotator_id`` annotates now; the filter offers ``options`` (None: they are
        read, and it is remembered, when :meth:`_annotators_read` has them)."""
        self.annotator_id = annotator_id
        self.queue, self.index = None, None
        self.panel.clear_item("Set the filter and press Build queue.")
        self.panel.show_progress(0, 0)
        self._can_undo()
        self.panel.fold_filter(False)
        self._options_owed = options is None
        if options is not None:
            self.panel.show_filter_options(options)
            self._remember()

    def _annotators_read(self, annotators: list[AnnotatorInfo], options: QueueOptions) -> None:
        self._annotators = annotators
        if self._options_owed and self.annotator_id is not None:
            self._options_owed = False
            self.panel.show_filter_options(options)
            self._remember()
        self.panel.show_annotators(annotators, self.annotator_id)

    def add_annotator(self, name: str) -> int | None:
        from core.annotation import add_annotator

        store = self.ctx.store
        if store is None:
            return None
        added: list[int] = []

        def done(info: Any) -> None:
            added.append(info.id)
            self.choose_annotator(info.id)

        def refused(error: UserFacingError) -> None:
            self.ctx.notify.show_error("Annotator not added", str(error))
            self.choose_annotator(-1)

        self.ctx.undo.write(
            f"the annotator {name}",
            lambda s: add_annotator(s, name),
            writes={Topic.ANNOTATIONS},
            panel="annotate",
            on_done=done,
            on_error=refused,
        )
        return added[0] if added else None

    # -- the queue -----------------------------------------------------------------------
    def build_queue(self, spec: QueueFilter) -> None:
        """Build the queue ``spec`` asks for off the UI thread (a view read: a newer
        request supersedes it); :meth:`_queue_built` shows its first item."""
        from core.annotation import build_queue

        store, annotator_id = self.ctx.store, self.annotator_id
        if store is None or annotator_id is None:
            self.panel.show_message("Choose who you are first.", error=True)
            return
        self.ctx.reads.request(
            QUEUE_READ,
            lambda store: build_queue(store, annotator_id, spec),
            lambda queue: self._queue_built(annotator_id, spec, queue),
            on_error=lambda error: self.panel.show_message(str(error), error=True),
        )

    def _queue_built(self, annotator_id: int, spec: QueueFilter, queue: AnnotationQueue) -> None:
        if annotator_id != self.annotator_id:
            return  # built for whoever was chosen before
        self.queue = queue
        self._remember(spec)
        self._can_undo()
        self._progress()
        if not len(queue):
            self.index = None
            self.panel.clear_item(
                "No text matches this filter"
                + (" that you have not rated yet." if spec.unrated_only else ".")
            )
            return
        self.panel.fold_filter(True)
        self.show(queue.next_index(-1) if spec.unrated_only else 0)
        self.panel.setFocus()

    def show(self, index: int | None) -> None:
        queue = self.queue
        if queue is None:
            return
        if index is None:
            self.index = None
            self.panel.clear_item(
                f"Done: you have rated all {plural(len(queue), 'text')} of this "
                "queue. Build another, or look at the Agreement tab."
            )
            return
        self.index = index
        self.panel.show_item(
            index, queue[index], queue.rating(index), len(queue), blind=queue.spec.blind
        )

    def save(self, index: int, rating: Rating) -> bool:
        """Save the rating of item ``index`` (committed at once) and go to the next one."""
        queue = self.queue
        if queue is None:
            return False

        def saved(_saved: Any) -> None:
            if self.queue is queue:
                self._progress()
                following = queue.next_index(index)
                self.show(following)
                if following is not None and following <= index:
                    # Past the last item: said, not a silent jump back to one skipped.
                    done = queue.rated()
                    left = sum(1 for item in queue.items if item.ref not in done)
                    self.panel.show_message(
                        f"End of the queue: {plural(left, 'text')} you skipped "
                        f"{'is' if left == 1 else 'are'} still unrated; back to item "
                        f"{following + 1}."
                    )

        # An edit on the session's undo stack (Ctrl+Z, Edit ▸ Undo, the Undo button).
        landed = self.ctx.undo.write(
            f"your rating of item {index + 1}",
            lambda _store: queue.save(index, rating),
            writes={Topic.ANNOTATIONS},
            panel="annotate",
            on_done=saved,
            on_error=self._refused,
        )
        if landed is None:
            self.panel.show_message(
                f"Your rating of item {index + 1} is saved as soon as the session is free."
            )
        return landed is not False

    def _refused(self, error: UserFacingError) -> None:
        self.panel.show_message(str(error), error=True)

    def undo(self) -> None:
        """Ctrl+Z and the Undo button: the session's undo (the latest edit, a rating or
        not: undoing one made elsewhere raises its panel)."""
        if not self.ctx.undo.undo():
            self.panel.show_message("Nothing to undo.", error=True)

    def redo(self) -> None:
        if not self.ctx.undo.redo():
            self.panel.show_message("Nothing to redo.", error=True)

    def _can_undo(self) -> None:
        self.panel.set_can_undo(self.ctx.undo.can_undo())

    def _rating_moved(self, entry: Any, *, undone: bool) -> None:
        """An undo or redo of one of this annotator's ratings landed: its item is shown;
        an undone rating is put back in the form (not saved) for editing, a redone one
        (its correction too) is what the session holds again."""
        from core.annotation import ItemRef, StoredRating

        queue = self.queue
        if entry.kind != "rating" or queue is None:
            return
        if entry.target.get("annotator_id") != queue.annotator.id:
            return
        self._progress()
        ref = ItemRef(entry.target["item_kind"], int(entry.target["item_id"]))
        index = queue.index_of(ref)
        verb = "Undone" if undone else "Redone"
        if index is None:
            self.panel.show_message(
                f"{verb}: your rating of {ref.kind} {ref.id} (not in this queue)."
            )
            return
        self.show(index)
        values = entry.after if undone else None
        if values is not None:
            self.panel.restore_form(
                StoredRating(
                    0,
                    queue.annotator.id,
                    ref,
                    **{name: values.get(name) for name in RESTORED_FIELDS},
                    is_golden=False,
                )
            )
            # Item numbers as the screen shows them ("item 2 of 3"), not database ids.
            self.panel.show_message(
                f"Undone: your rating of item {index + 1} is back in the "
                "form. Edit it and save (Enter), or move on."
            )
        else:
            self.panel.show_message(f"{verb}: your rating of item {index + 1}.")

    def promote(self, index: int, rating: Rating) -> int | None:
        """Save the rating with its correction, then make the correction a gold reference."""
        queue = self.queue
        if queue is None:
            return None
        promoted: list[int] = []

        def refused(error: UserFacingError) -> None:
            # The rating may be saved while the promotion was refused.
            self.ctx.changes.announce({Topic.ANNOTATIONS})
            self._refused(error)

        def save_and_promote(_store: Any) -> int:
            queue.save(index, rating)
            return queue.promote(index)

        self.ctx.undo.write(
            f"your correction of item {index + 1} as a gold reference",
            save_and_promote,
            writes={Topic.ANNOTATIONS, Topic.REFERENCES},
            panel="annotate",
            on_done=lambda reference_id: promoted.append(
                self._promoted(queue, index, reference_id)
            ),
            on_error=refused,
        )
        return promoted[0] if promoted else None

    def set_golden(self, index: int, answer: tuple[int | None, int | None] | None) -> None:
        """Known answer…: set (``answer``: fluency, adequacy) or remove (None) the known
        answer of item ``index``, given by the annotator chosen; an edit on the session's
        undo stack (a ``GoldenEdit``)."""
        from core.annotation import clear_golden_answer, set_golden_answer

        queue, expert = self.queue, self.annotator_id
        if queue is None or expert is None:
            return
        item = queue[index]
        number = index + 1  # as the screen says it ("item 2 of 3")

        def write(store: SessionStore) -> bool:
            if answer is None:
                return clear_golden_answer(store, item)
            fluency, adequacy = answer
            set_golden_answer(store, expert, item, fluency=fluency, adequacy=adequacy)
            return True

        def done(changed: bool) -> None:
            if answer is not None:
                text = f"Item {number} is a golden item: its known answer is set."
            elif changed:
                text = f"Item {number} is no longer a golden item."
            else:
                text = f"Item {number} has no known answer."
            self.panel.show_message(text)

        what = (
            f"the known answer of item {number}"
            if answer is not None
            else f"the removal of item {number}'s known answer"
        )
        self.ctx.undo.write(
            what,
            write,
            writes={Topic.ANNOTATIONS},
            panel="annotate",
            on_done=done,
            on_error=self._refused,
        )

    def _promoted(self, queue: AnnotationQueue, index: int, reference_id: int) -> int:
        self._progress()
        item = queue[index]
        self.panel.show_message(
            f"Gold reference {reference_id} added to unit {item.unit_uid} "
            f"({item.lang}); the rating is saved."
        )
        return reference_id

    def _progress(self) -> None:
        if self.queue is not None:
            progress = self.queue.progress()
            self.panel.show_progress(progress.done, progress.total)

    # -- agreement -----------------------------------------------------------------------
    def refresh_agreement(self) -> None:
        from core.annotation import aggregate_annotations, golden_accuracy

        weighted = self.panel.weighted_check.isChecked()

        def read(store: SessionStore) -> tuple[Any, Any, Any]:
            by_category = aggregate_annotations(store, by=("category",), weighted=weighted)
            by_tier = aggregate_annotations(store, by=("tier",), weighted=weighted)
            return by_category, by_tier, golden_accuracy(store)

        # Off the UI thread (it reads every rating); a newer request supersedes it.
        self.ctx.reads.request(
            "annotate.agreement",
            read,
            lambda result: self._show_agreement(*result),
            on_error=lambda error: self.panel.show_no_agreement(str(error)),
        )

    def _show_agreement(self, by_category: Any, by_tier: Any, golden: Any) -> None:
        if not by_category.items:
            self.panel.show_no_agreement(
                "No ratings yet: rate texts in the Rate tab, or "
                "import WDV records with their crowd scores."
            )
            return
        self.panel.show_agreement(
            by_category.overall, [*by_category.groups, *by_tier.groups], by_category.items, golden
        )

    # -- remembered per session file -------------------------------------------------------
    def _settings_key(self) -> str | None:
        store = self.ctx.store
        if store is None:
            return None
        digest = hashlib.sha1(str(store.path.resolve()).encode()).hexdigest()[:16]
        return f"annotate/{digest}"

    def _remembered(self) -> dict[str, Any]:
        key = self._settings_key()
        if key is None:
            return {}
        try:
            value = json.loads(str(self.ctx.settings.value(key, "{}")))
        except (TypeError, ValueError):
            return {}
        return value if isinstance(value, dict) else {}

    def _remember(self, spec: QueueFilter | None = None) -> None:
        key, store = self._settings_key(), self.ctx.store
        if key is None or store is None or self.annotator_id is None:
            return
        # The annotators as last read (the one chosen is among them: it was picked there).
        name = next((a.name for a in self._annotators if a.id == self.annotator_id), None)
        remembered = self._remembered()
        if name is not None:
            remembered["annotator"] = name
        if spec is not None:
            remembered["filter"] = {
                k: list(v) if isinstance(v, tuple) else v for k, v in asdict(spec).items()
            }
        self.ctx.settings.setValue(key, json.dumps(remembered))


def _queue_filter(remembered: Any) -> QueueFilter | None:
    """A filter remembered in the settings (JSON: lists for tuples), or None when there is
    none or it is not one (settings written by hand, or by another version)."""
    if not isinstance(remembered, dict):
        return None
    defaults = asdict(QueueFilter())
    values: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v
        for k, v in remembered.items()
        if k in _FILTER_FIELDS
    }
    for name, value in values.items():
        default = defaults[name]
        if default is None:  # limit
            fits = value is None or (isinstance(value, int) and not isinstance(value, bool))
        elif isinstance(default, bool):
            fits = isinstance(value, bool)
        elif isinstance(default, float):
            fits = isinstance(value, int | float) and not isinstance(value, bool)
        else:
            fits = isinstance(value, type(default))
        if not fits:
            return None
    return QueueFilter(**values)


__all__ = ["AnnotateController", "AnnotationError"]
