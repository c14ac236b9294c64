"""Palettes: the window follows the system's dark or light mode."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette


def dark_palette() -> QPalette:
    palette = QPalette()
    role, group = QPalette.ColorRole, QPalette.ColorGroup
    colours = {
        role.Window: "#2b2b2b",
        role.WindowText: "#e6e6e6",
        role.Base: "#1e1e1e",
        role.AlternateBase: "#2f2f2f",
        role.ToolTipBase: "#3a3a3a",
        role.ToolTipText: "#e6e6e6",
        role.PlaceholderText: "#8a8a8a",
        role.Text: "#e6e6e6",
        role.Button: "#353535",
        role.ButtonText: "#e6e6e6",
        role.BrightText: "#ff6b6b",
        role.Link: "#6cb4ff",
        role.Highlight: "#3d6fb4",
        role.HighlightedText: "#ffffff",
        role.Light: "#4a4a4a",
        role.Midlight: "#404040",
        # Mid is also the muted text colour of notes ("color: palette(mid)"): a grey that
        # reads on the dark background (#303030 made them vanish).
        role.Mid: "#8c8c8c",
        role.Dark: "#202020",
        role.Shadow: "#111111",
    }
    for colour_role, colour in colours.items():
        palette.setColor(colour_role, QColor(colour))
    for colour_role in (role.WindowText, role.Text, role.ButtonText):
        palette.setColor(group.Disabled, colour_role, QColor("#7a7a7a"))
    return palette


def palette_for(scheme: Any) -> QPalette | None:
    """A dark palette for ``Qt.ColorScheme.Dark``; None (the style's own) otherwise."""
    dark = getattr(getattr(Qt, "ColorScheme", None), "Dark", None)
    if dark is not None and scheme == dark:
        return dark_palette()
    return None


def muted_colour(palette: QPalette | None = None) -> str:
    """A grey for secondary text in rich text (HTML), which cannot say ``palette(mid)``:
    the text colour mixed 55:45 with the window's, so it reads on light and dark alike
    (#555 vanished on the dark theme's #2b2b2b)."""
    if palette is None:
        from PySide6.QtGui import QGuiApplication

        palette = QGuiApplication.palette()
    text = palette.color(QPalette.ColorRole.WindowText)
    window = palette.color(QPalette.ColorRole.Window)
    pairs = zip(text.getRgb()[:3], window.getRgb()[:3], strict=True)
    mix = [round(0.55 * a + 0.45 * b) for a, b in pairs]
    return QColor(*mix).name()
