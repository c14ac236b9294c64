"""What checking an untrusted membership pattern costs.

    .venv/bin/python benchmarks/pattern_check.py

Prints, on this machine: importing rdflib's SPARQL parser (once per process); checking
a bundled pattern (parse, algebra walk, re-rendering) cold and from the cache; building
a members-page query (check + Oxigraph parse of the final text); and the slowest
legitimate shapes (long, nested, many alternatives) the check still accepts.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def main() -> None:
    start = time.perf_counter()
    from rdflib.plugins.sparql import algebra, parser  # noqa: F401

    print(f"import rdflib's SPARQL parser          {ms(time.perf_counter() - start)}")
    from core.wikidata import queries
    from core.wikidata.categories import default_categories

    categories = default_categories()
    cold = []
    for category in categories:
        queries.canonical_pattern.cache_clear()
        start = time.perf_counter()
        queries.canonical_pattern(category.pattern)
        cold.append(time.perf_counter() - start)
    print(f"check a bundled pattern (median of {len(cold)}) {ms(statistics.median(cold))}")
    start = time.perf_counter()
    for _ in range(1000):
        queries.canonical_pattern(categories[0].pattern)
    print(f"check it again (cached)                {ms((time.perf_counter() - start) / 1000)}")
    pages = []
    for category in categories:
        queries.canonical_pattern.cache_clear()
        start = time.perf_counter()
        queries.members_page(category, 1000, 0)
        pages.append(time.perf_counter() - start)
    print(f"build a members page, cold (median)    {ms(statistics.median(pages))}")
    shapes = {
        "60 triple patterns": "?item wdt:P31 wd:Q515 ." + " ?item wdt:P17 ?x ." * 60,
        "paths nested 30 deep": "?item " + "(" * 30 + "wdt:P31" + ")*" * 30 + " wd:Q515 .",
        "400 alternatives": "?item " + "|".join(["wdt:P31"] * 400) + " wd:Q515 .",
        "groups nested 30 deep": "{ " * 30 + "?item wdt:P31 wd:Q515" + " }" * 30,
    }
    for name, pattern in shapes.items():
        queries.canonical_pattern.cache_clear()
        start = time.perf_counter()
        queries.canonical_pattern(pattern)
        print(f"check {name:<32} {ms(time.perf_counter() - start)}")


if __name__ == "__main__":
    main()
