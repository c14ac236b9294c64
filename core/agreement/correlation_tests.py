"""Pearson r, Spearman ρ and Kendall τ-b with their two-sided p-values, as scipy.stats
computes them (``pearsonr``, ``spearmanr``, ``kendalltau``, scipy 1.17), without
importing scipy.stats.

Importing scipy.stats takes about a second and 50 MB; the report needs three
coefficients. Each function here follows scipy's own steps on finite inputs of at least
3 values, neither side constant (the caller's cases:
:func:`core.agreement.coefficients.coefficients`), and takes its p-value from the same
scipy.special function scipy's distribution calls
(``betaincc`` for Pearson's beta distribution, ``stdtr`` for Spearman's t, ``ndtr`` for
Kendall's normal approximation; Kendall's exact distribution, which scipy uses for
untied data of up to 33 pairs, is computed here as scipy's ``_kendall_p_exact``).
``tests/core/test_correlation_tests.py`` holds them equal to scipy's results.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from core import heavy


def _special() -> Any:
    with heavy.lock():
        from scipy import special

    return special


def pearson(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """r and its two-sided p-value (scipy's beta distribution of r under the null)."""
    special = _special()
    n = x.size
    xmean = np.mean(x, axis=-1, keepdims=True)
    ymean = np.mean(y, axis=-1, keepdims=True)
    xm = x - xmean
    ym = y - ymean
    xmax = np.max(np.abs(xm), axis=-1, keepdims=True)
    ymax = np.max(np.abs(ym), axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        normxm = xmax * np.linalg.norm(xm / xmax, ord=2, axis=-1, keepdims=True)
        normym = ymax * np.linalg.norm(ym / ymax, ord=2, axis=-1, keepdims=True)
        r = np.vecdot(xm / normxm, ym / normym)  # over the last axis, as scipy
    r = np.clip(r, -1.0, 1.0)
    ab = np.asarray(n / 2 - 1, dtype=np.float64)
    with heavy.lock():
        p = 2 * special.betaincc(ab, ab, (np.abs(r) - -1) / 2)
    return float(r), float(p)


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties given the mean of the ranks they span (scipy's ``rankdata``)."""
    return ranks_and_ties(values)[0]


def ranks_and_ties(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`average_ranks`, and how many values each distinct value has (ascending), from
    the one sort both need."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.concatenate(([True], ordered[:-1] != ordered[1:]))
    first = np.flatnonzero(starts)
    # Each run's length: the next run's start minus this one's (np.diff with append=
    # broadcast the scalar on every call, most of the time of a small group's ranking).
    counts = np.empty_like(first)
    counts[:-1] = first[1:] - first[:-1]
    counts[-1:] = values.size - first[-1:]
    ranks = np.empty(values.size, dtype=np.float64)
    ranks[order] = np.repeat(first + (counts + 1) / 2, counts)
    return ranks, counts


def spearman(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """ρ (Pearson's r of the average ranks, numpy's corrcoef as scipy) and its two-sided
    p-value (Student's t with n − 2 degrees of freedom)."""
    special = _special()
    ranked = np.column_stack((average_ranks(x), average_ranks(y)))
    rs = np.corrcoef(ranked, rowvar=False)
    dof = x.size - 2
    with np.errstate(divide="ignore"):
        t = rs * np.sqrt((dof / ((rs + 1.0) * (1.0 - rs))).clip(0))
    with heavy.lock():
        p = 2 * special.stdtr(dof, -np.abs(t))
    return float(rs[1, 0]), float(p[1, 0])


def _dense_ranks(values: np.ndarray) -> np.ndarray:
    return np.concatenate(([True], values[1:] != values[:-1])).cumsum(dtype=np.intp)


def discordant_pairs(x: np.ndarray, y: np.ndarray) -> int:
    """Pairs i < j with y[i] > y[j], for ``x`` ascending and ``y`` ascending within ties
    of ``x`` (then exactly the pairs with x[i] < x[j] and y[i] > y[j]: scipy's
    ``_kendall_dis``). Counted per bit of ``y``: a pair's larger value has a 1 at the
    highest bit where the two differ, below a prefix they share, so each level counts,
    within each group of equal prefixes in their order, the ones before every zero."""
    del x  # the order is all that matters
    y = np.asarray(y, dtype=np.int64)
    total = 0
    for bit in range(int(y.max()).bit_length()):
        prefix = y >> (bit + 1)
        order = np.argsort(prefix, kind="stable")
        ones = (y[order] >> bit) & 1
        before = np.cumsum(ones) - ones  # ones strictly before, across groups
        starts = np.concatenate(([True], prefix[order][1:] != prefix[order][:-1]))
        group = np.cumsum(starts) - 1
        in_group = before - before[starts][group]
        total += int(in_group[ones == 0].sum())
    return total


def _kendall_p_exact(n: int, c: int) -> float:
    """Two-sided exact p-value of ``c`` concordant pairs among n untied pairs (scipy's
    ``_kendall_p_exact``: Kendall, Rank Correlation Methods, 1970)."""
    c = int(min(c, (n * (n - 1)) // 2 - c))
    if n == 1:
        return 1.0
    if n == 2:
        return 1.0
    if c == 0:
        return 2.0 / math.factorial(n) if n < 171 else 0.0
    if c == 1:
        return 2.0 / math.factorial(n - 1) if n < 172 else 0.0
    if 4 * c == n * (n - 1):
        return 1.0
    new = np.zeros(c + 1)
    new[0:2] = 1.0
    if n < 171:
        for j in range(3, n + 1):
            new = np.cumsum(new)
            if j <= c:
                new[j:] -= new[: c + 1 - j]
        return float(2.0 * np.sum(new) / math.factorial(n))
    for j in range(3, n + 1):
        new = np.cumsum(new) / j
        if j <= c:
            new[j:] -= new[: c + 1 - j]
    return float(np.sum(new))


def _tie_counts(ranks: np.ndarray) -> tuple[int, int, int]:
    counts = np.bincount(ranks).astype("int64", copy=False)
    counts = counts[counts > 1]
    return (
        int((counts * (counts - 1) // 2).sum()),
        int((counts * (counts - 1.0) * (counts - 2)).sum()),
        int((counts * (counts - 1.0) * (2 * counts + 5)).sum()),
    )


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """τ-b and its two-sided p-value: exact for untied data of up to 33 pairs (or at most
    one discordant or concordant pair), else the normal approximation with ties in the
    variance (scipy's ``method='auto'``)."""
    size = x.size
    perm = np.argsort(y)
    x, y = x[perm], y[perm]
    y = _dense_ranks(y)
    perm = np.argsort(x, kind="mergesort")
    x, y = x[perm], y[perm]
    x = _dense_ranks(x)
    dis = discordant_pairs(x, y)
    obs = np.concatenate(([True], (x[1:] != x[:-1]) | (y[1:] != y[:-1]), [True]))
    cnt = np.diff(np.nonzero(obs)[0]).astype("int64", copy=False)
    ntie = int((cnt * (cnt - 1) // 2).sum())
    xtie, x0, x1 = _tie_counts(x)
    ytie, y0, y1 = _tie_counts(y)
    tot = (size * (size - 1)) // 2
    if xtie == tot or ytie == tot:
        return math.nan, math.nan
    con_minus_dis = tot - xtie - ytie + ntie - 2 * dis
    tau = con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    tau = np.minimum(1.0, max(-1.0, tau))
    if xtie == 0 and ytie == 0 and (size <= 33 or min(dis, tot - dis) <= 1):
        return float(tau), _kendall_p_exact(size, tot - dis)
    m = size * (size - 1.0)
    var = (
        (m * (2 * size + 5) - x1 - y1) / 18 + (2 * xtie * ytie) / m + x0 * y0 / (9 * m * (size - 2))
    )
    z = con_minus_dis / np.sqrt(var)
    special = _special()
    with heavy.lock():
        p = 2 * special.ndtr(-np.abs(z))
    return float(tau), float(p)
