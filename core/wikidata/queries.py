"""SPARQL texts, as named templates with validated parameters.

Every source (the Wikidata Query Service, another endpoint, the embedded demo store)
runs exactly these texts, so they must only use Wikidata's RDF vocabulary and standard
SPARQL 1.1 (no ``wikibase:label`` SERVICE, which only the Query Service has).

Nothing is ever pasted into a query unchecked: ids must match their pattern, numbers are
bounded ints, string literals are escaped, and a user's membership pattern is scanned
and then parsed (inside the full query) before any request is made.
"""

from __future__ import annotations

import re
from functools import lru_cache
from string import Template

from core.errors import UserFacingError
from core.wikidata.categories import PID_RE, QID_RE, Category
from core.wikidata.records import LANGUAGES

MAX_LIMIT = 50_000
MAX_OFFSET = 10_000_000

ENTITY = "http://www.wikidata.org/entity/"
GENID = "http://www.wikidata.org/.well-known/genid/"
WIKIBASE = "http://wikiba.se/ontology#"
WIKIS: dict[str, str] = {lang: f"https://{lang}.wikipedia.org/" for lang in LANGUAGES}

PREFIXES = """\
PREFIX wd: <http://www.wikidata.org/entity/>
PREFIX wdt: <http://www.wikidata.org/prop/direct/>
PREFIX p: <http://www.wikidata.org/prop/>
PREFIX ps: <http://www.wikidata.org/prop/statement/>
PREFIX psv: <http://www.wikidata.org/prop/statement/value/>
PREFIX wdno: <http://www.wikidata.org/prop/novalue/>
PREFIX wikibase: <http://wikiba.se/ontology#>
PREFIX schema: <http://schema.org/>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
"""

# wikibase:propertyType local names -> the datatype names of Wikidata's JSON and UI.
PROPERTY_TYPES: dict[str, str] = {
    "WikibaseItem": "wikibase-item",
    "WikibaseProperty": "wikibase-property",
    "WikibaseLexeme": "wikibase-lexeme",
    "Time": "time",
    "Quantity": "quantity",
    "String": "string",
    "ExternalId": "external-id",
    "Url": "url",
    "CommonsMedia": "commonsMedia",
    "GlobeCoordinate": "globe-coordinate",
    "Monolingualtext": "monolingualtext",
    "Math": "math",
    "GeoShape": "geo-shape",
    "TabularData": "tabular-data",
    "MusicalNotation": "musical-notation",
}

RANK_NAMES: dict[str, str] = {
    WIKIBASE + "PreferredRank": "preferred",
    WIKIBASE + "NormalRank": "normal",
    WIKIBASE + "DeprecatedRank": "deprecated",
}


class QueryError(UserFacingError):
    """A query could not be built: a bad id, number, language or membership pattern."""


# -- parameters -----------------------------------------------------------------------


def check_qid(qid: str) -> str:
    if not isinstance(qid, str) or not QID_RE.match(qid):
        raise QueryError(f"{qid!r} is not a Wikidata item id like Q42")
    return qid


def check_pid(pid: str) -> str:
    if not isinstance(pid, str) or not PID_RE.match(pid):
        raise QueryError(f"{pid!r} is not a Wikidata property id like P31")
    return pid


def check_lang(lang: str) -> str:
    if lang not in LANGUAGES:
        raise QueryError(f"language {lang!r} is not one of {', '.join(LANGUAGES)}")
    return lang


def check_int(value: int, name: str, low: int, high: int) -> int:
    # bool is an int subclass; True as a LIMIT is a bug, not a 1.
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise QueryError(f"{name} must be a whole number from {low} to {high}, not {value!r}")
    return value


_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "'": "\\'",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}


def string_literal(text: str, lang: str | None = None) -> str:
    """``text`` as a double-quoted SPARQL literal that cannot end early."""
    escaped = "".join(_ESCAPES.get(ch, ch) for ch in text)
    return f'"{escaped}"' + (f"@{check_lang(lang)}" if lang else "")


# -- user membership patterns ---------------------------------------------------------

# Whole keyword tokens only: not ?with or $order (variables), wd:Order or order:x
# (prefixed names), _:with (blank nodes) nor a longer name such as "withdrawn".
_FORBIDDEN = re.compile(
    r"(?<![\w?$:])(SERVICE|INSERT|DELETE|LOAD|CLEAR|DROP|CREATE|ADD|MOVE|COPY|WITH|USING|"
    r"PREFIX|BASE|SELECT|CONSTRUCT|DESCRIBE|ASK|LIMIT|OFFSET|ORDER|GROUP|HAVING)(?![\w:])",
    re.IGNORECASE,
)
_STRING = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""|'
    r"'''(?:[^'\\]|\\.|'(?!''))*'''|"
    r'"(?:[^"\\\n\r]|\\.)*"|'
    r"'(?:[^'\\\n\r]|\\.)*'",
    re.DOTALL,
)
_IRI = re.compile(r"<[^<>\"{}|^`\\\s]*>")
_COMMENT = re.compile(r"#[^\n\r]*")


def _code_only(pattern: str) -> str:
    """The pattern with string literals, IRIs and comments blanked out, for scanning."""
    out = []
    pos = 0
    while pos < len(pattern):
        for regex in (_STRING, _IRI, _COMMENT):
            match = regex.match(pattern, pos)
            if match:
                out.append(" ")
                pos = match.end()
                break
        else:
            out.append(pattern[pos])
            pos += 1
    return "".join(out)


def check_pattern(pattern: str) -> str:
    """Refuse a membership pattern that is more (or other) than one group pattern."""
    if not isinstance(pattern, str) or not pattern.strip():
        raise QueryError("the membership pattern is empty")
    if "?item" not in pattern and "$item" not in pattern:
        raise QueryError("the membership pattern must bind ?item")
    code = _code_only(pattern)
    depth = 0
    for ch in code:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                # A "}" that closes our WHERE would let the rest be anything.
                raise QueryError(
                    "the membership pattern has a '}' without a matching '{'; "
                    "it must be a single group pattern"
                )
    if depth:
        raise QueryError("the membership pattern has unbalanced braces '{' and '}'")
    forbidden = _FORBIDDEN.search(code)
    if forbidden:
        raise QueryError(
            f"the membership pattern may not contain {forbidden.group(1).upper()}; "
            "it must be a group pattern that binds ?item, like ?item wdt:P31 wd:Q515 ."
        )
    return pattern


@lru_cache(maxsize=1)
def _empty_store() -> object:
    import pyoxigraph

    return pyoxigraph.Store()


def parse_check(query: str, what: str = "query") -> str:
    """Parse ``query`` with Oxigraph (against an empty store) so syntax errors stay local."""
    store = _empty_store()
    try:
        result = store.query(query)  # type: ignore[attr-defined]
        for _ in result:  # evaluation over no data is instant; parsing is the point
            break
    except SyntaxError as exc:
        raise QueryError(f"the {what} is not valid SPARQL: {exc}") from exc
    return query


# -- templates ------------------------------------------------------------------------

TEMPLATES: dict[str, Template] = {
    "members_page": Template(
        PREFIXES
        + """\
SELECT ?item ?statements ?sitelinks ?label ?wiki_en ?wiki_it ?wiki_es WHERE {
  {
    SELECT DISTINCT ?item WHERE {
      {
$pattern
      }
      FILTER(isIRI(?item) && STRSTARTS(STR(?item), "http://www.wikidata.org/entity/Q"))
    }
    ORDER BY ?item
    LIMIT $limit
    OFFSET $offset
  }
  OPTIONAL { ?item wikibase:statements ?statements . }
  OPTIONAL { ?item wikibase:sitelinks ?sitelinks . }
  OPTIONAL { ?item rdfs:label ?label . FILTER(LANG(?label) = "en") }
  # An item has at most one sitelink per wiki, so these OPTIONALs add no rows; EXISTS
  # would say the same but is evaluated far more slowly by Oxigraph (1 s per page).
  OPTIONAL { ?a_en schema:about ?item ; schema:isPartOf <https://en.wikipedia.org/> . }
  BIND(BOUND(?a_en) AS ?wiki_en)
  OPTIONAL { ?a_it schema:about ?item ; schema:isPartOf <https://it.wikipedia.org/> . }
  BIND(BOUND(?a_it) AS ?wiki_it)
  OPTIONAL { ?a_es schema:about ?item ; schema:isPartOf <https://es.wikipedia.org/> . }
  BIND(BOUND(?a_es) AS ?wiki_es)
}
ORDER BY ?item
"""
    ),
    "entity_terms": Template(
        PREFIXES
        + """\
SELECT ?kind ?text WHERE {
  {
    wd:$qid rdfs:label ?text . BIND("label" AS ?kind)
  } UNION {
    wd:$qid schema:description ?text . BIND("description" AS ?kind)
  } UNION {
    wd:$qid skos:altLabel ?text . BIND("alias" AS ?kind)
  }
  FILTER(LANG(?text) IN ($langs))
}
"""
    ),
    # Two kinds of rows in one request: statements (?st bound) and the labels of the
    # properties and item values they use (?labelled bound).
    "entity_claims": Template(
        PREFIXES
        + """\
SELECT DISTINCT ?st ?prop ?ptype ?rank ?value ?novalue ?precision ?unit ?labelled ?ltext
WHERE {
  {
    wd:$qid ?claim ?st .
    ?prop wikibase:claim ?claim ;
          wikibase:statementProperty ?sprop ;
          wikibase:propertyType ?ptype .
    ?st wikibase:rank ?rank .
    OPTIONAL { ?st ?sprop ?value . }
    OPTIONAL { ?prop wikibase:novalue ?noclass . ?st a ?noclass . BIND(true AS ?novalue) }
    OPTIONAL {
      ?prop wikibase:statementValue ?vprop .
      ?st ?vprop ?node .
      OPTIONAL { ?node wikibase:timePrecision ?precision . }
      OPTIONAL { ?node wikibase:quantityUnit ?unit . }
    }
  } UNION {
    wd:$qid ?claim2 ?st2 .
    ?labelled wikibase:claim ?claim2 ; rdfs:label ?ltext .
    FILTER(LANG(?ltext) IN ($langs))
  } UNION {
    wd:$qid ?claim3 ?st3 .
    ?prop3 wikibase:claim ?claim3 ; wikibase:statementProperty ?sprop3 .
    ?st3 ?sprop3 ?labelled .
    FILTER(isIRI(?labelled) && STRSTARTS(STR(?labelled), "http://www.wikidata.org/entity/"))
    ?labelled rdfs:label ?ltext .
    FILTER(LANG(?ltext) IN ($langs))
  }
}
"""
    ),
    # The knowledge beam search (METHODS §3): the item values of one property for a
    # set of bound subjects, truthy (wdt:, the best rank) and with their statement.
    "triple_values": Template(
        PREFIXES
        + """\
SELECT ?s ?st ?o WHERE {
  VALUES ?s { $subjects }
  ?s wdt:$pid ?o .
  ?s p:$pid ?st .
  ?st ps:$pid ?o .
  FILTER(isIRI(?o) && STRSTARTS(STR(?o), "http://www.wikidata.org/entity/Q"))
}
ORDER BY ?s ?o ?st
LIMIT $limit OFFSET $offset
"""
    ),
    # Labels of a set of items or properties in one language.
    "item_labels": Template(
        PREFIXES
        + """\
SELECT ?item ?text WHERE {
  VALUES ?item { $items }
  ?item rdfs:label ?text .
  FILTER(LANG(?text) = $lang)
}
"""
    ),
    # Whether a property exists, and its datatype.
    "property_type": Template(
        PREFIXES
        + """\
SELECT ?ptype WHERE { wd:$pid wikibase:propertyType ?ptype . }
"""
    ),
}

_LANGS = ", ".join(string_literal(lang) for lang in LANGUAGES)


def members_page(category: Category, limit: int, offset: int) -> str:
    """One stable page of a category's members with their popularity signals."""
    pattern = check_pattern(category.pattern)
    text = TEMPLATES["members_page"].substitute(
        pattern=pattern,
        limit=check_int(limit, "limit", 1, MAX_LIMIT),
        offset=check_int(offset, "offset", 0, MAX_OFFSET),
    )
    return parse_check(text, f"membership pattern of {category.name!r}")


def entity_terms(qid: str) -> str:
    """Labels, descriptions and aliases of one item in the app's languages."""
    return TEMPLATES["entity_terms"].substitute(qid=check_qid(qid), langs=_LANGS)


def entity_claims(qid: str) -> str:
    """Statements of one item, with ranks, datatypes and labels of what they mention."""
    return TEMPLATES["entity_claims"].substitute(qid=check_qid(qid), langs=_LANGS)


MAX_VALUES_SUBJECTS = 200  # bound subjects per triple_values request


def triple_values(subjects: list[str], pid: str, limit: int, offset: int) -> str:
    """One page of the item values of ``pid`` for up to 200 bound subjects."""
    if not subjects or len(subjects) > MAX_VALUES_SUBJECTS:
        raise QueryError(
            f"triple_values needs 1 to {MAX_VALUES_SUBJECTS} subjects, not {len(subjects)}"
        )
    return TEMPLATES["triple_values"].substitute(
        subjects=" ".join(f"wd:{check_qid(q)}" for q in subjects),
        pid=check_pid(pid),
        limit=check_int(limit, "limit", 1, MAX_LIMIT),
        offset=check_int(offset, "offset", 0, MAX_OFFSET),
    )


def item_labels(ids: list[str], lang: str) -> str:
    """Labels of up to 200 items or properties in ``lang``."""
    if not ids or len(ids) > MAX_VALUES_SUBJECTS:
        raise QueryError(f"item_labels needs 1 to {MAX_VALUES_SUBJECTS} ids, not {len(ids)}")
    checked = [check_pid(i) if i.startswith("P") else check_qid(i) for i in ids]
    return TEMPLATES["item_labels"].substitute(
        items=" ".join(f"wd:{i}" for i in checked), lang=string_literal(check_lang(lang))
    )


def property_type(pid: str) -> str:
    """The datatype of a property; no row when the source does not know it."""
    return TEMPLATES["property_type"].substitute(pid=check_pid(pid))
