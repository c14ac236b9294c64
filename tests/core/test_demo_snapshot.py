"""The synthetic demo snapshot: reproducible, loadable, and shaped like Wikidata."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, QuerySolutions, Store

from resources.demo import make_snapshot

ROOT = Path(__file__).resolve().parents[2]
CATEGORIES = json.loads(make_snapshot.CATEGORIES_JSON.read_text(encoding="utf-8"))["categories"]
LARGE = {
    "City",
    "Taxon",
    "Politician",
    "Athlete",
    "Artist",
    "Painting",
    "WrittenWork",
    "Company",
    "Building",
    "ChemicalCompound",
    "Mountain",
    "River",
    "Street",
}
PREFIXES = """
PREFIX wd: <http://www.wikidata.org/entity/>
PREFIX wdt: <http://www.wikidata.org/prop/direct/>
PREFIX wikibase: <http://wikiba.se/ontology#>
PREFIX schema: <http://schema.org/>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
"""


@pytest.fixture(scope="module")
def store() -> Store:
    """The committed snapshot, opened the way the app opens it (its on-disk store)."""
    from core.wikidata.open_source import load_demo_source

    return load_demo_source().store


def select(store: Store, query: str) -> list[tuple[object, ...]]:
    solutions = store.query(PREFIXES + query)
    assert isinstance(solutions, QuerySolutions)
    return [tuple(row) for row in solutions]


def number(term: object) -> int:
    assert isinstance(term, Literal)
    return int(term.value)


def count(store: Store, where: str) -> int:
    return number(select(store, f"SELECT (COUNT(*) AS ?n) WHERE {{ {where} }}")[0][0])


def test_committed_file_is_what_the_script_writes(tmp_path: Path) -> None:
    # The script itself, in its own process: it holds every triple as text, joined and
    # compressed, about 600 MB at its peak, which would stay this worker's high-water mark.
    output = tmp_path / "snapshot.nt.gz"
    subprocess.run(
        [sys.executable, "-m", "resources.demo.make_snapshot", "--output", str(output)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=600,
    )
    assert output.read_bytes() == make_snapshot.OUTPUT.read_bytes()
    assert make_snapshot.OUTPUT.stat().st_size < 8_000_000


def test_file_loads_into_pyoxigraph(store: Store) -> None:
    assert len(store) > 500_000


@pytest.mark.parametrize("category", CATEGORIES, ids=lambda c: c["name"])
def test_every_category_has_members(store: Store, category: dict[str, str]) -> None:
    size = count(store, f"SELECT DISTINCT ?item WHERE {{ {category['pattern']} }}")
    if category["name"] in LARGE:
        assert 1500 <= size <= 4000
    else:
        assert 200 <= size <= 800


def test_subclass_path_matters(store: Store) -> None:
    direct = count(store, "?item wdt:P31 wd:Q515 .")
    closure = count(store, "?item wdt:P31/wdt:P279* wd:Q515 .")
    assert 0 < direct < closure


@pytest.mark.parametrize("name", sorted(LARGE))
def test_statement_counts_are_heavy_tailed(store: Store, name: str) -> None:
    pattern = next(c["pattern"] for c in CATEGORIES if c["name"] == name)
    rows = select(store, f"SELECT ?item ?n WHERE {{ {pattern} ?item wikibase:statements ?n }}")
    counts = sorted((number(n) for _, n in rows), reverse=True)
    top = counts[: len(counts) // 5]
    assert sum(top) >= 0.6 * sum(counts)
    assert counts[0] >= 100
    assert sorted(counts)[len(counts) // 2] <= 10


def test_every_entity_is_labelled_and_marked_demo(store: Store) -> None:
    entities = "?e wikibase:statements ?n ."
    no_label = "FILTER NOT EXISTS {{ ?e rdfs:label ?l FILTER(lang(?l) = '{}') }}"
    assert count(store, f"{entities} {no_label.format('en')}") == 0
    assert (
        count(
            store,
            f"""{entities} FILTER NOT EXISTS {{
        ?e schema:description ?d FILTER(lang(?d) = 'en' && STRSTARTS(?d, '[demo] ')) }}""",
        )
        == 0
    )
    assert count(store, "?e schema:description ?d FILTER(!STRSTARTS(?d, '[demo] '))") == 0
    # Long-tail entities sometimes lack an Italian label.
    assert count(store, f"{entities} {no_label.format('it')}") > 1000


def test_sitelinks_agree_with_articles(store: Store) -> None:
    rows = select(
        store,
        """SELECT ?e ?m (COUNT(?page) AS ?k) WHERE {
        ?e wikibase:sitelinks ?m .
        OPTIONAL { ?page schema:about ?e ; schema:isPartOf ?wiki ; schema:inLanguage ?lang }
    } GROUP BY ?e ?m""",
    )
    assert all(number(m) >= number(k) for _, m, k in rows)
    per_k = [sum(1 for *_, k in rows if number(k) == n) for n in range(4)]
    assert per_k[1] > 100 and per_k[3] > 100 and per_k[0] > 100


def test_materialised_statements_are_complete(store: Store) -> None:
    rows = select(
        store,
        """SELECT ?e ?n (COUNT(?st) AS ?k) WHERE {
        ?e wikibase:statements ?n . ?prop wikibase:claim ?p . ?e ?p ?st .
    } GROUP BY ?e ?n""",
    )
    assert rows and all(number(k) <= number(n) for _, n, k in rows)
    assert max(number(k) for *_, k in rows) <= make_snapshot.CLAIM_CAP
    assert (
        count(
            store,
            """?prop wikibase:claim ?p ; wikibase:statementProperty ?ps .
        ?e ?p ?st . FILTER NOT EXISTS { ?st ?ps ?v } """,
        )
        == 0
    )
    assert (
        count(
            store,
            "?prop wikibase:claim ?p . ?e ?p ?st . FILTER NOT EXISTS { ?st wikibase:rank ?r }",
        )
        == 0
    )
    ranks = select(store, "SELECT ?r (COUNT(*) AS ?n) WHERE { ?st wikibase:rank ?r } GROUP BY ?r")
    assert len(ranks) == 3


def test_truthy_only_for_best_rank(store: Store) -> None:
    rank_of = {
        q.subject.value: q.object.value.rsplit("#", 1)[1]
        for q in store.quads_for_pattern(None, NamedNode(make_snapshot.WIKIBASE + "rank"), None)
    }
    expected: set[tuple[str, str, str]] = set()
    truthy: set[tuple[str, str, str]] = set()
    for pid in make_snapshot.PROPERTIES:
        value_of = {
            q.subject.value: str(q.object)
            for q in store.quads_for_pattern(None, NamedNode(make_snapshot.PS + pid), None)
        }
        by_entity: dict[str, list[tuple[str, str]]] = {}
        for q in store.quads_for_pattern(None, NamedNode(make_snapshot.P_NS + pid), None):
            statement = q.object.value
            by_entity.setdefault(q.subject.value, []).append(
                (value_of[statement], rank_of[statement])
            )
        for entity, values in by_entity.items():
            ranks = {rank for _, rank in values}
            best = "PreferredRank" if "PreferredRank" in ranks else "NormalRank"
            expected |= {(entity, pid, v) for v, rank in values if rank == best}
        truthy |= {
            (q.subject.value, pid, str(q.object))
            for q in store.quads_for_pattern(None, NamedNode(make_snapshot.WDT + pid), None)
        }
    assert truthy == expected
    assert set(rank_of.values()) == {"PreferredRank", "NormalRank", "DeprecatedRank"}


def test_chains_exist(store: Store) -> None:
    # person -> place of birth (a city) -> country; painting -> creator -> place of birth.
    assert count(store, "?p wdt:P19 ?city . ?city wdt:P17 ?country . ?country wdt:P36 ?c") > 1000
    assert count(store, "?w wdt:P170 ?a . ?w wdt:P31 wd:Q3305213 . ?a wdt:P19 ?city") > 500
    assert count(store, "?r wdt:P403 ?m . ?m wdt:P403 ?n") > 100
    assert count(store, "?t wdt:P171 ?g . ?g wdt:P171 ?f . ?f wdt:P171 ?o") > 500


def test_every_used_property_is_declared(store: Store) -> None:
    used = {
        str(row[0].value).rsplit("/", 1)[1]
        for row in select(
            store,
            "SELECT DISTINCT ?p WHERE { ?s ?p ?o FILTER(STRSTARTS(STR(?p), "
            "'http://www.wikidata.org/prop/direct/')) }",
        )
    }
    declared = {
        str(row[0].value).rsplit("/", 1)[1]
        for row in select(
            store,
            "SELECT ?prop WHERE { ?prop wikibase:propertyType ?type ; "
            "wikibase:directClaim ?wdt ; wikibase:claim ?p ; wikibase:statementProperty ?ps }",
        )
    }
    assert used and used <= declared
    types = {
        str(row[0].value).rsplit("#", 1)[1]
        for row in select(store, "SELECT DISTINCT ?t WHERE { ?prop wikibase:propertyType ?t }")
    }
    assert types == {
        "WikibaseItem",
        "Time",
        "Quantity",
        "String",
        "ExternalId",
        "Url",
        "CommonsMedia",
        "GlobeCoordinate",
        "Monolingualtext",
    }
    assert (
        count(
            store,
            "?s ?p ?o FILTER(STRSTARTS(STR(?o), 'http://www.wikidata.org/.well-known/genid/'))",
        )
        > 0
    )
