"""Every dialog fits a laptop screen: opened over the window on a screen
of 1024 × 640, 1366 × 768 and 1920 × 1080 (Qt's offscreen platform, one real process per
size), each lies inside the screen with its button box visible and every text whole
(wrapped labels at their full height, one-line labels, buttons and the title at their
full width); a message shown in
the window takes its own space and covers no panel; the window never grows past its
screen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.commands.gui import DIALOG_NAMES
from app.dialogs import DIALOGS

ROOT = Path(__file__).resolve().parents[2]
SIZES = [(1024, 640), (1366, 768), (1920, 1080)]

_OPEN_EACH = r"""
import json, sys
from PySide6.QtCore import QPoint, QSettings
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QWidget
from app.gui import build_window, get_application
from app.dialogs import DIALOGS, open_dialog

from PySide6.QtWidgets import QAbstractButton, QCheckBox, QLabel, QPushButton, QRadioButton
from widgets.message_bar import ElidedLabel


def cut_texts(dialog):
    # The texts a dialog shows cut: a wrapped label shorter than its text at its width,
    # a one-line label or a button narrower than its text, a title wider than the dialog
    # (less room for the title bar's buttons). Elided labels (whole in their tooltip)
    # are meant to be cut.
    cut = []
    title = dialog.windowTitle()
    if dialog.fontMetrics().horizontalAdvance(title) + 120 > dialog.width():
        cut.append(f"title {title!r}")
    for widget in dialog.findChildren(QLabel) + dialog.findChildren(QAbstractButton):
        if not widget.isVisibleTo(dialog) or isinstance(widget, ElidedLabel):
            continue
        text = widget.text()
        picture = isinstance(widget, QLabel) and not widget.pixmap().isNull()
        if not text.strip() or picture:
            continue
        if isinstance(widget, QLabel) and widget.wordWrap():
            short = widget.height() < widget.heightForWidth(widget.width())
        elif isinstance(widget, QLabel | QPushButton | QCheckBox | QRadioButton):
            short = widget.width() < widget.sizeHint().width() - 2
        else:
            continue
        if short:
            cut.append(f"{type(widget).__name__} {' '.join(text.split())[:50]!r}")
    return cut


app = get_application()
window, controller = build_window(QSettings(sys.argv[1], QSettings.Format.IniFormat))
window.show()
window.showMaximized()
for _ in range(20):
    app.processEvents()
controller.open_session(sys.argv[2], create=True)
for _ in range(20):
    app.processEvents()
screen = window.screen().availableGeometry()
out = {"screen": [screen.x(), screen.y(), screen.width(), screen.height()], "dialogs": {}}
for name in DIALOGS:
    dialog = open_dialog(controller, name)
    for _ in range(10):
        app.processEvents()
    frame = dialog.frameGeometry()
    boxes = dialog.findChildren(QDialogButtonBox)
    box_rects = []
    for box in boxes:
        if not box.isVisibleTo(dialog):
            continue
        top_left = box.mapToGlobal(QPoint(0, 0))
        box_rects.append([top_left.x(), top_left.y(), box.width(), box.height(),
                          box.visibleRegion().boundingRect().height()])
    out["dialogs"][name] = {
        "frame": [frame.x(), frame.y(), frame.width(), frame.height()],
        "buttons": box_rects,
        "title": dialog.windowTitle(),
        "cut": cut_texts(dialog),
    }
    dialog.close()
    for _ in range(5):
        app.processEvents()
# The window: maximised, then a message shown (details open): it takes its own space,
# covering no panel, and the window stays on screen.
before = window.geometry().getRect()
window.show_message("Import finished", "Imported 2,933 texts into 1,204 units. " * 6, "x\n" * 40)
window.message_bar.details_button.click()
for _ in range(10):
    app.processEvents()
def global_rect(widget):
    top_left = widget.mapToGlobal(QPoint(0, 0))
    return [top_left.x(), top_left.y(), widget.width(), widget.height()]
out["message"] = {
    "before": before, "after": window.geometry().getRect(),
    "bar": global_rect(window.message_bar),
    "docks": {name: global_rect(dock) for name, dock in window.docks.items() if dock.isVisible()},
    "bar_visible": window.message_bar.isVisible(),
    "text_whole": window.message_bar.message_label.height()
    >= window.message_bar.message_label.heightForWidth(window.message_bar.message_label.width()),
}
window.message_bar.dismiss()
for _ in range(5):
    app.processEvents()
out["message"]["dismissed"] = not window.message_bar.isVisible()
# Content that asks for more than the screen: the window does not grow past it.
window.showNormal()
for _ in range(5):
    app.processEvents()
window.panels["browser"].setMinimumHeight(3000)
window.resize(5000, 5000)
for _ in range(10):
    app.processEvents()
out["grown"] = window.frameGeometry().getRect()
print("RESULT " + json.dumps(out))
controller.shutdown()
"""


def _screen(tmp_path: Path, width: int, height: int) -> Path:
    config = tmp_path / f"screen-{width}.json"
    screen = {"name": "s", "x": 0, "y": 0, "width": width, "height": height}
    screen.update({"logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1})
    config.write_text(json.dumps({"windowFrameMargins": False, "screens": [screen]}))
    return config


def _open_each(tmp_path: Path, width: int, height: int) -> dict:
    env = dict(
        os.environ,
        QT_QPA_PLATFORM=f"offscreen:configfile={_screen(tmp_path, width, height)}",
        PYTHONPATH=str(ROOT),
        TAILLENS_HOME=str(tmp_path / "home"),
    )
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            _OPEN_EACH,
            str(tmp_path / "settings.ini"),
            str(tmp_path / "s.taillens"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, result.stderr[-3000:]
    return json.loads(lines[0][len("RESULT ") :])


def test_the_command_line_names_every_dialog() -> None:
    assert list(DIALOG_NAMES) == list(DIALOGS)


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_every_dialog_fits_the_screen_with_its_buttons_visible(
    tmp_path: Path, width: int, height: int
) -> None:
    out = _open_each(tmp_path, width, height)
    sx, sy, sw, sh = out["screen"]
    assert (sw, sh) == (width, height)
    assert set(out["dialogs"]) == set(DIALOGS)
    for name, seen in out["dialogs"].items():
        x, y, w, h = seen["frame"]
        assert sx <= x and sy <= y and x + w <= sx + sw and y + h <= sy + sh, (name, seen)
        assert seen["buttons"], (name, "no button box")
        assert not seen["cut"], (name, seen["cut"])  # every text whole
        for bx, by, _bw, bh, visible_h in seen["buttons"]:
            assert x <= bx and by + bh <= y + h, (name, seen)  # inside the dialog
            assert by + bh <= sy + sh, (name, seen)  # on screen
            assert visible_h == bh, (name, seen)  # not covered or cut
    # A message, even with its details open, takes its own space: it covers no panel,
    # its text is whole, the window does not move or grow; dismissed, it is gone.
    message = out["message"]
    assert message["bar_visible"] and message["text_whole"]
    assert message["before"] == message["after"]
    bx, by, bw, bh = message["bar"]
    assert message["docks"]
    for name, (dx, dy, dw, dh) in message["docks"].items():
        overlap = bx < dx + dw and dx < bx + bw and by < dy + dh and dy < by + bh
        assert not overlap, (name, message)
    assert message["dismissed"]
    # The window never grows past its screen.
    gx, gy, gw, gh = out["grown"]
    assert gw <= sw and gh <= sh, out["grown"]


def _gui(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        PYTHONPATH=str(ROOT),
        TAILLENS_HOME=str(tmp_path / "home"),
    )
    return subprocess.run(
        [sys.executable, "-m", "app", "gui", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_gui_screenshot_of_the_window_and_of_a_dialog_at_a_size(tmp_path: Path) -> None:
    from PySide6.QtGui import QImage

    window_png = tmp_path / "window.png"
    done = _gui(tmp_path, "--screenshot", str(window_png), "--size", "1920x1080")
    assert done.returncode == 0, done.stderr[-2000:]
    image = QImage(str(window_png))
    assert (image.width(), image.height()) == (1920, 1080)

    dialog_png = tmp_path / "score.png"
    done = _gui(
        tmp_path,
        *("--screenshot", str(dialog_png), "--size", "1024x640"),
        *("--dialog", "score", "--theme", "dark"),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    image = QImage(str(dialog_png))
    assert (image.width(), image.height()) == (1024, 640)
    # Dark: the window's background is dark.
    assert image.pixelColor(5, 600).lightness() < 100


def test_gui_refuses_an_unknown_dialog(tmp_path: Path) -> None:
    done = _gui(tmp_path, "--screenshot", str(tmp_path / "x.png"), "--dialog", "nope")
    assert done.returncode == 2
    assert "taillens: no dialog 'nope' (dialogs: score, import," in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "x.png").exists()
