"""The window comes back as it was left: where it was on the screen (under a window
manager that draws a frame), its docks' and splitters' sizes, and the Browser's
Compare-with ticks of each session and category."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fixtures.reads import settle_reads

ROOT = Path(__file__).resolve().parents[2]

# Starts of the window, as ``taillens gui`` does each: the saved layout restored, fitted
# to the screen, shown; its client geometry and frame corner printed; closed (which saves
# the layout). Before the first, the window is placed as a user dragging it would.
_STARTS = """
import json, sys
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
app = QApplication([])
from widgets.main_window import MainWindow
for start in range(4):
    window = MainWindow(QSettings(sys.argv[1], QSettings.Format.IniFormat))
    window.restore_layout()
    window.fit_to_screen()
    window.show()
    app.processEvents()
    if start == 0:
        window.setGeometry(300, 200, 1200, 760)
        app.processEvents()
    g, f = window.geometry(), window.frameGeometry()
    print(json.dumps([g.x(), g.y(), g.width(), g.height(), f.x(), f.y()]))
    window.close()
    window.deleteLater()
    app.processEvents()
"""


def window_starts(settings: Path, screen: Path) -> list[list[int]]:
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={screen}", PYTHONPATH=str(ROOT))
    result = subprocess.run(
        [sys.executable, "-c", _STARTS, str(settings)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("[")]


def test_the_window_stays_where_it_was_left_across_restarts(tmp_path: Path) -> None:
    # A desktop screen, and a window manager frame around the window (Qt's offscreen
    # platform draws one, a few pixels wide, when asked).
    screen = tmp_path / "screen.json"
    screen.write_text(
        json.dumps(
            {
                "windowFrameMargins": True,
                "screens": [
                    {
                        "name": "s",
                        "x": 0,
                        "y": 0,
                        "width": 1920,
                        "height": 1200,
                        "logicalDpi": 96,
                        "logicalBaseDpi": 96,
                        "dpr": 1,
                    }
                ],
            }
        )
    )
    placed, *restarts = window_starts(tmp_path / "TailLens.ini", screen)
    assert placed[:4] == [300, 200, 1200, 760]
    assert placed[4:] != placed[:2]  # there is a frame: the client is inside it
    # Each start puts it back where the last left it (it moved 2 px right and down
    # per start with this frame: 1 px and a 20 px title bar under a real window manager).
    assert restarts == [placed] * 3


def test_dock_and_splitter_sizes_come_back(qtbot, tmp_path: Path) -> None:
    from PySide6.QtCore import QSettings, Qt
    from PySide6.QtWidgets import QSplitter

    from widgets.main_window import MainWindow

    def start() -> MainWindow:
        window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
        qtbot.addWidget(window)
        window.restore_layout()
        window.fit_to_screen()
        window.show()
        qtbot.waitExposed(window)
        qtbot.wait(50)
        return window

    def sizes(window: MainWindow) -> tuple[int, int, list[list[int]]]:
        splitters = window.docks["browser"].findChildren(QSplitter)
        return (
            window.docks["browser"].width(),
            window.docks["verbalise"].width(),
            [s.sizes() for s in splitters],
        )

    window = start()
    window.resize(1500, 900)
    qtbot.wait(50)
    # The user widens the side panel past a third of the window, and moves the split
    # between the Browser's plots and its table.
    window.resizeDocks(
        [window.docks["browser"], window.docks["verbalise"]], [800, 700], Qt.Orientation.Horizontal
    )
    outer = next(
        s
        for s in window.docks["browser"].findChildren(QSplitter)
        if s.orientation() == Qt.Orientation.Vertical
    )
    outer.setSizes([200, outer.height() - 200])
    qtbot.wait(50)
    before = sizes(window)
    window.close()

    again = start()
    assert sizes(again) == before
    again.close()

    # As ``taillens gui`` starts: the shell is shown with the saved layout, the panels
    # (and their splitters) go in after the first paint, and take their sizes then.
    shell = MainWindow(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat), build_panels=False
    )
    qtbot.addWidget(shell)
    shell.restore_layout()
    shell.fit_to_screen()
    shell.show()
    qtbot.waitExposed(shell)
    shell.install_panels()
    qtbot.waitUntil(lambda: shell.docks["browser"].widget() is shell.panels["browser"])
    qtbot.wait(50)
    assert sizes(shell) == before
    shell.close()


def test_compare_with_ticks_come_back_per_session_and_category(qtbot, tmp_path: Path) -> None:
    from PySide6.QtCore import QSettings, Qt

    from app.gui import build_window
    from core.store import SessionStore

    settings = tmp_path / "s.ini"
    first, second = tmp_path / "first.taillens", tmp_path / "second.taillens"
    SessionStore.create(first).close()
    SessionStore.create(second).close()

    def start(session: Path):
        window, controller = build_window(QSettings(str(settings), QSettings.Format.IniFormat))
        qtbot.addWidget(window)
        assert controller.open_session(session)
        settle_reads(qtbot, controller)
        return controller, controller.browser.panel

    def tick(panel, wanted: list[str]) -> None:  # as the user clicks them
        for i in range(panel.compare_list.count()):
            item = panel.compare_list.item(i)
            state = Qt.CheckState.Checked if item.text() in wanted else Qt.CheckState.Unchecked
            if item.checkState() != state:
                item.setCheckState(state)

    controller, panel = start(first)
    names = [panel.compare_list.item(i).text() for i in range(panel.compare_list.count())]
    city, airport, *others = names
    controller.browser.show_category(city)
    settle_reads(qtbot, controller)
    tick(panel, others[:2])
    controller.browser.show_category(airport)
    settle_reads(qtbot, controller)
    tick(panel, others[2:3])
    controller.shutdown()

    controller, panel = start(first)  # the next start
    controller.browser.show_category(city)
    settle_reads(qtbot, controller)
    assert panel.compared() == others[:2]
    controller.browser.show_category(airport)
    settle_reads(qtbot, controller)
    assert panel.compared() == others[2:3]
    controller.shutdown()

    controller, panel = start(second)  # another session: its own ticks (none yet)
    controller.browser.show_category(city)
    settle_reads(qtbot, controller)
    assert panel.compared() == []
    controller.shutdown()


def test_units_filters_and_sort_and_annotates_tab_come_back(qtbot, tmp_path: Path) -> None:
    from PySide6.QtCore import QSettings, Qt

    from app.gui import build_window
    from core.store import SessionStore
    from tests.fixtures.verbalise_units import add_units

    settings = tmp_path / "s.ini"
    session = tmp_path / "units.taillens"
    store = SessionStore.create(session)
    add_units(store, 6)
    store.close()

    def start():
        window, controller = build_window(QSettings(str(settings), QSettings.Format.IniFormat))
        qtbot.addWidget(window)
        assert controller.open_session(session)
        settle_reads(qtbot, controller)
        panel = controller.units.panel
        qtbot.waitUntil(lambda: panel.units_model.rowCount() == 6, timeout=10_000)
        return controller, panel, controller.annotate.panel

    controller, panel, annotate = start()
    size = panel.unit_filters["size"]
    wanted = next(size.itemData(i) for i in range(size.count()) if "2" in str(size.itemData(i)))
    size.setCurrentIndex(size.findData(wanted))  # as the user picks it
    panel.units_view.horizontalHeader().setSortIndicator(0, Qt.SortOrder.DescendingOrder)
    annotate.tabs.setCurrentIndex(1)  # Agreement
    shown = panel.units_proxy.rowCount()
    assert 0 < shown < 6
    state = panel.view_state()
    controller.shutdown()

    controller, panel, annotate = start()  # the next start
    qtbot.waitUntil(lambda: panel.units_proxy.rowCount() == shown, timeout=10_000)
    assert panel.view_state() == state
    assert panel.unit_filters["size"].currentData() == wanted
    header = panel.units_view.horizontalHeader()
    assert header.sortIndicatorSection() == 0
    assert header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
    assert annotate.tabs.currentIndex() == 1
    controller.shutdown()
