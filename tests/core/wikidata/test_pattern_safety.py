"""A membership pattern from a session is untrusted: nothing but a basic graph pattern over
Wikidata's vocabulary runs, and a hostile one sends no request anywhere.

Each hostile pattern aims a SERVICE (or a full IRI) at a logging HTTP server on 127.0.0.1;
it is stored in a real session behind save_category's back (as a shared session file
would carry it) and fetched through the embedded Oxigraph store, which runs SERVICE
clauses itself. The server must see nothing; a control shows that it would.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli import main
from core.jobs import JobFailed, run_job
from core.store import SessionStore
from core.wikidata import queries
from core.wikidata.categories import Category, default_categories, default_pattern
from core.wikidata.category_store import find_category, save_category
from core.wikidata.embedded import EmbeddedSource
from core.wikidata.endpoint import SparqlEndpointSource
from core.wikidata.fetch import fetch_category_job
from core.wikidata.queries import PatternRefused
from tests.fixtures.fake_sparql_endpoint import FakeEndpoint
from tests.fixtures.wikidata_graph import CITY_QIDS

ROOT = Path(__file__).resolve().parents[3]
CITY = "?item wdt:P31/wdt:P279* wd:Q515 ."
SPY = "<URL> { ?item ?p ?o }"  # what a SERVICE clause asks the logging server

# (pattern, a word the refusal must contain). "URL" is the logging server's address.
HOSTILE = {
    # An escaped "#" in a prefixed name: a scanner took the rest of the line for a comment.
    "escaped-hash": (
        f"{CITY} OPTIONAL {{ ?item wdt:P1 wd:a\\# }} SERVICE {SPY} {{\n}}",
        "not valid SPARQL",
    ),
    # An escaped quote in a prefixed name: a scanner took what follows for a string.
    "escaped-quote": (
        f"{CITY} OPTIONAL {{ ?item wdt:P1 wd:a\\' }} SERVICE {SPY} "
        "OPTIONAL { ?item rdfs:label 'x' }",
        "wd",  # refused as the IRI <...entity/a\'> or as OPTIONAL, whichever comes first
    ),
    "local-name-escape": (f"?item wdt:P31 wd:Q\\-5 . SERVICE {SPY}", "<"),
    "unicode-escape": (f"{CITY} \\u0053ERVICE {SPY}", "SERVICE"),
    "unicode-escape-inside": (f"{CITY} SERV\\u0049CE {SPY}", "SERVICE"),
    "upper-unicode-escape": (f"{CITY} \\U00000053ERVICE {SPY}", "SERVICE"),
    "lower-case-silent": (f"{CITY} service silent {SPY}", "SERVICE"),
    "comment-hides-brace": (f"{CITY} # }}\nSERVICE {SPY}", "SERVICE"),
    "comment-then-newline": (f"{CITY} #\n SERVICE {SPY}", "SERVICE"),
    "nested-groups": (f"{{ {{ {{ {CITY} }} SERVICE {SPY} }} }}", "SERVICE"),
    "union-branch": (f"{{ {CITY} }} UNION {{ SERVICE {SPY} }}", "SERVICE"),
    "closes-the-where": (f"{{ }} }} SERVICE {SPY} {{", "not valid SPARQL"),
    "closes-then-values": (f"{CITY} }} VALUES ?item {{ wd:Q1 ", "VALUES"),
    "closes-then-limit": (f"{CITY} }} LIMIT 1 VALUES ?x {{ ", "one group pattern"),
    "variable-endpoint": (f"{CITY} BIND(<URL> AS ?s) SERVICE ?s {{ ?item ?p ?o }}", "BIND"),
    "values": (f"VALUES ?s {{ <URL> }} {CITY} SERVICE ?s {{ ?item ?p ?o }}", "VALUES"),
    "full-iri-predicate": (f"{CITY} ?item <URL> ?o .", "the IRI <http://127.0.0.1"),
    "full-iri-object": ("?item wdt:P31 <URL> .", "the IRI <http://127.0.0.1"),
    "a-other-class": ("?item a <http://xmlns.com/foaf/0.1/Person> .", "the IRI"),
    "datatype-iri": (f'{CITY} ?item rdfs:label "x"^^<URL> .', "the IRI"),
    "relative-iri": (f"{CITY} ?item wdt:P17 <evil> .", "the IRI"),
    "graph": ("GRAPH <URL> { ?item wdt:P31 wd:Q515 }", "GRAPH"),
    "sub-select": (f"{{ SELECT ?item WHERE {{ {CITY} SERVICE {SPY} }} }}", "sub-query"),
    "filter-exists-service": (f"{CITY} FILTER EXISTS {{ SERVICE {SPY} }}", "FILTER"),
    "filter-not-exists": (f"{CITY} FILTER NOT EXISTS {{ ?item wdt:P17 wd:Q38 }}", "FILTER"),
    "filter-function": (f"{CITY} FILTER(<URL>(?item))", "FILTER"),
    "optional-service": (f"{CITY} OPTIONAL {{ SERVICE {SPY} }}", "OPTIONAL"),
    "minus-service": (f"{CITY} MINUS {{ SERVICE {SPY} }}", "MINUS"),
    "load": (f"{CITY} }} ; LOAD <URL> #", "not valid SPARQL"),
    "insert": (f"{CITY} }} ; INSERT DATA {{ <URL> <URL> <URL> }} #", "not valid SPARQL"),
    "negated-path": (f"{CITY} ?item !(wdt:P31) ?o . SERVICE {SPY}", "negated"),
    "undeclared-prefix": (f"?item ex:a\\-b ?o . SERVICE {SPY}", "prefix ex:"),
    "no-item": ("?x wdt:P31 wd:Q515 .", "bind ?item"),
    "deep-nesting": ("{ " * 40 + CITY + " }" * 40, "nested"),
    "too-long": (CITY + " ?item rdfs:label ?l ." * 400, "characters long"),
    "lone-surrogate": (CITY + ' ?item rdfs:label "\ud800" .', "not valid text"),
}

# Patterns that must still pass: every bundled category, the default, other ways to say
# membership, and text that only looks hostile (inside a string literal).
LEGITIMATE = [c.pattern for c in default_categories()] + [
    default_pattern("Q515", "P31"),
    default_pattern("Q33999", "P106"),
    "?item wdt:P31 wd:Q515 .",
    "?item wdt:P31 wd:Q515",  # no final dot
    "?item p:P31/ps:P31 wd:Q515 .",
    "?item p:P31 [ ps:P31 wd:Q515 ] .",
    "?item p:P31 ?st . ?st ps:P31 wd:Q515 ; wikibase:rank wikibase:PreferredRank .",
    "?item (wdt:P31|wdt:P279)+ wd:Q515 .",
    "?item wdt:P31 ?class . ?class wdt:P279? wd:Q515 .",
    "wd:Q515 ^wdt:P31 ?item .",
    "?item a wikibase:Item ; wdt:P31 wd:Q515 .",
    "?item <http://www.wikidata.org/prop/direct/P31> <http://www.wikidata.org/entity/Q515> .",
    "{ ?item wdt:P31 wd:Q515 } UNION { ?item wdt:P31 wd:Q1549591 } # a comment }",
    "{ { ?item wdt:P31 wd:Q515 } }",
    "?item wdt:P31 wd:Q515 ; wdt:P17 wd:Q38 .",
    "?item wdt:P31 wd:Q\\u0035\\u0031\\u0035 .",  # a \\u escape that spells wd:Q515
    "?item wdt:P31 wd:Q515 ; wdt:P17 ?with . ?with wdt:P36 ?Order .",
    '?item wdt:P31 wd:Q515 . ?item rdfs:label ?l . ?item schema:description "x"@en-GB .',
    # Looks hostile, but is one literal: sent escaped, it is data, not a clause.
    '?item wdt:P31 wd:Q515 ; rdfs:label "a\\" } SERVICE <URL> { ?s ?p ?o } #" .',
    "?item wdt:P31 wd:Q515 ; rdfs:label 'it\\'s } SERVICE <URL> {' .",
    '?item wdt:P31 wd:Q515 ; rdfs:label """a\n} SERVICE <URL> {""" .',
]


@pytest.fixture(scope="module")
def embedded(fixture_nt: Path) -> EmbeddedSource:
    return EmbeddedSource.from_file(fixture_nt)


@pytest.fixture(scope="module")
def shared_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real session for the table (each case stores its own category in it)."""
    path = tmp_path_factory.mktemp("shared") / "shared.taillens"
    SessionStore.create(path).close()
    return path


@pytest.fixture
def spy(fake_endpoint: FakeEndpoint) -> Iterator[FakeEndpoint]:
    """The logging server on 127.0.0.1: it records every request it gets."""
    yield fake_endpoint


def _aimed(pattern: str, spy: FakeEndpoint) -> str:
    return pattern.replace("URL", spy.url)


def _store_behind_the_checks(path: Path, name: str, pattern: str) -> None:
    """Write a category row with sqlite3, as a shared session file may carry it."""
    if not path.exists():
        SessionStore.create(path).close()
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO categories (name, class_qid, membership_property, pattern, is_default) "
            "VALUES (?, 'Q515', 'P31', ?, 0)",
            (name, pattern),
        )
    db.close()


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_pattern_is_refused_and_nothing_is_requested(
    case: str, spy: FakeEndpoint, embedded: EmbeddedSource, shared_session: Path
) -> None:
    raw, word = HOSTILE[case]
    pattern = _aimed(raw, spy)
    with pytest.raises(PatternRefused) as refused:
        queries.canonical_pattern(pattern)
    message = str(refused.value)
    assert message.startswith("the membership pattern") and "\n" not in message
    assert word.replace("URL", spy.url) in message, message

    if "?item" not in pattern or case == "lone-surrogate":
        return  # a Category (or SQLite's UTF-8) cannot even hold it
    name = f"Evil {case}"
    _store_behind_the_checks(shared_session, name, pattern)
    with SessionStore.open(shared_session) as store:
        category = find_category(store, name)  # it loads, so the user can see and fix it
        assert category.pattern == pattern
        outcome = run_job(fetch_category_job(store, embedded, category, 50, 10))
        assert isinstance(outcome, JobFailed) and isinstance(outcome.error, PatternRefused)
        assert str(outcome.error).startswith(f"{name}: the membership pattern")
        with pytest.raises(PatternRefused):
            save_category(store, category)  # nor can it be saved again
    assert spy.requests == []


@pytest.mark.parametrize("case", ["escaped-quote", "unicode-escape", "values", "graph"])
def test_hostile_pattern_is_refused_before_an_endpoint_is_asked(
    case: str, spy: FakeEndpoint
) -> None:
    source = SparqlEndpointSource(spy.url, timeout_s=2, sleep=lambda s: None)
    category = Category("Evil", "Q515", "P31", _aimed(HOSTILE[case][0], spy))
    with pytest.raises(PatternRefused):
        source.members_page(category, 0, 10)
    assert spy.requests == []


def test_the_logging_server_would_see_a_service_request(
    spy: FakeEndpoint, embedded: EmbeddedSource
) -> None:
    """The control: Oxigraph does send a SERVICE request, so the zero above means something."""
    text = f"SELECT * WHERE {{ SERVICE <{spy.url}> {{ ?s ?p ?o }} }}"
    with pytest.raises(OSError):
        list(embedded.store.query(text))
    assert spy.requests


@pytest.mark.parametrize("pattern", LEGITIMATE)
def test_legitimate_pattern_passes_and_is_sent_as_checked(
    pattern: str, spy: FakeEndpoint, embedded: EmbeddedSource
) -> None:
    pattern = _aimed(pattern, spy)
    canonical = queries.canonical_pattern(pattern)
    assert canonical == queries.canonical_pattern(canonical)  # a fixed point
    query = queries.members_page(Category("Ok", "Q515", "P31", pattern), 10, 0)
    assert isinstance(query, queries.SparqlQuery) and canonical in query
    embedded.members_page(Category("Ok", "Q515", "P31", pattern), 0, 10)
    assert spy.requests == []


def test_bundled_and_alternative_forms_find_the_same_members(embedded: EmbeddedSource) -> None:
    def members(pattern: str) -> list[str]:
        page = embedded.members_page(Category("C", "Q515", "P31", pattern), 0, 100)
        return [e.qid for e in page.entities]

    assert members(CITY) == sorted(CITY_QIDS, key=lambda q: int(q[1:]))
    assert members("?item p:P31 [ ps:P31 ?c ] . ?c wdt:P279* wd:Q515 .") == members(CITY)
    assert members("{ ?item wdt:P31 wd:Q515 } UNION { ?item wdt:P31 wd:Q1549591 }") == members(CITY)


def test_only_texts_built_by_queries_are_run(embedded: EmbeddedSource, spy: FakeEndpoint) -> None:
    text = f"SELECT * WHERE {{ SERVICE <{spy.url}> {{ ?s ?p ?o }} }}"
    with pytest.raises(TypeError):
        embedded.select(text)
    with pytest.raises(TypeError):
        SparqlEndpointSource(spy.url, timeout_s=2).select(text)
    assert spy.requests == []


def test_syntax_errors_point_into_the_pattern() -> None:
    with pytest.raises(PatternRefused, match=r"line 2, column 3 \(near '\.   \?item wdt:P17'\)"):
        queries.canonical_pattern("?item wdt:P31 wd:Q515 .\n  .   ?item wdt:P17 ")


def test_cli_fetch_of_a_shared_session_sends_nothing(
    spy: FakeEndpoint, tmp_path: Path, taillens_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "shared.taillens"
    _store_behind_the_checks(path, "Evil", _aimed(HOSTILE["escaped-quote"][0], spy))
    env = dict(os.environ, TAILLENS_HOME=str(taillens_home), QT_QPA_PLATFORM="offscreen")
    result = subprocess.run(
        [sys.executable, "-m", "app", "fetch", "Evil", "--session", str(path), "--quiet"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("taillens: Evil: the membership pattern may not contain")
    assert "Traceback" not in result.stderr
    assert main(["category", "list", "--session", str(path), "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["Evil"]["refused"].startswith("the membership pattern may not contain")
    assert rows["City"]["refused"] is None
    assert spy.requests == []


def test_checking_a_pattern_keeps_nothing_of_its_caller() -> None:
    """With pyparsing's packrat cache on (matplotlib turns it on for the whole process),
    the exceptions it keeps held every frame of the caller's stack, a window included."""
    import contextlib
    import gc
    import weakref

    from pyparsing import ParserElement

    was_on = ParserElement._packratEnabled
    ParserElement.enable_packrat()

    class Held:
        pass

    def check(pattern: str) -> weakref.ref[Held]:
        held = Held()  # a local of the caller, as the window is in the app
        with contextlib.suppress(PatternRefused):
            queries.canonical_pattern.__wrapped__(pattern)
        return weakref.ref(held)

    try:
        refs = [check("?item wdt:P31 wd:Q515 . FILTER("), check("?item wdt:P31 wd:Q5 .")]
        gc.collect()
        assert [ref() for ref in refs] == [None, None]
    finally:
        if not was_on:
            ParserElement.disable_memoization()
