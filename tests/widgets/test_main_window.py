"""The main window on its own: docks, menus, status bar, layout persistence."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QDockWidget

from core.jobs import Progress
from widgets.main_window import MainWindow
from widgets.panels import PANELS
from widgets.window_menus import about_text

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
    for expected in (
        "New session…",
        "Open…",
        "Open recent",
        "Save as…",
        "Save a copy…",
        "Import…",
        "Export…",
        "Quit",
    ):
        assert expected in file_items
    view_items = menu_texts(window, "View")
    for title in [*PANEL_TITLES, "Session", "Error log", "Reset layout"]:
        assert title in view_items
    assert menu_texts(window, "Help") == ["Getting started", "Keyboard shortcuts", "About TailLens"]
    assert "Preferences…" in file_items


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


def test_error_message_is_a_bar_in_the_window_with_details_on_demand(
    qtbot, settings_path: Path
) -> None:
    window = make_window(qtbot, settings_path)
    bar = window.show_error(
        "Cannot open session", "notes.txt is not a TailLens session", "first bytes: 'hello'"
    )
    assert bar.isVisible() and bar.window() is window  # in the window, not a dialog
    assert QApplication.activeModalWidget() is None
    assert "not a TailLens session" in bar.text()
    assert window.error_log.model.entries[-1].message == "notes.txt is not a TailLens session"
    assert not window.error_dock.isVisible()  # a user error is not a bug: no error log
    assert not bar.details_view.isVisible()
    bar.details_button.click()
    assert bar.details_view.isVisible()
    assert bar.details_view.toPlainText() == "first bytes: 'hello'"
    bar.close_button.click()
    assert not bar.isVisible()


def test_job_failure_user_error_is_a_bar_bug_goes_to_the_error_log(
    qtbot, settings_path: Path
) -> None:
    window = make_window(qtbot, settings_path)
    window.show_job_failure("Fetch City", "HTTP 429: slow down", "")
    assert window.message_bar.isVisible() and "HTTP 429" in window.message_bar.text()
    assert not window.error_dock.isVisible()
    window.show_job_failure("Score", "division by zero", "Traceback …")
    assert window.error_dock.isVisible()
    assert window.error_log.details.toPlainText().endswith("Traceback …")
    # A strip at the bottom, not the ~45 % a newly shown bottom dock gets.
    qtbot.wait(50)
    assert window.error_dock.height() <= window.height() // 4
    assert window.error_log.maximumHeight() > window.height()  # the user may drag it taller
    # The bar's "Details…" of a bug brings the error log forward.
    window.error_dock.hide()
    window.message_bar.details_button.click()
    assert window.error_dock.isVisible()


def test_status_text_never_runs_into_the_session_path(qtbot, settings_path: Path) -> None:
    window = make_window(qtbot, settings_path)
    window.resize(1024, 640)
    long_path = "/home/someone/" + "a-rather-long-folder-name/" * 8 + "demo.taillens"
    window.show_session({"path": long_path, "schema_revision": "0004", "tables": {}})
    window.statusBar().showMessage("Import TailNLG: done in 12.3 s, " + "and more words " * 20)
    qtbot.wait(50)
    note, label = window.statusBar().note, window.session_label
    assert note.isVisible() and label.isVisible()
    assert note.geometry().right() < label.geometry().left()
    assert window.width() // 4 <= label.width() <= window.width() // 2
    assert label.text() == f"Session: {long_path}"  # whole in text and tooltip, elided drawn
    assert label.toolTip() == long_path
    window.show_session({"path": "/tmp/s.taillens", "schema_revision": "0004", "tables": {}})
    qtbot.wait(50)
    assert label.width() >= label.fontMetrics().horizontalAdvance(label.text())  # not cut


def test_ctrl_number_raises_and_focuses_a_tabbed_panel_and_never_hides_it(
    qtbot, settings_path: Path
) -> None:
    window = make_window(qtbot, settings_path)
    verbalise, annotate = window.docks["verbalise"], window.docks["annotate"]
    assert verbalise in window.tabifiedDockWidgets(annotate)
    window.raise_panel("annotate")
    qtbot.wait(20)
    assert verbalise.visibleRegion().isEmpty()  # behind Annotate
    for _ in range(2):  # twice: a second press must not hide it either
        window.panel_actions["verbalise"].trigger()
        qtbot.wait(20)
        assert verbalise.isVisible() and not verbalise.visibleRegion().isEmpty()
        assert annotate.visibleRegion().isEmpty()
        focus = window.focusWidget()
        assert focus is not None and verbalise.isAncestorOf(focus)
    assert window.panel_actions["verbalise"].shortcut().toString() == "Ctrl+3"
    window.docks["scores"].close()
    window.panel_actions["scores"].trigger()  # a closed panel comes back
    assert window.docks["scores"].isVisible()


def test_keyboard_shortcuts_are_read_from_the_actions(qtbot, settings_path: Path) -> None:
    window = make_window(qtbot, settings_path)
    dialog = window.show_shortcuts()
    rows = dialog.texts()
    assert ("View", "Verbalise", "Ctrl+3") in rows
    assert any(what == "Open…" and keys for _w, what, keys in rows)
    assert any(where == "Annotate" and "adequacy" in what for where, what, _k in rows)
    assert all(keys for _w, _what, keys in rows)
    # A new action is listed the next time, with no list to keep up to date.
    extra = QAction("Frobnicate the tail", window)
    extra.setShortcut(QKeySequence("Ctrl+Shift+F"))
    window.view_menu.addAction(extra)
    assert ("View", "Frobnicate the tail", "Ctrl+Shift+F") in window.show_shortcuts().texts()
    assert not dialog.isModal()


def test_getting_started_walks_the_demo_without_blocking(qtbot, settings_path: Path) -> None:
    window = make_window(qtbot, settings_path)
    guide = window.show_getting_started()
    assert guide.isVisible() and not guide.isModal()
    titles = []
    while True:
        titles.append(guide.heading.text())
        if guide.next_button.text() == "Finish":
            break
        guide.next_button.click()
    text = " ".join(titles).lower()
    for word in ("fetch", "head", "unit", "verbalise", "score", "report"):
        assert word in text, word
    window.raise_panel("browser")
    guide.show_button.click()  # the last step's panel comes forward
    assert not window.docks["report"].visibleRegion().isEmpty()
    guide.next_button.click()  # Finish closes the guide
    assert not guide.isVisible()


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
