"""What the demo data costs a process: held in memory (as before) against the on-disk store.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/demo_store.py [--runs 3]

Each case runs in a fresh Python, so nothing is shared between them:

* **in memory**: ``EmbeddedSource.from_file(snapshot)`` with no cache (every process
  parses the 95 MB of N-Triples);
* **build**: the first process on a machine, with an empty cache folder
  (``load_demo_source``);
* **open**: every later process (``load_demo_source`` over the built store).

For each: seconds to a source that answers, seconds for the first members page of the
City category (500 entities), the resident memory after both (MB) and the process's
peak (``VmHWM``). Medians of ``--runs``; the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CASE = r"""
import json, os, sys, time
def mb(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
from core.wikidata.categories import category_by_name
from core.wikidata.open_source import DEMO_SNAPSHOT, load_demo_source
from core.wikidata.embedded import EmbeddedSource
city = category_by_name("City")
start = time.perf_counter()
if sys.argv[1] == "memory":
    source = EmbeddedSource.from_file(DEMO_SNAPSHOT)
else:
    source = load_demo_source()
ready = time.perf_counter()
page = source.members_page(city, 0, 500)
done = time.perf_counter()
assert len(page.entities) == 500, len(page.entities)
print(json.dumps({"ready_s": ready - start, "page_s": done - ready,
                  "rss_mb": mb("VmRSS"), "peak_mb": mb("VmHWM")}))
"""


def run_case(kind: str, cache: str) -> dict[str, float]:
    env = {**os.environ, "TAILLENS_CACHE": cache}
    done = subprocess.run(
        [sys.executable, "-c", CASE, kind], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {"in memory": [], "build": [], "open": []}
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as cache:
            results["in memory"].append(run_case("memory", cache))
            results["build"].append(run_case("disk", cache))
            results["open"].append(run_case("disk", cache))
    print(f"load average {os.getloadavg()[0]:.1f}; medians of {args.runs} runs")
    print(f"{'case':<10} {'ready s':>8} {'page s':>7} {'RSS MB':>7} {'peak MB':>8}")
    for case, rows in results.items():
        med = {key: statistics.median(row[key] for row in rows) for key in rows[0]}
        print(
            f"{case:<10} {med['ready_s']:>8.2f} {med['page_s']:>7.2f} "
            f"{med['rss_mb']:>7.0f} {med['peak_mb']:>8.0f}"
        )


if __name__ == "__main__":
    main()
