"""Sampler rate on the bundled demo data: units per second, pure sampling and rendering.

Loads River members and the items their claims point to (two steps) from the embedded
snapshot once, then times :func:`core.units.sampler.sample_units` (all shapes, sizes 1..7) and
:func:`core.units.builder.render.render_unit` over them. Median of the runs after a warm-up.

    .venv/bin/python benchmarks/sampler.py [--entities 500] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.units.builder.render import label_index, render_unit
from core.units.sampler import sample_units
from core.wikidata.category_store import find_category
from core.wikidata.open_source import load_demo_source
from core.wikidata.records import EntityDetails
from core.wikidata.sources import SourceError


def load(entities: int) -> tuple[list[str], dict[str, EntityDetails]]:
    source = load_demo_source()
    page = source.members_page(find_category(None, "River"), 0, entities)
    roots = [e.qid for e in page.entities]
    details: dict[str, EntityDetails] = {}
    frontier = list(roots)
    for _ in range(3):  # roots, their items, and those items' items
        following = []
        for qid in frontier:
            if qid in details:
                continue
            try:
                details[qid] = source.entity(qid)
            except SourceError:
                continue
            following += [
                c.value for c in details[qid].claims if c.value_type == "wikibase-item" and c.value
            ]
        frontier = sorted(set(following))
    return roots, details


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entities", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    started = time.perf_counter()
    roots, details = load(args.entities)
    print(
        f"loaded {len(roots)} roots, {len(details)} entities in "
        f"{time.perf_counter() - started:.1f} s"
    )
    labels = label_index(details)
    sample_times, render_times, units = [], [], 0
    for run in range(args.runs + 1):
        t0 = time.perf_counter()
        result = sample_units(details, roots, per_entity=2, seed=run)
        t1 = time.perf_counter()
        for draft in result.drafts:
            render_unit(draft, details, labels=labels)
        t2 = time.perf_counter()
        if run:  # the first run warms caches and is not counted
            sample_times.append(t1 - t0)
            render_times.append(t2 - t1)
            units = len(result.drafts)
    sample_s, render_s = statistics.median(sample_times), statistics.median(render_times)
    print(
        f"sampled {units} units (skipped {sum(result.skipped.values())}): "
        f"{units / sample_s:,.0f} units/s sampling, "
        f"{units / (sample_s + render_s):,.0f} units/s sampling + rendering"
    )


if __name__ == "__main__":
    main()
