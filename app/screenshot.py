"""``taillens gui --screenshot``: the window (and a dialog over it) rendered offscreen,
on a screen of the asked size, and written as a PNG like every export."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from core.desktop.logs import get_logger

log = get_logger("gui")


def screenshot_target_ok(target: Path, force: bool) -> bool:
    """Whether the screenshot may be written there; if not, says why on stderr."""
    from core.errors import UserFacingError
    from core.io.output_guard import check_output_target

    try:  # the open session, or another, is no place for a PNG
        check_output_target(target, force=force)
    except UserFacingError as error:
        print(f"taillens: {error}", file=sys.stderr)
        return False
    return True


def offscreen_screen(directory: Path, size: tuple[int, int]) -> None:
    """Qt's offscreen platform with one screen of ``size`` (its default is 800 × 800), so
    the window and its dialogs are laid out as on a real screen of that size. A
    configuration the caller gave (``offscreen:configfile=…``) is kept."""
    import json

    if os.environ.get("QT_QPA_PLATFORM") != "offscreen":
        return
    width, height = size
    config = directory / "screen.json"
    screen = {"name": "screen", "x": 0, "y": 0, "width": width, "height": height}
    screen.update({"logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1})
    config.write_text(json.dumps({"windowFrameMargins": False, "screens": [screen]}))
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={config}"


def _composed(window, dialog):
    """The window's picture with ``dialog`` drawn over it where it stands (a frameless
    offscreen dialog gets a thin border)."""
    from PySide6.QtGui import QColor, QPainter, QPen

    picture = window.grab()
    if dialog is None or not dialog.isVisible():
        return picture
    dialog_picture = dialog.grab()
    origin = dialog.geometry().topLeft() - window.geometry().topLeft()
    painter = QPainter(picture)
    painter.fillRect(
        origin.x() + 4, origin.y() + 4, dialog.width(), dialog.height(), QColor(0, 0, 0, 60)
    )
    painter.drawPixmap(origin, dialog_picture)
    painter.setPen(QPen(QColor("#777777"), 1))
    painter.drawRect(origin.x(), origin.y(), dialog.width() - 1, dialog.height() - 1)
    painter.end()
    return picture


def save_screenshot(window, target: Path, app, *, force: bool = False, dialog=None) -> None:
    """The window (and ``dialog`` over it) as PNG, written like every export
    (core.formats.common.atomic_output: a temporary file moved into place, never over a
    session)."""
    from PySide6.QtCore import QBuffer, QIODevice

    from core.errors import UserFacingError
    from core.formats.common import atomic_output

    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    try:
        if not _composed(window, dialog).save(buffer, "PNG"):
            log.error("could not render the screenshot for %s", target)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_output(target, binary=True, force=force) as handle:
            handle.write(bytes(buffer.data().data()))
    except (UserFacingError, OSError) as error:
        log.error("could not save screenshot to %s: %s", target, error)
    finally:
        app.quit()
