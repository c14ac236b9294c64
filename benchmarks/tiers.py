"""Tiering figures: a whole category at once, and re-tiering after a dragged line.

* Full tiering of 1,000,000 heavy-tailed statement counts: sort once (`Distribution`),
  both cut-offs, tier codes with a torso, long-tail sub-tiers, and the O(n) summary.
  Median of 7 runs after a warm-up. Target on a 2-core machine: under 50 ms.
* Re-tiering 20,000 entities after the head line moves: new codes and summary from the
  already-sorted distribution. Median of many runs. Target: under 16 ms (one frame).

    .venv/bin/python benchmarks/tiers.py [--runs 7] [--drags 500]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.tiers.cutoffs import (
    Distribution,
    long_tail_sub_tiers,
    summarise,
)

FULL_SIZE, FULL_TARGET_MS = 1_000_000, 50.0
DRAG_SIZE, DRAG_TARGET_MS = 20_000, 16.0


def heavy_tailed(n: int, seed: int) -> np.ndarray:
    # Zipf-like statement counts, capped as Wikidata's richest items are (tens of thousands).
    return np.minimum(np.random.default_rng(seed).zipf(1.8, n), 50_000).astype(np.int64)


def median_ms(work: Callable[[], object], runs: int) -> float:
    work()  # warm-up: first-touch allocations and lazy imports stay out of the figure
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--drags", type=int, default=500)
    args = parser.parse_args()

    counts = heavy_tailed(FULL_SIZE, seed=1)
    rng = np.random.default_rng(2)
    has_en, has_it, has_es = (rng.random(FULL_SIZE) < p for p in (0.6, 0.2, 0.3))

    def tier_everything() -> None:
        distribution = Distribution(counts)
        cutoffs = distribution.cutoffs()
        torso = min(cutoffs.head_tail_value, cutoffs.pareto_value)
        codes = distribution.tier(cutoffs.pareto_value, torso)
        subs = long_tail_sub_tiers(codes, has_en, has_it, has_es)
        summarise(counts, codes, cutoffs.pareto_value, torso, sub_tier_codes=subs)

    full = median_ms(tier_everything, args.runs)

    small = Distribution(heavy_tailed(DRAG_SIZE, seed=3))
    lines = iter(np.random.default_rng(4).integers(1, 200, size=args.drags + 1).tolist())

    def drag_head_line() -> None:
        line = next(lines)
        small.tier(line, torso_line=min(line, 2))
        small.summary(line, torso_line=min(line, 2))

    drag = median_ms(drag_head_line, args.drags)

    print(f"numpy {np.__version__}")
    print(
        f"full tiering, {FULL_SIZE:,} entities: {full:.1f} ms median of {args.runs} "
        f"(target {FULL_TARGET_MS:.0f} ms) {'OK' if full < FULL_TARGET_MS else 'OVER'}"
    )
    print(
        f"re-tier after a drag, {DRAG_SIZE:,} entities: {drag:.3f} ms median of {args.drags} "
        f"(target {DRAG_TARGET_MS:.0f} ms) {'OK' if drag < DRAG_TARGET_MS else 'OVER'}"
    )


if __name__ == "__main__":
    main()
