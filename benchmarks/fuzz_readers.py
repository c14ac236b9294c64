"""The mutation fuzzer of ``tests/fixtures/fuzzing.py`` over every reader of outside files, at
length: tracebacks, hangs and sessions changed on refusal, per reader.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/fuzz_readers.py
        [--cases 10000] [--seed 0] [--timeout-s 10] [--every 1000] [--slowest 3]
        [READER ...]

Readers: webnlg_xml, wdv_json, judgments, judgments_all_teams, outputs, synonyms,
prompt_template, lock_file, model_card, pack (all by default). The cases depend only on
the seed, so a case a run reports (by its number) is read again with the same seed.
Prints one line per reader, its median and slowest cases (a slow case is read again
alone with ``--first N --cases 1``), and the first lines of each traceback; exits 1 when any reader
had a traceback, a hang, a changed session or a refusal of more than one line.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fixtures import fuzzing  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0].replace("\n", " "),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
    )
    parser.add_argument("readers", nargs="*", default=sorted(fuzzing.READERS))
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--first", type=int, default=0, help="number of the first case (to split a run)"
    )
    parser.add_argument("--timeout-s", type=float, default=10.0, help="a case longer hangs")
    parser.add_argument("--every", type=int, default=1000, help="print a running count")
    parser.add_argument(
        "--slowest",
        type=int,
        default=3,
        help="print this many slowest cases per reader (seconds from one case's end to the "
        "next's: the read and the session check after it; with the CPU seconds they took)",
    )
    args = parser.parse_args()
    bad = 0
    for name in args.readers:
        started = time.monotonic()
        counts: dict[str, int] = {}
        # (seconds, case, CPU seconds of this process): the first case's time also holds
        # the reader's setup. A case slow on the clock but not in CPU waited for the
        # machine (other processes), not for the reader.
        timed: list[tuple[float, int, float]] = []
        clock = [started, time.process_time()]

        def progress(
            n: int,
            outcome: str,
            name: str = name,
            counts: dict[str, int] = counts,
            timed: list[tuple[float, int, float]] = timed,
            clock: list[float] = clock,
        ) -> None:
            now, cpu = time.monotonic(), time.process_time()
            timed.append((now - clock[0], n, cpu - clock[1]))
            clock[0], clock[1] = now, cpu
            counts[outcome] = counts.get(outcome, 0) + 1
            seen = sum(counts.values())
            if seen % args.every == 0:
                done = ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items()))
                print(f"  {name}: {seen:,} cases to case {n} ({done})", flush=True)

        tally = fuzzing.run(
            fuzzing.READERS[name],
            args.cases,
            args.seed,
            timeout_s=args.timeout_s,
            on_case=progress,
            first=args.first,
        )
        last = args.first + args.cases - 1
        took = time.monotonic() - started
        print(f"{tally.line()} (cases {args.first:,}-{last:,}, {took:,.0f} s)", flush=True)
        if timed and args.slowest:
            times = sorted(t for t, _n, _cpu in timed)
            slow = ", ".join(
                f"case {n} {t:.2f} s (CPU {cpu:.2f} s)"
                for t, n, cpu in sorted(timed)[::-1][: args.slowest]
            )
            most = max(cpu for _t, _n, cpu in timed[1:] or timed)
            print(
                f"  median {times[len(times) // 2]:.3f} s a case; slowest: {slow}; "
                f"most CPU in one case after the first: {most:.2f} s"
            )
        for n, trace in tally.tracebacks[:5]:
            print(f"  case {n}: {trace.strip().splitlines()[-1][:300]}")
        if tally.hangs:
            print(f"  hangs: cases {tally.hangs[:10]}")
        if tally.changed:
            print(f"  changed on refusal: cases {tally.changed[:10]}")
        bad += len(tally.tracebacks) + len(tally.hangs) + len(tally.changed)
        bad += len(tally.multiline)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
