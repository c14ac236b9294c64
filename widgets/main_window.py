"""The main window: docks, status bar, messages, and its layout kept across restarts.

The window never opens a session or runs work itself. File actions are emitted as
signals (``open_requested`` …, declared with the menus in ``widgets.window_menus``)
that ``app.controller`` answers, and what the controller learns comes back through
``show_session`` / ``show_error``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer
from PySide6.QtGui import QCloseEvent, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QLayout,
    QMainWindow,
    QMessageBox,
    QSizePolicy,
    QSplitter,
    QTabBar,
    QToolBar,
    QWidget,
)

from core import APP_NAME
from widgets import wheel_guard
from widgets.error_log import ErrorLogPanel
from widgets.job_status import JobStatusWidget
from widgets.message_bar import ERROR, INFO, ElidedLabel, MessageBar, StatusBar
from widgets.panels import BOTTOM, PANELS, RIGHT, PanelSpec
from widgets.session_overview import SessionOverview
from widgets.window_menus import MenuWindow
from widgets.workspaces import WORKSPACES, Workspaces

if TYPE_CHECKING:
    from core.report.dataset_stats import Finding, Table
    from core.session_info import SessionInfo
    from widgets.dataset_stats import DatasetStatsDialog

_KEY_GEOMETRY = "window/geometry"
_KEY_STATE = "window/state"
_KEY_SPLITTERS = "window/splitters"
_KEY_WORKSPACE = "window/workspace"  # the workspace the saved layout is of
# Set on a splitter whose saved sizes were restored (see MainWindow._restore_splitters).
RESTORED_PROPERTY = "taillens_restored"
# Bumped when the set of docks changes so an old saved layout is not misapplied.
_STATE_VERSION = 2


class MainWindow(MenuWindow):
    """The docks, the status bar, the message bar and the layout kept across restarts
    (the menus: :class:`widgets.window_menus.MenuWindow`)."""

    def __init__(
        self, settings: QSettings, parent: QWidget | None = None, *, build_panels: bool = True
    ) -> None:
        """``build_panels=False`` builds the shell only: every dock (named, so a saved layout
        can be restored) holds a light placeholder until :meth:`install_panels` builds the
        panels, whose modules import pyqtgraph, numpy and the like (``app.gui.launch`` paints
        the shell first and installs the panels behind it)."""
        super().__init__(parent)
        # Every field in every panel and dialog takes the mouse wheel only when focused.
        wheel_guard.install()
        self.settings = settings
        self._saved_splitters: dict[str, QByteArray] = {}  # restored once shown
        self._layout_restored = False  # a saved layout was applied (restore_layout)
        self.first_start = True  # no saved geometry (restore_layout): placed by place_on_screen
        self.interactive = True  # False: rendered for a screenshot or a timing, no one asks
        self.setWindowTitle(APP_NAME)
        self.setObjectName("TailLensMainWindow")
        self.setDockOptions(
            QMainWindow.DockOption.AnimatedDocks
            | QMainWindow.DockOption.AllowTabbedDocks
            | QMainWindow.DockOption.AllowNestedDocks
        )
        self._build_docks(build_panels)
        self._build_status_bar()
        self._build_message_area()
        self.last_message: MessageBar | None = None
        self._build_menus()
        for key, panel in self.panels.items():  # built above: their commands, now in the menu
            self.add_panel_commands(key, panel)
        # One arrangement of the docks per task (widgets/workspaces.py), in the menu bar.
        self.workspaces = Workspaces(self)
        self.workspaces.mark("explore")  # the default layout
        self.show_session(None)
        # What "View ▸ Reset layout" goes back to: the layout as built, before any restore.
        self._default_state = self.saveState(_STATE_VERSION)

    # -- construction ---------------------------------------------------------------
    def _build_docks(self, build_panels: bool) -> None:
        # Every view is a dock, the session overview too: with no central widget the
        # docks share the whole window, and each can be closed, moved or floated.
        self.docks: dict[str, QDockWidget] = {}
        self.panels: dict[str, QWidget] = {}
        for spec in PANELS:
            self._add_panel(spec, build_panels)
        self.overview = SessionOverview()
        self.overview_dock = self._dock("Session", "dock-session", self.overview, RIGHT)
        self.error_log = ErrorLogPanel()
        self.error_dock = self._dock("Error log", "dock-error-log", self.error_log, BOTTOM)
        self._arrange_default()
        # The layout's minimum size was last computed with the right-hand docks stacked
        # rather than tabbed (their heights added up): recompute it for the tabbed layout,
        # or the window cannot be made smaller than ~1700 px tall.
        self.layout().invalidate()
        self.layout().activate()
        # The panels' minimum sizes never push the window past its screen (the window
        # does not grow when content asks for more: docks are squeezed, panels scroll);
        # _fit_screen_limit caps it at the screen, this floor keeps it usable.
        self.layout().setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        self.setMinimumSize(640, 400)
        self.resize(1280, 800)  # the first run's size; after that, the saved geometry
        # The browser's plots and table need room; side and bottom panels start smaller.
        # (After the resize: the split is kept as a proportion of the window's width.)
        self.resizeDocks(
            [self.docks["browser"], self.docks["verbalise"]], [930, 350], Qt.Orientation.Horizontal
        )
        self.error_dock.hide()

    def _build_status_bar(self) -> None:
        # Temporary notes, job progress and the session path each have their own place
        # in the status bar; none can run into another.
        self.setStatusBar(StatusBar(self))
        self.job_status = JobStatusWidget()
        self.session_label = ElidedLabel()
        self.statusBar().addPermanentWidget(self.job_status)
        self.statusBar().addPermanentWidget(self.session_label)

    def _build_message_area(self) -> None:
        # User errors and summaries: a non-modal bar above the panels, details on demand.
        # It takes its own space (a fixed tool bar row, as tall as its text): laid over
        # the panels it hid the Units counts and filters and Annotate's tabs until closed.
        self.message_bar = MessageBar(self)
        self.message_bar.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.message_bar.details_link.connect(self.show_error_log)
        self.message_bar.dismissed.connect(self.hide_message)
        self.message_bar.resized.connect(self._place_message_bar)
        self.message_area = QToolBar("Message", self)
        self.message_area.setObjectName("message-area")
        self.message_area.setMovable(False)
        self.message_area.setFloatable(False)
        self.message_area.toggleViewAction().setVisible(False)  # not in View's tool bars
        self.message_area.setContextMenuPolicy(Qt.ContextMenuPolicy.PreventContextMenu)
        self.message_area.addWidget(self.message_bar)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.message_area)
        self.message_area.hide()

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetClosable
            | QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
        )
        self.addDockWidget(area, dock)
        return dock

    def _add_panel(self, spec: PanelSpec, build: bool) -> None:
        widget = spec.build() if build else _placeholder(spec.title)
        if build:
            self.panels[spec.key] = widget
        self.docks[spec.key] = self._dock(spec.title, spec.object_name, widget, spec.area)

    def install_panels(self) -> None:
        """Build the panels a shell (``build_panels=False``) left out. Each goes into its
        dock, in place of the placeholder, on the next turn of the event loop
        (:meth:`place_panels`), once the caller has filled it (``app.gui`` wires the
        controllers and opens the session first): a panel takes its first size as it goes
        in, and the Browser splits itself by its controls' height then."""
        for spec in PANELS:
            if spec.key not in self.panels:
                widget = spec.build()
                widget.setParent(self.docks[spec.key])  # hidden, outside the dock's layout
                self.panels[spec.key] = widget
                self.add_panel_commands(spec.key, widget)
        QTimer.singleShot(0, self, self.place_panels)

    def place_panels(self) -> None:
        """Put each panel :meth:`install_panels` built into its dock (the docks keep their
        place, size and tab order)."""
        for key, widget in self.panels.items():
            dock = self.docks[key]
            placeholder = dock.widget()
            if placeholder is widget:
                continue
            dock.setWidget(widget)
            widget.show()  # shown with its dock (a tab behind another stays hidden)
            if placeholder is not None:
                placeholder.hide()
                placeholder.deleteLater()
        if self._saved_splitters and self.isVisible():  # the panels' own, saved at quit
            # Laid out now, parents first (each panel takes its size, the Browser splits
            # itself), so the saved sizes land on the panels' final sizes.
            for widget in [self, *self.findChildren(QWidget)]:
                layout = widget.layout()
                if layout is not None:
                    layout.activate()
            self._restore_splitters()

    def show_opening_session(self) -> None:
        """What the status bar says while the session is being opened at start-up."""
        self.session_label.setText("Opening session…")

    def _arrange_default(self) -> None:
        # Panels that share an area are tabbed, the first of each area in front.
        first_in_area: dict[Qt.DockWidgetArea, QDockWidget] = {}
        for spec in PANELS:
            dock = self.docks[spec.key]
            if spec.area in first_in_area:
                self.tabifyDockWidget(first_in_area[spec.area], dock)
            else:
                first_in_area[spec.area] = dock
        self.tabifyDockWidget(first_in_area[RIGHT], self.overview_dock)
        for dock in first_in_area.values():
            dock.raise_()

    def show_task(self, key: str) -> None:
        """The workspace that brings panel ``key`` to the front, with that panel raised
        (e.g. Annotate's own workspace for an annotation pack)."""
        home = next((w.key for w in WORKSPACES if key in w.front), None)
        if home is not None:
            self.workspaces.apply(home)
        self.raise_panel(key)

    def raise_panel(self, key: str) -> None:
        """Show panel ``key``, bring it in front of the docks tabbed with it, focus it."""
        self._raise_dock(self.docks[key])

    def _raise_dock(self, dock: QDockWidget) -> None:
        # A panel the current workspace does not hold is shown in the workspace that
        # keeps it (help's "Show me the panel", a panel's shortcut, a command), never
        # squeezed into this one's layout.
        key = next((k for k, d in self.docks.items() if d is dock), None)
        home = self.workspaces.home_of(key) if key is not None else None
        if home is not None and home != self.workspaces.current and not dock.isFloating():
            self.workspaces.apply(home)
        dock.show()
        dock.raise_()
        if dock.isFloating():
            dock.activateWindow()
        widget = dock.widget()
        target = widget if widget.focusPolicy() & Qt.FocusPolicy.TabFocus else None
        if target is None:
            target = next(
                (
                    w
                    for w in widget.findChildren(QWidget)
                    if w.focusPolicy() & Qt.FocusPolicy.TabFocus
                    and w.isEnabled()
                    and w.isVisibleTo(widget)
                ),
                widget,
            )
        target.setFocus(Qt.FocusReason.ShortcutFocusReason)

    # -- what the controller tells the window -------------------------------------------
    def show_session(self, info: SessionInfo | None) -> None:
        """Show the open session (``core.store.SessionStore.info()``), or none."""
        self.overview.show_info(dict(info) if info is not None else None)
        has_session = info is not None
        for action in (self.action_save_as, self.action_save_copy):
            action.setEnabled(has_session)
        if info is None:
            self.session_label.setText("No session")
            self.setWindowTitle(APP_NAME)
            return
        path = Path(str(info["path"]))
        self.session_label.setText(f"Session: {path}")
        self.session_label.setToolTip(str(path))
        self.setWindowTitle(f"{path.name} — {APP_NAME}")
        self.add_recent(path)

    def ask_session_in_use(self, name: str, holder: str) -> str:
        """A session another TailLens window has open: "read_only", "open" (anyway) or
        "cancel", as a LibreOffice-like tool asks; tests replace this. A window nobody
        sits at (``interactive`` False: a screenshot, a timing run) opens it read-only."""
        if not self.interactive:
            return "read_only"
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Session in use")
        box.setText(f"{name} is open in another TailLens window.")
        box.setInformativeText(
            f"Opened by {holder}.\n\nOpen it read-only to look without changing it, or "
            "open it anyway (both windows then write to it: changes made in one are not "
            "shown in the other until it reloads)."
        )
        read_only = box.addButton("Open &read-only", QMessageBox.ButtonRole.AcceptRole)
        anyway = box.addButton("Open &anyway", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(read_only)
        box.exec()
        clicked = box.clickedButton()
        return "read_only" if clicked is read_only else "open" if clicked is anyway else "cancel"

    def show_dataset_statistics(
        self,
        tables: Sequence[Table],
        findings: Sequence[Finding],
        checks: Sequence[str],
        units: int,
    ) -> DatasetStatsDialog:
        """Show (or refresh) the dataset statistics dialog, without blocking the window."""
        from widgets.dataset_stats import DatasetStatsDialog

        if self.dataset_stats_dialog is None:
            self.dataset_stats_dialog = DatasetStatsDialog(self)
        self.dataset_stats_dialog.show_statistics(tables, findings, checks, units)
        self.dataset_stats_dialog.show()
        self.dataset_stats_dialog.raise_()
        return self.dataset_stats_dialog

    # One error pattern: a user error (bad input, a refused file, a failed job whose
    # message says all) is a message bar in the window with details on demand; a bug (an
    # unexpected exception, with its traceback) goes to the error log, and the bar says so.
    def show_error(self, title: str, message: str, details: str = "") -> MessageBar:
        """A user error: the non-modal message bar (details on demand), kept in the log."""
        self.error_log.add(title, message, details)
        return self._show_bar(ERROR, title, message, details)

    def show_message(self, title: str, message: str, details: str = "") -> MessageBar:
        """A non-blocking information message (e.g. an import's summary)."""
        return self._show_bar(INFO, title, message, details)

    def _show_bar(
        self, kind: str, title: str, message: str, details: str, details_in_log: bool = False
    ) -> MessageBar:
        self.message_bar.show_message(kind, title, message, details, details_in_log)
        self.message_area.show()
        self._place_message_bar()
        self.last_message = self.message_bar
        return self.message_bar

    def show_written(self, title: str, message: str, path: Path, details: str = "") -> MessageBar:
        """A file or folder written: the message with "Open" and "Show in folder"."""
        bar = self._show_bar(INFO, title, message, details)
        target = Path(path)
        folder = target if target.is_dir() else target.parent
        actions = [("Show in folder", lambda: open_path(folder))]
        if not target.is_dir():
            actions.insert(0, ("Open", lambda: open_path(target)))
        bar.set_actions(actions)
        self._place_message_bar()
        return bar

    def show_job_failure(self, title: str, message: str, details: str) -> None:
        """A failed job. With a traceback (a bug) it goes to the error log, shown at the
        bottom without blocking anything; either way the message bar says what failed."""
        self.error_log.add(title, message, details)
        if details:
            self.show_error_log()
            self._show_bar(
                ERROR, f"{title} failed unexpectedly", message, details, details_in_log=True
            )
        else:
            self._show_bar(ERROR, f"{title} failed", message, "")

    def show_error_log(self) -> None:
        first_time = self.error_dock.isHidden()
        self.error_dock.show()
        self.error_dock.raise_()
        if first_time and not self.error_dock.isFloating():
            # A strip at the bottom, not the ~45 % Qt gives a newly shown bottom dock.
            # (resizeDocks does not move a lone bottom dock: cap it for one layout pass.)
            self.error_log.setMaximumHeight(max(110, self.height() // 6))
            QTimer.singleShot(0, self, lambda: self.error_log.setMaximumHeight(16_777_215))

    # -- layout persistence ---------------------------------------------------------------
    def restore_layout(self) -> None:
        geometry = self.settings.value(_KEY_GEOMETRY)
        state = self.settings.value(_KEY_STATE)
        if isinstance(geometry, QByteArray | bytes):
            self.first_start = not self.restoreGeometry(QByteArray(geometry))
        if isinstance(state, QByteArray | bytes):
            self._layout_restored = self.restoreState(QByteArray(state), _STATE_VERSION)
            if self._layout_restored:  # the docks as that workspace left them
                self.workspaces.mark(str(self.settings.value(_KEY_WORKSPACE, "explore")))
            # The splitters once the window is first laid out: panels size some of
            # theirs on their first real size (the Browser's plots over its table). A
            # shell's panels are not built yet: theirs apply once placed (place_panels).
            self.settings.beginGroup(_KEY_SPLITTERS)
            keys = self.settings.childKeys()
            self.settings.endGroup()
            self._saved_splitters = {
                key: QByteArray(saved)
                for key in keys
                if isinstance(
                    saved := self.settings.value(f"{_KEY_SPLITTERS}/{key}"), QByteArray | bytes
                )
            }
            if self.isVisible():
                self._restore_splitters()
        self.hide_message()  # a message belongs to the run that showed it
        QTimer.singleShot(0, self, self.hide_stray_tab_bars)

    def place_on_screen(self) -> None:
        """Before the window is first shown: on a first start (no saved geometry) it takes
        its screen's available area, maximised, so the window manager fits it under its
        own title bar and panels; otherwise the saved geometry, fitted to the screen
        (:meth:`fit_to_screen`). A fixed first size shrunk to a 1366 × 768 screen opened
        at 1280 × 728, with the Browser's tier summary and demo button under the fold."""
        if self.first_start:
            self.setWindowState(self.windowState() | Qt.WindowState.WindowMaximized)
        else:
            self.fit_to_screen()

    def fit_to_screen(self, title_bar: int = 40) -> None:
        """Shrink the window (and move it) to lie within its screen's available area,
        leaving room for the window manager's frame (``title_bar`` pixels above while
        the frame is not known yet): the first run's 1280 × 800, or a geometry saved on a
        larger monitor, overflowed a 1366 × 768 laptop screen (the status bar and the
        panels' tabs below the bottom edge).

        Worked out on the client area (``geometry()``), never with ``move()``: before the
        window is shown its frame is not known, so ``pos()`` is the client's corner, and
        moving the frame there put the window a frame's width right and a title bar's
        height lower on every start. A window that fits is left where it is."""
        screen = self.screen()
        if screen is None:
            return
        area = screen.availableGeometry()
        client, frame = self.geometry(), self.frameGeometry()
        left = client.left() - frame.left()
        top = max(client.top() - frame.top(), title_bar if frame == client else 0)
        right, bottom = frame.right() - client.right(), frame.bottom() - client.bottom()
        width = max(min(client.width(), area.width() - left - right), self.minimumWidth())
        height = max(min(client.height(), area.height() - top - bottom), self.minimumHeight())
        x = max(area.left() + left, min(client.x(), area.right() - right - width + 1))
        y = max(area.top() + top, min(client.y(), area.bottom() - bottom - height + 1))
        if (x, y, width, height) != (client.x(), client.y(), client.width(), client.height()):
            self.setGeometry(x, y, width, height)

    def _restore_splitters(self) -> None:
        splitters = self._splitters()
        for key in [key for key in self._saved_splitters if key in splitters]:
            splitters[key].restoreState(self._saved_splitters.pop(key))
            # The user's sizes: a panel that sizes a splitter itself on its first real
            # size (the Browser) leaves this one as it is.
            splitters[key].setProperty(RESTORED_PROPERTY, True)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._fit_screen_limit()
        handle = self.windowHandle()
        if handle is not None and not self.property("taillens_screen_hooked"):
            self.setProperty("taillens_screen_hooked", True)
            handle.screenChanged.connect(lambda _screen: self._fit_screen_limit())
        if self._saved_splitters:
            QTimer.singleShot(0, self, self._restore_splitters)

    def _splitters(self) -> dict[str, QSplitter]:
        """Every splitter inside a dock, by the dock's name, its place among the dock's
        splitters (creation order), orientation and number of parts: a splitter a later
        version adds, drops or rearranges gets a new key, so a saved state never lands
        on the wrong one."""
        found: dict[str, QSplitter] = {}
        for dock in self.findChildren(QDockWidget):
            for n, splitter in enumerate(dock.findChildren(QSplitter)):
                shape = "h" if splitter.orientation() == Qt.Orientation.Horizontal else "v"
                found[f"{dock.objectName()}-{n}-{shape}{splitter.count()}"] = splitter
        return found

    def save_layout(self) -> None:
        """Geometry, docks (with their sizes) and every panel's splitters."""
        self.settings.setValue(_KEY_GEOMETRY, self.saveGeometry())
        self.settings.setValue(_KEY_STATE, self.saveState(_STATE_VERSION))
        self.settings.setValue(_KEY_WORKSPACE, self.workspaces.current or "explore")
        self.settings.remove(_KEY_SPLITTERS)
        for key, saved in self._saved_splitters.items():  # not applied yet: kept as saved
            self.settings.setValue(f"{_KEY_SPLITTERS}/{key}", saved)
        for key, splitter in self._splitters().items():
            self.settings.setValue(f"{_KEY_SPLITTERS}/{key}", splitter.saveState())
        self.settings.sync()

    def reset_layout(self) -> None:
        self.restoreState(self._default_state, _STATE_VERSION)
        self.workspaces.mark("explore")  # the layout as built is Explore's
        QTimer.singleShot(0, self, self.hide_stray_tab_bars)

    def hide_message(self) -> None:
        self.message_area.hide()

    def _place_message_bar(self) -> None:
        """The message row as tall as its text (and details) at the window's width, at
        most two fifths of the window (a tool bar sizes a widget by its size hint, which
        a wrapped label does not give for the width it gets)."""
        bar = self.message_bar
        if self.message_area.isHidden():
            return
        width = max(200, self.width() - 16)
        height = bar.heightForWidth(width) if bar.hasHeightForWidth() else -1
        height = max(height, bar.minimumSizeHint().height())
        bar.setFixedHeight(min(height, max(60, self.height() * 2 // 5)))

    def _fit_screen_limit(self) -> None:
        """The window never grows past its screen's available area (less the frame):
        content that asks for more (a panel's minimum size, a long label) is clipped or
        scrolls instead (Import ▸ Details… grew a maximised window to 1366 × 806)."""
        screen = self.screen()
        if screen is None or not self.isVisible():
            return
        area = screen.availableGeometry()
        client, frame = self.geometry(), self.frameGeometry()
        extra_w = frame.width() - client.width()
        extra_h = frame.height() - client.height()
        self.setMaximumSize(max(320, area.width() - extra_w), max(240, area.height() - extra_h))

    def resizeEvent(self, event: QResizeEvent) -> None:
        # The session path takes at most ~40 % of the status bar and a running job's words
        # ~20 %; each elides past that, so the status note keeps the rest (a long job
        # title left it no width at all at 1024 pixels).
        self.session_label.setMaximumWidth(max(200, event.size().width() * 2 // 5))
        self.job_status.label.setMaximumWidth(max(120, event.size().width() // 5))
        super().resizeEvent(event)
        self._place_message_bar()
        # Extra width goes to the Browser, not the side panels (Qt shares it out): in the
        # default layout, and when a shown window widens; the sizes a restored layout
        # brings back stay (they were capped on every start).
        old = event.oldSize()
        widened = self.isVisible() and old.isValid() and event.size().width() > old.width()
        if widened or not self._layout_restored:
            QTimer.singleShot(0, self, self._cap_side_docks)
        QTimer.singleShot(0, self, self.hide_stray_tab_bars)

    def hide_stray_tab_bars(self) -> None:
        """Hide dock tab bars Qt left behind from an earlier arrangement (building the
        default layout tabs the docks one by one): one was drawn over the Browser's
        inspector ("Verbalise | Scores" across the entity's name). A tab bar in use sits
        beside its docks, never on top of one, and inside the window."""
        docks = [d for d in self.findChildren(QDockWidget) if d.isVisible() and not d.isFloating()]
        for bar in self.findChildren(QTabBar):
            if bar.parent() is not self or not bar.isVisible():
                continue
            area = bar.geometry()
            if not self.rect().contains(area) or any(d.geometry().intersects(area) for d in docks):
                bar.hide()

    def _cap_side_docks(self) -> None:
        """Shrink the right-hand docks to about a third of the window (at most 560 px)
        when a wider window has made them wider than that."""
        cap = min(560, self.width() // 3)
        side = [
            d
            for d in self.findChildren(QDockWidget)
            if d.isVisible()
            and not d.isFloating()
            and self.dockWidgetArea(d) == RIGHT
            and d.width() > cap
        ]
        browser = self.docks["browser"]
        if side and browser.isVisible() and not browser.isFloating():
            # With no central widget, resizeDocks needs both sides of the split.
            width = max(cap, side[0].minimumSizeHint().width())
            self.resizeDocks(
                [browser, side[0]], [self.width() - width, width], Qt.Orientation.Horizontal
            )

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_layout()
        super().closeEvent(event)


def open_path(path: Path) -> bool:
    """Open a file with its application, or a folder in the file manager."""
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QDesktopServices

    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))


def _placeholder(title: str) -> QLabel:
    """What a dock shows until its panel is built (a plain label: no heavy import)."""
    label = QLabel(f"Loading {title}…")
    label.setObjectName("panel-placeholder")
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setEnabled(False)  # drawn in the palette's muted text colour
    return label
