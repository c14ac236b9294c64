"""The main window's menu bar and what its menus ask for: File, Edit, View, Actions, Help.

:class:`MenuWindow` is the base of ``widgets.main_window.MainWindow``: it holds the
window's request signals (``open_requested`` …, answered by ``app.controller``), builds
each menu in its own small method, keeps the recent files and asks the file dialogs.
The Actions menu holds the panels' main commands: each is a QAction of the panel
(``widgets.commands``: it presses the panel's button and is enabled when the button
is), which the menu's item brings forward and triggers.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings, Qt, Signal, qVersion
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMainWindow, QMenu, QMessageBox, QWidget

from core import APP_NAME, __version__
from core.desktop.paths import SESSION_SUFFIX
from widgets.commands import command_actions
from widgets.panels import COMMANDS, PANELS
from widgets.save_dialog import ask_save_path

if TYPE_CHECKING:
    from widgets.dataset_stats import DatasetStatsDialog
    from widgets.help import GettingStartedGuide, ShortcutsDialog

SESSION_FILTER = f"TailLens sessions (*{SESSION_SUFFIX});;All files (*)"
MAX_RECENT = 10
_KEY_RECENT = "recent/files"


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


class MenuWindow(QMainWindow):
    """The menus of the main window; see the module's docstring."""

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

    # The subclass sets these before :meth:`_build_menus` (the docks the View menu raises).
    settings: QSettings
    docks: dict[str, QDockWidget]
    panels: dict[str, QWidget]
    overview_dock: QDockWidget
    error_dock: QDockWidget

    # -- what the docks' owner (MainWindow) provides -----------------------------------
    def raise_panel(self, key: str) -> None:
        raise NotImplementedError

    def reset_layout(self) -> None:
        raise NotImplementedError

    def _raise_dock(self, dock: QDockWidget) -> None:
        raise NotImplementedError

    # -- building -----------------------------------------------------------------------
    def _build_menus(self) -> None:
        # Import…'s and Export…'s formats: none until set_transfer_formats.
        self._importers: list[tuple[str, str, str]] = []
        self._exporters: list[tuple[str, str, str]] = []
        self._build_file_menu()
        self._build_edit_menu()
        self._build_view_menu()
        self._build_actions_menu()
        self._build_help_menu()
        self.refresh_recent_menu()

    def _build_file_menu(self) -> None:
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
        self._build_transfer_items(file_menu)
        file_menu.addSeparator()
        self._build_preferences_and_quit(file_menu)

    def _build_transfer_items(self, file_menu: QMenu) -> None:
        """Import, export and the dialogs that move data in and out of the session."""
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

    def _build_preferences_and_quit(self, file_menu: QMenu) -> None:
        self.action_preferences = self._action(
            file_menu,
            "&Preferences…",
            QKeySequence.StandardKey.Preferences,
            self.preferences_requested.emit,
        )
        self.action_preferences.setMenuRole(QAction.MenuRole.PreferencesRole)
        if self.action_preferences.shortcut().isEmpty():
            self.action_preferences.setShortcut(QKeySequence("Ctrl+,"))
        file_menu.addSeparator()
        self.action_quit = self._action(
            file_menu, "&Quit", QKeySequence.StandardKey.Quit, self.close
        )
        self.action_quit.setMenuRole(QAction.MenuRole.QuitRole)
        if self.action_quit.shortcut().isEmpty():  # platforms whose standard Quit has no key
            self.action_quit.setShortcut(QKeySequence("Ctrl+Q"))

    def _build_edit_menu(self) -> None:
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

    def _build_view_menu(self) -> None:
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

    def _build_actions_menu(self) -> None:
        """Each panel's main commands, with keys (Help ▸ Keyboard shortcuts lists them).
        An item is enabled while its panel's command is (none before the panel is built)."""
        self.actions_menu = self.menuBar().addMenu("&Actions")
        self.command_actions: dict[str, QAction] = {}  # "panel:name" -> the menu's item
        self.panel_commands: dict[str, QAction] = {}  # "panel:name" -> the panel's own
        previous = None
        for command in COMMANDS:
            if previous is not None and command.panel != previous:
                self.actions_menu.addSeparator()
            previous = command.panel
            action = self._action(
                self.actions_menu,
                command.text,
                command.shortcut or None,
                lambda c=command: self.run_command(c.panel, c.name),
            )
            action.setEnabled(False)
            self.command_actions[command.key] = action

    def _build_help_menu(self) -> None:
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

    def _raise_action(self, title: str, dock: QDockWidget) -> QAction:
        action = QAction(title, self)
        action.triggered.connect(lambda _checked=False: self._raise_dock(dock))
        return action

    # -- the panels' commands -----------------------------------------------------------
    def add_panel_commands(self, key: str, panel: QWidget) -> None:
        """The commands panel ``key`` exposes (``widgets.commands.command_actions``): each
        menu item follows its command's enabled state from now on."""
        for name, command in command_actions(key, panel).items():
            item = self.command_actions[f"{key}:{name}"]
            self.panel_commands[f"{key}:{name}"] = command
            item.setEnabled(command.isEnabled())
            command.enabledChanged.connect(item.setEnabled)

    def panel_command(self, panel: str, name: str) -> QAction | None:
        """Panel ``panel``'s command ``name`` (None before the panel is built)."""
        return self.panel_commands.get(f"{panel}:{name}")

    def run_command(self, panel: str, name: str) -> None:
        """An Actions menu command: the panel forward, its command triggered."""
        self.raise_panel(panel)
        command = self.panel_command(panel, name)
        if command is not None and command.isEnabled():
            command.trigger()

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


def _keys(action: QAction) -> str:
    return ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts())


def _with_suffix(path: str) -> str:
    return path if Path(path).suffix else path + SESSION_SUFFIX
