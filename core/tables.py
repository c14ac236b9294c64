"""A table as plain values (a leaf module: the report, correlations and annotations
build them; the panels show them and the exports write them without knowing their meaning)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Table:
    """A table as plain values: what the panel shows and what CSV/HTML export write."""

    name: str  # a file-name-safe identifier, e.g. "compare_tier"
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    marked: frozenset[tuple[int, int]] = frozenset()  # (row, column) cells marked significant
    note: str = ""
