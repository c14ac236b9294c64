"""The Verbalise panel's share of opening a session: its unit load (``refresh_units``:
the unit count, the tiers and categories, the picker's first page), timed in-process.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/verbalise_picker.py SESSION [--repeat 5]

SESSION is e.g. the one ``benchmarks/large_session.py --keep FILE`` builds (12,915
units); it is copied first (opening may migrate it). The window is built offscreen and
opens the copy; ``refresh_units`` then runs --repeat times. Prints CPU and wall time of
each run (the machine may be shared: CPU time is the steadier figure), their medians, and
how many units the picker read and holds. Run it with PYTHONPATH set to an older tree to
compare (that tree's controller is timed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("session", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not args.session.is_file():
        print(f"No session at {args.session}", file=sys.stderr)
        return 2
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    qapp = QApplication([])
    from app.gui import build_window

    print("# PYTHONPATH=$PWD python benchmarks/verbalise_picker.py " + " ".join(sys.argv[1:]))
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "copy.taillens"
        shutil.copyfile(args.session, copy)
        settings = QSettings(str(Path(folder) / "s.ini"), QSettings.Format.IniFormat)
        window, controller = build_window(settings)
        try:
            if not controller.open_session(copy):
                print(f"Could not open {copy}", file=sys.stderr)
                return 2
            verbalise = controller.verbalise
            cpu, wall, read = [], [], 0
            for _ in range(args.repeat):
                started_cpu, started = time.process_time(), time.perf_counter()
                read = len(verbalise.refresh_units())
                cpu.append(time.process_time() - started_cpu)
                wall.append(time.perf_counter() - started)
            print(
                "refresh_units  CPU "
                + ", ".join(f"{c:.3f}" for c in cpu)
                + f" s (median {statistics.median(cpu):.3f}); wall "
                + ", ".join(f"{w:.3f}" for w in wall)
                + f" s (median {statistics.median(wall):.3f})"
            )
            rows = verbalise.panel.preview_unit.count()
            print(f"units read per load {read:,}; picker rows {rows:,}")
        finally:
            controller.shutdown()
            window.close()
            qapp.processEvents()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
