"""Where TailLens keeps its files on this machine.

The user data, config and log folders come from platformdirs. Setting the
``TAILLENS_HOME`` environment variable puts all of them under one folder instead:
tests use it so they never touch the real user folders, and users can use it for a
portable install. ``TAILLENS_CACHE`` moves the cache folder alone (what can be rebuilt:
the demo data's on-disk store, matplotlib's font list), so many homes can share one.
"""

from __future__ import annotations

import os
from pathlib import Path

from core import APP_NAME

SESSION_SUFFIX = ".taillens"
DEFAULT_SESSION_NAME = "default" + SESSION_SUFFIX


def _home_override() -> Path | None:
    value = os.environ.get("TAILLENS_HOME")
    return Path(value).expanduser() if value else None


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_dir() -> Path:
    """Folder for sessions and other user data (created on demand)."""
    home = _home_override()
    if home is not None:
        return _ensure(home / "data")
    import platformdirs

    return _ensure(Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)))


def config_dir() -> Path:
    """Folder for settings (window layout, recent files)."""
    home = _home_override()
    if home is not None:
        return _ensure(home / "config")
    import platformdirs

    return _ensure(Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)))


def log_dir() -> Path:
    """Folder for the rotating log file."""
    home = _home_override()
    if home is not None:
        return _ensure(home / "logs")
    import platformdirs

    return _ensure(Path(platformdirs.user_log_dir(APP_NAME, appauthor=False)))


def cache_dir(create: bool = True) -> Path:
    """Folder for what can be rebuilt at any time (the bundle keeps matplotlib's font
    list here, packaging/rth_mplconfig.py); ``create=False`` only names it."""
    shared = os.environ.get("TAILLENS_CACHE")
    home = _home_override()
    if shared:
        path = Path(shared).expanduser()
    elif home is not None:
        path = home / "cache"
    else:
        import platformdirs

        path = Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))
    return _ensure(path) if create else path


def default_session_path() -> Path:
    """The session the application opens when it is given none."""
    return data_dir() / DEFAULT_SESSION_NAME
