"""The open session's undo stack: ``QUndoStack`` over the edit objects of ``core.edits``.

Every edit a panel makes goes through :meth:`SessionUndo.apply`, which hands it to the one
session writer (``app.session_io``: the UI thread never waits for SQLite's lock) and,
once it has landed with its history row, pushes a command on the stack. The stack holds
the edits' history rows; its commands do no work of their own (``QUndoStack`` keeps the
order, the index and the "Undo <what>" texts): :meth:`SessionUndo.undo` and
:meth:`SessionUndo.redo` send ``core.edits.undo_edit`` / ``redo_edit`` through the writer
and move the stack's index only when the session has taken the change. A refusal
(another change overwrote what the edit wrote) is shown as the message it is; the stack
below it is cleared, since an undo stack is a line and its next entry would undo past
the change that was kept.

Undoing an edit raises the panel it was made in. When a session opens, the history's
latest edits that still apply (``core.edits.undoable_tail``) become the stack, read off
the UI thread. An edit of tiers, references or ratings shows a message for a moment with
an Undo button (``notify``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from core.changes import Topic
from core.desktop.logs import get_logger

if TYPE_CHECKING:
    from app.jobrunner import JobHandle
    from app.session_io import SessionWriter, ViewReads
    from core.edits import Edit, HistoryEntry
    from core.errors import UserFacingError
    from core.jobs import Job
    from core.store import SessionStore

log = get_logger("edits")

TAIL_READ = "undo.tail"
# The panel an edit of each kind was made in (undo raises it).
PANEL_OF_KIND = {
    "tiers": "browser",
    "category": "browser",
    "rating": "annotate",
    "annotator": "annotate",
    "synonyms": "scores",
    "unit override": "units",
    "reference": "annotate",
    "draft": "units",
    "unit": "units",
    "pack merge": "annotate",
    "kept words": "units",
    "model tail": "browser",
    "golden": "annotate",
}
# Kinds whose edit shows a message with Undo (they change the study's numbers).
ANNOUNCED_KINDS = frozenset({"tiers", "rating", "reference"})
# Kinds whose undo writes many rows: always on the writer's thread.
HEAVY_KINDS = frozenset({"tiers", "model tail", "pack merge"})
MESSAGE_MS = 6_000  # how long the "… Undo" message stays


# Settings by the meta key that holds them: the panel that keeps each.
PANEL_OF_SETTING = {"verbalise:settings": "verbalise"}


def _panel_of(entry: HistoryEntry) -> str | None:
    if entry.kind == "setting":
        return PANEL_OF_SETTING.get(str(entry.target.get("key")))
    return PANEL_OF_KIND.get(entry.kind)


class EditCommand(QUndoCommand):
    """One applied edit on the stack: its history row and the panel it was made in."""

    def __init__(self, entry: HistoryEntry, panel: str | None) -> None:
        super().__init__(entry.description)
        self.entry = entry
        self.panel = panel

    # The work is done before the stack moves (SessionUndo.undo / redo): the stack only
    # keeps the order and the texts.
    def undo(self) -> None:
        pass

    def redo(self) -> None:
        pass


class SessionUndo(QObject):
    """The open session's undo stack (see the module doc)."""

    changed = Signal()  # what can be undone or redone changed
    applied = Signal(object)  # HistoryEntry: an edit landed
    undone = Signal(object)  # HistoryEntry: an edit was undone
    redone = Signal(object)  # HistoryEntry: an edit was redone

    def __init__(
        self,
        writer: SessionWriter,
        reads: ViewReads,
        current_store: Callable[[], SessionStore | None],
        *,
        raise_panel: Callable[[str], object] | None = None,
        show_error: Callable[[str, str], object] | None = None,
        announce: Callable[[str, Callable[[], object]], Any] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.writer, self.reads = writer, reads
        self._current_store = current_store
        self._raise_panel = raise_panel
        self._show_error = show_error
        self._announce = announce
        self.stack = QUndoStack(self)
        # A method, not a lambda: the connection ends with this object (the stack, its
        # child, still says its index changed while it is destroyed).
        self.stack.indexChanged.connect(self._index_changed)
        self._busy = False  # an undo or redo is on its way to the session
        writer.failed.connect(lambda *_args: self._settle())

    def _index_changed(self, _index: int) -> None:
        self.changed.emit()

    # -- applying ---------------------------------------------------------------------------
    def apply(
        self,
        edit: Edit,
        *,
        panel: str | None = None,
        what: str | None = None,
        at_once: bool = True,
        on_done: Callable[[HistoryEntry | None], object] | None = None,
        on_error: Callable[[UserFacingError], object] | None = None,
    ) -> bool | None:
        """Apply ``edit`` through the writer (see ``SessionWriter.write`` for the result);
        when it lands it is on the stack and ``on_done`` gets its history row (None: it
        changed nothing)."""
        from core.edits import GUI, apply_edit

        return self.write(
            what or edit.describe(),
            lambda store: apply_edit(store, edit, source=GUI),
            writes=edit.topics,
            panel=panel,
            on_done=on_done,
            on_error=on_error,
            at_once=at_once and edit.kind not in HEAVY_KINDS,
        )

    def write(
        self,
        what: str,
        fn: Callable[[SessionStore], Any],
        *,
        writes: Iterable[Topic] = (),
        panel: str | None = None,
        on_done: Callable[[Any], object] | None = None,
        on_error: Callable[[UserFacingError], object] | None = None,
        at_once: bool = True,
    ) -> bool | None:
        """A panel's write whose edits core code applies (a rating saved by the annotation
        queue): ``fn`` runs through the writer as ``SessionWriter.write`` runs it, and the
        edits it applied (``core.edits.recording``) go on the stack when it lands."""
        from core.edits import recording

        def run(store: SessionStore) -> tuple[Any, list[HistoryEntry]]:
            with recording() as entries:
                result = fn(store)
            return result, entries

        def landed(outcome: tuple[Any, list[HistoryEntry]]) -> None:
            result, entries = outcome
            for entry in entries:
                self._landed(entry, panel, None)
            if on_done is not None:
                on_done(result)

        return self.writer.write(
            what, run, writes=writes, on_done=landed, on_error=on_error, at_once=at_once
        )

    def run_recorded(
        self, run_job: Callable[[Job[Any]], JobHandle], job: Job[Any], *, panel: str | None
    ) -> JobHandle:
        """Run ``job`` (a long write whose core code records edits: a pack merge, the
        tiers a fetch gives) through ``run_job``; the edits it applied go on the stack when
        it ends, done or not (what it committed before stopping is kept)."""
        import dataclasses

        from core.edits import recording

        entries: list[HistoryEntry] = []
        inner = job.run

        def run(ctx: Any) -> Any:
            with recording() as got:
                try:
                    return inner(ctx)
                finally:
                    entries.extend(got)  # read on the UI thread once the job has ended

        store = self._current_store()

        def ended(_outcome: Any) -> None:
            # Edits of a session closed meanwhile are not this stack's (its history
            # keeps them; reopening offers their undo).
            if self._current_store() is store:
                self.push(entries, panel)

        handle = run_job(dataclasses.replace(job, run=run))
        handle.finished.connect(ended)
        return handle

    def push(self, entries: Iterable[HistoryEntry], panel: str | None) -> None:
        """Edits that landed outside the writer (a job's): on the stack, in order."""
        for entry in entries:
            self._landed(entry, panel, None)

    def latest(self) -> HistoryEntry | None:
        """The edit the next undo would undo (None: nothing to undo)."""
        command = self._command(self.stack.index() - 1)
        return command.entry if command is not None else None

    def _landed(
        self,
        entry: HistoryEntry | None,
        panel: str | None,
        on_done: Callable[[HistoryEntry | None], object] | None,
    ) -> None:
        if entry is not None:
            self.stack.push(EditCommand(entry, panel or _panel_of(entry)))
            self.applied.emit(entry)
            if entry.kind in ANNOUNCED_KINDS and self._announce is not None:
                self._announce(f"Saved: {entry.description}.", partial(self.undo, entry.id))
        if on_done is not None:
            on_done(entry)

    # -- undo and redo --------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self._busy

    def can_undo(self) -> bool:
        return not self._busy and self.stack.canUndo()

    def can_redo(self) -> bool:
        return not self._busy and self.stack.canRedo()

    def undo_text(self) -> str:
        return self.stack.undoText()

    def redo_text(self) -> str:
        return self.stack.redoText()

    def _command(self, index: int) -> EditCommand | None:
        command = self.stack.command(index) if 0 <= index < self.stack.count() else None
        return command if isinstance(command, EditCommand) else None

    def undo(self, history_id: int | None = None) -> bool:
        """Undo the latest edit on the stack (only if it is ``history_id``, when given:
        the Undo of a message that is no longer the latest does nothing). False when
        there is nothing to undo or an undo or redo is still on its way."""
        command = self._command(self.stack.index() - 1)
        if command is not None and history_id is not None and command.entry.id != history_id:
            return False
        return self._move(command, undo=True)

    def redo(self) -> bool:
        """Redo the edit last undone; False when there is none or one is on its way."""
        return self._move(self._command(self.stack.index()), undo=False)

    def _move(self, command: EditCommand | None, *, undo: bool) -> bool:
        """Undo or redo ``command``'s edit through the session writer."""
        from core.edits import KINDS, redo_edit, undo_edit

        if command is None or self._busy:
            return False
        entry = command.entry
        self._busy = True
        self.changed.emit()
        kind = KINDS.get(entry.kind)
        move = undo_edit if undo else redo_edit
        self.writer.write(
            f"the {'undo' if undo else 'redo'} of {entry.description}",
            lambda store: move(store, entry.id),
            writes=kind.topics if kind is not None else (),
            on_done=lambda moved: self._moved(command, moved, undo=undo),
            on_error=lambda error: self._refused(
                command, error, "Not undone" if undo else "Not redone"
            ),
            at_once=entry.kind not in HEAVY_KINDS,
        )
        return True

    def _moved(self, command: EditCommand, entry: HistoryEntry, *, undo: bool) -> None:
        command.entry = entry
        self._busy = False
        if undo:
            self.stack.undo()
        else:
            self.stack.redo()
        self.changed.emit()
        if command.panel and self._raise_panel is not None:
            self._raise_panel(command.panel)
        (self.undone if undo else self.redone).emit(entry)

    def _refused(self, command: EditCommand, error: UserFacingError, title: str) -> None:
        self._busy = False
        # The stack is a line: past an edit that cannot be undone nothing below it can be
        # reached without undoing across the change that was kept.
        self.stack.clear()
        self.changed.emit()
        if self._show_error is not None:
            self._show_error(title, str(error))

    def _settle(self) -> None:
        """A write failed with a bug (the window shows it): the stack is usable again."""
        if self._busy:
            self._busy = False
            self.changed.emit()

    # -- sessions -------------------------------------------------------------------------
    def reset(self, store: SessionStore | None) -> None:
        """A session opened (or none): its history's latest edits that still apply become
        the stack (read off the UI thread)."""
        from core.edits import undoable_tail

        self.stack.clear()
        self._busy = False
        self.changed.emit()
        if store is None:
            return
        self.reads.request(TAIL_READ, undoable_tail, self._tail_read)

    def _tail_read(self, entries: list[HistoryEntry]) -> None:
        if self.stack.count():
            return  # edits were made meanwhile: the stack starts from them
        for entry in entries:
            self.stack.push(EditCommand(entry, _panel_of(entry)))
        self.changed.emit()


def message_with_undo(window: Any) -> Callable[[str, Callable[[], object]], Any]:
    """``announce`` for :class:`SessionUndo`: the window's message bar shows the text with
    an Undo button, and goes away after a moment unless it shows something else by then."""

    shown = [0]  # how many such messages were shown: only the latest goes away by itself

    def announce(text: str, undo: Callable[[], object]) -> Any:
        bar = window.show_message("Saved", text)
        bar.set_actions([("Undo", undo)])
        shown[0] += 1
        mine = shown[0]

        def expire() -> None:
            if shown[0] == mine and bar.text() == text:
                bar.dismiss()

        QTimer.singleShot(MESSAGE_MS, bar, expire)
        return bar

    return announce


HISTORY_READ = "edits.history"


class HistoryView(QObject):
    """Edit ▸ Session history…: the dialog (``widgets.history_dialog``) filled with the
    session's history, read off the UI thread, again after every edit, undo and redo."""

    def __init__(
        self,
        undo: SessionUndo,
        reads: ViewReads,
        current_store: Callable[[], SessionStore | None],
        parent_widget: Any,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.reads = reads
        self._current_store = current_store
        self._parent_widget = parent_widget
        self.dialog: Any = None
        for signal in (undo.applied, undo.undone, undo.redone):
            signal.connect(self._refresh)

    def open(self) -> Any:
        from core.edits import KINDS
        from widgets.history_dialog import HistoryDialog

        if self.dialog is None:
            self.dialog = HistoryDialog(sorted(KINDS), self._parent_widget)
            self.dialog.filters_changed.connect(self._read)
            self.dialog.finished.connect(lambda _result: self.reads.drop(HISTORY_READ))
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.ask()
        return self.dialog

    def _refresh(self, _entry: Any = None) -> None:
        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.ask()

    def _read(self, kind: str, unit: int | None, annotator: str) -> None:
        from core.edits import history

        if self._current_store() is None:
            self.dialog.show_entries([])
            return

        def read(store: SessionStore) -> list[tuple[Any, ...]]:
            entries = history(
                store,
                kinds=[kind] if kind else None,
                unit_id=unit,
                annotator=annotator or None,
            )
            return [
                (e.id, e.created_at, e.who, e.source, e.kind, e.status, e.description)
                for e in entries
            ]

        self.reads.request(HISTORY_READ, read, self.dialog.show_entries)
