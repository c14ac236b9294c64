"""Long id lists read a slice at a time: SQLite caps the host parameters of one
statement, so ``column.in_(values)`` is asked for ``IN_CHUNK`` values at once."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

IN_CHUNK = 500  # SQLite host parameters per IN list
T = TypeVar("T")


def in_chunks(values: Sequence[T], size: int = IN_CHUNK) -> Iterable[Sequence[T]]:
    """``values`` in consecutive slices of at most ``size``."""
    for start in range(0, len(values), size):
        yield values[start : start + size]
