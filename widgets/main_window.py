"""The main window: docks, menus, status bar. It shows state and asks for actions.

The window never opens a session or runs work itself. File actions are emitted as
signals (``open_requested`` …) that ``app.controller`` answers, and what the
controller learns comes back through ``show_session`` / ``show_error``.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal, qVersion
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QDockWidget,
    QFileDialog,
    QLabel,
    QLayout,
    QMainWindow,
    QMenu,
    QMessageBox,
    QSizePolicy,
    QSplitter,
    QTabBar,
    QToolBar,
    QWidget,
)

from core import APP_NAME, __version__
from core.desktop.paths import SESSION_SUFFIX
from widgets import wheel_guard
from widgets.error_log import ErrorLogPanel
from widgets.job_status import JobStatusWidget
from widgets.message_bar import ERROR, INFO, ElidedLabel, MessageBar, StatusBar
from widgets.panels import BOTTOM, COMMANDS, PANELS, RIGHT, PanelSpec
from widgets.save_dialog import ask_save_path
from widgets.session_overview import SessionOverview
from widgets.workspaces import WORKSPACES, Workspaces

if TYPE_CHECKING:
    from core.report.dataset_stats import Finding, Table
    from core.session_info import SessionInfo
    from widgets.dataset_stats import DatasetStatsDialog
    from widgets.help import GettingStartedGuide, ShortcutsDialog

SESSION_FILTER = f"TailLens sessions (*{SESSION_SUFFIX});;All files (*)"
MAX_RECENT = 10

_KEY_GEOMETRY = "window/geometry"
_KEY_STATE = "window/state"
_KEY_RECENT = "recent/files"
_KEY_SPLITTERS = "window/splitters"
_KEY_WORKSPACE = "window/workspace"  # the workspace the saved layout is of
# Set on a splitter whose saved sizes were restored (see MainWindow._restore_splitters).
RESTORED_PROPERTY = "taillens_restored"
# Bumped when the set of docks changes so an old saved layout is not misapplied.
_STATE_VERSION = 2


def about_text() -> str:
    from core.desktop.versions import software_versions  # importlib.metadata: not before the paint

    versions = software_versions()
    # Qt's own version can differ from the PySide6 wheel's: show both.
    versions = {APP_NAME: versions.pop(APP_NAME), "Qt": qVersion(), **versions}
    rows = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in versions.items()
    )
    return (
        f"<h3>{APP_NAME} {__version__}</h3>"
        "<p>Explore how language models put knowledge-graph facts into words, and how "
        "much worse they do it for long-tail entities.</p>"
        f"<table>{rows}</table>"
    )


class MainWindow(QMainWindow):
    new_session_requested = Signal(str)
    open_requested = Signal(str)
    save_copy_requested = Signal(str, bool)  # destination, switch to the copy afterwards
    import_requested = Signal(str, str)  # file, format name
    # file or folder, format name ("auto": from the first bytes), language of unmarked
    # WebNLG texts ("" for the file-name rule)
    import_options_requested = Signal(str, str, str)
    dataset_stats_requested = Signal()
    annotation_packs_requested = Signal()
    export_requested = Signal(str, str)  # file, format name
    preferences_requested = Signal()
    models_requested = Signal()  # File ▸ Models… (app/models.py)
    references_requested = Signal()  # File ▸ References pipeline… (app/references_pipeline.py)
    undo_requested = Signal()  # Edit ▸ Undo (app/edits.py)
    redo_requested = Signal()  # Edit ▸ Redo
    history_requested = Signal()  # Edit ▸ Session history…

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

        # Temporary notes, job progress and the session path each have their own place
        # in the status bar; none can run into another.
        self.setStatusBar(StatusBar(self))
        self.job_status = JobStatusWidget()
        self.session_label = ElidedLabel()
        self.statusBar().addPermanentWidget(self.job_status)
        self.statusBar().addPermanentWidget(self.session_label)

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

        self.last_message: MessageBar | None = None
        self._importers: list[tuple[str, str, str]] = []
        self._exporters: list[tuple[str, str, str]] = []
        self._build_menus()
        # One arrangement of the docks per task (widgets/workspaces.py), in the menu bar.
        self.workspaces = Workspaces(self)
        self.workspaces.mark("explore")  # the default layout
        self.show_session(None)
        # What "View ▸ Reset layout" goes back to: the layout as built, before any restore.
        self._default_state = self.saveState(_STATE_VERSION)

    # -- construction ---------------------------------------------------------------
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
        QTimer.singleShot(0, self.place_panels)

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

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.action_new = self._action(
            file_menu, "&New session…", QKeySequence.StandardKey.New, self._ask_new_session
        )
        self.action_open = self._action(
            file_menu, "&Open…", QKeySequence.StandardKey.Open, self._ask_open
        )
        self.recent_menu = QMenu("Open &recent", self)
        file_menu.addMenu(self.recent_menu)
        file_menu.addSeparator()
        self.action_save_as = self._action(
            file_menu,
            "Save &as…",
            QKeySequence.StandardKey.SaveAs,
            lambda: self._ask_save_copy(switch=True),
        )
        self.action_save_copy = self._action(
            file_menu, "Save a &copy…", None, lambda: self._ask_save_copy(switch=False)
        )
        file_menu.addSeparator()
        self.action_import = self._action(file_menu, "&Import…", None, self._ask_import)
        self.action_import_folder = self._action(
            file_menu, "Import &folder…", None, self._ask_import_folder
        )
        self.action_import_folder.setStatusTip(
            "Import every WebNLG/TailNLG .xml file under a folder, in one transaction"
        )
        self.action_export = self._action(file_menu, "&Export…", None, self._ask_export)
        self.action_packs = self._action(
            file_menu, "Annotation &packs…", None, self.annotation_packs_requested.emit
        )
        self.action_packs.setStatusTip(
            "Make a pack for an annotator to rate offline, merge packs, see the team's progress"
        )
        self.action_references = self._action(
            file_menu, "&References pipeline…", None, lambda: self.references_requested.emit()
        )
        self.action_references.setStatusTip(
            "Translate gold references into other languages, estimate their quality, post-edit them"
        )
        self.action_models = self._action(
            file_menu, "&Models…", None, lambda: self.models_requested.emit()
        )
        self.action_models.setStatusTip(
            "The models on this machine; pull one from the Hugging Face hub, remove one"
        )
        file_menu.addSeparator()
        self.action_quit = self._action(
            file_menu, "&Quit", QKeySequence.StandardKey.Quit, self.close
        )
        self.action_quit.setMenuRole(QAction.MenuRole.QuitRole)
        if self.action_quit.shortcut().isEmpty():  # platforms whose standard Quit has no key
            self.action_quit.setShortcut(QKeySequence("Ctrl+Q"))

        # Undo and redo of every edit to the session (app.edits keeps the stack and sets
        # the texts and enabled states through set_undo_state).
        self.edit_menu = self.menuBar().addMenu("&Edit")
        self.action_undo = self._action(
            self.edit_menu, "&Undo", QKeySequence.StandardKey.Undo, self.undo_requested.emit
        )
        self.action_redo = self._action(self.edit_menu, "&Redo", None, self.redo_requested.emit)
        # Ctrl+Shift+Z and Ctrl+Y on every platform (the standard Redo has only one of them
        # on some).
        self.action_redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.edit_menu.addSeparator()
        self.action_history = self._action(
            self.edit_menu, "Session &history…", None, self.history_requested.emit
        )
        self.set_undo_state(False, "", False, "")

        self.view_menu = self.menuBar().addMenu("&View")
        # Ctrl+1…6 bring a panel forward and give it the keyboard (showing it if it was
        # closed); they never hide one. A dock's own ✕ closes it.
        self.panel_actions: dict[str, QAction] = {}
        for spec in PANELS:
            action = self._action(
                self.view_menu,
                spec.title,
                spec.shortcut,
                lambda key=spec.key: self.raise_panel(key),
            )
            action.setStatusTip(f"Bring the {spec.title} panel forward ({spec.shortcut})")
            self.panel_actions[spec.key] = action
        self.view_menu.addAction(self._raise_action("Session", self.overview_dock))
        self.view_menu.addAction(self._raise_action("Error log", self.error_dock))
        self.view_menu.addSeparator()
        self.action_reset_layout = self._action(
            self.view_menu, "&Reset layout", None, self.reset_layout
        )
        self.action_dataset_stats = self._action(
            self.view_menu, "Dataset &statistics…", None, self.dataset_stats_requested.emit
        )
        self.action_dataset_stats.setStatusTip(
            "Units per tier, sub-tier, size, shape and language, and units that look wrong"
        )
        self.dataset_stats_dialog: DatasetStatsDialog | None = None

        self.action_preferences = self._action(
            file_menu,
            "&Preferences…",
            QKeySequence.StandardKey.Preferences,
            self.preferences_requested.emit,
        )
        self.action_preferences.setMenuRole(QAction.MenuRole.PreferencesRole)
        if self.action_preferences.shortcut().isEmpty():
            self.action_preferences.setShortcut(QKeySequence("Ctrl+,"))
        file_menu.insertAction(self.action_quit, self.action_preferences)
        file_menu.insertSeparator(self.action_quit)

        # Each panel's main commands, with keys (Help ▸ Keyboard shortcuts lists them).
        self.actions_menu = self.menuBar().addMenu("&Actions")
        self.command_actions: dict[str, QAction] = {}
        previous = None
        for command in COMMANDS:
            if previous is not None and command.panel != previous:
                self.actions_menu.addSeparator()
            previous = command.panel
            action = self._action(
                self.actions_menu,
                command.text,
                command.shortcut or None,
                lambda c=command: self.run_command(c.panel, c.button),
            )
            self.command_actions[f"{command.panel}:{command.button}"] = action
        self.actions_menu.aboutToShow.connect(self._update_commands)

        help_menu = self.menuBar().addMenu("&Help")
        self.action_getting_started = self._action(
            help_menu, "&Getting started", "F1", self.show_getting_started
        )
        self.action_shortcuts = self._action(
            help_menu, "&Keyboard shortcuts", "Ctrl+/", self.show_shortcuts
        )
        self.guide: GettingStartedGuide | None = None
        self.shortcuts_dialog: ShortcutsDialog | None = None
        self.action_about = self._action(help_menu, f"&About {APP_NAME}", None, self.show_about)
        self.action_about.setMenuRole(QAction.MenuRole.AboutRole)
        self.refresh_recent_menu()

    def _raise_action(self, title: str, dock: QDockWidget) -> QAction:
        action = QAction(title, self)
        action.triggered.connect(lambda _checked=False: self._raise_dock(dock))
        return action

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

    def command_button(self, panel: str, text: str) -> QAbstractButton | None:
        """The button of ``panel`` whose text is ``text`` (None before the panels exist)."""
        widget = self.panels.get(panel)
        if widget is None:
            return None
        return next((b for b in widget.findChildren(QAbstractButton) if b.text() == text), None)

    def run_command(self, panel: str, text: str) -> None:
        """An Actions menu command: the panel forward, its button pressed if it can be."""
        self.raise_panel(panel)
        button = self.command_button(panel, text)
        if button is not None and button.isEnabled():
            button.click()

    def _update_commands(self) -> None:
        for key, action in self.command_actions.items():
            panel, text = key.split(":", 1)
            button = self.command_button(panel, text)
            action.setEnabled(button is not None and button.isEnabled())

    def shortcut_rows(self) -> list[tuple[str, str, str]]:
        """(where, what, keys) for every action of the window that has a shortcut, read
        from the actions themselves, then the keys panels handle on their own."""
        rows: list[tuple[str, str, str]] = []
        seen: set[int] = set()

        def walk(menu: QMenu, where: str) -> None:
            for action in menu.actions():
                if action.menu() is not None:
                    walk(action.menu(), f"{where} ▸ {action.menu().title().replace('&', '')}")
                elif action.shortcuts():
                    seen.add(id(action))
                    rows.append((where, action.text().replace("&", ""), _keys(action)))

        for top in self.menuBar().actions():
            if top.menu() is not None:
                walk(top.menu(), top.menu().title().replace("&", ""))
        for action in self.findChildren(QAction):
            if id(action) not in seen and action.shortcuts() and action.text():
                rows.append(("Window", action.text().replace("&", ""), _keys(action)))
        for key, panel in self.panels.items():
            for keys, what in getattr(panel, "KEYS", ()):
                rows.append((self.docks[key].windowTitle(), what, keys))
        return rows

    def show_shortcuts(self) -> ShortcutsDialog:
        from widgets.help import ShortcutsDialog

        if self.shortcuts_dialog is None:
            self.shortcuts_dialog = ShortcutsDialog(self)
        self.shortcuts_dialog.show_rows(self.shortcut_rows())
        self.shortcuts_dialog.show()
        self.shortcuts_dialog.raise_()
        return self.shortcuts_dialog

    def show_getting_started(self) -> GettingStartedGuide:
        from widgets.help import GettingStartedGuide

        if self.guide is None:
            self.guide = GettingStartedGuide(self)
            self.guide.panel_wanted.connect(self.raise_panel)
        self.guide.show()
        self.guide.raise_()
        return self.guide

    def _action(
        self,
        menu: QMenu,
        text: str,
        shortcut: QKeySequence.StandardKey | str | None,
        slot: Callable[[], object],
    ) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(lambda _checked=False: slot())
        menu.addAction(action)
        return action

    def set_undo_state(
        self, can_undo: bool, undo_text: str, can_redo: bool, redo_text: str
    ) -> None:
        """The Edit menu's Undo and Redo: what they would undo or redo, and whether now."""
        self.action_undo.setText(f"&Undo {undo_text}" if undo_text else "&Undo")
        self.action_redo.setText(f"&Redo {redo_text}" if redo_text else "&Redo")
        self.action_undo.setEnabled(can_undo)
        self.action_redo.setEnabled(can_redo)

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

    def set_transfer_formats(
        self, importers: list[tuple[str, str, str]], exporters: list[tuple[str, str, str]]
    ) -> None:
        """Formats for Import…/Export…: (name, description, file-dialog filter such as
        "TailNLG XML (*.xml)")."""
        self._importers, self._exporters = importers, exporters
        for action, formats, verb in (
            (self.action_import, importers, "import"),
            (self.action_export, exporters, "export"),
        ):
            action.setEnabled(bool(formats))
            action.setStatusTip(
                "Formats: " + ", ".join(d for _n, d, _f in formats)
                if formats
                else f"No {verb} formats available yet"
            )

    def _file_filters(self, formats: list[tuple[str, str, str]]) -> str:
        return ";;".join(file_filter for _name, _description, file_filter in formats)

    def _format_of(self, formats: list[tuple[str, str, str]], chosen_filter: str) -> str:
        for name, _description, file_filter in formats:
            if chosen_filter == file_filter:
                return name
        return formats[0][0]

    def _ask_import(self) -> None:
        path, chosen = QFileDialog.getOpenFileName(
            self, "Import into the session", "", self._file_filters(self._importers)
        )
        if not path:
            return
        name = self._format_of(self._importers, chosen)
        if name not in ("webnlg", "tailnlg"):
            self.import_requested.emit(path, name)
            return
        lang = self.ask_import_language(Path(path).name)
        if lang is not None:
            self.import_options_requested.emit(path, name, lang)

    def _ask_import_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Import a folder of WebNLG files")
        if not folder:
            return
        lang = self.ask_import_language(Path(folder).name + "/")
        if lang is not None:
            self.import_options_requested.emit(folder, "auto", lang)

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

    def ask_import_language(self, target: str) -> str | None:
        """The import dialog's language field (None: cancelled); tests replace this."""
        from widgets.import_dialog import ask_import_language

        return ask_import_language(target, self)

    def _ask_export(self) -> None:
        path, chosen = ask_save_path(
            self, "Export from the session", "", self._file_filters(self._exporters)
        )
        if path:
            self.export_requested.emit(path, self._format_of(self._exporters, chosen))

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
            QTimer.singleShot(0, lambda: self.error_log.setMaximumHeight(16_777_215))

    def about_box(self) -> QMessageBox:
        """Help ▸ About: the version of TailLens and of what it runs on (not yet shown)."""
        box = QMessageBox(self)
        box.setWindowTitle(f"About {APP_NAME}")
        box.setText(about_text())
        box.setIconPixmap(self.windowIcon().pixmap(64, 64))
        box.setStandardButtons(QMessageBox.StandardButton.Close)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        return box

    def show_about(self) -> None:
        self.about_box().open()

    # -- recent files ---------------------------------------------------------------
    def recent_files(self) -> list[str]:
        value = self.settings.value(_KEY_RECENT, [])
        if isinstance(value, str):  # QSettings returns a bare string for a one-item list
            value = [value]
        return [str(v) for v in (value or [])]

    def add_recent(self, path: Path) -> None:
        entry = str(path)
        files = [entry] + [f for f in self.recent_files() if f != entry]
        self.settings.setValue(_KEY_RECENT, files[:MAX_RECENT])
        self.refresh_recent_menu()

    def refresh_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        for entry in files:
            action = self.recent_menu.addAction(entry)
            action.setEnabled(Path(entry).exists())
            if not action.isEnabled():
                action.setText(f"{entry} (missing)")
            action.triggered.connect(lambda _checked=False, p=entry: self.open_requested.emit(p))
        if files:
            self.recent_menu.addSeparator()
        clear = self.recent_menu.addAction("Clear list")
        clear.setEnabled(bool(files))
        clear.triggered.connect(self._clear_recent)

    def _clear_recent(self) -> None:
        self.settings.setValue(_KEY_RECENT, [])
        self.refresh_recent_menu()

    # -- file dialogs -----------------------------------------------------------------
    def _ask_new_session(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "New session", "", SESSION_FILTER)
        if path:
            self.new_session_requested.emit(_with_suffix(path))

    def _ask_open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open session", "", SESSION_FILTER)
        if path:
            self.open_requested.emit(path)

    def _ask_save_copy(self, switch: bool) -> None:
        title = "Save session as" if switch else "Save a copy of the session"
        path, _ = QFileDialog.getSaveFileName(self, title, "", SESSION_FILTER)
        if path:
            self.save_copy_requested.emit(_with_suffix(path), switch)

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
        QTimer.singleShot(0, self.hide_stray_tab_bars)

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
            QTimer.singleShot(0, self._restore_splitters)

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
        QTimer.singleShot(0, self.hide_stray_tab_bars)

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
            QTimer.singleShot(0, self._cap_side_docks)
        QTimer.singleShot(0, self.hide_stray_tab_bars)

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


def _keys(action: QAction) -> str:
    return ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts())


def _with_suffix(path: str) -> str:
    return path if Path(path).suffix else path + SESSION_SUFFIX
