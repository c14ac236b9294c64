"""Head, torso and long tail of a category, from its entities' statement counts.

Implements METHODS.md §3. Two cut-offs are drawn on a category's distribution of
statement counts:

* the **Pareto cut-off** (share ``s``): sort by statements, descending, accumulate each
  entity's share of all statements; the cut-off is the count of the first entity at
  which the cumulative share reaches ``s``;
* the **head–tail threshold** (fraction ``f``): the count of the entity at rank
  ``ceil(f * n)``, the least count still inside the top ``f`` of entities.

Whichever line the user keeps is the *head line*: an entity is in the head when its
count is at or above it, so ties at the cut-off all belong to the head. An optional,
lower *torso line* splits a torso off the long tail. Long-tail entities with a
Wikipedia page in exactly one of en, it, es get a sub-tier.

Everything here works on whole arrays; the only per-entity work is a comparison, so
re-tiering after a dragged line is O(n) and the summary O(log n) with `Distribution`.

All-zero counts: there are no statements to share out, so both cut-offs are 0 and every
entity is in the head (its count, 0, is at or above the line). A category that small
is not worth splitting, and the user sees it as "everyone is head" rather than an error.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

import numpy as np
import numpy.typing as npt

DEFAULT_PARETO_SHARE = 0.8
DEFAULT_HEAD_FRACTION = 0.2
DEFAULT_HISTOGRAM_BINS = 30


class Tier(StrEnum):
    HEAD = "head"
    TORSO = "torso"
    LONG_TAIL = "long_tail"


class SubTier(StrEnum):
    LONG_TAIL_EN = "long_tail_en"
    LONG_TAIL_IT = "long_tail_it"
    LONG_TAIL_ES = "long_tail_es"


# Small integer codes keep a million entities' tiers in a megabyte of int8 and let
# numpy count them with bincount; the mappings turn them back into users' words.
HEAD_CODE, TORSO_CODE, LONG_TAIL_CODE = 0, 1, 2
TIER_BY_CODE: Mapping[int, Tier] = MappingProxyType(
    {HEAD_CODE: Tier.HEAD, TORSO_CODE: Tier.TORSO, LONG_TAIL_CODE: Tier.LONG_TAIL}
)
CODE_BY_TIER: Mapping[Tier, int] = MappingProxyType({t: c for c, t in TIER_BY_CODE.items()})

NO_SUB_TIER = -1
SUB_TIER_BY_CODE: Mapping[int, SubTier] = MappingProxyType(
    {0: SubTier.LONG_TAIL_EN, 1: SubTier.LONG_TAIL_IT, 2: SubTier.LONG_TAIL_ES}
)
CODE_BY_SUB_TIER: Mapping[SubTier, int] = MappingProxyType(
    {t: c for c, t in SUB_TIER_BY_CODE.items()}
)

Counts = npt.ArrayLike
Codes = npt.NDArray[np.int8]


# --- validation ----------------------------------------------------------------------


def _as_counts(counts: Counts) -> npt.NDArray[np.int64]:
    array = np.asarray(counts)
    if array.ndim != 1:
        raise ValueError(f"statement counts must be a flat list, got {array.ndim} dimensions")
    if array.size == 0:
        raise ValueError("no statement counts: the category has no entities")
    if array.dtype == np.bool_ or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"statement counts must be whole numbers, got {array.dtype}")
    array = array.astype(np.int64, copy=False)
    if array.min() < 0:
        position = int(np.argmax(array < 0))
        raise ValueError(
            f"statement counts cannot be negative: entity {position} has {array[position]}"
        )
    return array


def _check_share(value: float, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number in (0, 1], got {value!r}")
    if not 0.0 < float(value) <= 1.0:  # NaN fails this too
        raise ValueError(f"{name} must be in (0, 1], got {value}")
    return float(value)


def _check_line(value: float, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if math.isnan(value):
        raise ValueError(f"{name} must be a number, got NaN")
    return value


def _check_lines(head_line: float, torso_line: float | None) -> None:
    _check_line(head_line, "head line")
    if torso_line is not None:
        _check_line(torso_line, "torso line")
        if torso_line > head_line:
            raise ValueError(
                f"the torso line ({torso_line}) must not be above the head line ({head_line})"
            )


def _check_codes(codes: npt.ArrayLike, n: int, name: str, low: int, high: int) -> Codes:
    array = np.asarray(codes)
    if array.shape != (n,):
        raise ValueError(f"{name} must have one entry per entity ({n}), got shape {array.shape}")
    if not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must be integer codes, got {array.dtype}")
    if array.size and (array.min() < low or array.max() > high):
        raise ValueError(f"{name} must lie between {low} and {high}")
    return array.astype(np.int8, copy=False)


def _as_flags(flags: npt.ArrayLike, n: int, name: str) -> npt.NDArray[np.bool_]:
    array = np.asarray(flags)
    if array.shape != (n,):
        raise ValueError(f"{name} must have one entry per entity ({n}), got shape {array.shape}")
    if array.dtype != np.bool_:
        # 0/1 from a database column is fine; anything else is a mix-up, not a flag.
        if not np.issubdtype(array.dtype, np.integer) or not np.isin(array, (0, 1)).all():
            raise ValueError(f"{name} must be true/false for each entity")
        array = array.astype(np.bool_)
    return array


# --- cut-offs ------------------------------------------------------------------------


def _least_reaching(share: float, total: int) -> int:
    """Smallest whole k with k / total >= share (total > 0).

    Compared as the division the user reads ("the cumulative share reaches 0.3"), so
    3 of 10 reaches 0.3 although 0.3 * 10 is 3.0000000000000004 in floating point.
    """
    k = math.ceil(share * total)
    while k > 0 and (k - 1) / total >= share:
        k -= 1
    while k / total < share:
        k += 1
    return k


def pareto_cutoff(counts: Counts, share: float = DEFAULT_PARETO_SHARE) -> int:
    """Statement count of the first entity (by count, descending) whose cumulative share
    of all statements reaches ``share``; 0 when there are no statements at all."""
    return Distribution(counts).pareto_cutoff(share)


def head_tail_threshold(counts: Counts, fraction: float = DEFAULT_HEAD_FRACTION) -> int:
    """Statement count at rank ``ceil(fraction * n)`` (1-based, by count descending)."""
    array = _as_counts(counts)
    fraction = _check_share(fraction, "head fraction")
    rank = _least_reaching(fraction, array.size)
    # The rank-th largest without a full sort: O(n) instead of O(n log n).
    return int(np.partition(array, array.size - rank)[array.size - rank])


@dataclass(frozen=True)
class TierCutoffs:
    share: float
    fraction: float
    pareto_value: int
    head_tail_value: int
    torso_value: float | None = None


def compute_cutoffs(
    counts: Counts,
    share: float = DEFAULT_PARETO_SHARE,
    fraction: float = DEFAULT_HEAD_FRACTION,
    torso_line: float | None = None,
) -> TierCutoffs:
    return Distribution(counts).cutoffs(share, fraction, torso_line)


# --- tiers ---------------------------------------------------------------------------


def _tier_codes(counts: npt.NDArray[np.int64], head_line: float, torso_line: float | None) -> Codes:
    # Each line the count falls below adds one: head 0, torso 1, long tail 2. Without a
    # torso line, falling below the head line goes straight to the long tail.
    below_head = counts < head_line
    if torso_line is None:
        return below_head.view(np.int8) * np.int8(LONG_TAIL_CODE)
    return below_head.view(np.int8) + (counts < torso_line).view(np.int8)


def assign_tiers(counts: Counts, head_line: float, torso_line: float | None = None) -> Codes:
    """Tier code per entity, in the given order: 0 head (count >= head line), 1 torso
    (torso line <= count < head line), 2 long tail. See `TIER_BY_CODE`."""
    array = _as_counts(counts)
    _check_lines(head_line, torso_line)
    return _tier_codes(array, head_line, torso_line)


def long_tail_sub_tiers(
    tier_codes: npt.ArrayLike,
    has_en: npt.ArrayLike,
    has_it: npt.ArrayLike,
    has_es: npt.ArrayLike,
) -> Codes:
    """Sub-tier code per entity: 0 en, 1 it, 2 es for long-tail entities with a page in
    exactly that one of the three Wikipedias; -1 (`NO_SUB_TIER`) for everyone else."""
    tiers = np.asarray(tier_codes)
    n = tiers.size
    tiers = _check_codes(tiers, n, "tier codes", HEAD_CODE, LONG_TAIL_CODE)
    en = _as_flags(has_en, n, "has_en")
    it = _as_flags(has_it, n, "has_it")
    es = _as_flags(has_es, n, "has_es")
    en8, it8, es8 = en.view(np.int8), it.view(np.int8), es.view(np.int8)
    exactly_one = (en8 + it8 + es8) == 1
    # With exactly one page, en 0 / it 1 / es 2 is just it + 2 * es; staying in int8
    # avoids numpy widening to int64, five times slower for a million entities.
    wiki = it8 + (es8 << 1)
    return np.where((tiers == LONG_TAIL_CODE) & exactly_one, wiki, np.int8(NO_SUB_TIER))


# --- summary -------------------------------------------------------------------------


@dataclass(frozen=True)
class TierShare:
    tier: Tier | SubTier
    size: int
    entity_share: float
    statement_share: float


@dataclass(frozen=True)
class TierSummary:
    n: int
    total_statements: int
    head_line: float
    torso_line: float | None
    tiers: tuple[TierShare, ...]  # head, torso, long tail, always all three
    sub_tiers: tuple[TierShare, ...] = ()  # en, it, es when sub-tier codes were given

    def of(self, tier: Tier | SubTier) -> TierShare:
        for share in (*self.tiers, *self.sub_tiers):
            if share.tier == tier:
                return share
        raise KeyError(f"no {tier} in this summary")


def _shares(
    labels: tuple[Tier | SubTier, ...],
    sizes: npt.NDArray[np.int64],
    statements: npt.NDArray[np.int64],
    n: int,
    total: int,
) -> tuple[TierShare, ...]:
    # No statements at all: every share of nothing is 0, not a division by zero.
    return tuple(
        TierShare(
            tier=label,
            size=int(size),
            entity_share=int(size) / n,
            statement_share=int(statement) / total if total else 0.0,
        )
        for label, size, statement in zip(labels, sizes, statements, strict=True)
    )


def _sizes_and_statements(
    counts: npt.NDArray[np.int64], codes: Codes, labels: range
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    # One mask per label and a dot product: exact in int64 and quicker than a weighted
    # bincount, which would go through float64.
    sizes, statements = [], []
    for label in labels:
        member = codes == label
        sizes.append(np.count_nonzero(member))
        statements.append(int(counts @ member))
    return np.array(sizes, dtype=np.int64), np.array(statements, dtype=np.int64)


def summarise(
    counts: Counts,
    codes: npt.ArrayLike,
    head_line: float,
    torso_line: float | None = None,
    sub_tier_codes: npt.ArrayLike | None = None,
) -> TierSummary:
    """Size, share of entities and share of statements of each tier (and sub-tier)."""
    array = _as_counts(counts)
    n = array.size
    tiers = _check_codes(codes, n, "tier codes", HEAD_CODE, LONG_TAIL_CODE)
    total = int(array.sum())
    # The long tail is what the head and torso leave: one mask fewer over n entities.
    sizes, statements = _sizes_and_statements(array, tiers, range(2))
    sizes = np.append(sizes, n - sizes.sum())
    statements = np.append(statements, total - statements.sum())
    sub_shares: tuple[TierShare, ...] = ()
    if sub_tier_codes is not None:
        subs = _check_codes(sub_tier_codes, n, "sub-tier codes", NO_SUB_TIER, 2)
        sub_sizes, sub_statements = _sizes_and_statements(array, subs, range(3))
        sub_shares = _shares(tuple(SubTier), sub_sizes, sub_statements, n, total)
    return TierSummary(
        n=n,
        total_statements=total,
        head_line=head_line,
        torso_line=torso_line,
        tiers=_shares(tuple(Tier), sizes, statements, n, total),
        sub_tiers=sub_shares,
    )


# --- the distribution of one category ------------------------------------------------


# Counting sort pays O(largest count) for its table; up to this many slots per entity
# that is cheaper than a comparison sort (about 2 ms against 14 ms for a million).
_COUNTING_SORT_SLOTS_PER_ENTITY = 4
_COUNTING_SORT_MIN_SLOTS = 1 << 16


def _sorted_ascending(counts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``np.sort(counts)``, by counting when the counts are small whole numbers, as
    statement counts are: heavy-tailed, but the largest is far below a million."""
    largest = int(counts.max())
    if largest < max(_COUNTING_SORT_SLOTS_PER_ENTITY * counts.size, _COUNTING_SORT_MIN_SLOTS):
        frequency = np.bincount(counts, minlength=largest + 1)
        return np.repeat(np.arange(largest + 1, dtype=np.int64), frequency)
    return np.sort(counts)


@dataclass(frozen=True, eq=False)
class LogHistogram:
    """Counts per log-spaced bin ``[edges[i], edges[i+1])`` (the last bin closed), and
    the entities with no statements, which a log axis cannot show, counted apart."""

    edges: npt.NDArray[np.float64]
    counts: npt.NDArray[np.int64]
    zero_count: int


class Distribution:
    """One category's statement counts, sorted once.

    Dragging a line then costs one O(n) comparison to re-tier (`tier`) and O(log n) for
    cut-offs and the summary, with no re-sort. Arrays handed out are read-only views.
    """

    __slots__ = ("_counts", "_ascending", "_below", "_total")

    def __init__(self, counts: Counts) -> None:
        original = _as_counts(counts)
        # Our own copy, so a caller changing their array cannot desynchronise the sort;
        # skipped when validation already made a new array (a list, another dtype).
        if isinstance(counts, np.ndarray) and np.may_share_memory(original, counts):
            original = original.copy()
        self._counts = original
        self._ascending = _sorted_ascending(original)
        # Everything is kept ascending, and "the top k" read as "all but the bottom
        # n - k": a descending copy would cost another fresh array, and fresh memory is
        # most of the time spent here. _below[j] is what the j + 1 poorest hold.
        self._below = np.cumsum(self._ascending)
        self._total = int(self._below[-1])
        for array in (self._counts, self._ascending, self._below):
            array.flags.writeable = False

    @property
    def n(self) -> int:
        return int(self._counts.size)

    @property
    def total_statements(self) -> int:
        return self._total

    @property
    def counts(self) -> npt.NDArray[np.int64]:
        """The counts in the original entity order."""
        return self._counts

    @property
    def descending(self) -> npt.NDArray[np.int64]:
        return self._ascending[::-1]

    # cut-offs

    def value_at_share(self, share: float) -> int:
        """Count of the first entity, by count descending, at which the cumulative share
        of statements reaches ``share``; 0 when there are no statements."""
        share = _check_share(share, "share of statements")
        if self._total == 0:
            return 0
        target = _least_reaching(share, self._total)
        # The fewest top entities holding >= target leave the most bottom entities
        # holding <= total - target: that many bottom entities, p, and the entity just
        # above them, ascending[p], is the one at which the share is reached.
        bottom = int(np.searchsorted(self._below, self._total - target, side="right"))
        return int(self._ascending[bottom])

    def pareto_cutoff(self, share: float = DEFAULT_PARETO_SHARE) -> int:
        return self.value_at_share(_check_share(share, "Pareto share"))

    def head_tail_threshold(self, fraction: float = DEFAULT_HEAD_FRACTION) -> int:
        fraction = _check_share(fraction, "head fraction")
        return int(self._ascending[self.n - _least_reaching(fraction, self.n)])

    def cutoffs(
        self,
        share: float = DEFAULT_PARETO_SHARE,
        fraction: float = DEFAULT_HEAD_FRACTION,
        torso_line: float | None = None,
    ) -> TierCutoffs:
        # The torso line is checked against the head line only when tiering: which of
        # the two cut-offs is the head line is the user's choice, not known here.
        if torso_line is not None:
            _check_line(torso_line, "torso line")
        return TierCutoffs(
            share=_check_share(share, "Pareto share"),
            fraction=_check_share(fraction, "head fraction"),
            pareto_value=self.pareto_cutoff(share),
            head_tail_value=self.head_tail_threshold(fraction),
            torso_value=torso_line,
        )

    # tiers

    def tier(self, head_line: float, torso_line: float | None = None) -> Codes:
        """Tier codes in the original entity order (see `assign_tiers`)."""
        _check_lines(head_line, torso_line)
        return _tier_codes(self._counts, head_line, torso_line)

    def _at_or_above(self, line: float) -> tuple[int, int]:
        """How many entities have a count >= line, and how many statements they hold."""
        below = int(np.searchsorted(self._ascending, line, side="left"))
        return self.n - below, self._total - (int(self._below[below - 1]) if below else 0)

    # where a dragged line falls, for the plots and the cut-off controls

    def entity_share_at_or_above(self, line: float) -> float:
        """Share of entities with a count >= ``line`` (x of the line on the Lorenz curve)."""
        size, _ = self._at_or_above(line)
        return size / self.n

    def statement_share_at_or_above(self, line: float) -> float:
        """Share of all statements held by entities with a count >= ``line``: the Pareto
        share a line dragged to ``line`` stands for."""
        _, statements = self._at_or_above(line)
        return statements / self._total if self._total else 0.0

    def count_at_entity_share(self, share: float) -> int:
        """Count of the entity at rank ``ceil(share * n)``: the line that puts that share
        of entities at or above it (a Lorenz-curve position back to a count)."""
        share = min(1.0, max(share, 1.0 / self.n))
        return int(self.descending[_least_reaching(share, self.n) - 1])

    def summary(self, head_line: float, torso_line: float | None = None) -> TierSummary:
        """Same as `summarise` of `tier`'s codes, read off the sorted counts in O(log n)."""
        _check_lines(head_line, torso_line)
        head_size, head_statements = self._at_or_above(head_line)
        upper_size, upper_statements = (head_size, head_statements)
        if torso_line is not None:
            upper_size, upper_statements = self._at_or_above(torso_line)
        sizes = np.array([head_size, upper_size - head_size, self.n - upper_size])
        statements = np.array(
            [head_statements, upper_statements - head_statements, self._total - upper_statements]
        )
        return TierSummary(
            n=self.n,
            total_statements=self._total,
            head_line=head_line,
            torso_line=torso_line,
            tiers=_shares(tuple(Tier), sizes, statements, self.n, self._total),
        )

    # plots

    def lorenz_curve(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """x: share of entities (richest first), y: their share of all statements, from
        (0, 0) to (1, 1). Concave, since each next entity adds no more than the last.
        With no statements at all it is the diagonal: nothing is concentrated."""
        x = np.arange(self.n + 1, dtype=np.float64) / self.n
        if self._total == 0:
            return x, x.copy()
        # The top k hold all but what the bottom n - k hold.
        left_below = np.concatenate(([0], self._below))[::-1]
        y = (self._total - left_below) / self._total
        y[-1] = 1.0  # exactly, whatever the rounding
        return x, y

    def rank_frequency(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Ranks 1..n and the counts at them, descending. Zero counts are included; a
        log–log plot has to leave them out."""
        return np.arange(1, self.n + 1, dtype=np.int64), self.descending

    def log_histogram(self, bins: int = DEFAULT_HISTOGRAM_BINS) -> LogHistogram:
        """``bins`` log-spaced bins from 1 to the largest count (to 2 when that is below
        2, so the edges still rise); entities with 0 statements are in ``zero_count``."""
        if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins < 1:
            raise ValueError(f"number of bins must be a positive whole number, got {bins!r}")
        top = float(max(int(self._ascending[-1]), 2))
        edges = np.geomspace(1.0, top, int(bins) + 1)
        edges[0], edges[-1] = 1.0, top  # exact ends, so the largest count is inside
        positions = np.searchsorted(self._ascending, edges, side="left")
        positions[-1] = self.n  # close the last bin: it includes the largest count
        zero_count = int(positions[0])  # counts below 1 are the zeros
        return LogHistogram(
            edges=edges, counts=np.diff(positions).astype(np.int64), zero_count=zero_count
        )

    def integer_log_histogram(self, bins: int = DEFAULT_HISTOGRAM_BINS) -> LogHistogram:
        """Like `log_histogram`, with edges rounded up to whole numbers and repeats
        dropped, so every bin holds at least one possible count: plain log bins narrower
        than 1 would show empty gaps between 1, 2, 3 ... Bins are ``[edges[i],
        edges[i+1])``; the last edge is the largest count + 1. At most ``bins`` bins."""
        if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins < 1:
            raise ValueError(f"number of bins must be a positive whole number, got {bins!r}")
        top = int(self._ascending[-1]) + 1
        edges = np.unique(np.ceil(np.geomspace(1.0, max(top, 2), int(bins) + 1)))
        positions = np.searchsorted(self._ascending, edges, side="left")
        return LogHistogram(
            edges=edges.astype(np.float64),
            counts=np.diff(positions).astype(np.int64),
            zero_count=int(positions[0]),
        )


# --- what the user chose -------------------------------------------------------------

SPLIT_RULES = ("pareto", "head_tail")


@dataclass(frozen=True)
class TierSettings:
    split_by: str = "pareto"  # which cut-off is the head line
    share: float = DEFAULT_PARETO_SHARE
    fraction: float = DEFAULT_HEAD_FRACTION
    torso_line: float | None = None

    def __post_init__(self) -> None:
        if self.split_by not in SPLIT_RULES:
            raise ValueError(f"split_by must be one of {SPLIT_RULES}, not {self.split_by!r}")
        for name in ("share", "fraction"):
            value = getattr(self, name)
            if not 0 < value <= 1:
                raise ValueError(f"{name} must be in (0, 1], got {value}")


# --- one rule from settings to tiers (panel, CLI and session use only this) ----------
#
# The Airport case: a Pareto line dragged to 3.3 statements put entities with
# >= 4 statements in the head (209 / 191), but what was saved was the share the line
# stood for, rounded by the spin box to 0.928; re-derived with the Pareto rule, 0.928 is
# first reached inside the block of 3-statement entities, so the reopened session showed
# a line at 3 and 237 / 163. Now a dragged line is snapped to the statement count it
# means and turned into the shortest share (or fraction) that the *same* rule maps back
# to that count; only those settings are stored, and every caller derives tiers from
# them through `tier_category`.

_MAX_DECIMALS = 17


def _shortest_decimal(low: float, high: float, maps_back: Callable[[float], bool]) -> float:
    """The value in (low, high] with the fewest decimals for which ``maps_back`` holds,
    trying round-downs of ``high`` (``high`` itself when nothing shorter works)."""
    for decimals in range(1, _MAX_DECIMALS):
        scale = 10**decimals
        candidate = round(math.floor(high * scale) / scale, decimals)
        if low < candidate <= high and maps_back(candidate):
            return candidate
    return high


@dataclass(frozen=True, eq=False)
class TierResult:
    """Tiers of one category under one `TierSettings`: the lines (statement counts) both
    rules give, which of them is the head line, every entity's tier code and a summary."""

    settings: TierSettings
    pareto_line: int
    head_tail_line: int
    head_line: int
    torso_line: float | None
    codes: Codes
    summary: TierSummary


def tier_category(distribution: Distribution, settings: TierSettings) -> TierResult:
    """THE rule from settings to tiers: head line = Pareto cut-off of ``settings.share``
    or head–tail threshold of ``settings.fraction`` (METHODS §3), torso line as stored
    (never above the head line). The Browser, `taillens tiers`, `taillens distribution`
    and the saved member tiers all come from here."""
    pareto = distribution.pareto_cutoff(settings.share)
    head_tail = distribution.head_tail_threshold(settings.fraction)
    head = pareto if settings.split_by == "pareto" else head_tail
    torso = settings.torso_line
    if torso is not None and torso > head:
        torso = float(head)
    codes = distribution.tier(head, torso)
    return TierResult(
        settings, pareto, head_tail, head, torso, codes, distribution.summary(head, torso)
    )


def distribution_figures(
    counts: Counts, share: float, head_fraction: float, bins: int
) -> dict[str, object]:
    """What ``taillens distribution`` reports of a category's statement counts (JSON-ready):
    the total, both lines, the tiers under each rule (through :func:`tier_category`, the
    rule the Browser and ``taillens tiers`` use) and the log histogram."""
    distribution = Distribution(counts)
    by_share = tier_category(distribution, TierSettings("pareto", share, head_fraction))
    by_fraction = tier_category(distribution, TierSettings("head_tail", share, head_fraction))
    histogram = distribution.log_histogram(bins)
    return {
        "total_statements": distribution.total_statements,
        "cutoffs": {
            "pareto_share": share,
            "pareto_value": by_share.pareto_line,
            "head_fraction": head_fraction,
            "head_tail_value": by_share.head_tail_line,
        },
        "tiers": {
            "by_pareto_cutoff": _tier_figures(by_share.summary),
            "by_head_tail_threshold": _tier_figures(by_fraction.summary),
        },
        "histogram": {
            "edges": [round(float(e), 3) for e in histogram.edges],
            "counts": histogram.counts.tolist(),
            "zero_count": histogram.zero_count,
        },
    }


def _tier_figures(summary: TierSummary) -> dict[str, dict[str, float]]:
    return {
        share.tier.value: {
            "size": share.size,
            "entity_share": round(share.entity_share, 6),
            "statement_share": round(share.statement_share, 6),
        }
        for share in summary.tiers
    }


def snapped_line(distribution: Distribution, line: float, *, positive: bool = False) -> int:
    """The statement count a line at ``line`` stands for: tiers compare ``count >= line``
    on whole counts, so it is the least count held by an entity at or above ``line``
    (the largest count when none is; with ``positive``, never 0 unless all counts are)."""
    _check_line(line, "line")
    ascending = distribution.descending[::-1]
    start = int(np.searchsorted(ascending, line, side="left"))
    if positive:
        start = max(start, int(np.searchsorted(ascending, 1, side="left")))
    return int(ascending[min(start, distribution.n - 1)])


def share_for_line(distribution: Distribution, line: float) -> tuple[float, int]:
    """(share, count): the Pareto share with the fewest decimals whose cut-off is the
    count a line dragged to ``line`` stands for, and that count. Every share in
    (share of entities above the count, share of entities at or above it] maps to it."""
    if distribution.total_statements == 0:
        return 1.0, 0
    count = snapped_line(distribution, line, positive=True)
    high = distribution.statement_share_at_or_above(count)
    low = distribution.statement_share_at_or_above(count + 1)
    share = _shortest_decimal(low, high, lambda s: distribution.pareto_cutoff(s) == count)
    return share, count


def fraction_for_line(distribution: Distribution, line: float) -> tuple[float, int]:
    """(fraction, count): like `share_for_line`, for the head–tail threshold."""
    count = snapped_line(distribution, line)
    high = distribution.entity_share_at_or_above(count)
    low = distribution.entity_share_at_or_above(count + 1)
    fraction = _shortest_decimal(low, high, lambda f: distribution.head_tail_threshold(f) == count)
    return fraction, count


def settings_for_drag(
    distribution: Distribution, settings: TierSettings, kind: str, line: float
) -> TierSettings:
    """The settings after the user dragged line ``kind`` (pareto, head_tail, torso) to
    ``line``: what `tier_category` turns back into exactly the tiers the drag showed."""
    from dataclasses import replace

    if kind == "pareto":
        return replace(settings, share=share_for_line(distribution, line)[0])
    if kind == "head_tail":
        return replace(settings, fraction=fraction_for_line(distribution, line)[0])
    if kind == "torso":
        return replace(settings, torso_line=float(max(0, math.ceil(_check_line(line, "line")))))
    raise ValueError(f"no line {kind!r}: pareto, head_tail or torso")
