"""Packages of the wheel: everything under one top-level ``taillens`` package.

The repository keeps ``app/``, ``core/``, ``widgets/`` and ``resources/`` at its root
(the layout is fixed), but a wheel that installed them as top-level packages would
collide with any other distribution shipping a ``core`` or an ``app``. So the wheel maps
them under ``taillens`` (``taillens/core/…``), and ``taillens/__init__.py``
(``packaging/taillens/``) lets TailLens's own absolute imports (``from core import …``)
find them there: see that module. Metadata and dependencies are in pyproject.toml.
"""

from setuptools import find_namespace_packages, setup

TOP = ("app", "core", "widgets", "resources")

packages = ["taillens"] + [
    f"taillens.{name}"
    for name in find_namespace_packages(include=[f"{top}*" for top in TOP])
    if "__pycache__" not in name
]

setup(
    packages=packages,
    package_dir={"taillens": "packaging/taillens", **{f"taillens.{top}": top for top in TOP}},
)
