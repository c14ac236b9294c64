"""What the window keeps across restarts besides its layout (which
``widgets.main_window.MainWindow.save_layout`` keeps: geometry, docks, splitters, the
workspace): the Browser's Compare-with ticks and the Units table's filters and sort (per
session), and which sub-tab of a panel was in front (Annotate's Rate or Agreement).

The Browser's Compare-with ticks belong to a session and a category (what a user
compares City with is not what they compare Airport with, nor what another study
does): they are kept in the user's settings, per session file (like the Annotate
panel's annotator) and category, written when they change and ticked again when the
category is shown. Only the Browser panel's public API is used (``category_shown``,
``compared_changed``, ``set_compared``), whatever holds the view's state behind it.

The Report panel's options are its state object's choices
(``core.report.panel_state.ReportOptionsState``): restoring them is restoring that
state, whatever the panel shows them with.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QSettings
from PySide6.QtWidgets import QTabWidget

from core.units.builder.panel_state import VIEW_FIELDS

if TYPE_CHECKING:
    from app.context import PanelContext
    from core.report.panel_state import ReportOptionsState
    from widgets.browser import BrowserPanel
    from widgets.units.panel import UnitsPanel


class CompareTicks(QObject):
    def __init__(self, ctx: PanelContext, panel: BrowserPanel) -> None:
        super().__init__(panel)
        self.ctx, self.panel = ctx, panel
        self._applying = False
        panel.category_shown.connect(self.restore)
        panel.compared_changed.connect(self.remember)

    def _key(self) -> str | None:
        store = self.ctx.store
        if store is None:
            return None
        digest = hashlib.sha1(str(store.path.resolve()).encode()).hexdigest()[:16]
        return f"browser/compare-{digest}"

    def _remembered(self, key: str) -> dict[str, Any]:
        try:
            value = json.loads(str(self.ctx.settings.value(key, "{}")))
        except (TypeError, ValueError):
            return {}
        return value if isinstance(value, dict) else {}

    def remember(self, category: str, ticked: list[str]) -> None:
        key = self._key()
        if key is None or self._applying:
            return
        remembered = self._remembered(key)
        remembered[category] = list(ticked)
        self.ctx.settings.setValue(key, json.dumps(remembered))

    def restore(self, category: str) -> None:
        """Tick what was ticked for ``category`` in this session (nothing remembered:
        the ticks stay as they are)."""
        key = self._key()
        if key is None:
            return
        ticked = self._remembered(key).get(category)
        if not isinstance(ticked, list) or set(ticked) == set(self.panel.compared()):
            return
        self._applying = True
        try:
            self.panel.set_compared([str(name) for name in ticked])
        finally:
            self._applying = False


def _session_key(ctx: PanelContext, prefix: str) -> str | None:
    store = ctx.store
    if store is None:
        return None
    digest = hashlib.sha1(str(store.path.resolve()).encode()).hexdigest()[:16]
    return f"{prefix}-{digest}"


class UnitsViewMemory(QObject):
    """The Units table's filters and sort, per session file (the values offered are the
    session's own tiers and languages): written when the user changes them, applied
    again once the session's units are first shown after it opens."""

    def __init__(self, ctx: PanelContext, panel: UnitsPanel) -> None:
        super().__init__(panel)
        self.ctx, self.panel = ctx, panel
        self._pending = False  # the session opened; its units not shown yet
        self._applying = False
        ctx.session_changed.connect(lambda _store: setattr(self, "_pending", True))
        panel.units_shown.connect(self.restore)
        panel.state.watch(lambda _changes: self.remember(), VIEW_FIELDS)

    def remember(self) -> None:
        key = _session_key(self.ctx, "units/view")
        if key is None or self._applying or self._pending:
            return
        self.ctx.settings.setValue(key, json.dumps(self.panel.view_state()))

    def restore(self) -> None:
        if not self._pending:
            return
        self._pending = False
        key = _session_key(self.ctx, "units/view")
        if key is None:
            return
        try:
            state = json.loads(str(self.ctx.settings.value(key, "{}")))
        except (TypeError, ValueError):
            return
        if not isinstance(state, dict) or not state:
            return
        self._applying = True
        try:
            self.panel.restore_view_state(state)  # the panel's state; its widgets follow
        finally:
            self._applying = False


class TabMemory(QObject):
    """Which tab of ``tabs`` was in front, kept in the user's settings under ``key`` and
    brought to the front again when the window is built."""

    def __init__(self, settings: QSettings, tabs: QTabWidget, key: str) -> None:
        super().__init__(tabs)
        self.settings, self.tabs, self.key = settings, tabs, key
        try:
            index = int(str(settings.value(key, -1)))
        except ValueError:
            index = -1
        if 0 <= index < tabs.count():
            tabs.setCurrentIndex(index)
        tabs.currentChanged.connect(lambda i: settings.setValue(key, i))


class ReportOptionsMemory(QObject):
    """The Report's options (what it compares and how; not the session's runs and
    metrics), kept in the user's settings under ``key``: put back into the panel's state
    when the window is built, written whenever the user changes one."""

    def __init__(
        self, settings: QSettings, state: ReportOptionsState, parent: QObject, key: str
    ) -> None:
        from core.report.panel_state import CHOICES

        super().__init__(parent)
        self.settings, self.state, self.key = settings, state, key
        try:
            kept = json.loads(str(settings.value(key, "{}")))
        except (TypeError, ValueError):
            kept = {}
        if isinstance(kept, dict):
            state.restore(kept)
        state.watch(lambda _changes: self.remember(), CHOICES)

    def remember(self) -> None:
        self.settings.setValue(self.key, json.dumps(self.state.choices(), sort_keys=True))
