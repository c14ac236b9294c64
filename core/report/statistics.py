"""Group statistics for the bias report (METHODS §8): summaries, Mann–Whitney, effect size.

Pure functions over numpy arrays. The Mann–Whitney p-value is scipy's ``mannwhitneyu``
computed here (:func:`mann_whitney_p`; importing scipy.stats would take a second of a
report): only scipy.special is used, imported inside the functions that need it (the GUI
imports :mod:`core` at start-up and must not pay for scipy), and imported and called
under :func:`core.heavy.lock` (a job may be importing torch meanwhile).

The comparison protocol (:func:`mann_whitney_protocol`): a two-sided Mann–Whitney U on
the per-item scores of two groups, repeated ``repetitions`` times on random samples of
``sample_size`` items per group (all of a group's items when it has fewer) and the
p-values averaged. The samples are drawn without replacement from
``numpy.random.default_rng(seed)``: in each repetition, group *a* first, then group *b*,
each with ``rng.choice(values, sample_size, replace=False)`` and only when the group is
larger than ``sample_size``. When neither group is sampled every repetition would see
the same data, so the test runs once and that p-value is the average.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core import heavy

DEFAULT_REPETITIONS = 10
DEFAULT_SAMPLE_SIZE = 500
DEFAULT_ALPHA = 0.05
DEFAULT_SEED = 0
_EXACT_UP_TO = 8  # scipy's "auto" method may use the exact distribution up to this size


def finite(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """The values as a float array, without NaN and infinities (undefined scores)."""
    array = np.asarray(values, dtype=float).ravel()
    return array[np.isfinite(array)]


@dataclass(frozen=True)
class GroupSummary:
    """n, median, quartiles, IQR and mean of a group's finite values (None when empty)."""

    n: int
    median: float | None
    q1: float | None
    q3: float | None
    mean: float | None

    @property
    def iqr(self) -> float | None:
        return None if self.q1 is None or self.q3 is None else self.q3 - self.q1

    def as_dict(self) -> dict[str, float | int | None]:
        return {
            "n": self.n,
            "median": self.median,
            "q1": self.q1,
            "q3": self.q3,
            "iqr": self.iqr,
            "mean": self.mean,
        }


def summarise(values: Sequence[float] | np.ndarray) -> GroupSummary:
    """Summary of the finite values; quartiles by linear interpolation (numpy's default)."""
    array = finite(values)
    if array.size == 0:
        return GroupSummary(0, None, None, None, None)
    q1, median, q3 = quartiles(np.sort(array))
    return GroupSummary(int(array.size), median, q1, q3, float(array.mean()))


def quartiles(ordered: np.ndarray) -> tuple[float, float, float]:
    """``np.percentile(ordered, [25, 50, 75])`` of a sorted, non-empty array, to the bit:
    numpy's linear method (index ``(n - 1) * q``, and its interpolation, which works
    from the upper neighbour past the midpoint), without its per-call overhead (a
    comparison by category summarises about 900 groups)."""
    last = ordered.size - 1
    out = []
    for q in (0.25, 0.5, 0.75):
        at = last * q
        below = math.floor(at)
        a, b = float(ordered[below]), float(ordered[min(below + 1, last)])
        gamma = at - below
        difference = b - a
        out.append(b - difference * (1 - gamma) if gamma >= 0.5 else a + difference * gamma)
    return out[0], out[1], out[2]


def u_statistic(a: np.ndarray, b: np.ndarray) -> float:
    """Mann–Whitney U of ``a`` (pairs where a > b, ties counted half), via mid-ranks."""
    from core.agreement.correlation_tests import average_ranks

    ranks = average_ranks(np.concatenate([a, b]))
    return float(ranks[: a.size].sum() - a.size * (a.size + 1) / 2)


def rank_biserial(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float | None:
    """Rank-biserial correlation ``2·U_a/(n_a·n_b) − 1`` in [−1, 1].

    Positive when values of ``a`` tend to be larger than those of ``b``: +1 when every
    value of ``a`` beats every value of ``b``. None when a group is empty.
    """
    x, y = finite(a), finite(b)
    if x.size == 0 or y.size == 0:
        return None
    return 2.0 * u_statistic(x, y) / (x.size * y.size) - 1.0


@dataclass(frozen=True)
class MannWhitneyResult:
    """The averaged p-value of the protocol and what it was computed from."""

    p_value: float
    p_values: tuple[float, ...]  # one per repetition actually run
    u_statistic: float  # on all items of both groups
    effect_size: float  # rank-biserial correlation on all items, a against b
    significant: bool
    alpha: float
    n_a: int
    n_b: int
    sampled: bool  # whether any group was larger than the sample size

    def as_dict(self) -> dict[str, object]:
        return {
            "p_value": self.p_value,
            "p_values": list(self.p_values),
            "u_statistic": self.u_statistic,
            "effect_size": self.effect_size,
            "significant": self.significant,
            "alpha": self.alpha,
            "n_a": self.n_a,
            "n_b": self.n_b,
            "sampled": self.sampled,
        }


def mann_whitney_p(x: np.ndarray, y: np.ndarray) -> float:
    """The two-sided p-value of scipy's ``mannwhitneyu(x, y)`` (scipy 1.17, its defaults:
    continuity correction, ``method='auto'``), computed as scipy does without importing
    scipy.stats: the exact distribution of U when a sample has at most 8 values and
    there are no ties, else the normal approximation with the tie correction.
    ``tests/core/test_statistics.py`` holds it equal to scipy's."""
    return _mann_whitney(x, y)[0]


def _mann_whitney(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """:func:`mann_whitney_p` and :func:`u_statistic` of ``x`` against ``y``, from one
    ranking (the protocol needs both of the same groups when it does not sample)."""
    from core.agreement.correlation_tests import ranks_and_ties

    n1, n2 = x.size, y.size
    xy = np.concatenate([x, y])
    ranks, counts = ranks_and_ties(xy)
    u1 = ranks[:n1].sum() - n1 * (n1 + 1) / 2
    u = max(u1, n1 * n2 - u1)
    ties = counts.astype(np.float64)  # the sizes of the runs of equal values
    if (n1 > _EXACT_UP_TO and n2 > _EXACT_UP_TO) or ties.max() > 1:
        n = n1 + n2
        tie_term = np.sum(ties**3 - ties)
        variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))
        if variance > 0:
            z = (u - n1 * n2 / 2 - 0.5) / np.sqrt(variance)
        else:  # every value the same (or rounding below zero): scipy's inf or NaN
            with np.errstate(divide="ignore", invalid="ignore"):
                z = (u - n1 * n2 / 2 - 0.5) / np.sqrt(variance)
        with heavy.lock():
            from scipy import special

            p = special.ndtr(-z) * 2
    else:
        p = _MannWhitneyExact.sf(n1, n2, int(u)) * 2
    return float(np.clip(p, 0.0, 1.0)), float(u1)


class _MannWhitneyExact:
    """The null distribution of U for small untied samples: scipy's ``_MWU`` (the
    frequencies of U from Andreas Löffler's recursion), kept per pair of sizes."""

    _frequencies: dict[tuple[int, int], np.ndarray] = {}

    @classmethod
    def sf(cls, n1: int, n2: int, k: int) -> float:
        n1, n2 = min(n1, n2), max(n1, n2)
        complement = n1 * n2 - k
        if k < complement:
            return float(1.0 - cls._cdf(n1, n2, k) + cls._pmf(n1, n2, k))
        return float(cls._cdf(n1, n2, complement))

    @classmethod
    def _pmf(cls, n1: int, n2: int, k: int) -> float:
        return float(cls._pmfs(n1, n2, k)[k])

    @classmethod
    def _cdf(cls, n1: int, n2: int, k: int) -> float:
        return float(np.cumsum(cls._pmfs(n1, n2, k))[k])

    @classmethod
    def _pmfs(cls, n1: int, n2: int, maxu: int) -> np.ndarray:
        with heavy.lock():
            from scipy import special

            total = special.binom(n1 + n2, n1)
        held = cls._frequencies.get((n1, n2))
        if held is not None and maxu + 1 <= held.size:
            return held[: maxu + 1] / total
        sigma = np.zeros(maxu + 1, dtype=int)
        for d in np.arange(1, n1 + 1):
            sigma[np.arange(d, maxu + 1, d)] += d
        for d in np.arange(n2 + 1, n2 + n1 + 1):
            sigma[np.arange(d, maxu + 1, d)] -= d
        sigma = sigma[1:]
        configurations = np.zeros(maxu + 1, dtype=np.uint64)
        is_uint = True
        uint_max = np.iinfo(np.uint64).max
        configurations[0] = 1
        for u in np.arange(1, maxu + 1):
            new = np.dot(configurations[:u], sigma[u - 1 :: -1]) / u
            if new > uint_max and is_uint:  # past uint64: floats from here on, as scipy
                configurations = configurations.astype(float)
                is_uint = False
            configurations[u] = new
        cls._frequencies[(n1, n2)] = configurations
        return configurations / total


def mann_whitney_protocol(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    repetitions: int = DEFAULT_REPETITIONS,
    sample_size: int = DEFAULT_SAMPLE_SIZE,
    seed: int = DEFAULT_SEED,
    alpha: float = DEFAULT_ALPHA,
) -> MannWhitneyResult | None:
    """METHODS §8: two-sided Mann–Whitney U, averaged over seeded random samples.

    Returns None when a group has no finite value (there is nothing to test).
    """
    if repetitions < 1:
        raise ValueError("repetitions must be at least 1")
    if sample_size < 1:
        raise ValueError("sample_size must be at least 1")
    if not 0 < alpha < 1:
        raise ValueError("alpha must lie between 0 and 1")
    x, y = finite(a), finite(b)
    if x.size == 0 or y.size == 0:
        return None
    sampled = x.size > sample_size or y.size > sample_size
    rng = np.random.default_rng(seed)
    xs_all, ys_all = [], []
    for _ in range(repetitions if sampled else 1):
        xs_all.append(rng.choice(x, sample_size, replace=False) if x.size > sample_size else x)
        ys_all.append(rng.choice(y, sample_size, replace=False) if y.size > sample_size else y)
    if sampled:
        raw = [mann_whitney_p(xs, ys) for xs, ys in zip(xs_all, ys_all, strict=True)]
        u = u_statistic(x, y)
    else:  # the one test is of the whole groups: its ranking gives U too
        p, u = _mann_whitney(x, y)
        raw = [p]
    # NaN when every value of both samples is the same (as scipy's): no evidence at all.
    p_values = [1.0 if np.isnan(p) else float(p) for p in raw]
    p_value = float(np.mean(p_values))
    return MannWhitneyResult(
        p_value=p_value,
        p_values=tuple(p_values),
        u_statistic=u,
        effect_size=2.0 * u / (x.size * y.size) - 1.0,
        significant=p_value < alpha,
        alpha=alpha,
        n_a=int(x.size),
        n_b=int(y.size),
        sampled=sampled,
    )


# -- multiple testing -----------------------------------------------------------------------

# Holm–Bonferroni (family-wise error, the default), Benjamini–Hochberg (false discovery
# rate), or none (each test on its own, as published per-test marks were made).
CORRECTIONS = ("holm", "bh", "none")
DEFAULT_CORRECTION = "holm"


def _p_array(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    p = np.asarray(p_values, dtype=float).ravel()
    if p.size and (np.isnan(p).any() or p.min() < 0 or p.max() > 1):
        raise ValueError("p-values must lie between 0 and 1")
    return p


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values, in the given order.

    With the m p-values sorted ascending, p_(1) <= ... <= p_(m), the adjusted value of
    p_(i) is ``max_{j <= i} min(1, (m - j + 1) p_(j))``: rejecting where it is below
    alpha controls the family-wise error rate at alpha (Holm 1979).
    """
    p = _p_array(p_values)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="mergesort")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def benjamini_hochberg(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (q-values), in the given order.

    Sorted ascending, the adjusted value of p_(i) is ``min_{j >= i} min(1, m p_(j) / j)``:
    rejecting where it is below alpha controls the false discovery rate at alpha for
    independent (or positively dependent) tests. Equals
    ``scipy.stats.false_discovery_control(p, method="bh")``.
    """
    p = _p_array(p_values)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="mergesort")
    scaled = p[order] * m / np.arange(1, m + 1)
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    return adjusted


def adjust_p_values(
    p_values: Sequence[float] | np.ndarray, method: str = DEFAULT_CORRECTION
) -> np.ndarray:
    """Adjusted p-values of one family of tests by ``method`` (see `CORRECTIONS`)."""
    if method == "holm":
        return holm(p_values)
    if method == "bh":
        return benjamini_hochberg(p_values)
    if method == "none":
        return _p_array(p_values).copy()
    raise ValueError(f"unknown correction {method!r}: choose from {', '.join(CORRECTIONS)}")


# -- bootstrap confidence intervals ---------------------------------------------------------

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95


def _bootstrap_medians(
    ascending: np.ndarray, resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Medians of ``resamples`` samples of n values drawn with replacement from the
    sorted ``ascending``, in O(resamples) rather than O(resamples · n).

    A draw with replacement is ``ascending[floor(n U)]`` with U uniform on [0, 1), and
    ``floor(n ·)`` keeps order, so the k-th smallest of a resample is
    ``ascending[floor(n U_(k))]`` with U_(k) the k-th order statistic of n uniforms:
    Beta(k, n − k + 1). For an even n the median also needs U_(k+1), which given U_(k) = u
    is u + (1 − u) · Beta(1, n − k). Exact in distribution, not an approximation.
    """
    n = ascending.size
    k = (n + 1) // 2
    low = rng.beta(k, n - k + 1, resamples)

    def at(u: np.ndarray) -> np.ndarray:
        return ascending[np.minimum((u * n).astype(np.int64), n - 1)]

    if n % 2:
        return at(low)
    high = low + (1.0 - low) * rng.beta(1, n - k, resamples)
    return (at(low) + at(high)) / 2.0


def _median(ascending: np.ndarray) -> float:
    """``np.median`` of a sorted, non-empty array, to the bit: the middle value, or the
    mean of the two middle ones (their sum halved, as numpy's mean of two values)."""
    n = ascending.size
    if n % 2:
        return float(ascending[n // 2])
    return float((ascending[n // 2 - 1] + ascending[n // 2]) / 2.0)


@dataclass(frozen=True)
class BootstrapCI:
    """Percentile bootstrap intervals for the medians of two groups and their difference
    (median a − median b), from the same resamples."""

    a: tuple[float, float]
    b: tuple[float, float]
    difference: tuple[float, float]
    median_difference: float
    resamples: int
    confidence: float
    seed: int | tuple[int, ...]


def bootstrap_medians_ci(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int | Sequence[int] = DEFAULT_SEED,
) -> BootstrapCI | None:
    """Percentile bootstrap CIs of median(a), median(b) and median(a) − median(b).

    Each group is resampled with replacement on its own (``resamples`` times, group a
    first, then b, from ``numpy.random.default_rng(seed)``; each resample's median is
    drawn directly, see `_bootstrap_medians`); the interval is the
    ``(1 − confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the resampled
    statistics (numpy's linear quantiles). None when a group has no finite value.
    """
    return bootstrap_medians_cis([(a, b, seed)], resamples=resamples, confidence=confidence)[0]


def bootstrap_medians_cis(
    pairs: Sequence[
        tuple[Sequence[float] | np.ndarray, Sequence[float] | np.ndarray, int | Sequence[int]]
    ],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> list[BootstrapCI | None]:
    """:func:`bootstrap_medians_ci` of each ``(a, b, seed)``, the same numbers, with one
    quantile call for all of them (a report compares hundreds of pairs: a call each took
    as long as the draws). Each pair keeps its own generator, so its draws and intervals
    do not depend on the other pairs."""
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie between 0 and 1")
    drawn: list[tuple[int, np.ndarray, np.ndarray, float, int | Sequence[int]]] = []
    for i, (a, b, seed) in enumerate(pairs):
        x, y = finite(a), finite(b)
        if x.size == 0 or y.size == 0:
            continue
        rng = np.random.default_rng(seed)
        sorted_x, sorted_y = np.sort(x), np.sort(y)
        ma = _bootstrap_medians(sorted_x, resamples, rng)
        mb = _bootstrap_medians(sorted_y, resamples, rng)
        drawn.append((i, ma, mb, _median(sorted_x) - _median(sorted_y), seed))
    out: list[BootstrapCI | None] = [None] * len(pairs)
    if not drawn:
        return out
    tails = [(1 - confidence) / 2, (1 + confidence) / 2]
    # Rows a, b and a − b of every pair, one call: numpy takes each row's quantiles on
    # its own, so they are those of a call per pair.
    rows = np.stack([row for _, ma, mb, _, _ in drawn for row in (ma, mb, ma - mb)])
    low, high = np.quantile(rows, tails, axis=1).tolist()
    for j, (i, _, _, median_difference, seed) in enumerate(drawn):
        a_low, b_low, d_low = low[3 * j : 3 * j + 3]
        a_high, b_high, d_high = high[3 * j : 3 * j + 3]
        out[i] = BootstrapCI(
            (a_low, a_high),
            (b_low, b_high),
            (d_low, d_high),
            median_difference,
            int(resamples),
            float(confidence),
            int(seed) if isinstance(seed, int | np.integer) else tuple(int(v) for v in seed),
        )
    return out
