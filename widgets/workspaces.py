"""Workspaces: one arrangement of the same docks per task, like an IDE's perspectives.

Scores and Report were squeezed into a ~450 px right-hand dock beside the Browser: the
Report showed one headline line and two table rows. A workspace shows the panels a task
needs and hides the others (each stays one View-menu shortcut away), so the task's panel
gets the window: "Verbalise & score" gives Scores ≥ 15 table rows (beside the
selected text's detail) at 1366 × 768, "Report"
the headlines, ≥ 8 table rows and a plot at once. Picking one is a button at the right
of the menu bar (no row of its own); the arrangement lives in the window's saved dock state like any
other, so the last one comes back at the next start. Nothing here owns a panel or data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import (
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QMenuBar,
    QToolButton,
    QWidget,
)


class DockedWindow(Protocol):
    """What a workspace arranges: the main window's docks (``widgets.main_window``)."""

    docks: dict[str, QDockWidget]
    overview_dock: QDockWidget

    def menuBar(self) -> QMenuBar: ...  # noqa: N802

    def width(self) -> int: ...

    def dockWidgetArea(self, dock: QDockWidget) -> Qt.DockWidgetArea: ...  # noqa: N802

    def resizeDocks(  # noqa: N802
        self, docks: list[QDockWidget], sizes: list[int], orientation: Qt.Orientation
    ) -> None: ...

    def hide_stray_tab_bars(self) -> None: ...


@dataclass(frozen=True)
class Workspace:
    key: str
    title: str
    panels: tuple[str, ...]  # the docks shown (keys of the main window's docks, or "session")
    front: tuple[str, ...]  # brought in front of the docks tabbed with them
    left_share: float  # the left-hand docks' share of the width, when both sides show
    tip: str


WORKSPACES: tuple[Workspace, ...] = (
    Workspace(
        "explore",
        "Explore",
        ("browser", "units", "verbalise", "scores", "annotate", "report", "session"),
        ("browser", "session"),
        0.68,
        "Browse categories and tiers, build units; the other panels tabbed on the right",
    ),
    Workspace(
        "score",
        "Verbalise && score",
        ("verbalise", "scores"),
        ("scores",),
        0.0,
        "Verbalise and Scores with the whole window: the table of texts beside a text's detail",
    ),
    Workspace(
        "annotate",
        "Annotate",
        ("annotate", "scores"),
        ("annotate",),
        0.0,
        "Rate and correct texts, the whole window for the text",
    ),
    Workspace(
        "report",
        "Report",
        ("report", "scores"),
        ("report",),
        0.0,
        "The bias report: headlines, tables and plots at once",
    ),
)
BY_KEY = {w.key: w for w in WORKSPACES}


class Workspaces:
    """The workspace switcher of a main window: exclusive buttons in the menu bar."""

    def __init__(self, window: DockedWindow) -> None:
        self.window = window
        self.current: str | None = None
        self.group = QActionGroup(window)
        self.group.setExclusive(True)
        self.actions: dict[str, QAction] = {}
        for workspace in WORKSPACES:
            action = QAction(workspace.title, window)
            action.setCheckable(True)
            action.setToolTip(workspace.tip)
            action.setStatusTip(workspace.tip)
            action.triggered.connect(lambda _checked=False, k=workspace.key: self.apply(k))
            self.group.addAction(action)
            self.actions[workspace.key] = action
        # In the menu bar's right-hand corner: no row of its own (the panels keep the
        # height; a toolbar took 30 px of a 640 px screen).
        self.switcher = QWidget()
        row = QHBoxLayout(self.switcher)
        row.setContentsMargins(0, 0, 4, 0)
        row.setSpacing(2)
        row.addWidget(QLabel("Workspace:"))
        for action in self.actions.values():
            button = QToolButton()
            button.setDefaultAction(action)
            button.setAutoRaise(True)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            row.addWidget(button)
        window.menuBar().setCornerWidget(self.switcher, Qt.Corner.TopRightCorner)

    def home_of(self, panel: str) -> str | None:
        """The workspace to show ``panel`` in: the current one when it holds the panel,
        else the first that brings it to the front, else the first that holds it."""
        current = BY_KEY.get(self.current or "")
        if current is not None and panel in current.panels:
            return current.key
        for workspace in WORKSPACES:
            if panel in workspace.front:
                return workspace.key
        return next((w.key for w in WORKSPACES if panel in w.panels), None)

    def mark(self, key: str | None) -> None:
        """Say ``key`` is the workspace shown (a restored layout), without arranging it."""
        if key in BY_KEY:
            self.current = key
            self.actions[key].setChecked(True)

    def docks(self) -> dict[str, QDockWidget]:
        return {**self.window.docks, "session": self.window.overview_dock}

    def apply(self, key: str) -> None:
        """Show ``key``'s panels (docked where they are), hide the others, bring its front
        panels forward and share the width between the left and right docks."""
        workspace = BY_KEY[key]
        window, docks = self.window, self.docks()
        for name, dock in docks.items():
            if name in workspace.panels:
                dock.show()
            elif not dock.isFloating():  # a floating panel was put there on purpose
                dock.hide()
        for name in workspace.front:
            docks[name].raise_()
        sides: dict[Qt.DockWidgetArea, QDockWidget] = {}
        for name in workspace.front + workspace.panels:
            dock = docks[name]
            if dock.isVisible() and not dock.isFloating():
                sides.setdefault(window.dockWidgetArea(dock), dock)
        left = sides.get(Qt.DockWidgetArea.LeftDockWidgetArea)
        right = sides.get(Qt.DockWidgetArea.RightDockWidgetArea)
        if left is not None and right is not None and workspace.left_share:
            width = window.width()
            share = int(width * workspace.left_share)
            window.resizeDocks([left, right], [share, width - share], Qt.Orientation.Horizontal)
        self.current = key
        self.actions[key].setChecked(True)
        window.hide_stray_tab_bars()
