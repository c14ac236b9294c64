"""Standard JSON out: every JSON the app writes (files, ``--json`` output) goes through
:func:`dumps` / :func:`dump`.

Python's ``json`` writes ``NaN``, ``Infinity`` and ``-Infinity`` by default, which no
standard JSON reader takes (RFC 8259; browsers, ``jq``, SQLite's json functions). Here a
non-finite float is written as ``null``, as JavaScript's ``JSON.stringify`` does (a
statistic that has no value: a p-value of a single item), and ``allow_nan=False`` makes
anything that slips past a failure, never a non-standard file. Session columns refuse
non-finite values outright (``core.store.session``): there a NaN is a bug.
"""

from __future__ import annotations

import json
import math
from typing import IO, Any


def finite(value: Any) -> Any:
    """``value`` with every non-finite float (also in nested lists, tuples and dicts)
    replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, **options: Any) -> str:
    """``json.dumps`` writing standard JSON only (non-finite numbers as null)."""
    return json.dumps(finite(value), allow_nan=False, **options)


def dump(value: Any, handle: IO[str], **options: Any) -> None:
    """``json.dump`` writing standard JSON only (non-finite numbers as null)."""
    json.dump(finite(value), handle, allow_nan=False, **options)
