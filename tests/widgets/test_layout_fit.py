"""Layouts fit a laptop screen (issue 14, point 4): the main window at 1366×768."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QScrollArea

from widgets.main_window import MainWindow


def _window(qtbot, tmp_path: Path, width: int, height: int) -> MainWindow:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings)
    qtbot.addWidget(window)
    window.resize(width, height)
    window.show()
    qtbot.waitExposed(window)
    window.resize(width, height)
    for _ in range(3):  # the side-dock cap runs from a zero-delay timer
        qtbot.wait(20)
        QApplication.processEvents()
    return window


def test_window_fits_1366x768_with_room_for_the_browser(qtbot, tmp_path: Path) -> None:
    window = _window(qtbot, tmp_path, 1366, 768)
    assert window.width() == 1366  # the docks' minimum widths do not push the window wider
    browser = window.docks["browser"]
    for key in ("verbalise", "scores", "annotate", "report"):
        window.docks[key].raise_()
        QApplication.processEvents()
        assert browser.width() > window.docks[key].width(), key
        assert window.width() == 1366, key
    window.docks["browser"].raise_()
    panel = window.panels["browser"]
    assert panel.plots.height() >= 200
    # The control column is at least as wide as its controls: no clipped combos or spin boxes.
    scroll = panel.findChildren(QScrollArea)[0]
    assert scroll.viewport().width() >= scroll.widget().minimumSizeHint().width()


def test_extra_width_goes_to_the_browser(qtbot, tmp_path: Path) -> None:
    window = _window(qtbot, tmp_path, 2560, 1440)
    side = window.docks["verbalise"]
    assert side.width() <= max(560, side.minimumSizeHint().width())
    assert window.docks["browser"].width() > 2 * side.width()
