"""Versions of the software in use: shown in Help ▸ About, stored with model runs."""

from __future__ import annotations

import platform
import sqlite3
from importlib import metadata

from core import APP_NAME, __version__

# Distributions worth naming when present. Looked up from package metadata, so
# nothing here is imported (torch stays out of a process that has not used it).
_DISTRIBUTIONS = (
    "PySide6-Essentials",
    "SQLAlchemy",
    "alembic",
    "numpy",
    "pyqtgraph",
    "SPARQLWrapper",
    "pyoxigraph",
    "torch",
    "transformers",
    "sentence-transformers",
    "sacrebleu",
)


def software_versions() -> dict[str, str]:
    versions = {
        APP_NAME: __version__,
        "Python": platform.python_version(),
        "SQLite": sqlite3.sqlite_version,
    }
    for name in _DISTRIBUTIONS:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    versions["Platform"] = platform.platform()
    return versions
