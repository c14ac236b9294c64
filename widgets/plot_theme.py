"""pyqtgraph plots in the window's colours, light or dark, following a theme change.

pyqtgraph draws with its own global options (white background, black text), not the
widget's palette, so a plot stayed white in the dark theme. :func:`follow_palette` gives a
plot the palette's base colour as background and its text colour to the axes, tick
labels, axis titles and legend, and does it again whenever the palette changes
(Preferences ▸ Theme, or the desktop's own switch). Exported figures are drawn by
matplotlib on white, for papers, and are not affected.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QPalette

_EVENTS = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)


def colours(palette: QPalette) -> tuple[str, str]:
    """(background, foreground) for a plot under ``palette``, as #rrggbb."""
    background = palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.Base)
    foreground = palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.WindowText)
    return background.name(), foreground.name()


def apply_palette(widget: pg.PlotWidget) -> None:
    background, foreground = colours(widget.palette())
    widget.setBackground(background)
    item = widget.getPlotItem()
    for name in ("left", "bottom", "top", "right"):
        axis = item.getAxis(name)
        axis.setPen(foreground)
        axis.setTextPen(foreground)
    legend = item.legend
    if legend is not None:
        legend.setLabelTextColor(foreground)
        for _sample, label in legend.items:
            label.setText(label.text, color=foreground)


class _Follower(QObject):
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt)
        if event.type() in _EVENTS and isinstance(watched, pg.PlotWidget):
            apply_palette(watched)
        return False


_FOLLOWER: _Follower | None = None


def follow_palette(*widgets: pg.PlotWidget) -> None:
    """Colour ``widgets`` by their palette now and on every palette change."""
    global _FOLLOWER
    if _FOLLOWER is None:
        _FOLLOWER = _Follower()
    for widget in widgets:
        apply_palette(widget)
        widget.installEventFilter(_FOLLOWER)
