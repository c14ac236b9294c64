"""The theme preference (System, Light, Dark), readable before the window's panels exist:
this module imports nothing heavy (``core.desktop.preferences`` brings in numpy through the tier
defaults, which the first paint must not wait for)."""

from __future__ import annotations

from typing import Any

THEMES = ("system", "light", "dark")
THEME_KEY = "appearance/theme"


def read_theme(settings: Any) -> str:
    """The stored theme (``settings``: anything with ``value``, e.g. QSettings); one that
    is not in :data:`THEMES` is "system"."""
    value = settings.value(THEME_KEY)
    return value if isinstance(value, str) and value in THEMES else "system"
