"""Verbalising against hostile model servers: time and peak memory of `taillens verbalise`.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/server_limits.py [--only NAME]

A fault server on 127.0.0.1 (tests/fixtures/faulty_openai_server.py) plays an
OpenAI-compatible server; each case runs the real CLI (`python -m app verbalise --model
URL ...`) in a fresh process over 8 units (one batch of 8 requests in flight, 3
candidates each, the default 16 MB reply cap) and reports its exit status, wall time
and peak RSS (VmHWM) against the target: ends within --timeout + 5 s, peak
under 300 MB. The time is given whole and from the first request the server saw to the
process's exit (the CLI's own start, shown by the baseline row, is left out).

* endless: a JSON reply that never ends, streamed as fast as the socket takes it
  (`--timeout 10`; before: 21 GB in 40 s, the timeout ignored);
* drip: a good reply sent one byte every 2 s (`--timeout 5`; before: past 60 s);
* drip-headers: the status line and headers sent that way (`--timeout 5`);
* huge: a server ignoring max_tokens, 10 MB of content per text, one candidate per
  request (before: 10 MB stored per text); the longest stored text and the session's
  size are reported.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from subprocess import DEVNULL

from measure import run_measured

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.store import SessionStore  # noqa: E402
from tests.fixtures.faulty_openai_server import FaultServer  # noqa: E402
from tests.fixtures.verbalise_units import add_units  # noqa: E402

CASES = {"endless": 10.0, "drip": 5.0, "drip-headers": 5.0, "huge": 60.0}  # -> --timeout
# huge: one candidate per request, so that a 10 MB text fits the 16 MB reply cap and is
# cut at --max-reply-chars (with 3, the 30 MB reply stops the run at the cap instead).
EXTRA = {"huge": ["--candidates", "1"]}
TARGET_EXTRA_S = 5.0
TARGET_PEAK_MB = 300.0


def run_case(server: FaultServer, case: str, folder: Path) -> dict[str, object]:
    server.case = case
    server.requests = 0
    server.first_request_at = None
    session = folder / f"{case}.taillens"
    with SessionStore.create(session) as store:
        add_units(store, 8, langs=("en",))
    timeout = CASES[case]
    command = [
        sys.executable,
        "-m",
        "app",
        "verbalise",
        "--session",
        str(session),
        "--model",
        server.url,
        "--server-model",
        "fault-model",
        "--langs",
        "en",
        "--timeout",
        f"{timeout:g}",
        "--quiet",
        *EXTRA.get(case, []),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryFile() as out_file, tempfile.TemporaryFile() as err_file:
        started = time.perf_counter()
        code, elapsed, peak = run_measured(command, ROOT, env, 300, out_file, err_file)
        first = server.first_request_at
        # From the first request the server saw to the process's exit: the CLI's start
        # (imports, opening the session) is left out.
        after_request = started + elapsed - first if first is not None else None
        out_file.seek(0)
        err_file.seek(0)
        said = (out_file.read().decode() + err_file.read().decode()).strip().splitlines()
    with sqlite3.connect(session) as conn:
        stored = conn.execute(
            "SELECT count(*), coalesce(max(length(raw_output)), 0) FROM verbalisations"
        ).fetchone()
    size_mb = session.stat().st_size / 1e6
    return {
        "case": case,
        "timeout": timeout,
        "exit": code,
        "seconds": elapsed,
        "after_request": after_request,
        "peak_rss_mb": peak,
        "requests": server.requests,
        "texts": stored[0],
        "longest": stored[1],
        "session_mb": size_mb,
        "said": next((line for line in said if line.startswith("taillens:")), said[-1:] or ""),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=tuple(CASES), action="append")
    args = parser.parse_args()
    server = FaultServer(drip_s=2.0, huge_chars=10_000_000)
    print(
        f"# PYTHONPATH=$PWD {Path(sys.executable).name} benchmarks/server_limits.py"
        + "".join(f" --only {c}" for c in args.only or ())
    )
    print(
        f"# target: ends within --timeout + {TARGET_EXTRA_S:g} s, peak RSS < {TARGET_PEAK_MB:g} MB"
    )
    try:
        with tempfile.TemporaryDirectory() as folder:
            # The CLI's own start and finish on this machine, without a server.
            session = Path(folder) / "baseline.taillens"
            with SessionStore.create(session) as store:
                add_units(store, 8, langs=("en",))
            command = [sys.executable, "-m", "app", "verbalise", "--session", str(session)]
            command += ["--model", "template", "--langs", "en", "--quiet"]
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            code, elapsed, peak = run_measured(command, ROOT, env, 300, DEVNULL, DEVNULL)
            print(
                f"baseline `verbalise --model template` (no server): exit {code}  "
                f"{elapsed:.1f} s  peak RSS {peak:.1f} MB",
                flush=True,
            )
            for case in args.only or tuple(CASES):
                row = run_case(server, case, Path(folder))
                after = row["after_request"]
                in_time = after is not None and after <= row["timeout"] + TARGET_EXTRA_S  # type: ignore[operator]
                small = row["peak_rss_mb"] < TARGET_PEAK_MB  # type: ignore[operator]
                print(
                    f"{row['case']:<12} --timeout {row['timeout']:>4g}  exit {row['exit']}  "
                    f"{row['seconds']:>5.1f} s, {after or 0:>5.1f} s from the first request "
                    f"({'ok' if in_time else 'OVER'})  "
                    f"peak RSS {row['peak_rss_mb']:>6.1f} MB ({'ok' if small else 'OVER'})  "
                    f"requests {row['requests']:>2}  texts {row['texts']} (longest "
                    f"{row['longest']:,} chars)  session {row['session_mb']:.2f} MB\n"
                    f"    {str(row['said'])[:300]}",
                    flush=True,
                )
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
