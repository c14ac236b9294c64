"""The one change notification panels follow: ``SessionChanges.changed(topics)``.

A job declares what it writes (``core.jobs.Job.writes``); the application announces
those topics when the job ends (done, cancelled or failed: what it committed first is
kept). A controller that commits an edit itself (a unit saved, a rating, an undo)
announces what it wrote through :meth:`SessionChanges.announce`. Each panel's controller
subscribes to the topics it shows (:meth:`SessionChanges.subscribe`) and reloads them,
so every panel shows the session as it is, whoever changed it. Opening another session
is ``AppController.session_changed`` (every panel starts again), not a change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtCore import QObject, Signal, Slot

from core.changes import Topic, Topics, topics
from core.desktop.logs import get_logger

log = get_logger("changes")


class SessionChanges(QObject):
    """The hub: ``changed`` carries a ``frozenset[Topic]``, always on the UI thread."""

    changed = Signal(object)  # frozenset[Topic]
    # announce() emits this; the hub lives in the UI thread, so from another thread Qt
    # queues the call and _emit runs there.
    _to_ui_thread = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._to_ui_thread.connect(self._emit)

    def announce(self, written: Iterable[Topic | str]) -> None:
        """Tell every subscriber that ``written`` changed (nothing when it is empty)."""
        chosen = topics(written)
        if not chosen:
            return
        # Auto connection: a direct call on the UI thread, queued to it from any other.
        self._to_ui_thread.emit(chosen)

    def subscribe(
        self,
        wanted: Iterable[Topic],
        slot: Callable[[Topics], object],
        context: QObject | None = None,
    ) -> None:
        """Call ``slot(topics)``, with the changed topics among ``wanted``, whenever one
        of them changes. With ``context`` (the subscribing controller) the subscription
        ends when that object is deleted."""
        relay = _Relay(frozenset(wanted), slot, context)
        if context is None:
            relay.setParent(self)
        self.changed.connect(relay.deliver)

    def _emit(self, chosen: Topics) -> None:
        log.debug("session changed: %s", ", ".join(sorted(t.value for t in chosen)))
        self.changed.emit(chosen)


class _Relay(QObject):
    """One subscription. A child of its subscriber, so that Qt drops the connection
    with it (PySide6 disconnects the slots of a deleted QObject)."""

    def __init__(
        self, wanted: Topics, slot: Callable[[Topics], object], parent: QObject | None
    ) -> None:
        super().__init__(parent)
        self._wanted, self._slot = wanted, slot

    @Slot(object)
    def deliver(self, changed: Topics) -> None:
        mine = changed & self._wanted
        if mine:
            self._slot(mine)
