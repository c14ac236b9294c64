"""A real Oxigraph server and the embedded store answer the same queries identically."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.wikidata.embedded import EmbeddedSource
from core.wikidata.endpoint import WIKIDATA_QUERY_SERVICE, SparqlEndpointSource
from core.wikidata.sources import WikidataSource
from tests.fixtures.wikidata_graph import ACTOR, ACTOR_QIDS, CITY, CITY_QIDS, STAR


@pytest.fixture(scope="module")
def endpoint(oxigraph_url: str) -> SparqlEndpointSource:
    return SparqlEndpointSource(oxigraph_url, "tests@example.org", timeout_s=10, max_retries=0)


@pytest.fixture(scope="module")
def embedded(fixture_nt: Path) -> EmbeddedSource:
    return EmbeddedSource.from_file(fixture_nt)


def test_kinds_and_names(endpoint: SparqlEndpointSource, embedded: EmbeddedSource) -> None:
    assert isinstance(endpoint, WikidataSource) and isinstance(embedded, WikidataSource)
    assert endpoint.kind == "endpoint" and endpoint.url in endpoint.name
    assert embedded.kind == "embedded" and "demo" in embedded.name.lower()
    live = SparqlEndpointSource()
    assert live.kind == "live" and live.url == WIKIDATA_QUERY_SERVICE
    assert live.user_agent.startswith("TailLens/") and "SPARQLWrapper/" in live.user_agent


def test_gzip_file_loads_the_same(fixture_nt: Path, embedded: EmbeddedSource) -> None:
    zipped = EmbeddedSource.from_file(fixture_nt.with_name("fixture.nt.gz"))
    assert zipped.members_page(CITY, 0, 100) == embedded.members_page(CITY, 0, 100)


@pytest.mark.parametrize("source_name", ["endpoint", "embedded"])
@pytest.mark.parametrize("category,qids", [(CITY, CITY_QIDS), (ACTOR, ACTOR_QIDS)])
def test_paging_is_stable_and_complete(
    source_name: str, category: object, qids: list[str], request: pytest.FixtureRequest
) -> None:
    source = request.getfixturevalue(source_name)
    seen: list[str] = []
    offset = 0
    while True:
        page = source.members_page(category, offset, 4)
        assert page.offset == offset and page.category == category.name  # type: ignore[attr-defined]
        seen.extend(e.qid for e in page.entities)
        offset += len(page.entities)
        if len(page.entities) < 4:
            break
    assert seen == sorted(qids)  # complete, no duplicates, and in one stable order
    again = source.members_page(category, 4, 4)
    assert [e.qid for e in again.entities] == seen[4:8]


def test_counts_labels_and_wikis(endpoint: SparqlEndpointSource) -> None:
    page = endpoint.members_page(CITY, 0, 100)
    by_qid = {e.qid: e for e in page.entities}
    first = by_qid["Q1001"]
    assert (first.label, first.statement_count, first.sitelink_count) == ("City 0", 10, 0)
    assert first.wikis == {"en", "it", "es"}
    assert by_qid["Q1002"].wikis == {"en"} and by_qid["Q1004"].wikis == frozenset()
    assert by_qid["Q1004"].label is None  # no English label
    assert by_qid["Q1015"].statement_count == 10 + 14 * 7
    # The P279 path: cities that are instances of "big city" are members too.
    assert "Q1013" in by_qid


def test_entity_details(endpoint: SparqlEndpointSource) -> None:
    details = endpoint.entity(STAR)
    assert details.label(STAR) == "Actor 0" and details.label(STAR, "it") == "Attore 0"
    descriptions = {t.lang: t.text for t in details.terms if t.kind == "description"}
    assert descriptions == {
        "en": "American actor",
        "it": "attore statunitense",
        "es": "actor estadounidense",
    }
    aliases = [(t.lang, t.text) for t in details.terms if t.kind == "alias"]
    assert sorted(aliases) == [("en", 'Star "Q" \\ #1'), ("en", "The Star"), ("it", "La Stella")]
    assert details.label("P106", "es") == "ocupación" and details.label("Q1001") == "City 0"
    ranks = {c.value: c.rank for c in details.claims if c.property_pid == "P106"}
    assert ranks == {"Q33999": "preferred", "Q10800557": "normal", "Q515": "deprecated"}
    by_pid = {c.property_pid: c for c in details.claims}
    assert by_pid["P569"].value_type == "time" and by_pid["P569"].value_json == {"precision": 11}
    assert by_pid["P2048"].value_type == "quantity"
    assert by_pid["P2048"].value_json == {"unit": "Q11573"}
    assert by_pid["P214"].value_type == "external-id" and by_pid["P214"].value == "113230702"
    assert by_pid["P19"].value == "Q1001"  # the chain to a city
    somevalues = [c for c in details.claims if c.property_pid == "P22"]
    assert len(somevalues) == 2
    assert all(c.snak_type == "somevalue" and c.value is None for c in somevalues)
    assert by_pid["P26"].snak_type == "novalue" and by_pid["P26"].value is None
    assert details.property_types["P214"] == "external-id"
    assert all(c.statement_id and c.statement_id.startswith(f"{STAR}$") for c in details.claims)


def test_embedded_and_endpoint_give_identical_records(
    endpoint: SparqlEndpointSource, embedded: EmbeddedSource
) -> None:
    for category in (CITY, ACTOR):
        assert endpoint.members_page(category, 0, 100) == embedded.members_page(category, 0, 100)
    for qid in (STAR, "Q1001", "Q2002"):
        assert endpoint.entity(qid) == embedded.entity(qid)


def test_demo_data_is_read_within_its_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixture_nt: Path
) -> None:
    import gzip

    from core.wikidata import embedded
    from core.wikidata.sources import SourceError

    # A gzip bomb: 20 MB of zeros in about 20 KB; read no further than the limit (made
    # 1 MB here), and a damaged stream is one message, not a zlib traceback.
    bomb = tmp_path / "bomb.nt.gz"
    bomb.write_bytes(gzip.compress(b"\0" * 20_000_000))
    monkeypatch.setattr(embedded, "DEMO_DATA_LIMIT", 1 << 20)
    with pytest.raises(SourceError, match="more than 1 MB once decompressed"):
        EmbeddedSource.from_file(bomb)
    # The same into an on-disk store (read line by line, a line without an end bounded too).
    cache = tmp_path / "cache"
    with pytest.raises(SourceError, match="more than 1 MB once decompressed"):
        EmbeddedSource.from_file(bomb, cache=cache)
    assert list(cache.iterdir()) == []
    damaged = tmp_path / "damaged.nt.gz"
    whole = gzip.compress(fixture_nt.read_bytes())
    damaged.write_bytes(whole[:10] + bytes(b ^ 0x55 for b in whole[10:40]) + whole[40:])
    with pytest.raises(SourceError, match="Cannot load the demo data"):
        EmbeddedSource.from_file(damaged)


def test_an_on_disk_store_answers_as_the_memory_one_and_is_built_once(
    fixture_nt: Path, embedded: EmbeddedSource, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    first = EmbeddedSource.from_file(fixture_nt, cache=cache)
    assert first.members_page(CITY, 0, 100) == embedded.members_page(CITY, 0, 100)
    assert first.entity(STAR) == embedded.entity(STAR)
    (built,) = [p for p in cache.iterdir() if not p.name.startswith(".")]
    assert not [p for p in cache.iterdir() if p.name.startswith(".building")]
    stamp = {p.name: p.stat().st_mtime_ns for p in built.iterdir()}
    again = EmbeddedSource.from_file(fixture_nt, cache=cache)  # opened, not rebuilt
    assert again.members_page(ACTOR, 0, 100) == embedded.members_page(ACTOR, 0, 100)
    assert {p.name: p.stat().st_mtime_ns for p in built.iterdir()} == stamp
    # Another file (an edited snapshot) gets a store of its own.
    edited = tmp_path / "edited.nt"
    edited.write_bytes(fixture_nt.read_bytes() + b"\n")
    EmbeddedSource.from_file(edited, cache=cache)
    assert len([p for p in cache.iterdir() if not p.name.startswith(".")]) == 2


def test_a_stopped_build_is_rebuilt_and_a_cache_that_cannot_hold_one_loads_in_memory(
    fixture_nt: Path, embedded: EmbeddedSource, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    EmbeddedSource.from_file(fixture_nt, cache=cache)
    (built,) = list(cache.iterdir())
    (built / "taillens-store-complete").unlink()  # as if the build had stopped
    rebuilt = EmbeddedSource.from_file(fixture_nt, cache=cache)
    assert rebuilt.members_page(CITY, 0, 100) == embedded.members_page(CITY, 0, 100)
    assert (built / "taillens-store-complete").is_file()
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", "utf-8")
    in_memory = EmbeddedSource.from_file(fixture_nt, cache=blocked / "cache")
    assert in_memory.members_page(CITY, 0, 100) == embedded.members_page(CITY, 0, 100)


def test_bad_data_leaves_no_half_built_store(tmp_path: Path) -> None:
    from core.wikidata.sources import SourceError

    broken = tmp_path / "broken.nt"
    broken.write_text("<http://a> <http://b> this is not N-Triples .\n", "utf-8")
    cache = tmp_path / "cache"
    with pytest.raises(SourceError, match="Cannot load the demo data"):
        EmbeddedSource.from_file(broken, cache=cache)
    assert list(cache.iterdir()) == []
