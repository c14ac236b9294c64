"""Pearson, Spearman and Kendall (tau-b) with two-sided p-values, or a note on why a pair
of series has none (fewer than :data:`MIN_PAIRS` pairs, a constant side)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from core import heavy

MIN_PAIRS = 3


def coefficients(xs: Sequence[float], ys: Sequence[float]) -> dict[str, Any]:
    """Pearson, Spearman and Kendall tau-b with two-sided p-values (scipy's, computed
    without importing scipy.stats: :mod:`core.agreement.correlation_tests`), or a note."""
    n = len(xs)
    if n < MIN_PAIRS:
        return {"note": f"fewer than {MIN_PAIRS} pairs"}
    if len(set(xs)) < 2 or len(set(ys)) < 2:
        return {"note": "one side is constant"}
    import numpy as np

    from core.agreement.correlation_tests import kendall_tau_b, pearson, spearman

    x, y = np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)
    out: dict[str, Any] = {}
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        return _scipy_coefficients(x, y)  # scipy's own handling of NaN and infinity
    for name, function in (
        ("pearson", pearson),
        ("spearman", spearman),
        ("kendall", kendall_tau_b),
    ):
        value, p = function(x, y)
        out[name] = None if math.isnan(value) else value
        out[f"{name}_p"] = None if math.isnan(p) else p
    return out


def _scipy_coefficients(xs: Any, ys: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with heavy.lock(), warnings.catch_warnings():
        from scipy import stats

        warnings.simplefilter("ignore")
        for name, function in (
            ("pearson", stats.pearsonr),
            ("spearman", stats.spearmanr),
            ("kendall", stats.kendalltau),
        ):
            result = function(xs, ys)
            value, p = float(result[0]), float(result[1])
            out[name] = None if math.isnan(value) else value
            out[f"{name}_p"] = None if math.isnan(p) else p
    return out
