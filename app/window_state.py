"""What the window keeps across restarts besides its layout (which
``widgets.main_window.MainWindow.save_layout`` keeps: geometry, docks, splitters).

The Browser's Compare-with ticks belong to a session and a category (what a user
compares City with is not what they compare Airport with, nor what another study
does): they are kept in the user's settings, per session file (like the Annotate
panel's annotator) and category, written when they change and ticked again when the
category is shown. Only the Browser panel's public API is used (``category_shown``,
``compared_changed``, ``set_compared``), whatever holds the view's state behind it.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

if TYPE_CHECKING:
    from app.context import PanelContext
    from widgets.browser import BrowserPanel


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
