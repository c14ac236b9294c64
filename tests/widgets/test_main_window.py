"""The main window on its own: docks, menus, status bar, layout persistence."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QDockWidget

from core.jobs import Progress
from widgets.main_window import MainWindow, about_text
from widgets.panels import PANELS

PANEL_TITLES = ["Browser", "Units", "Verbalise", "Scores", "Annotate", "Report"]


@pytest.fixture
def settings_path(tmp_path: Path) -> Path:
    return tmp_path / "TailLens.ini"


def make_window(qtbot, settings_path: Path) -> MainWindow:
    window = MainWindow(QSettings(str(settings_path), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.restore_layout()
    window.show()
    qtbot.waitExposed(window)
    return window


def menu_texts(window: MainWindow, title: str) -> list[str]:
    for action in window.menuBar().actions():
        if action.text().replace("&", "") == title:
            return [a.text().replace("&", "") for a in action.menu().actions() if a.text()]
    raise AssertionError(f"no menu {title}")


def test_every_panel_is_a_closable_movable_dock(qtbot, settings_path: Path) -> None:
    window = make_window(qtbot, settings_path)
    assert [spec.title for spec in PANELS] == PANEL_TITLES
    for spec in PANELS:
        dock = window.docks[spec.key]
        assert isinstance(dock, QDockWidget)
        assert dock.windowTitle() == spec.title
        features = dock.features()
        assert features & QDockWidget.DockWidgetFeature.DockWidgetClosable
        assert features & QDockWidget.DockWidgetFeature.DockWidgetMovable
        assert features & QDockWidget.DockWidgetFeature.DockWidgetFloatable


def test_menus_hold_the_promised_actions(qtbot, settings_path: Path) -> None:
    window = make_window(qtbot, settings_path)
    file_items = menu_texts(window, "File")
    for expected in ("New session…", "Open…", "Open recent", "Save as…", "Save a copy…",
                     "Import…", "Export…", "Quit"):
        assert expected in file_items
    view_items = menu_texts(window, "View")
    for title in [*PANEL_TITLES, "Session", "Error log", "Reset layout"]:
        assert title in view_items
    assert menu_texts(window, "Help") == ["About TailLens"]


def test_view_menu_closes_and_reopens_a_panel(qtbot, settings_path: Path) -> None:
    window = make_window(qtbot, settings_path)
    dock = window.docks["scores"]
    toggle = dock.toggleViewAction()
    dock.close()
    assert not dock.isVisible() and not toggle.isChecked()
    toggle.trigger()
    assert dock.isVisible()
    assert toggle.isChecked()


def test_layout_and_geometry_persist_across_runs(qtbot, settings_path: Path) -> None:
    window = make_window(qtbot, settings_path)
    window.docks["units"].close()
    window.removeDockWidget(window.docks["report"])
    window.addDockWidget(Qt.DockWidgetArea.TopDockWidgetArea, window.docks["report"])
    window.docks["report"].show()
    # Not the default size, and room for the report docked above the browser.
    window.resize(1100, 1000)
    window.close()  # closeEvent saves

    again = make_window(qtbot, settings_path)
    assert again.size().width() == 1100 and again.size().height() == 1000
    assert not again.docks["units"].isVisible()
    assert again.dockWidgetArea(again.docks["report"]) == Qt.DockWidgetArea.TopDockWidgetArea

    again.docks["scores"].setFloating(True)
    again.reset_layout()
    assert not again.docks["scores"].isFloating()
    assert not again.docks["units"].isHidden()
    assert again.dockWidgetArea(again.docks["report"]) == Qt.DockWidgetArea.RightDockWidgetArea


def test_status_bar_shows_session_and_job_progress(qtbot, settings_path: Path) -> None:
    window = make_window(qtbot, settings_path)
    assert window.session_label.text() == "No session"
    window.show_session({"path": "/tmp/demo.taillens", "schema_revision": "0002", "tables": {}})
    assert window.session_label.text() == "Session: /tmp/demo.taillens"
    assert "demo.taillens" in window.windowTitle()

    status = window.job_status
    assert not status.isVisible()
    status.job_started(7, "Fetch City")
    assert status.isVisible()
    status.job_progress(7, Progress(25, 100, "page 1"))
    assert status.bar.value() == 250
    assert "Fetch City: page 1" in status.label.text()
    with qtbot.waitSignal(status.cancel_requested) as blocker:
        status.cancel_button.click()
    assert blocker.args == [7]
    status.job_finished(7)
    assert not status.isVisible()


def test_recent_files_menu(qtbot, settings_path: Path, tmp_path: Path) -> None:
    window = make_window(qtbot, settings_path)
    existing = tmp_path / "a.taillens"
    existing.write_bytes(b"")
    window.add_recent(tmp_path / "gone.taillens")
    window.add_recent(existing)
    actions = [a for a in window.recent_menu.actions() if a.text()]
    assert actions[0].text() == str(existing) and actions[0].isEnabled()
    assert actions[1].text().endswith("(missing)") and not actions[1].isEnabled()
    with qtbot.waitSignal(window.open_requested) as blocker:
        actions[0].trigger()
    assert blocker.args == [str(existing)]


def test_error_message_is_shown_and_logged(qtbot, settings_path: Path) -> None:
    window = make_window(qtbot, settings_path)
    box = window.show_error("Cannot open session", "notes.txt is not a TailLens session")
    assert box.isVisible()
    assert "not a TailLens session" in box.text()
    assert window.error_log.model.entries[-1].message == "notes.txt is not a TailLens session"
    box.close()


def test_job_failure_opens_error_log_without_blocking(qtbot, settings_path: Path) -> None:
    window = make_window(qtbot, settings_path)
    assert not window.error_dock.isVisible()
    window.show_job_failure("Fetch City", "HTTP 429", "Traceback …")
    assert window.error_dock.isVisible()
    assert window.error_log.details.toPlainText().endswith("Traceback …")


def test_about_names_versions() -> None:
    text = about_text()
    for name in ("TailLens", "Python", "Qt", "PySide6-Essentials", "SQLite"):
        assert name in text


def test_window_can_be_made_small_before_it_is_shown(qtbot, settings_path: Path) -> None:
    """The docks of an area are tabbed, so the minimum height is one panel's, not their sum."""
    window = make_window(qtbot, settings_path)
    assert window.minimumSize().height() < 800
    window.resize(1100, 700)
    assert window.size().height() == 700


def test_first_run_gives_the_browser_most_of_the_width(qtbot, settings_path: Path) -> None:
    window = make_window(qtbot, settings_path)
    assert window.size().width() == 1280
    browser, side = window.docks["browser"].width(), window.docks["verbalise"].width()
    assert browser > 1.5 * side, (browser, side)
