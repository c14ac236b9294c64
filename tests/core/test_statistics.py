"""Group statistics: summaries, rank-biserial effect size and the METHODS §8 protocol,
against hand-worked values and scipy.stats.mannwhitneyu itself."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.report.statistics import (
    bootstrap_medians_ci,
    mann_whitney_p,
    mann_whitney_protocol,
    rank_biserial,
    summarise,
    u_statistic,
)
from tests.fixtures.lazy_modules import scipy_stats

ROOT = Path(__file__).resolve().parents[2]


def test_summary_of_four_values_by_hand() -> None:
    # Linear interpolation: q1 at position 0.75 → 1.75; q3 at 2.25 → 3.25.
    s = summarise([4, 1, 3, 2, float("nan")])
    assert (s.n, s.median, s.q1, s.q3, s.mean) == (4, 2.5, 1.75, 3.25, 2.5)
    assert s.iqr == pytest.approx(1.5)
    empty = summarise([])
    assert empty.n == 0 and empty.median is None and empty.iqr is None


def test_rank_biserial_by_hand() -> None:
    # a = [3, 4], b = [1, 2, 3, 5]: 3 beats 1 and 2 and ties 3 (2.5), 4 beats 1, 2, 3 (3):
    # U_a = 5.5 of 8 pairs, r = 2 · 5.5 / 8 − 1 = 0.375.
    assert u_statistic(np.array([3.0, 4.0]), np.array([1.0, 2.0, 3.0, 5.0])) == 5.5
    assert rank_biserial([3, 4], [1, 2, 3, 5]) == pytest.approx(0.375)
    assert scipy_stats.mannwhitneyu([3, 4], [1, 2, 3, 5]).statistic == 5.5  # scipy's U of the first
    assert rank_biserial([1, 2, 3], [4, 5]) == -1.0
    assert rank_biserial([4, 5], [1, 2, 3]) == 1.0
    assert rank_biserial([], [1]) is None


def test_small_groups_are_tested_once_on_all_items() -> None:
    a, b = [50, 60, 70, 80], [10, 20, 30, 40]
    result = mann_whitney_protocol(a, b, seed=1)
    assert result is not None and not result.sampled
    assert result.p_values == (
        pytest.approx(scipy_stats.mannwhitneyu(a, b, alternative="two-sided").pvalue),
    )
    # Exact distribution, no ties: P = 2 / C(8, 4) = 2 / 70.
    assert result.p_value == pytest.approx(2 / 70)
    assert result.significant and result.effect_size == 1.0
    assert (result.n_a, result.n_b) == (4, 4)


@pytest.mark.parametrize("seed", [0, 7])
def test_protocol_matches_scipy_on_the_same_seeded_samples(seed: int) -> None:
    data = np.random.default_rng(100)
    a = data.normal(0.0, 1.0, 800)
    b = data.normal(0.15, 1.0, 650)
    result = mann_whitney_protocol(a, b, seed=seed)
    assert result is not None and result.sampled

    rng = np.random.default_rng(seed)  # the documented order: a then b, each repetition
    expected = []
    for _ in range(10):
        xs = rng.choice(a, 500, replace=False)
        ys = rng.choice(b, 500, replace=False)
        expected.append(scipy_stats.mannwhitneyu(xs, ys, alternative="two-sided").pvalue)
    assert result.p_values == pytest.approx(expected, rel=1e-12)
    assert result.p_value == pytest.approx(np.mean(expected), rel=1e-12)
    assert result.significant == (np.mean(expected) < 0.05)
    assert result.effect_size == pytest.approx(rank_biserial(a, b))
    assert result.u_statistic == pytest.approx(scipy_stats.mannwhitneyu(a, b).statistic)


def test_only_the_larger_group_is_sampled() -> None:
    data = np.random.default_rng(5)
    a, b = data.normal(size=900), data.normal(size=120)
    result = mann_whitney_protocol(a, b, seed=3, repetitions=4, sample_size=500)
    rng = np.random.default_rng(3)
    expected = [
        scipy_stats.mannwhitneyu(rng.choice(a, 500, replace=False), b).pvalue for _ in range(4)
    ]
    assert result is not None and result.p_values == pytest.approx(expected, rel=1e-12)


def test_seed_and_alpha_are_parameters() -> None:
    data = np.random.default_rng(9)
    a, b = data.normal(size=700), data.normal(0.1, size=700)
    first = mann_whitney_protocol(a, b, seed=1)
    assert first == mann_whitney_protocol(a, b, seed=1)
    assert first.p_values != mann_whitney_protocol(a, b, seed=2).p_values
    strict = mann_whitney_protocol([1, 2, 3, 4], [5, 6, 7, 8], alpha=0.01)
    assert strict.p_value == pytest.approx(2 / 70) and not strict.significant


def test_undefined_and_bad_input() -> None:
    assert mann_whitney_protocol([], [1, 2]) is None
    assert mann_whitney_protocol([float("nan")], [1, 2]) is None
    same = mann_whitney_protocol([1, 1, 1], [1, 1])
    assert same is not None and same.p_value == 1.0 and not same.significant
    with pytest.raises(ValueError):
        mann_whitney_protocol([1], [2], repetitions=0)
    with pytest.raises(ValueError):
        mann_whitney_protocol([1], [2], alpha=1.5)


def test_mann_whitney_p_is_scipys_to_the_bit() -> None:
    """Exact (a sample of at most 8, no ties) and normal approximation (larger, or ties;
    every value the same included): the p-value scipy's mannwhitneyu gives."""
    rng = np.random.default_rng(11)
    exact = 0
    for trial in range(400):
        n1, n2 = (int(rng.choice([1, 2, 3, 5, 8, 9, 40, 500])) for _ in range(2))
        kind = trial % 4
        if kind == 0:
            x, y = rng.normal(size=n1), rng.normal(size=n2)
        elif kind == 1:
            x, y = rng.integers(0, 4, n1).astype(float), rng.integers(0, 4, n2).astype(float)
        elif kind == 2:
            x, y = rng.normal(size=n1) + 2.0, rng.normal(size=n2)
        else:
            x, y = np.full(n1, 0.5), np.full(n2, 0.5)
        expected = float(scipy_stats.mannwhitneyu(x, y, alternative="two-sided").pvalue)
        got = mann_whitney_p(x, y)
        assert got == expected or (np.isnan(got) and np.isnan(expected)), (n1, n2, kind)
        exact += kind in (0, 2) and min(n1, n2) <= 8
        ranks = np.concatenate([x, y]).argsort().argsort()  # no ties in kinds 0 and 2
        if kind in (0, 2):
            assert u_statistic(x, y) == float(ranks[:n1].sum() + n1 - n1 * (n1 + 1) / 2)
    assert exact > 50  # the exact distribution was exercised
    assert mann_whitney_p(np.arange(5.0), np.arange(5.0) + 0.5) != mann_whitney_p(
        np.arange(5.0), np.arange(5.0) + 10
    )


def test_the_protocol_on_whole_groups_ranks_once_and_says_what_two_calls_say() -> None:
    """Groups within the sample size are tested whole: the protocol takes the p-value and
    U from one ranking, and they are exactly mann_whitney_p's and u_statistic's (ties,
    small untied groups on the exact distribution, one-sided wins, all values equal)."""
    data = np.random.default_rng(11)
    cases = [(np.full(4, 2.0), np.full(3, 2.0)), (np.arange(3.0), np.arange(3.0) + 10)]
    for _ in range(150):
        n1, n2 = (int(v) for v in data.integers(1, 30, size=2))
        rounding = int(data.integers(0, 3))  # 0 decimals: many ties; 2: few
        cases.append(
            (data.normal(size=n1).round(rounding), data.normal(0.3, size=n2).round(rounding))
        )
    for x, y in cases:
        result = mann_whitney_protocol(x, y, repetitions=3, sample_size=50, seed=1)
        assert result is not None and not result.sampled
        p = mann_whitney_p(x, y)
        assert result.p_values == ((1.0 if np.isnan(p) else p),)
        assert result.u_statistic == u_statistic(x, y)
        assert result.effect_size == 2.0 * u_statistic(x, y) / (x.size * y.size) - 1.0


def test_bootstrap_intervals_are_the_quantiles_of_the_resampled_medians() -> None:
    from core.report.statistics import _bootstrap_medians

    data = np.random.default_rng(2)
    a, b = data.normal(size=301), data.normal(size=120)
    ci = bootstrap_medians_ci(a, b, resamples=500, seed=[4, 9])
    rng = np.random.default_rng([4, 9])
    ma = _bootstrap_medians(np.sort(a), 500, rng)
    mb = _bootstrap_medians(np.sort(b), 500, rng)
    for interval, stats in ((ci.a, ma), (ci.b, mb), (ci.difference, ma - mb)):
        tails = [(1 - 0.95) / 2, (1 + 0.95) / 2]
        assert interval == tuple(float(v) for v in np.quantile(stats, tails))


def test_bootstrap_intervals_of_many_pairs_at_once_are_those_of_one_call_each() -> None:
    """The report computes every pair's intervals in one call: each pair keeps its own
    seed's draws and gets exactly the numbers of a call of its own (odd, even, one-value
    and empty groups, with NaN and infinities dropped), whatever else is in the batch."""
    from core.report.statistics import bootstrap_medians_cis

    data = np.random.default_rng(5)
    pairs = []
    for i in range(60):
        a = data.gamma(2.0, size=int(data.integers(0, 40)))
        b = data.normal(size=int(data.integers(1, 41)))
        if i % 7 == 0:
            b = np.append(b, [np.nan, np.inf])
        pairs.append((a, b, [3, i]))
    batch = bootstrap_medians_cis(pairs, resamples=300)
    alone = [bootstrap_medians_ci(a, b, resamples=300, seed=seed) for a, b, seed in pairs]
    assert batch == alone
    assert batch[::-1] == bootstrap_medians_cis(pairs[::-1], resamples=300)
    assert sum(ci is None for ci in batch) == sum(a.size == 0 for a, _, _ in pairs) > 0
    one = bootstrap_medians_cis(pairs[1:2], resamples=300)
    assert one == batch[1:2]
    # The reference the batch is held to: a call of its own, draws and quantiles as before.
    a, b, seed = pairs[1]
    rng = np.random.default_rng(seed)
    from core.report.statistics import _bootstrap_medians

    ma = _bootstrap_medians(np.sort(a), 300, rng)
    mb = _bootstrap_medians(np.sort(b), 300, rng)
    tails = [(1 - 0.95) / 2, (1 + 0.95) / 2]
    assert batch[1] is not None
    assert batch[1].difference == tuple(float(v) for v in np.quantile(ma - mb, tails))


def test_scipy_is_imported_lazily() -> None:
    code = (
        "import sys, core.report.statistics, core.report, core.annotation; "
        "print(','.join(m for m in ('scipy', 'krippendorff', 'sqlalchemy') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == ""


def test_quartiles_and_medians_are_numpys_to_the_bit() -> None:
    """The summaries' quartiles and the bootstrap's medians, taken from one sort, are
    np.percentile's 25th, 50th and 75th and np.median to the last bit: over random groups
    of 1-60 values (wide ranges, ties, rounded scores), including interpolation past the
    midpoint between two values."""
    from core.report.statistics import _median, quartiles

    rng = np.random.default_rng(4)
    for i in range(4000):
        n = int(rng.integers(1, 60))
        values = [
            rng.normal(0, 10 ** rng.uniform(-5, 5), n),
            rng.integers(0, 5, n).astype(float),
            np.round(rng.normal(50, 30, n), 2),
            rng.uniform(0, 1, n) * 100,
        ][i % 4]
        expected = tuple(float(v) for v in np.percentile(values, [25, 50, 75]))
        assert quartiles(np.sort(values)) == expected, values.tolist()
        assert _median(np.sort(values)) == float(np.median(values)), values.tolist()
