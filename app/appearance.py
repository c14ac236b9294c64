"""Light, dark or the system's: the application's palette (Preferences ▸ Theme).

Apart from ``app.gui`` so the Preferences controller can apply a theme without importing
the module that builds the window.
"""

from __future__ import annotations

from typing import Any

_STYLES: list[Any] = []


def apply_color_scheme(app, scheme=None) -> None:
    """The palette follows the system's dark or light mode (Qt 6.5+ colorScheme)."""
    from widgets.theme import IndicatorStyle, light_palette, palette_for

    hints = app.styleHints()
    if scheme is None:
        scheme = hints.colorScheme() if hasattr(hints, "colorScheme") else None
    if not isinstance(app.style(), IndicatorStyle):
        # Fusion, the one style that draws every role of a custom palette, in light as in
        # dark (one look, one set of measured contrasts), with readable indicators.
        style = IndicatorStyle("Fusion")
        app.setStyle(style)
        _STYLES.append(style)  # the Python side kept alive with the application
    palette = palette_for(scheme)
    dark = palette is not None
    if palette is None:
        palette = light_palette(app.style().standardPalette())
    app.setPalette(palette)
    app.setProperty("taillens_dark", dark)


def system_scheme_changed(app, scheme) -> None:
    if (app.property("taillens_theme") or "system") == "system":
        apply_color_scheme(app, scheme)


def apply_theme(app, theme: str) -> None:
    """Preferences ▸ Theme, applied at once: "system" follows the desktop's light or dark
    mode (and its changes), "light" and "dark" hold whatever the desktop does."""
    from PySide6.QtCore import Qt

    app.setProperty("taillens_theme", theme)
    hints = app.styleHints()
    scheme: Any
    if theme == "dark":
        scheme = Qt.ColorScheme.Dark
    elif theme == "light":
        scheme = Qt.ColorScheme.Light
    else:
        if hasattr(hints, "unsetColorScheme"):
            hints.unsetColorScheme()
        scheme = hints.colorScheme() if hasattr(hints, "colorScheme") else None
    if theme in ("dark", "light") and hasattr(hints, "setColorScheme"):
        hints.setColorScheme(scheme)  # widgets that ask the hints see the choice too
    apply_color_scheme(app, scheme)
