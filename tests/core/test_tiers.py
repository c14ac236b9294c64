"""Tiers of METHODS.md §3: hand-worked cases, then a plain-Python reference on random data."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from core.tiers.cutoffs import (
    CODE_BY_TIER,
    DEFAULT_HEAD_FRACTION,
    DEFAULT_PARETO_SHARE,
    NO_SUB_TIER,
    SUB_TIER_BY_CODE,
    TIER_BY_CODE,
    Distribution,
    SubTier,
    Tier,
    TierCutoffs,
    TierShare,
    assign_tiers,
    compute_cutoffs,
    head_tail_threshold,
    long_tail_sub_tiers,
    pareto_cutoff,
    summarise,
)

HAND = [50, 30, 10, 5, 3, 2]  # total 100, cumulative 50, 80, 90, 95, 98, 100
H, T, L = 0, 1, 2


# --- a reference written the slow, obvious way ---------------------------------------
# Shares are compared in exact decimal arithmetic (Fraction of the share as written),
# independently of the floating-point route the module takes.


def ref_pareto(counts: list[int], share: float) -> int:
    ordered = sorted(counts, reverse=True)
    total = sum(ordered)
    if total == 0:
        return 0
    running = 0
    for count in ordered:
        running += count
        if Fraction(running, total) >= Fraction(str(share)):
            return count
    raise AssertionError("share never reached")


def ref_head_tail(counts: list[int], fraction: float) -> int:
    ordered = sorted(counts, reverse=True)
    rank = math.ceil(Fraction(str(fraction)) * len(ordered))
    return ordered[rank - 1]


def ref_tiers(counts: list[int], head: float, torso: float | None) -> list[int]:
    codes = []
    for count in counts:
        if count >= head:
            codes.append(H)
        elif torso is not None and count >= torso:
            codes.append(T)
        else:
            codes.append(L)
    return codes


def ref_sub_tiers(tiers: list[int], en: list[bool], it: list[bool], es: list[bool]) -> list[int]:
    codes = []
    for tier, *flags in zip(tiers, en, it, es, strict=True):
        if tier == L and sum(flags) == 1:
            codes.append(flags.index(True))
        else:
            codes.append(NO_SUB_TIER)
    return codes


def ref_summary(counts: list[int], codes: list[int]) -> list[tuple[int, float, float]]:
    total = sum(counts)
    rows = []
    for tier in (H, T, L):
        members = [c for c, code in zip(counts, codes, strict=True) if code == tier]
        statement_share = sum(members) / total if total else 0.0
        rows.append((len(members), len(members) / len(counts), statement_share))
    return rows


def random_counts(rng: np.random.Generator) -> np.ndarray:
    n = int(rng.integers(1, 300))
    kind = rng.integers(0, 4)
    if kind == 0:
        return rng.zipf(1.6, n)
    if kind == 1:
        return np.rint(rng.lognormal(2.0, 1.5, n)).astype(np.int64)  # some zeros
    if kind == 2:
        return rng.integers(0, 4, n)  # many ties, often all zero for small n
    return rng.integers(0, 10_000, n)


def random_share(rng: np.random.Generator) -> float:
    # Rounded shares land exactly on a cumulative share now and then; raw ones do not.
    share = float(rng.uniform(0.0, 1.0)) if rng.random() < 0.5 else round(rng.uniform(), 2)
    return share if share > 0 else 1.0


# --- Pareto cut-off ------------------------------------------------------------------


def test_pareto_hand_example_reaches_share_at_second_entity() -> None:
    assert pareto_cutoff(HAND, 0.8) == 30
    assert assign_tiers(HAND, 30).tolist() == [H, H, L, L, L, L]


@pytest.mark.parametrize(
    ("share", "expected"),
    [
        (0.5, 50),  # reached exactly by the first entity
        (0.3, 50),  # passed by the first entity
        (0.7, 30),  # between 50% and 80%
        (0.8, 30),  # exactly 80%
        (0.81, 10),  # just past 80%: needs the third entity
        (0.98, 3),
        (0.99, 2),  # 98% is not yet 99%
        (1.0, 2),
    ],
)
def test_pareto_hand_example_by_share(share: float, expected: int) -> None:
    assert pareto_cutoff(HAND, share) == expected


def test_pareto_ties_at_cutoff_all_in_head() -> None:
    counts = [40, 20, 20, 20]  # cumulative 40, 60: 60% reached at the first 20
    assert pareto_cutoff(counts, 0.5) == 20
    assert assign_tiers(counts, 20).tolist() == [H, H, H, H]


def test_pareto_share_one_puts_zero_counts_in_tail() -> None:
    counts = [50, 30, 0, 10, 0]
    assert pareto_cutoff(counts, 1.0) == 10
    assert assign_tiers(counts, 10).tolist() == [H, H, L, H, L]


def test_pareto_share_reached_exactly_despite_floating_point() -> None:
    # 0.07 * 100 is 7.000000000000001: the first entity's 7/100 still reaches 7%.
    counts = [7, 5] + [4] * 22
    assert sum(counts) == 100
    assert pareto_cutoff(counts, 0.07) == 7


def test_pareto_default_share() -> None:
    assert DEFAULT_PARETO_SHARE == 0.8
    assert pareto_cutoff(HAND) == 30


# --- head–tail threshold -------------------------------------------------------------


@pytest.mark.parametrize(
    ("counts", "fraction", "expected"),
    [
        (HAND, 0.2, 30),  # ceil(1.2) = rank 2
        (HAND, 0.5, 10),  # 3.0: rank 3 exactly
        (HAND, 1 / 6, 50),  # rank 1
        (HAND, 1.0, 2),  # everyone
        ([7], 0.2, 7),  # n = 1
        ([7], 1.0, 7),
        ([9, 5, 5, 5, 1], 0.4, 5),  # rank 2 falls among ties
        ([2, 3, 1, 4, 5], 0.4, 4),  # unsorted input
    ],
)
def test_head_tail_threshold(counts: list[int], fraction: float, expected: int) -> None:
    assert head_tail_threshold(counts, fraction) == expected
    assert Distribution(counts).head_tail_threshold(fraction) == expected


def test_head_tail_exact_fraction_despite_floating_point() -> None:
    # 0.3 * 10 is 3.0000000000000004; the rank is still 3, not 4.
    counts = list(range(100, 0, -10))
    assert head_tail_threshold(counts, 0.3) == 80
    assert Distribution(counts).head_tail_threshold(0.3) == 80


def test_head_tail_ties_all_in_head() -> None:
    counts = [9, 5, 5, 5, 1]
    line = head_tail_threshold(counts, 0.4)
    assert assign_tiers(counts, line).tolist() == [H, H, H, H, L]


def test_head_tail_default_fraction() -> None:
    assert DEFAULT_HEAD_FRACTION == 0.2
    assert head_tail_threshold(list(range(1, 11))) == 9  # rank 2 of 10


# --- tiers, torso, sub-tiers ---------------------------------------------------------


def test_torso_split() -> None:
    assert assign_tiers(HAND, 30, torso_line=5).tolist() == [H, H, T, T, L, L]
    assert assign_tiers(HAND, 30, torso_line=4.5).tolist() == [H, H, T, T, L, L]


def test_torso_line_equal_to_head_line_leaves_torso_empty() -> None:
    assert assign_tiers(HAND, 10, torso_line=10).tolist() == [H, H, H, L, L, L]


def test_torso_line_above_head_line_is_refused() -> None:
    with pytest.raises(ValueError, match=r"torso line \(31\) must not be above the head line"):
        assign_tiers(HAND, 30, torso_line=31)
    with pytest.raises(ValueError, match="torso line"):
        Distribution(HAND).tier(30, torso_line=31)
    with pytest.raises(ValueError, match="torso line"):
        Distribution(HAND).summary(30, torso_line=31)


def test_tier_codes_map_to_users_words() -> None:
    assert [TIER_BY_CODE[c] for c in (0, 1, 2)] == [Tier.HEAD, Tier.TORSO, Tier.LONG_TAIL]
    assert CODE_BY_TIER[Tier.LONG_TAIL] == 2
    assert str(Tier.LONG_TAIL) == "long_tail"
    assert [SUB_TIER_BY_CODE[c] for c in (0, 1, 2)] == [
        SubTier.LONG_TAIL_EN,
        SubTier.LONG_TAIL_IT,
        SubTier.LONG_TAIL_ES,
    ]


def test_sub_tiers_need_exactly_one_wikipedia_and_the_long_tail() -> None:
    tiers = [L, L, L, L, L, L, L, H, T]
    en = [1, 0, 0, 1, 1, 0, 1, 1, 0]
    it = [0, 1, 0, 1, 0, 0, 1, 0, 0]
    es = [0, 0, 1, 0, 1, 0, 1, 0, 1]
    expected = [0, 1, 2, -1, -1, -1, -1, -1, -1]  # en, it, es, two, two, none, three, head, torso
    codes = long_tail_sub_tiers(tiers, en, it, es)
    assert codes.tolist() == expected
    as_bools = [np.array(flags, dtype=bool) for flags in (en, it, es)]
    assert long_tail_sub_tiers(np.array(tiers), *as_bools).tolist() == expected


# --- input handling ------------------------------------------------------------------


def test_list_int32_and_unsorted_input_keep_entity_order() -> None:
    counts = [3, 50, 2, 30, 10, 5]
    expected = [L, H, L, H, L, L]
    assert pareto_cutoff(counts) == 30
    assert assign_tiers(counts, 30).tolist() == expected
    as_int32 = np.array(counts, dtype=np.int32)
    assert pareto_cutoff(as_int32) == 30
    assert assign_tiers(as_int32, 30).tolist() == expected
    assert Distribution(as_int32).tier(30).tolist() == expected
    assert Distribution(np.array(counts, dtype=np.uint16)).tier(30).tolist() == expected


def test_all_zero_counts_put_everyone_in_the_head() -> None:
    counts = [0, 0, 0, 0]
    assert pareto_cutoff(counts) == 0
    assert pareto_cutoff(counts, 1.0) == 0
    assert head_tail_threshold(counts) == 0
    assert assign_tiers(counts, 0).tolist() == [H, H, H, H]
    summary = summarise(counts, assign_tiers(counts, 0), 0)
    assert summary.total_statements == 0
    assert summary.of(Tier.HEAD) == TierShare(Tier.HEAD, 4, 1.0, 0.0)
    assert Distribution(counts).summary(0) == summary
    x, y = Distribution(counts).lorenz_curve()
    assert y.tolist() == x.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    histogram = Distribution(counts).log_histogram(bins=4)
    assert histogram.zero_count == 4
    assert histogram.counts.sum() == 0


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        ([], "no entities"),
        ([[1, 2], [3, 4]], "flat list"),
        ([1.0, 2.5], "whole numbers"),
        ([True, False], "whole numbers"),
        (["3", "4"], "whole numbers"),
        ([4, 2, -1], "negative: entity 2 has -1"),
    ],
)
def test_bad_counts_are_refused(counts: object, message: str) -> None:
    for call in (
        lambda: pareto_cutoff(counts),
        lambda: head_tail_threshold(counts),
        lambda: assign_tiers(counts, 1),
        lambda: Distribution(counts),
        lambda: compute_cutoffs(counts),
    ):
        with pytest.raises(ValueError, match=message):
            call()


@pytest.mark.parametrize("bad", [0, 0.0, -0.1, 1.01, float("nan"), True, "0.8", None])
def test_bad_share_and_fraction_are_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="Pareto share"):
        pareto_cutoff(HAND, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="head fraction"):
        head_tail_threshold(HAND, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Pareto share"):
        compute_cutoffs(HAND, share=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="head fraction"):
        Distribution(HAND).head_tail_threshold(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="share"):
        Distribution(HAND).value_at_share(bad)  # type: ignore[arg-type]


def test_bad_lines_are_refused() -> None:
    with pytest.raises(ValueError, match="head line must be a number, got NaN"):
        assign_tiers(HAND, float("nan"))
    with pytest.raises(ValueError, match="head line must be a number"):
        assign_tiers(HAND, "30")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="torso line must be a number"):
        compute_cutoffs(HAND, torso_line=float("nan"))


def test_bad_codes_and_flags_are_refused() -> None:
    with pytest.raises(ValueError, match="one entry per entity"):
        summarise(HAND, [0, 0, 2], 30)
    with pytest.raises(ValueError, match="between 0 and 2"):
        summarise(HAND, [0, 0, 3, 2, 2, 2], 30)
    with pytest.raises(ValueError, match="has_it must have one entry per entity"):
        long_tail_sub_tiers([2, 2], [1, 0], [1], [0, 0])
    with pytest.raises(ValueError, match="has_es must be true/false"):
        long_tail_sub_tiers([2, 2], [1, 0], [0, 1], [0, 2])
    with pytest.raises(ValueError, match="bins"):
        Distribution(HAND).log_histogram(bins=0)


# --- summary -------------------------------------------------------------------------


def test_summary_hand_example_with_torso() -> None:
    codes = assign_tiers(HAND, 30, torso_line=5)
    summary = summarise(HAND, codes, 30, torso_line=5)
    assert (summary.n, summary.total_statements) == (6, 100)
    assert (summary.head_line, summary.torso_line) == (30, 5)
    assert [(s.tier, s.size, s.statement_share) for s in summary.tiers] == [
        (Tier.HEAD, 2, 0.80),
        (Tier.TORSO, 2, 0.15),
        (Tier.LONG_TAIL, 2, 0.05),
    ]
    assert all(s.entity_share == pytest.approx(1 / 3) for s in summary.tiers)
    assert Distribution(HAND).summary(30, torso_line=5) == summary


def test_summary_without_torso_has_empty_torso() -> None:
    summary = Distribution(HAND).summary(10)
    assert summary.of(Tier.TORSO) == TierShare(Tier.TORSO, 0, 0.0, 0.0)
    assert summary.of(Tier.LONG_TAIL).statement_share == pytest.approx(0.10)


def test_summary_of_sub_tiers() -> None:
    counts = [54, 4, 3, 2, 1]  # total 64
    codes = assign_tiers(counts, 54)
    subs = long_tail_sub_tiers(codes, [1, 1, 0, 0, 1], [0, 0, 1, 0, 1], [0, 0, 0, 1, 0])
    assert subs.tolist() == [-1, 0, 1, 2, -1]
    summary = summarise(counts, codes, 54, sub_tier_codes=subs)
    assert [(s.tier, s.size, s.statement_share) for s in summary.sub_tiers] == [
        (SubTier.LONG_TAIL_EN, 1, 0.0625),
        (SubTier.LONG_TAIL_IT, 1, 0.046875),
        (SubTier.LONG_TAIL_ES, 1, 0.03125),
    ]
    with pytest.raises(KeyError):
        summarise(counts, codes, 54).of(SubTier.LONG_TAIL_EN)


def test_compute_cutoffs() -> None:
    assert compute_cutoffs(HAND, torso_line=5) == TierCutoffs(0.8, 0.2, 30, 30, 5)
    assert compute_cutoffs(HAND, share=0.9, fraction=0.5) == TierCutoffs(0.9, 0.5, 10, 10)


# --- Distribution --------------------------------------------------------------------


def test_distribution_keeps_its_own_read_only_copy() -> None:
    counts = np.array([3, 50, 2, 30], dtype=np.int64)
    distribution = Distribution(counts)
    counts[:] = 0
    assert distribution.pareto_cutoff() == 30
    assert distribution.counts.tolist() == [3, 50, 2, 30]
    assert distribution.descending.tolist() == [50, 30, 3, 2]
    with pytest.raises(ValueError):
        distribution.counts[0] = 1
    with pytest.raises(ValueError):
        distribution.descending[0] = 1


@pytest.mark.parametrize(
    "draw",
    [
        lambda rng: rng.zipf(1.7, 50_000),
        lambda rng: np.rint(rng.lognormal(2.5, 1.3, 50_000)).astype(np.int64),
    ],
    ids=["zipf", "lognormal"],
)
def test_distribution_agrees_with_free_functions(draw: object) -> None:
    counts = draw(np.random.default_rng(20240611))  # type: ignore[operator]
    distribution = Distribution(counts)
    for share in (0.5, 0.8, 0.95, 1.0):
        assert distribution.pareto_cutoff(share) == pareto_cutoff(counts, share)
        assert distribution.value_at_share(share) == pareto_cutoff(counts, share)
    for fraction in (0.01, 0.2, 0.5, 1.0):
        assert distribution.head_tail_threshold(fraction) == head_tail_threshold(counts, fraction)
    head = distribution.pareto_cutoff()
    torso = distribution.head_tail_threshold(0.6)
    codes = distribution.tier(head, torso)
    np.testing.assert_array_equal(codes, assign_tiers(counts, head, torso))
    assert distribution.summary(head, torso) == summarise(counts, codes, head, torso)
    assert distribution.cutoffs(torso_line=torso) == compute_cutoffs(counts, torso_line=torso)


def test_lorenz_curve_runs_from_origin_to_one_and_is_concave() -> None:
    counts = np.random.default_rng(7).zipf(1.8, 5_000)
    x, y = Distribution(counts).lorenz_curve()
    assert (x[0], y[0], x[-1], y[-1]) == (0.0, 0.0, 1.0, 1.0)
    assert len(x) == len(y) == 5_001
    steps = np.diff(y)
    assert (steps >= 0).all()
    assert (np.diff(steps) <= 1e-15).all()  # each entity adds no more than the one before
    # The point at the Pareto head says what share of entities hold 80%.
    head_size = int((counts >= pareto_cutoff(counts)).sum())
    assert y[head_size] >= 0.8


def test_lorenz_curve_hand_example() -> None:
    x, y = Distribution([10, 30, 50, 5, 3, 2]).lorenz_curve()
    assert x.tolist() == pytest.approx([0, 1 / 6, 2 / 6, 3 / 6, 4 / 6, 5 / 6, 1])
    assert y.tolist() == pytest.approx([0, 0.5, 0.8, 0.9, 0.95, 0.98, 1.0])


def test_rank_frequency() -> None:
    ranks, counts = Distribution([3, 50, 0, 30]).rank_frequency()
    assert ranks.tolist() == [1, 2, 3, 4]
    assert counts.tolist() == [50, 30, 3, 0]


def test_log_histogram_hand_example() -> None:
    histogram = Distribution([0, 100, 1, 10, 0, 1, 9]).log_histogram(bins=2)
    assert histogram.edges.tolist() == pytest.approx([1, 10, 100])
    assert histogram.counts.tolist() == [3, 2]  # [1, 10): 1, 1, 9; [10, 100]: 10, 100
    assert histogram.zero_count == 2


def test_log_histogram_puts_every_entity_in_its_bin() -> None:
    counts = np.random.default_rng(3).zipf(1.5, 20_000)
    counts[:100] = 0
    histogram = Distribution(counts).log_histogram(bins=25)
    edges = histogram.edges
    assert (edges[0], edges[-1]) == (1.0, counts.max())
    assert (np.diff(edges) > 0).all()
    assert histogram.zero_count + histogram.counts.sum() == counts.size
    expected = [0] * 25
    for count in counts[counts > 0].tolist():
        expected[min(int(np.searchsorted(edges, count, side="right")) - 1, 24)] += 1
    assert histogram.counts.tolist() == expected


def test_log_histogram_when_largest_count_is_one() -> None:
    histogram = Distribution([1, 0, 1]).log_histogram(bins=3)
    assert histogram.edges[0] == 1.0 and histogram.edges[-1] == 2.0
    assert histogram.counts.tolist() == [2, 0, 0]
    assert histogram.zero_count == 1


# --- against the reference -----------------------------------------------------------


@pytest.mark.parametrize("seed", range(200))
def test_matches_plain_python_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    counts = random_counts(rng)
    plain = counts.tolist()
    share, fraction = random_share(rng), random_share(rng)
    distribution = Distribution(counts)

    pareto = pareto_cutoff(counts, share)
    head_tail = head_tail_threshold(counts, fraction)
    assert pareto == ref_pareto(plain, share)
    assert head_tail == ref_head_tail(plain, fraction)
    assert distribution.pareto_cutoff(share) == pareto
    assert distribution.head_tail_threshold(fraction) == head_tail

    head, torso = max(pareto, head_tail), min(pareto, head_tail)
    torso_line = None if rng.random() < 0.3 else torso - float(rng.uniform(0, 2))
    codes = assign_tiers(counts, head, torso_line)
    assert codes.tolist() == ref_tiers(plain, head, torso_line)
    np.testing.assert_array_equal(distribution.tier(head, torso_line), codes)

    flags = [rng.random(counts.size) < p for p in (0.5, 0.3, 0.3)]
    subs = long_tail_sub_tiers(codes, *flags)
    assert subs.tolist() == ref_sub_tiers(codes.tolist(), *(f.tolist() for f in flags))

    summary = summarise(counts, codes, head, torso_line, sub_tier_codes=subs)
    expected = ref_summary(plain, codes.tolist())
    for row, (size, entity_share, statement_share) in zip(summary.tiers, expected, strict=True):
        assert row.size == size
        assert row.entity_share == pytest.approx(entity_share)
        assert row.statement_share == pytest.approx(statement_share)
    assert distribution.summary(head, torso_line) == summarise(counts, codes, head, torso_line)
    assert [s.size for s in summary.sub_tiers] == [subs.tolist().count(c) for c in (0, 1, 2)]


def test_line_positions_map_between_counts_and_shares() -> None:
    dist = Distribution([5, 50, 3, 30, 10, 2])  # 100 statements
    assert dist.entity_share_at_or_above(10) == pytest.approx(3 / 6)
    assert dist.statement_share_at_or_above(10) == pytest.approx(0.9)
    assert dist.statement_share_at_or_above(51) == 0.0
    assert dist.count_at_entity_share(0.5) == 10
    assert dist.count_at_entity_share(0.0) == 50  # clamped to the first entity
    assert dist.count_at_entity_share(1.0) == 2
    assert Distribution([0, 0]).statement_share_at_or_above(0) == 0.0


def test_integer_log_histogram_has_no_empty_gaps_between_small_counts() -> None:
    counts = [0, 1, 1, 2, 3, 3, 3, 4, 7, 12, 30, 99]
    histogram = Distribution(counts).integer_log_histogram(bins=30)
    edges = histogram.edges
    assert edges[0] == 1 and edges[-1] == 100  # largest count + 1
    assert (edges == np.floor(edges)).all() and (np.diff(edges) >= 1).all()
    assert histogram.zero_count == 1
    assert histogram.counts.sum() + histogram.zero_count == len(counts)
    # The first bins are single values: 1, 2, 3, 4 each have their own bin.
    assert histogram.counts[:4].tolist() == [2, 1, 3, 1]
    rng = np.random.default_rng(5)
    many = rng.zipf(1.7, 5000) % 10_000
    h = Distribution(many).integer_log_histogram()
    assert len(h.counts) <= 30 and h.counts.sum() + h.zero_count == 5000


def test_categories_of_zero_one_and_two_entities() -> None:
    with pytest.raises(ValueError, match="empty|no "):
        pareto_cutoff([])
    with pytest.raises(ValueError, match="empty|no "):
        Distribution([])
    one = Distribution([7])
    assert (one.pareto_cutoff(), one.head_tail_threshold()) == (7, 7)
    assert one.tier(7).tolist() == [0]
    two = Distribution([1, 5])  # 5 of 6 statements reach 0.8; rank ceil(0.4) = 1
    assert (two.pareto_cutoff(), two.head_tail_threshold()) == (5, 5)
    assert two.tier(5).tolist() == [2, 0]
    assert [t.size for t in two.summary(5).tiers] == [1, 0, 1]
    tied = Distribution([3, 3])  # ties at the cut-off all belong to the head
    assert tied.tier(tied.pareto_cutoff()).tolist() == [0, 0]


def test_distribution_figures_follow_both_rules_of_tier_category() -> None:
    from core.tiers.cutoffs import Distribution, TierSettings, distribution_figures, tier_category

    counts = [100, 50, 20, 10, 5, 3, 1, 1, 0, 0]
    figures = distribution_figures(counts, 0.8, 0.2, 4)
    distribution = Distribution(np.array(counts))
    pareto = tier_category(distribution, TierSettings("pareto", 0.8, 0.2))
    head_tail = tier_category(distribution, TierSettings("head_tail", 0.8, 0.2))
    assert figures["total_statements"] == sum(counts)
    assert figures["cutoffs"] == {
        "pareto_share": 0.8,
        "pareto_value": pareto.pareto_line,
        "head_fraction": 0.2,
        "head_tail_value": head_tail.head_tail_line,
    }
    tiers = figures["tiers"]
    assert isinstance(tiers, dict)
    for rule, result in (("by_pareto_cutoff", pareto), ("by_head_tail_threshold", head_tail)):
        assert {t: f["size"] for t, f in tiers[rule].items()} == {
            s.tier.value: s.size for s in result.summary.tiers
        }
    histogram = figures["histogram"]
    assert isinstance(histogram, dict)
    assert histogram["zero_count"] == 2 and sum(histogram["counts"]) == len(counts) - 2
