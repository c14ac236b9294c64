"""TailLens as an installed distribution: one top-level package, ``taillens``.

The wheel holds TailLens's packages as ``taillens/app``, ``taillens/core``,
``taillens/widgets`` and ``taillens/resources`` (setup.py maps the repository's folders
there), so installing it never writes, overwrites or removes another distribution's
``core`` or ``app``. TailLens's code imports them by their short names
(``from core import …``); importing ``taillens`` puts a finder first on
``sys.meta_path`` that resolves exactly those four names, in this process, to the
folders beside this file (in a checkout: the repository's root). Other programs, and
other distributions' ``core``, are untouched: nothing runs unless ``taillens`` is
imported, which the ``taillens`` command and ``python -m taillens`` do.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

PACKAGES = ("app", "core", "widgets", "resources")


def _home() -> str:
    """The folder that holds TailLens's four packages: this package's folder in a wheel
    (``taillens/core``), the repository's root in an editable install."""
    here = Path(__file__).resolve().parent
    if (here / "core" / "__init__.py").is_file():
        return str(here)
    spec = importlib.util.find_spec("taillens.core")
    if spec is not None and spec.submodule_search_locations:
        return str(Path(list(spec.submodule_search_locations)[0]).parent)
    return str(here.parents[1])  # packaging/taillens in a checkout run from its root


class _TailLensFinder(importlib.abc.MetaPathFinder):
    """Finds ``app``, ``core``, ``widgets`` and ``resources`` in TailLens's folder only."""

    def __init__(self, home: str) -> None:
        self.home = home

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in PACKAGES:
            return None  # submodules follow their package's __path__, already ours
        return importlib.machinery.PathFinder.find_spec(fullname, [self.home])


def install_finder() -> None:
    """Put the finder first on ``sys.meta_path``, once per process."""
    if not any(isinstance(finder, _TailLensFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _TailLensFinder(_home()))


install_finder()


def main() -> int:
    """The ``taillens`` command."""
    from app.cli import main as cli_main

    return cli_main()
