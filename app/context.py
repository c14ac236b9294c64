"""What a panel's controller may use: :class:`PanelContext`, the narrow context each one
is given instead of the whole application controller (``app.controller.AppController``).

It holds what the panels genuinely share:

* the open session (``store``, ``session_changed``, ``session_closing``) and the session
  rule (``app.session_io``): ``reads`` for view reads off the UI thread, ``writer`` for
  every write started from the UI, ``changes`` for what was written;
* ``undo``, the session's undo stack (``app.edits``), through which every edit goes;
* ``run_job(job)``, the one job runner;
* ``notify``, the window's voice (an error, a message, a status line, the parent of a
  dialog), ``settings`` and ``dock(key)``, the panel's own dock;
* the preferences (``preferences``, set by ``app.preferences``);
* what one panel publishes for the others, never another panel's widgets: the Browser's
  :class:`core.wikidata.browser_state.BrowserState` (the category shown, its tiers, the shared
  selection), the Browser's data source (:class:`SourceChoice`), and two requests as
  signals: ``unit_requested`` (start a unit from an entity: the Browser's inspector ->
  Units) and ``unit_chosen`` (a saved unit picked: Units -> Verbalise).

This module imports nothing of the other ``app`` modules but the session rule and the
change hub, so a controller importing it never imports the application controller.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Signal

from core.state import Field, State

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QDockWidget, QWidget

    from app.changes import SessionChanges
    from app.edits import SessionUndo
    from app.jobrunner import JobHandle
    from app.session_io import SessionWriter, ViewReads
    from core.desktop.preferences import Preferences
    from core.jobs import Job
    from core.store import SessionStore
    from core.wikidata.browser_state import BrowserState
    from core.wikidata.sources import WikidataSource  # noqa: F401 (a Field annotation)
    from widgets.main_window import MainWindow


class Notify(Protocol):
    """The window's voice, as a panel's controller uses it (``widgets.main_window``)."""

    def show_error(self, title: str, message: str, details: str = "") -> None: ...

    def show_message(self, title: str, message: str, details: str = "") -> None: ...

    def show_status(self, text: str, timeout_ms: int = 0) -> None: ...

    def show_written(self, title: str, message: str, path: Path, details: str = "") -> None: ...

    @property
    def parent_widget(self) -> QWidget: ...


class WindowNotify:
    """:class:`Notify` on the main window."""

    def __init__(self, window: MainWindow) -> None:
        self._window = window

    # Details are passed on only when there are some: the calls the window gets are
    # those the controllers made of it before they had a context.
    def show_error(self, title: str, message: str, details: str = "") -> None:
        self._window.show_error(title, message, *([details] if details else []))

    def show_message(self, title: str, message: str, details: str = "") -> None:
        self._window.show_message(title, message, *([details] if details else []))

    def show_status(self, text: str, timeout_ms: int = 0) -> None:
        self._window.statusBar().showMessage(text, timeout_ms)

    def show_written(self, title: str, message: str, path: Path, details: str = "") -> None:
        """A file or folder written: the message with "Open" and "Show in folder"."""
        self._window.show_written(title, message, path, details)

    @property
    def parent_widget(self) -> QWidget:
        return self._window


class SourceChoice(State):
    """The Browser's data source, for the panels that fetch with it (Units): the open
    source (None before one is opened) and its kind ("cache", "embedded", "live", ...)."""

    source = Field["WikidataSource | None"](None)
    kind = Field[str]("cache")


class PanelContext(QObject):
    """The narrow context of every panel's controller (see the module doc)."""

    # Relayed from the application controller: a session opened (every panel starts
    # again), and the open one is about to close (write what is still held for it).
    session_changed = Signal(object)  # SessionStore
    session_closing = Signal(object)  # SessionStore
    unit_requested = Signal(str)  # QID: start a unit from this entity
    unit_chosen = Signal(int)  # a saved unit's id: show it

    def __init__(
        self,
        *,
        store: Callable[[], SessionStore | None],
        reads: ViewReads,
        writer: SessionWriter,
        changes: SessionChanges,
        run_job: Callable[[Job[Any]], JobHandle],
        notify: Notify,
        settings: QSettings,
        docks: Callable[[str], QDockWidget | None],
        browser_state: BrowserState,
        show_task: Callable[[str], None] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._store = store
        self.reads, self.writer, self.changes = reads, writer, changes
        self._run_job = run_job
        self.notify = notify
        self.settings = settings
        self._docks = docks
        # Bring the workspace whose task panel ``key`` is to the front, with the panel
        # (an annotation pack opens in Annotate's workspace).
        self.show_task: Callable[[str], None] = show_task or (lambda _key: None)
        self.browser_state = browser_state
        self.source = SourceChoice()
        self.preferences: Preferences | None = None  # set by app.preferences
        # The session's undo stack (app.edits), set by the application controller: every
        # edit a panel makes goes through it.
        self.undo: SessionUndo

    @property
    def store(self) -> SessionStore | None:
        """The open session (None when none is open)."""
        return self._store()

    def run_job(self, job: Job[Any]) -> JobHandle:
        return self._run_job(job)

    def dock(self, key: str) -> QDockWidget | None:
        """A panel's dock by its key (a controller asks for its own)."""
        return self._docks(key)

    def in_view(self, key: str) -> bool:
        """Whether panel ``key`` can be seen now: shown, and not a tab behind another
        (Qt calls such a dock visible; its visible region is empty)."""
        dock = self._docks(key)
        return dock is not None and dock.isVisible() and not dock.visibleRegion().isEmpty()
