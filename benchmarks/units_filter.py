"""A filter over a large session's Units list: how long until every unit is read and
filtered, and the longest the window stopped answering meanwhile.

    QT_QPA_PLATFORM=offscreen PYTHONPATH=$PWD .venv/bin/python benchmarks/units_filter.py \\
        [--units 12915] [--work DIR]

The session is ``benchmarks/large_session.py``'s (TailNLG imported, its units copied up to
``--units``). The real window is built, the session opened, and once the first page shows,
the Units panel's size filter is set to 1 (a filter works on every unit, so every page is
read). A 10 ms timer on the UI thread records the longest gap between its ticks: the
stall a user feels. The pages are read off the UI thread (``UnitsController.more_units``
through the view reads); before that change, a filter read every page on the UI thread
in one go.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from large_session import build  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=12915)
    parser.add_argument("--work", type=Path, help="keeps the session between runs")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="units-filter-"))
    work.mkdir(parents=True, exist_ok=True)
    session = work / f"units-{args.units}.taillens"
    if not session.exists():
        build(session, args.units)

    from PySide6.QtCore import QElapsedTimer, QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv)
    from app.gui import build_window

    window, controller = build_window(QSettings(str(work / "s.ini"), QSettings.Format.IniFormat))
    panel = controller.units.panel
    if not controller.open_session(session):
        raise SystemExit(f"cannot open {session}")

    def wait(condition, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                return False
            app.processEvents()
            time.sleep(0.002)
        return True

    if not wait(lambda: panel.units_model.total > 0, 120):
        raise SystemExit("the units list never showed")
    total = panel.units_model.total
    clock = QElapsedTimer()
    gaps: list[int] = []
    last = [0]

    def tick() -> None:
        now = clock.elapsed()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tick)
    clock.start()
    timer.start()
    started = time.perf_counter()
    combo = panel.unit_filters["size"]
    combo.setCurrentIndex(combo.findData("1"))
    returned = time.perf_counter() - started
    done = wait(lambda: panel.units_model.rowCount() >= total, 600)
    elapsed = time.perf_counter() - started
    timer.stop()
    shown = panel.units_proxy.rowCount()
    print(
        f"{total:,} units, page {controller.units.page_size}: the filter call returned in "
        f"{returned * 1000:.0f} ms; every unit read and filtered in {elapsed:.1f} s "
        f"({'done' if done else 'NOT done'}: {panel.units_model.rowCount():,} read, "
        f"{shown:,} of size 1); longest UI gap {max(gaps, default=0)} ms over "
        f"{len(gaps)} ticks; label: {panel.units_label.text()!r}"
    )
    controller.shutdown()
    window.close()


if __name__ == "__main__":
    main()
