"""File ▸ Preferences…: stored with QSettings, read back by a new window, applied to the
Browser's cut-offs, the User-Agent contact and the model folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from app.gui import build_window
from app.preferences import CONTACT_ENV, load_preferences
from core.local_models.loader import configured_model_folders
from core.store import SessionStore
from core.tiers.stored import load_tier_settings


@pytest.fixture
def settings_file(tmp_path: Path) -> Path:
    return tmp_path / "TailLens.ini"


def window_on(qtbot, settings_file: Path):
    window, controller = build_window(QSettings(str(settings_file), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    return window, controller


def test_preferences_are_stored_read_back_and_applied(
    qtbot, taillens_home: Path, settings_file: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.delenv(CONTACT_ENV, raising=False)
    monkeypatch.delenv("TAILLENS_MODEL_DIRS", raising=False)
    window, controller = window_on(qtbot, settings_file)
    assert "Preferences…" in [
        a.text().replace("&", "")
        for a in window.findChildren(type(window.action_preferences))
        if a.text()
    ]
    assert controller.preferences.share == 0.8 and controller.preferences.contact == ""
    dialog = controller.preferences_controller.open()
    assert dialog.share_spin.value() == pytest.approx(0.8)
    dialog.share_spin.setValue(0.7)
    dialog.split_combo.setCurrentIndex(dialog.split_combo.findData("head_tail"))
    dialog.fraction_spin.setValue(0.25)
    dialog.contact_edit.setText("ana@example.org")
    models = tmp_path / "models"
    models.mkdir()
    dialog.folders_list.addItem(str(models))
    dialog.accept()
    assert controller.preferences.share == pytest.approx(0.7)
    assert os.environ[CONTACT_ENV] == "ana@example.org"  # what the endpoints read
    assert models in configured_model_folders()  # what Verbalise/Scores read

    again = load_preferences(QSettings(str(settings_file), QSettings.Format.IniFormat))
    assert (again.split_by, again.share, again.fraction, again.contact) == (
        "head_tail",
        pytest.approx(0.7),
        pytest.approx(0.25),
        "ana@example.org",
    )
    assert again.model_folders == (str(models),)

    # A category with no cut-offs of its own starts from the preferences.
    session = tmp_path / "s.taillens"
    store = SessionStore.create(session)
    try:
        tiers = load_tier_settings(store, "City", controller.preferences.tier_settings())
        assert (tiers.split_by, tiers.share, tiers.fraction) == ("head_tail", 0.7, 0.25)
        assert load_tier_settings(store, "City").share == 0.8  # METHODS' default otherwise
    finally:
        store.close()
    controller.shutdown()


def test_a_contact_from_the_environment_wins(
    qtbot, taillens_home: Path, settings_file: Path, monkeypatch
) -> None:
    monkeypatch.setenv(CONTACT_ENV, "env@example.org")
    settings = QSettings(str(settings_file), QSettings.Format.IniFormat)
    settings.setValue("network/contact", "prefs@example.org")
    settings.setValue("methods/pareto_share", "not a number")
    settings.sync()
    window, controller = window_on(qtbot, settings_file)
    assert controller.preferences.contact == "prefs@example.org"
    assert controller.preferences.share == 0.8  # a hand-edited value that does not parse
    assert os.environ[CONTACT_ENV] == "env@example.org"
    controller.shutdown()


def test_the_model_folders_are_read_again_each_time_preferences_open(
    qtbot, settings_file: Path, tmp_path: Path, monkeypatch
) -> None:
    """The folder list is the model loader's file, which Verbalise's "add folder", the command
    line and other windows write too: reopening Preferences shows it as it is now."""
    from core.local_models.loader import save_model_folders

    monkeypatch.delenv("TAILLENS_MODEL_DIRS", raising=False)
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    window, controller = window_on(qtbot, settings_file)
    dialog = controller.preferences_controller.open()
    dialog.folders_list.addItem(str(first))
    dialog.accept()

    controller.verbalise.add_folder(str(second))  # the Verbalise panel's "add folder…"
    dialog = controller.preferences_controller.open()
    shown = [dialog.folders_list.item(i).text() for i in range(dialog.folders_list.count())]
    assert shown == [str(first), str(second)]
    dialog.reject()

    save_model_folders([second])  # changed on disk (another window, the command line)
    dialog = controller.preferences_controller.open()
    shown = [dialog.folders_list.item(i).text() for i in range(dialog.folders_list.count())]
    assert shown == [str(second)]
    dialog.accept()  # saving keeps what is there, not the list of an earlier opening
    assert configured_model_folders() == [second]
    controller.shutdown()


def test_the_theme_is_applied_at_once_and_remembered(
    qtbot, taillens_home: Path, settings_file: Path
) -> None:
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication

    from app.appearance import apply_theme
    from app.gui import load_theme

    app = QApplication.instance()
    window_role = QPalette.ColorRole.Window
    window, controller = window_on(qtbot, settings_file)
    try:
        dialog = controller.preferences_controller.open()
        assert dialog.theme_combo.currentData() == "system"
        dialog.theme_combo.setCurrentIndex(dialog.theme_combo.findData("dark"))
        dialog.accept()
        assert app.palette().color(window_role).lightness() < 80  # no restart
        settings = QSettings(str(settings_file), QSettings.Format.IniFormat)
        assert load_theme(settings) == "dark" and load_preferences(settings).theme == "dark"
        again = controller.preferences_controller.open()
        assert again.theme_combo.currentData() == "dark"
        again.theme_combo.setCurrentIndex(again.theme_combo.findData("light"))
        again.accept()
        assert app.palette().color(window_role).lightness() > 180
        settings.setValue("appearance/theme", "purple")  # hand-edited: the default
        assert load_theme(settings) == "system"
    finally:
        apply_theme(app, "system")
        controller.shutdown()
