"""Layouts fit a laptop screen: the main window at 1024×640 and
1366×768, empty and with a session's data in its panels; plots at least 200 px tall,
no one-line label cut off, the Browser taking the extra width."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QLabel, QScrollArea, QTabBar, QWidget

from app.gui import build_window
from core.jobs import JobSucceeded
from core.wikidata.records import CategoryTable, ClaimRecord, EntityDetails, Term
from tests.fixtures import report_session as fixture_module
from tests.fixtures.report_session import ReportSession
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


# -- with a session: panels full of data ------------------------------------------------------

report_session = fixture_module.report_session  # registers the fixture here


def _clipped_labels(panel: QWidget) -> list[str]:
    """Visible one-line labels narrower than their text (Qt cuts them off at the edge),
    except inside a scroll area, which scrolls to show them."""
    clipped = []
    for label in panel.findChildren(QLabel):
        if not label.isVisible() or label.wordWrap() or not label.text():
            continue
        inside_scroll = any(isinstance(parent, QScrollArea) for parent in _ancestors(label, panel))
        if not inside_scroll and label.width() + 1 < label.minimumSizeHint().width():
            clipped.append(label.text())
    return clipped


def _ancestors(widget: QWidget, stop: QWidget) -> list[QWidget]:
    chain = []
    parent = widget.parentWidget()
    while parent is not None and parent is not stop:
        chain.append(parent)
        parent = parent.parentWidget()
    return chain


@pytest.fixture
def wired(qtbot, tmp_path: Path, report_session: ReportSession):
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    assert controller.open_session(report_session.path)
    yield window, controller
    controller.shutdown()


def _settle(qtbot, window: MainWindow, width: int, height: int) -> None:
    window.resize(width, height)
    window.show()
    qtbot.waitExposed(window)
    window.resize(width, height)
    for _ in range(3):
        qtbot.wait(20)
        QApplication.processEvents()


def test_report_fits_1366x768_with_its_plot_200_px_tall(qtbot, wired) -> None:
    window, controller = wired
    handle = controller.report.build()
    with qtbot.waitSignal(handle.finished, timeout=30_000) as blocker:
        pass
    assert isinstance(blocker.args[0], JobSucceeded)
    _settle(qtbot, window, 1366, 768)
    window.raise_panel("report")
    for _ in range(3):
        qtbot.wait(20)
        QApplication.processEvents()
    panel = controller.report.panel
    assert window.size().toTuple() == (1366, 768)
    assert panel.plots.plot.minimumHeight() >= 200
    assert panel.plots.plot.height() >= 200
    # The head-vs-tail table shows several rows, not one.
    view = panel.pages["compare_tier"].view
    assert view.viewport().height() >= 3 * view.rowHeight(0)
    # Collapsed after the build in a narrow dock: the results have the height.
    assert not panel.options_scroll.isVisible()
    assert _clipped_labels(panel) == []


def test_inspector_shows_labels_whole_and_a_tall_claims_tree(qtbot, wired) -> None:
    window, controller = wired
    _settle(qtbot, window, 1366, 768)
    window.raise_panel("browser")
    details = EntityDetails(
        qid="Q990000123",
        terms=(
            Term("Q990000123", "en", "label", "Corohuasi de la Sierra Alta"),
            Term("Q990000123", "en", "description", "[demo] city in the far province"),
            Term("Q990000123", "it", "label", "Corohuasi della Sierra Alta"),
            Term("P17", "en", "label", "country"),
        ),
        claims=tuple(
            ClaimRecord(f"s{i}", "Q990000123", "P17", f"Q{i}", "wikibase-item") for i in range(30)
        ),
        property_types={"P17": "wikibase-item"},
    )
    panel = window.panels["browser"]
    panel.show_entity(details)
    QApplication.processEvents()
    inspector = panel.inspector
    assert "Corohuasi de la Sierra Alta" in inspector.title.text()
    # Terms are wrapped text (nothing elided to "Coroh…"), the claims have room.
    assert "Corohuasi de la Sierra Alta" in inspector.terms_view.toPlainText()
    assert inspector.claims_view.height() >= 120
    assert _clipped_labels(panel) == []


@pytest.mark.parametrize(
    "size",
    [
        (1024, 640),
        (1366, 768),
    ],
)
def test_window_with_a_session_keeps_the_size_asked(qtbot, wired, size) -> None:
    window, controller = wired
    _settle(qtbot, window, *size)
    # Every panel filled from the session (the Scores table loads as a job).
    qtbot.waitUntil(lambda: not controller.runner.active, timeout=30_000)
    for key in window.docks:
        window.raise_panel(key)
        QApplication.processEvents()
    qtbot.waitUntil(lambda: not controller.runner.active, timeout=30_000)
    # A category of 2,000 entities in the Browser (its filter row's count widened it).
    n = 2000
    counts = np.arange(n, 0, -1, dtype=np.int64)
    window.panels["browser"].show_category(
        "City",
        CategoryTable(
            "City",
            qids=[f"Q{990000000 + i}" for i in range(n)],
            labels=[f"Corohuasi de la Sierra {i}" for i in range(n)],
            statements=counts,
            sitelinks=counts // 2,
            has_en=np.ones(n, dtype=bool),
            has_it=np.ones(n, dtype=bool),
            has_es=np.zeros(n, dtype=bool),
        ),
    )
    window.resize(*size)
    QApplication.processEvents()
    for key in ("report", "annotate", "verbalise"):
        window.raise_panel(key)
        QApplication.processEvents()
        widest = {k: d.minimumSizeHint().width() for k, d in window.docks.items()}
        assert window.size().toTuple() == size, (key, widest)
    assert window.docks["browser"].minimumSizeHint().width() <= 600


def test_window_minimum_fits_1024x640(qtbot, tmp_path: Path) -> None:
    window = _window(qtbot, tmp_path, 1024, 640)
    minimum = window.minimumSizeHint()
    assert minimum.width() <= 1024 and minimum.height() <= 640
    assert window.size().toTuple() == (1024, 640)


def test_a_tab_bar_left_over_a_panel_is_hidden_and_those_in_use_stay(qtbot, tmp_path: Path) -> None:
    """Qt can leave a dock tab bar of an earlier arrangement on top of a panel (seen as
    "Verbalise | Scores" across the inspector in ``gui --screenshot``)."""
    window = _window(qtbot, tmp_path, 1366, 768)
    in_use = [b for b in window.findChildren(QTabBar) if b.parent() is window and b.isVisible()]
    assert in_use  # the Browser/Units and right-hand groups
    stray = QTabBar(window)
    stray.addTab("Verbalise")
    stray.addTab("Scores")
    browser = window.docks["browser"].geometry()
    stray.setGeometry(browser.x() + 20, browser.center().y(), 300, 26)
    stray.show()
    window.hide_stray_tab_bars()
    assert not stray.isVisible()
    assert all(b.isVisible() for b in in_use)


def test_the_window_is_fitted_to_its_screen(qtbot, tmp_path: Path) -> None:
    """`launch` fits the window to the screen it opens on (the first run's 1280 × 800
    overflowed a 1366 × 768 laptop, title bar included)."""
    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    area = window.screen().availableGeometry()  # the offscreen platform's screen
    window.resize(area.width() + 200, area.height() + 100)
    window.move(300, 200)
    assert window.width() > area.width()  # the case: larger than the screen
    window.fit_to_screen(title_bar=40)
    assert window.width() <= area.width() and window.height() <= area.height() - 40
    # The client area, with room above it for the title bar the window manager adds.
    assert area.contains(window.geometry().topLeft())
    assert window.geometry().top() >= area.top() + 40
    assert window.geometry().right() <= area.right()
    assert window.geometry().bottom() <= area.bottom()
    fitted = window.size()
    window.fit_to_screen(title_bar=40)  # already inside: left as it is
    assert window.size() == fitted
