"""Import and export time of the TailNLG benchmark (targets: under 1 s each).

Run: ``.venv/bin/python benchmarks/formats.py [FILE]``. Prints the median of 3 runs, each
into a fresh session, and entries per second. The file is read in place, never copied.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.formats import export_webnlg, import_webnlg  # noqa: E402
from core.store import SessionStore  # noqa: E402
from tests.shared_data import TAILNLG, benchmark_input  # noqa: E402

RUNS = 3


def main() -> int:
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else benchmark_input(*TAILNLG)
    imports, exports = [], []
    entries = 0
    with tempfile.TemporaryDirectory() as folder:
        for run in range(RUNS):
            with SessionStore.create(Path(folder) / f"bench{run}.taillens") as store:
                started = time.perf_counter()
                report = import_webnlg(store, source)
                imports.append(time.perf_counter() - started)
                started = time.perf_counter()
                entries = export_webnlg(store, Path(folder) / f"out{run}.xml").entries
                exports.append(time.perf_counter() - started)
    print(f"{source.name}: {report.summary_line()}")
    for name, times in (("import", imports), ("export", exports)):
        median = statistics.median(times)
        print(
            f"{name}: median {median:.3f} s of {RUNS} ({entries / median:,.0f} entries/s)"
            f"  target < 1 s: {'ok' if median < 1 else 'MISSED'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
