"""File ▸ Preferences…: ``PreferencesController`` opens the dialog, stores what was
chosen (QSettings, the settings file of app/gui) and applies it at once; panels read the
values from ``PanelContext.preferences`` (app.context). What the preferences are, and how they are
read, stored and applied, is ``core.desktop.preferences`` (re-exported here)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.desktop.preferences import (
    CONTACT_ENV,
    Preferences,
    apply_contact,
    load_preferences,
    save_preferences,
)

if TYPE_CHECKING:
    from app.context import PanelContext
    from widgets.main_window import MainWindow
    from widgets.preferences import PreferencesDialog

__all__ = [
    "CONTACT_ENV",
    "Preferences",
    "PreferencesController",
    "apply_contact",
    "load_preferences",
    "save_preferences",
]


class PreferencesController:
    def __init__(self, ctx: PanelContext, window: MainWindow) -> None:
        self.ctx = ctx
        self.window = window
        self.dialog: PreferencesDialog | None = None
        ctx.preferences = load_preferences(window.settings)
        apply_contact(ctx.preferences)
        window.preferences_requested.connect(self.open)

    def open(self) -> PreferencesDialog:
        from widgets.preferences import PreferencesDialog

        if self.dialog is None:
            dialog = self.dialog = PreferencesDialog(self.window)
            dialog.accepted.connect(lambda: self.store(dialog.values()))
        # Read again each time: the model folders live in the model loader's own file,
        # which the Verbalise panel's "add folder", the command line or another window
        # also write.
        self.ctx.preferences = load_preferences(self.window.settings)
        self.dialog.show_values(self.ctx.preferences)
        self.dialog.open()
        return self.dialog

    def store(self, prefs: Preferences) -> bool:
        try:
            save_preferences(self.window.settings, prefs)
        except (ValueError, OSError) as error:
            self.window.show_error("Preferences not saved", str(error))
            return False
        self.ctx.preferences = prefs
        apply_contact(prefs)
        from PySide6.QtWidgets import QApplication

        from app.appearance import apply_theme

        apply_theme(QApplication.instance(), prefs.theme)
        self.window.statusBar().showMessage("Preferences saved", 5_000)
        return True
