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
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

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

_LOCK = threading.RLock()


@contextmanager
def lock() -> Iterator[None]:
    """Hold the process-wide lock of heavy imports (and of calls into scipy)."""
    with _LOCK:
        yield
