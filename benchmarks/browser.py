"""Browser figures: session → table load, re-tier in the panel, embedded queries, memory.

    .venv/bin/python benchmarks/browser.py

Prints, on this machine:
* loading 20,000 entities from a session into the table model (target < 300 ms);
* a dragged line re-tiering 20,000 shown entities, panel and table included (< 16 ms);
* loading the bundled demo snapshot, and the embedded members query of its largest
  category, in one page and in pages of 1,000;
* peak memory (max RSS) of the process with 20,000 entities shown.
Runs on Qt's offscreen platform unless QT_QPA_PLATFORM says otherwise.
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from core.store import SessionStore
from core.vocab import LANGUAGES
from core.wikidata.cache import load_category, store_members_page
from core.wikidata.categories import category_by_name, default_categories
from core.wikidata.records import EntityRecord, MembersPage

N = 20_000


def max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def median_ms(fn, runs: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), times


def build_session(path: Path) -> SessionStore:
    rng = np.random.default_rng(7)
    counts = (rng.pareto(1.2, N) * 5 + 1).astype(np.int64)
    store = SessionStore.create(path)
    category = category_by_name("City")
    for start in range(0, N, 1000):
        page = tuple(
            EntityRecord(
                f"Q{i + 1}",
                f"Entity {i + 1}",
                int(counts[i]),
                int(counts[i] // 3),
                frozenset(
                    w
                    for w, on in zip(LANGUAGES, (i % 2 == 0, i % 3 == 0, i % 5 == 0), strict=True)
                    if on
                ),
            )
            for i in range(start, start + 1000)
        )
        store_members_page(store, category, MembersPage("City", start, page), "benchmark")
    return store


def main() -> None:
    from PySide6.QtWidgets import QApplication

    from widgets.browser import BrowserPanel
    from widgets.entity_table import EntityTableModel

    app = QApplication.instance() or QApplication([])
    rss_start = max_rss_mb()
    print(f"cpus: {os.cpu_count()}  platform: {os.environ['QT_QPA_PLATFORM']}")

    with tempfile.TemporaryDirectory() as folder:
        store = build_session(Path(folder) / "bench.taillens")
        model = EntityTableModel()

        def load() -> None:
            model.set_entities(load_category(store, "City"))

        load()
        median, runs = median_ms(load, 5)
        verdict = "OK" if median < 300 else "OVER TARGET"
        print(
            f"load {N:,} entities from the session into the table model: median "
            f"{median:.0f} ms (target < 300 ms, {verdict}); runs "
            + ", ".join(f"{t:.0f}" for t in runs)
        )

        panel = BrowserPanel()
        panel.resize(1400, 900)
        panel.show()
        table = load_category(store, "City")
        panel.show_category("City", table)
        app.processEvents()
        lines = np.geomspace(2, float(table.statements.max()), 64)
        index = iter(range(10_000))

        def drag() -> None:
            panel._on_line_dragged("pareto", float(lines[next(index) % len(lines)]))
            app.processEvents()  # what Qt repaints as a result (dirty regions) counts too

        median, runs = median_ms(drag, 200)
        verdict = "OK" if median < 16 else "OVER TARGET"
        print(
            f"re-tier {N:,} shown entities after a line move (panel, table, plots, "
            f"repaint): median {median:.2f} ms, max {max(runs):.2f} ms "
            f"(target < 16 ms, {verdict})"
        )
        app.processEvents()
        print(
            f"peak memory with {N:,} entities shown: max RSS {max_rss_mb():.0f} MB "
            f"(process start to here: +{max_rss_mb() - rss_start:.0f} MB)"
        )
        store.close()

    from core.wikidata.open_source import load_demo_source

    started = time.perf_counter()
    source = load_demo_source()
    print(f"load the bundled demo snapshot into Oxigraph: {time.perf_counter() - started:.2f} s")
    sizes = {}
    for category in default_categories():
        sizes[category.name] = len(source.members_page(category, 0, 50_000).entities)
    largest = max(sizes, key=sizes.get)
    category = category_by_name(largest)

    def one_page() -> None:
        source.members_page(category, 0, 50_000)

    def paged() -> None:
        offset = 0
        while True:
            page = source.members_page(category, offset, 1000)
            offset += len(page.entities)
            if len(page.entities) < 1000:
                break

    median, _ = median_ms(one_page, 5)
    print(
        f"embedded members query, largest demo category ({largest}, {sizes[largest]:,}): "
        f"{median:.0f} ms in one page"
    )
    median, _ = median_ms(paged, 5)
    print(f"  ... in pages of 1,000: {median:.0f} ms")


if __name__ == "__main__":
    main()
