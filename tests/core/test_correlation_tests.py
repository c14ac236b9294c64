"""core.agreement.correlation_tests gives scipy.stats's coefficients and p-values, to the bit."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from core.agreement.correlation_tests import (
    average_ranks,
    discordant_pairs,
    kendall_tau_b,
    pearson,
    spearman,
)
from tests.fixtures.lazy_modules import scipy_stats as stats


def _samples() -> list[tuple[np.ndarray, np.ndarray]]:
    """Untied and tied data, correlated and not, of the sizes where scipy changes method
    (Kendall: exact up to 33 untied pairs) and of a challenge's judged texts."""
    rng = np.random.default_rng(7)
    out = []
    for n in (3, 4, 5, 8, 16, 33, 34, 60, 500, 2848):
        x = rng.normal(size=n)
        out.append((x, rng.normal(size=n)))
        out.append((x, x + rng.normal(scale=0.05, size=n)))  # strongly correlated
        out.append((x, -x))  # perfectly discordant: Kendall's exact edge
        out.append((rng.integers(0, 5, n).astype(float), rng.normal(size=n)))
        out.append((rng.integers(0, 3, n).astype(float), rng.integers(0, 4, n).astype(float)))
        out.append((np.round(rng.uniform(0, 100, n), 1), np.round(rng.uniform(1, 5, n), 2)))
    return [(x, y) for x, y in out if len(set(x)) > 1 and len(set(y)) > 1]


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [(pearson, "pearsonr"), (spearman, "spearmanr"), (kendall_tau_b, "kendalltau")],
    ids=["pearson", "spearman", "kendall"],
)
def test_equal_to_scipy(ours, theirs) -> None:
    theirs = getattr(stats, theirs)  # scipy's, named: imported when the test runs
    samples = _samples()
    assert len(samples) > 50
    for x, y in samples:
        expected = theirs(x, y)
        assert ours(x, y) == (float(expected[0]), float(expected[1])), (x.size, x[:5], y[:5])


def test_a_difference_is_seen() -> None:
    """The comparison above can fail: swapping one pair changes every coefficient."""
    x = np.arange(10.0)
    y = x.copy()
    y[[2, 3]] = y[[3, 2]]
    assert kendall_tau_b(x, y) != kendall_tau_b(x, x)
    assert spearman(x, y)[0] < 1.0 and pearson(x, y)[0] < 1.0


def test_discordant_pairs_counts_every_pair() -> None:
    rng = np.random.default_rng(3)
    for n in (1, 2, 3, 7, 40, 257):
        for high in (1, 2, 5, 1000):
            x = np.sort(rng.integers(0, max(2, n // 3), n))
            y = rng.integers(1, high + 1, n)
            order = np.lexsort((y, x))  # x ascending, y ascending within ties of x
            x, y = x[order], y[order]
            brute = sum(
                1 for i, j in itertools.combinations(range(n), 2) if x[i] < x[j] and y[i] > y[j]
            )
            assert discordant_pairs(x, y) == brute


def test_average_ranks() -> None:
    values = np.array([3.0, 1.0, 3.0, 2.0, 3.0, 0.5])
    assert (
        average_ranks(values).tolist()
        == stats.rankdata(values).tolist()
        == [
            5.0,
            2.0,
            5.0,
            3.0,
            5.0,
            1.0,
        ]
    )
