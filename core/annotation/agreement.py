"""Inter-annotator agreement: Krippendorff's alpha of a reliability matrix (the
``krippendorff`` package, imported when first used)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np

AlphaLevel = Literal["nominal", "ordinal", "interval", "ratio"]


def krippendorff_alpha(
    matrix: Sequence[Sequence[float]] | np.ndarray, level: AlphaLevel
) -> float | None:
    """Krippendorff's alpha of a reliability matrix (annotators × items, NaN = no rating).

    ``level`` "interval" (fluency) or "nominal" (adequacy). Computed by the
    ``krippendorff`` package; None when undefined: fewer than two pairable ratings
    (no item rated twice) or no variation at all among the ratings.
    """
    import krippendorff

    data = np.asarray(matrix, dtype=float)
    if data.ndim != 2 or data.size == 0:
        return None
    pairable = np.sum(~np.isnan(data), axis=0) >= 2
    if not pairable.any():
        return None
    data = data[:, pairable]
    values = data[~np.isnan(data)]
    if np.unique(values).size < 2:
        return None
    alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    return None if math.isnan(alpha) else alpha


def reliability_matrix(ratings: Iterable[tuple[int, Any, float | None]]) -> np.ndarray:
    """(annotator, item, value) triples as an annotators × items matrix with NaN gaps."""
    rows = [(a, i, v) for a, i, v in ratings if v is not None]
    annotators = sorted({a for a, _, _ in rows})
    items = sorted({i for _, i, _ in rows}, key=repr)
    matrix = np.full((len(annotators), len(items)), np.nan)
    a_index = {a: n for n, a in enumerate(annotators)}
    i_index = {i: n for n, i in enumerate(items)}
    for a, i, v in rows:
        matrix[a_index[a], i_index[i]] = v
    return matrix
