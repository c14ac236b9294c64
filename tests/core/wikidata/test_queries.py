"""Query texts: parameters are validated, literals escaped, user patterns checked locally."""

from __future__ import annotations

import pytest

from core.errors import UserFacingError
from core.wikidata import queries
from core.wikidata.categories import Category
from core.wikidata.endpoint import SparqlEndpointSource
from core.wikidata.queries import QueryError
from tests.fixtures.fake_sparql_endpoint import FakeEndpoint
from tests.fixtures.wikidata_graph import CITY


def test_query_error_is_user_facing() -> None:
    assert issubclass(QueryError, UserFacingError)


@pytest.mark.parametrize(
    "qid",
    [
        "Q0",
        "Q01",
        "q42",
        "Q42 ",
        "Q42}",
        'Q42" .',
        "Q42\n}",
        "Q42#",
        "Q4\\2",
        "wd:Q42",
        "",
        "P31",
        "Q990000116\n",
        "Q42\r",
        "Q\u0664\u0662",
    ],  # a trailing newline; Arabic-Indic digits
)
def test_bad_qids_are_refused(qid: str) -> None:
    with pytest.raises(QueryError):
        queries.entity_terms(qid)
    with pytest.raises(QueryError):
        queries.entity_claims(qid)


@pytest.mark.parametrize(
    "limit,offset", [(0, 0), (-1, 0), (10, -1), (True, 0), (1.5, 0), (10**9, 0)]
)
def test_bad_bounds_are_refused(limit: object, offset: object) -> None:
    with pytest.raises(QueryError):
        queries.members_page(CITY, limit, offset)  # type: ignore[arg-type]


def test_string_literals_are_escaped_and_parse() -> None:
    nasty = 'a"} . ?s ?p ?o . FILTER(true) #\n\\ \'x\' """'
    literal = queries.string_literal(nasty, "en")
    query = queries.PREFIXES + f"SELECT ?x WHERE {{ BIND({literal} AS ?x) }}"
    queries.parse_check(query)
    import pyoxigraph

    (row,) = list(pyoxigraph.Store().query(query))
    assert row["x"].value == nasty and row["x"].language == "en"


def test_other_params_are_checked() -> None:
    assert queries.check_pid("P31") == "P31"
    with pytest.raises(QueryError):
        queries.check_pid("P31 }")
    with pytest.raises(QueryError):
        queries.check_lang("de")


def test_the_queries_parse_and_declare_prefixes() -> None:
    for text in (
        queries.members_page(CITY, 10, 0),
        queries.entity_terms("Q42"),
        queries.entity_claims("Q42"),
    ):
        queries.parse_check(text)
        assert "PREFIX wikibase: <http://wikiba.se/ontology#>" in text
    page = queries.members_page(CITY, 100, 200)
    assert "LIMIT 100" in page and "OFFSET 200" in page and "ORDER BY ?item" in page


def _category(pattern: str) -> Category:
    return Category("Custom", "Q515", "P31", pattern)


BAD_PATTERNS = [
    "?item wdt:P31 wd:Q515 . } ?s ?p ?o . {",  # closes the WHERE then reopens it
    "?item wdt:P31 wd:Q515 . }",
    "{ ?item wdt:P31 wd:Q515 .",
    "?item wdt:P31 wd:Q515 . SERVICE <http://evil.example/> { ?item ?p ?o }",
    "?item wdt:P31 wd:Q515 . } INSERT DATA { <a:a> <a:a> <a:a> } #",
    "?item wdt:P31 wd:Q515 . DELETE",
    "?item wdt:P31 wd:Q515 } LIMIT 1 #",
    "?item wdt:P31 wd:Q515 . ?item wdt:P17 ",  # a syntax error only the parser sees
    "?item wdt:P31 ?o .SERVICE <http://evil.example/> { ?item ?p ?o }",  # "." then a keyword
    "?item wdt:P31 wd:Q515 . } order by ?item #",
    "?item wdt:P31 wd:Q515 . FILTER(",
    "?item undeclared:P31 wd:Q515 .",
    # Only triple patterns, paths and UNION: no FILTER, BIND, OPTIONAL.
    "?item wdt:P31 wd:Q515 . FILTER NOT EXISTS { ?item wdt:P17 wd:Q38 }",
    "?item wdt:P31 wd:Q515 . $item wdt:P17 $select . BIND(?select AS ?limit)",
]


@pytest.mark.parametrize("pattern", BAD_PATTERNS)
def test_bad_patterns_are_refused_before_sending(pattern: str, fake_endpoint: FakeEndpoint) -> None:
    source = SparqlEndpointSource(fake_endpoint.url, timeout_s=2, sleep=lambda s: None)
    with pytest.raises(QueryError) as info:
        source.members_page(_category(pattern), 0, 10)
    assert str(info.value)
    assert fake_endpoint.requests == []


@pytest.mark.parametrize(
    "pattern",
    [
        "?item wdt:P31/wdt:P279* wd:Q515 .",
        '?item wdt:P31 wd:Q515 ; rdfs:label "a } brace # not a comment"@en .',
        "{ ?item wdt:P31 wd:Q515 } UNION { ?item wdt:P31 wd:Q1549591 } # a comment }",
        # Variables and names that merely spell a keyword are not keywords.
        "?item wdt:P31 wd:Q515 ; wdt:P17 ?with . ?with wdt:P36 ?Order .",
        "?item wdt:P31 wd:Q515 . $item wdt:P17 $select . ?select wdt:P31 ?limit .",
        "?item wdt:P31 wd:Q515 ; rdfs:label ?withdrawn .",
    ],
)
def test_good_patterns_pass(pattern: str) -> None:
    """Each pattern passes the check and its query (rebuilt from the parse, so not the
    text as written) selects what the pattern says: run against a store with one city
    (matched by every pattern) and one person (by none)."""
    import pyoxigraph

    query = queries.members_page(_category(pattern), 10, 0)
    wd, wdt = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/"
    label = "http://www.w3.org/2000/01/rdf-schema#label"
    store = pyoxigraph.Store()
    for s, p, o in (
        ("Q1", "P31", "Q515"),  # a city in France, whose capital is Paris
        ("Q1", "P17", "Q142"),
        ("Q142", "P36", "Q90"),
        ("Q142", "P31", "Q6256"),  # France is a country
        ("Q2", "P31", "Q5"),  # a person
        ("Q2", "P17", "Q142"),
    ):
        node = pyoxigraph.NamedNode
        store.add(pyoxigraph.Quad(node(wd + s), node(wdt + p), node(wd + o)))
    for qid in ("Q1", "Q2"):
        store.add(
            pyoxigraph.Quad(
                pyoxigraph.NamedNode(wd + qid),
                pyoxigraph.NamedNode(label),
                pyoxigraph.Literal("a } brace # not a comment", language="en"),
            )
        )
    items = {row["item"].value.removeprefix(wd) for row in store.query(query)}
    assert items == {"Q1"}


def test_user_agent_names_the_configured_contact(monkeypatch) -> None:
    from core.wikidata.open_source import open_source

    monkeypatch.setenv("TAILLENS_CONTACT", "curator@example.org")
    live = open_source("live")
    assert "(curator@example.org)" in live.user_agent and live.user_agent.startswith("TailLens/")
    explicit = open_source("http://127.0.0.1:9/sparql", contact="lab@example.org")
    assert "(lab@example.org)" in explicit.user_agent and explicit.kind == "endpoint"


def test_user_agent_without_a_contact_says_so_and_names_no_made_up_address(
    monkeypatch,
) -> None:
    from core.wikidata.open_source import needs_contact, open_source

    monkeypatch.delenv("TAILLENS_CONTACT", raising=False)
    for spec in ("live", "http://127.0.0.1:9/sparql"):
        agent = open_source(spec).user_agent
        assert agent.startswith("TailLens/") and "(no contact given)" in agent
        assert "github.com" not in agent and "taillens/taillens" not in agent
    assert needs_contact("live") and not needs_contact("live", "me@example.org")
    assert not needs_contact("http://127.0.0.1:9/sparql") and not needs_contact("embedded")
    monkeypatch.setenv("TAILLENS_CONTACT", "  ")  # blank is no contact either
    assert needs_contact(" live ")


@pytest.mark.parametrize("pid", ["P31\n", "P0", "p31", "P31 "])
def test_bad_pids_and_category_ids_are_refused(pid: str) -> None:
    with pytest.raises(QueryError):
        queries.check_pid(pid)
    with pytest.raises(ValueError):
        Category("Custom", "Q515", pid, "?item wdt:P31 wd:Q515 .")
    with pytest.raises(ValueError):
        Category("Custom", "Q515\n", "P31", "?item wdt:P31 wd:Q515 .")
