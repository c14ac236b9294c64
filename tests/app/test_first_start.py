"""The first minutes of a new user: a first start fills the screen it opens on, and the
Browser shows its way in ("Start with the demo") and the head/tail summary without
scrolling its controls, on a 1366 × 768 laptop and on a 1024 × 640 screen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QSettings
from PySide6.QtWidgets import QApplication, QScrollArea, QWidget

from app.gui import build_window
from core.wikidata.records import CategoryTable
from widgets.browser import BrowserPanel

ROOT = Path(__file__).resolve().parents[2]

# Two starts as ``taillens gui`` makes them (the shell with the saved layout, placed on
# its screen, shown; the panels wired in; a new session opened), each printing where the
# window is and where the Browser's demo button and summary lie in their scroll area.
_STARTS = """
import json, sys, time
from pathlib import Path
from PySide6.QtCore import QPoint, QSettings
from PySide6.QtWidgets import QScrollArea
from app.gui import build_shell, get_application, wire_window
app = get_application()
folder = Path(sys.argv[1])
def wait(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
for start in range(2):
    window = build_shell(QSettings(str(folder / "TailLens.ini"), QSettings.Format.IniFormat))
    window.restore_layout()
    window.place_on_screen()
    window.show()
    wait(0.2)
    controller = wire_window(window)
    assert controller.new_session(folder / f"s{start}.taillens")
    panel = window.panels["browser"]
    end = time.monotonic() + 60
    while time.monotonic() < end and "Fetch" not in panel.summary_label.text():
        app.processEvents()
    wait(0.5)  # the split follows the controls' height on the next turns of the loop
    viewport = panel.findChildren(QScrollArea)[0].viewport()
    seen = {"viewport": viewport.height()}
    for name in ("demo_button", "summary_label"):
        widget = getattr(panel, name)
        top = widget.mapTo(viewport, QPoint(0, 0)).y()
        seen[name] = [widget.isVisible(), top, top + widget.height()]
    frame, area = window.frameGeometry(), window.screen().availableGeometry()
    print(json.dumps({"frame": frame.getRect(), "area": area.getRect(), **seen}), flush=True)
    window.close()
    controller.shutdown()
    window.deleteLater()
    wait(0.2)
"""


def _starts(tmp_path: Path, width: int, height: int) -> list[dict]:
    # A screen of that size, and a window manager's frame around the window (Qt's
    # offscreen platform draws one when asked).
    screen = tmp_path / "screen.json"
    spec = {"name": "s", "x": 0, "y": 0, "width": width, "height": height}
    spec.update({"logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1})
    screen.write_text(json.dumps({"windowFrameMargins": True, "screens": [spec]}))
    env = dict(
        os.environ,
        QT_QPA_PLATFORM=f"offscreen:configfile={screen}",
        PYTHONPATH=str(ROOT),
        TAILLENS_HOME=str(tmp_path / "home"),
    )
    result = subprocess.run(
        [sys.executable, "-c", _STARTS, str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


@pytest.mark.slow
@pytest.mark.parametrize("size", [(1366, 768), (1024, 640)])
def test_a_first_start_fills_its_screen_and_shows_the_way_in(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    first, again = _starts(tmp_path, *size)
    for start in (first, again):
        # The window (its frame) is the screen's available area: not 1280 × 800 cut
        # down to the screen's height, nor past its edges.
        assert start["frame"] == start["area"] == [0, 0, *size]
        # The empty session's way in and what it says, whole, in the controls' view.
        for name in ("demo_button", "summary_label"):
            shown, top, bottom = start[name]
            assert shown, name
            assert 0 <= top < bottom <= start["viewport"], (name, start)


# -- the Browser with a category's tiers, at laptop sizes ---------------------------------


def _category(n: int = 400) -> CategoryTable:
    counts = np.round(np.random.default_rng(7).lognormal(1.5, 1.2, n)).astype(np.int64) + 1
    return CategoryTable(
        "City",
        qids=[f"Q{i + 1}" for i in range(n)],
        labels=[f"City {i + 1}" for i in range(n)],
        statements=counts,
        sitelinks=counts // 2,
        has_en=np.ones(n, bool),
        has_it=np.arange(n) % 2 == 0,
        has_es=np.arange(n) % 3 == 0,
    )


def _within_viewport(panel: BrowserPanel, widget: QWidget) -> tuple[int, int, int]:
    viewport = panel.findChildren(QScrollArea)[0].viewport()
    top = widget.mapTo(viewport, QPoint(0, 0)).y()
    return top, top + widget.height(), viewport.height()


@pytest.mark.parametrize(
    "size",
    # The screens, and their client areas under a window manager's 40 px title bar.
    [(1366, 768), (1366, 728), (1024, 640), (1024, 600)],
)
def test_the_tier_summary_is_whole_without_scrolling(
    qtbot, tmp_path: Path, size: tuple[int, int]
) -> None:
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    try:
        window.resize(*size)
        window.show()
        qtbot.waitExposed(window)
        window.resize(*size)
        assert controller.new_session(tmp_path / "d.taillens")
        panel = window.panels["browser"]
        qtbot.waitUntil(lambda: panel.demo_button.isVisible(), timeout=30_000)
        qtbot.waitUntil(lambda: _within_viewport(panel, panel.demo_button)[1] > 0)
        top, bottom, height = _within_viewport(panel, panel.demo_button)
        assert 0 <= top < bottom <= height
        # A category's tiers: the summary grows to five lines and the demo button goes.
        panel.show_category("City", _category())
        assert "head" in panel.summary_label.text()
        for _ in range(3):  # the split follows on the next turns of the event loop
            qtbot.wait(20)
            QApplication.processEvents()
        assert not panel.demo_button.isVisible()
        top, bottom, height = _within_viewport(panel, panel.summary_label)
        assert 0 <= top < bottom <= height, (top, bottom, height)
        assert panel.plots.height() >= 200  # the summary's room is not taken from the plots
    finally:
        controller.shutdown()
