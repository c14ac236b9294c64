"""What checking a session's rows costs (core.store.integrity): a full check
(``taillens session check``), and the first read of the units (the check of the tables
it reads, then the read) against a second read (checked already), on the large session
of ``large_session.py`` (12,915 units by default), healthy and with one damaged row.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/session_check.py [--units 12915]

Prints wall times (the machine may be shared: timings are noisy; medians of --repeat).
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def median_s(step: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    from large_session import build

    from core.store import SessionStore
    from core.units.builder.saved import count_units, list_units

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=12_915)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        healthy = Path(tmp) / "healthy.taillens"
        units = build(healthy, args.units)
        damaged = Path(tmp) / "damaged.taillens"
        shutil.copy(healthy, damaged)
        with sqlite3.connect(damaged) as conn:
            conn.execute("UPDATE data_units SET attributes = '{oops' WHERE id = 7")
        print(f"session: {units:,} units, {healthy.stat().st_size / 1e6:.1f} MB")
        for name, path in (("healthy", healthy), ("one damaged unit", damaged)):

            def full_check(path: Path = path) -> object:
                with SessionStore.open_read_only(path) as store:
                    return store.check()

            def first_and_second(path: Path = path) -> tuple[float, float]:
                with SessionStore.open_read_only(path) as store:
                    start = time.perf_counter()
                    count_units(store), list_units(store, limit=200)
                    first = time.perf_counter() - start
                    start = time.perf_counter()
                    count_units(store), list_units(store, limit=200)
                    return first, time.perf_counter() - start

            check_s = median_s(full_check, args.repeat)
            pairs = [first_and_second() for _ in range(args.repeat)]
            first = statistics.median(p[0] for p in pairs)
            second = statistics.median(p[1] for p in pairs)
            print(
                f"{name}: full check {check_s * 1000:.0f} ms; units count + first page: "
                f"{first * 1000:.0f} ms first read (tables checked), "
                f"{second * 1000:.0f} ms next read"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
