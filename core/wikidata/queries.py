"""SPARQL texts, as named templates with validated parameters.

Every source (the Wikidata Query Service, another endpoint, the embedded demo store)
runs exactly these texts, so they must only use Wikidata's RDF vocabulary and standard
SPARQL 1.1 (no ``wikibase:label`` SERVICE, which only the Query Service has).

Nothing is ever pasted into a query unchecked: ids must match their pattern, numbers are
bounded ints, string literals are escaped, and a user's membership pattern is parsed
(inside the whole query it builds, by rdflib), checked against an allow-list (triple
patterns, property paths and UNION over the namespaces of :data:`PREFIXES`) and written
out again from what was checked. Every text is a :class:`SparqlQuery`, and sources run
nothing else (:func:`outgoing`).
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from string import Template

from core.errors import UserFacingError
from core.vocab import LANGUAGES
from core.wikidata.categories import PID_RE, QID_RE, Category

MAX_LIMIT = 50_000
MAX_OFFSET = 10_000_000

ENTITY = "http://www.wikidata.org/entity/"
GENID = "http://www.wikidata.org/.well-known/genid/"
WIKIBASE = "http://wikiba.se/ontology#"
WIKIS: dict[str, str] = {lang: f"https://{lang}.wikipedia.org/" for lang in LANGUAGES}

NAMESPACES: dict[str, str] = {
    "wd": ENTITY,
    "wdt": "http://www.wikidata.org/prop/direct/",
    "p": "http://www.wikidata.org/prop/",
    "ps": "http://www.wikidata.org/prop/statement/",
    "psv": "http://www.wikidata.org/prop/statement/value/",
    "wdno": "http://www.wikidata.org/prop/novalue/",
    "wikibase": WIKIBASE,
    "schema": "http://schema.org/",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
}
PREFIXES = "".join(f"PREFIX {prefix}: <{iri}>\n" for prefix, iri in NAMESPACES.items())

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
#
# A pattern comes from a session file, which people share, so it is untrusted text. It is
# never pasted into a query: the whole query it builds is parsed with a real SPARQL parser
# (rdflib's), its algebra is walked against an allow-list, and what is sent is written
# back from that algebra by :class:`_Renderer` (every IRI in full, every literal escaped
# here). So what runs is exactly what was checked, whatever another parser (Oxigraph, a
# remote endpoint) would have made of the original text (escapes, comments, \\u
# sequences).

MAX_PATTERN_CHARS = 4_000  # the bundled patterns are about 40
_MAX_DEPTH = 32  # nested groups and paths
_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"  # what "a" means
_LOCAL_NAME = re.compile(r"[A-Za-z0-9_-]*\Z")  # Q42, P31, L1-S1, altLabel, isPartOf
_VARIABLE = re.compile(r"\w+\Z")
_LANG_TAG = re.compile(r"[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*\Z")
_PREFIX_LIST = ", ".join(f"{prefix}:" for prefix in NAMESPACES)
_ALLOWED = f"triple patterns over Wikidata's vocabulary ({_PREFIX_LIST}), property paths and UNION"
_GROUP_HINT = f"a membership pattern is {_ALLOWED} that bind ?item, like ?item wdt:P31 wd:Q515 ."

# What the user wrote, for each algebra operator (rdflib's names) that is refused.
_REFUSED_WORDS = {
    "ServiceGraphPattern": "SERVICE (a request to another server)",
    "Graph": "GRAPH (a named graph)",
    "ToMultiSet": "VALUES",
    "values": "VALUES",
    "Extend": "BIND",
    "Filter": "FILTER",
    "LeftJoin": "OPTIONAL",
    "Minus": "MINUS",
    "Project": "a sub-query (SELECT)",
    "Distinct": "a sub-query (SELECT DISTINCT)",
    "Reduced": "a sub-query (SELECT REDUCED)",
    "Slice": "LIMIT or OFFSET",
    "OrderBy": "ORDER BY",
    "Group": "GROUP BY",
    "AggregateJoin": "an aggregate (COUNT, SUM, …)",
}


class PatternRefused(QueryError):
    """A membership pattern that is more than, or other than, triple patterns over
    Wikidata's vocabulary."""


def _refuse(what: str) -> PatternRefused:
    return PatternRefused(f"the membership pattern may not contain {what}; {_GROUP_HINT}")


def _allowed_iri(iri: str) -> str:
    """``iri`` written in full (``<...>``) when it is in one of the app's namespaces and
    its local part is a plain name; refused otherwise (SERVICE aside, an IRI names no
    server to reach, but a pattern only ever needs Wikidata's own)."""
    if iri == _RDF_TYPE or any(
        iri.startswith(ns) and _LOCAL_NAME.match(iri, len(ns)) for ns in NAMESPACES.values()
    ):
        return f"<{iri}>"
    raise _refuse(f"the IRI <{iri}>, which is not a plain name in Wikidata's vocabulary")


class _Renderer:
    """Checks an algebra tree against the allow-list and writes it as SPARQL text."""

    def __init__(self) -> None:
        self.blank_nodes: dict[str, str] = {}
        self.bound: set[str] = set()  # variables bound by a triple pattern

    def term(self, term: object) -> str:
        from rdflib.term import BNode, Literal, URIRef, Variable

        if isinstance(term, Variable):
            name = str(term)
            if not _VARIABLE.match(name):
                raise _refuse(f"the variable name {name!r}")
            self.bound.add(name)
            return f"?{name}"
        if isinstance(term, URIRef):
            return _allowed_iri(str(term))
        if isinstance(term, BNode):
            label = self.blank_nodes.setdefault(str(term), f"_:b{len(self.blank_nodes)}")
            return label
        if isinstance(term, Literal):
            # Escaped as string_literal does, but for "'", which needs none here.
            text = '"' + "".join(_ESCAPES.get(ch, ch) if ch != "'" else ch for ch in term) + '"'
            if term.language:
                if not _LANG_TAG.match(term.language):
                    raise _refuse(f"the language tag {term.language!r}")
                return f"{text}@{term.language}"
            if term.datatype:
                return f"{text}^^{_allowed_iri(str(term.datatype))}"
            return text
        raise _refuse(f"the term {term!r}")

    def path(self, path: object, depth: int) -> str:
        from rdflib.paths import AlternativePath, InvPath, MulPath, NegatedPath, SequencePath
        from rdflib.term import URIRef, Variable

        if depth > _MAX_DEPTH:
            raise _refuse(f"property paths nested more than {_MAX_DEPTH} deep")
        if isinstance(path, (URIRef, Variable)):
            return self.term(path)
        if isinstance(path, SequencePath):
            return "(" + " / ".join(self.path(p, depth + 1) for p in path.args) + ")"
        if isinstance(path, AlternativePath):
            return "(" + " | ".join(self.path(p, depth + 1) for p in path.args) + ")"
        if isinstance(path, MulPath) and path.mod in ("*", "+", "?"):
            return f"({self.path(path.path, depth + 1)}){path.mod}"
        if isinstance(path, InvPath):
            return f"^({self.path(path.arg, depth + 1)})"
        if isinstance(path, NegatedPath):
            raise _refuse("a negated property set (!)")
        raise _refuse(f"the property path {path!r}")

    def group(self, node: object, depth: int) -> str:
        """One algebra operator as the inside of a group ``{ ... }``."""
        from rdflib.plugins.sparql.parserutils import CompValue

        if depth > _MAX_DEPTH:
            raise _refuse(f"groups nested more than {_MAX_DEPTH} deep")
        if not isinstance(node, CompValue):
            raise _refuse(f"the part {node!r}")
        if node.name == "BGP":
            return " ".join(
                f"{self.term(s)} {self.path(p, depth)} {self.term(o)} ." for s, p, o in node.triples
            )
        if node.name in ("Join", "Union"):
            left = self.group(node.p1, depth + 1)
            right = self.group(node.p2, depth + 1)
            glue = " UNION " if node.name == "Union" else " "
            return f"{{ {left} }}{glue}{{ {right} }}"
        if node.name == "ToMultiSet" and getattr(node.p, "name", None) != "values":
            raise _refuse("a sub-query (SELECT)")  # rdflib's form of { SELECT ... }
        raise _refuse(_REFUSED_WORDS.get(node.name, node.name))


def _forget_parse_failures() -> None:
    """Empty pyparsing's packrat cache once a pattern is parsed. Where something turned
    packrat parsing on for the whole process (matplotlib's mathtext does, on import), the
    cache keeps the exception of every alternative that failed, and each exception's
    traceback holds the whole stack that called the parser, the caller's window and
    session included, until enough later parses push it out."""
    from pyparsing import ParserElement

    ParserElement.reset_cache()


def _pattern_query(pattern: str) -> str:
    return PREFIXES + "SELECT ?item WHERE {\n" + pattern + "\n}\n"


@lru_cache(maxsize=64)
def canonical_pattern(pattern: str) -> str:
    """The membership pattern as the app will send it, or PatternRefused (QueryError).

    The query ``SELECT ?item WHERE { pattern }`` (with :data:`PREFIXES`) is parsed whole,
    so a pattern that closes the braces early, hides a keyword behind an escape, a comment
    or a ``\\u`` sequence, or is not SPARQL at all is seen as the parser sees it. Its
    algebra may hold only basic graph patterns (property paths included, negated sets
    not), groups and UNION, over IRIs in the app's namespaces; the answer is that algebra
    written out again, never the user's text.
    """
    if not isinstance(pattern, str) or not pattern.strip():
        raise PatternRefused("the membership pattern is empty")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternRefused(
            f"the membership pattern is {len(pattern):,} characters long; "
            f"at most {MAX_PATTERN_CHARS:,} are allowed"
        )
    try:
        pattern.encode("utf-8")
    except UnicodeEncodeError:
        raise PatternRefused(
            "the membership pattern is not valid text (a lone surrogate)"
        ) from None
    from rdflib.plugins.sparql import algebra
    from rdflib.plugins.sparql.parser import parseQuery
    from rdflib.term import Variable

    text = _pattern_query(pattern)
    rdflib_log = logging.getLogger("rdflib.term")
    rdflib_log.addFilter(_QUIET_IRIS)
    try:
        query = algebra.translateQuery(parseQuery(text))
    except Exception as exc:  # a third-party parser on untrusted text: any failure is "no"
        from pyparsing import ParseBaseException

        if isinstance(exc, RecursionError):
            raise PatternRefused(
                "the membership pattern is too long or nested too deeply to check"
            ) from None
        said = "" if isinstance(exc, ParseBaseException) else f": {exc}"
        unknown = re.match(r"Unknown namespace prefix : (\S*)", str(exc))
        if unknown:
            said = f": the prefix {unknown.group(1)}: is not one of {_PREFIX_LIST}"
        raise PatternRefused(
            f"the membership pattern is not valid SPARQL{_where(pattern) or said}"
        ) from None
    finally:
        rdflib_log.removeFilter(_QUIET_IRIS)
        _forget_parse_failures()
    top = query.algebra
    project = top.get("p")
    if (
        top.name != "SelectQuery"
        or top.get("datasetClause")
        or getattr(project, "name", None) != "Project"
        or list(project.get("PV") or []) != [Variable("item")]
    ):
        raise PatternRefused(
            "the membership pattern must be one group pattern: it may not close the "
            f"query's braces or add clauses after them; {_GROUP_HINT}"
        )
    renderer = _Renderer()
    body = renderer.group(project.p, 0)
    if "item" not in renderer.bound:
        raise PatternRefused(f"the membership pattern must bind ?item; {_GROUP_HINT}")
    return body


def _where(pattern: str) -> str:
    """Where a parse of ``pattern`` alone stops (line, column and the text there), to
    point the user at a syntax error; "" when that parse does not say."""
    from rdflib.plugins.sparql.parser import GroupGraphPatternSub

    try:
        GroupGraphPatternSub.parse_string(pattern, parse_all=True)  # a diagnosis only
    except Exception as exc:
        loc = getattr(exc, "loc", None)
        if isinstance(loc, int) and 0 <= loc <= len(pattern):
            line = pattern.count("\n", 0, loc) + 1
            column = loc - pattern.rfind("\n", 0, loc)
            near = pattern[loc:].split("\n", 1)[0][:30].strip()
            return f" at line {line}, column {column}" + (
                f" (near {near!r})" if near else " (at its end)"
            )
    return ""


class _QuietIris(logging.Filter):
    """rdflib warns (on the log) about each odd IRI it parses; a refusal says it instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "does not look like a valid URI" not in record.getMessage()


_QUIET_IRIS = _QuietIris()


def check_category(category: Category) -> str:
    """The category's pattern as it will be sent (:func:`canonical_pattern`); a refusal
    names the category."""
    try:
        return canonical_pattern(category.pattern)
    except PatternRefused as refused:
        raise PatternRefused(f"{category.name}: {refused}") from None


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` would be refused (one line), or None when it passes."""
    try:
        canonical_pattern(pattern)
    except QueryError as error:
        return str(error)
    return None


@lru_cache(maxsize=1)
def _empty_store() -> object:
    import pyoxigraph

    return pyoxigraph.Store()


def parse_check(query: str, what: str = "query") -> str:
    """Parse ``query`` with Oxigraph (against an empty store) so syntax errors stay local.
    Only for texts built here: evaluation would run a SERVICE, so never user text."""
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


class SparqlQuery(str):
    """A query text built by this module from checked parts. Sources run nothing else
    (:func:`outgoing`), so no text reaches a store or an endpoint around these checks."""


def outgoing(query: str) -> SparqlQuery:
    """``query`` when this module built it; a bug (TypeError) otherwise. Every source
    calls this right before it runs a query: the one door all queries go out by."""
    if not isinstance(query, SparqlQuery):
        raise TypeError("a query not built by core.wikidata.queries was about to be run")
    return query


def members_page(category: Category, limit: int, offset: int) -> SparqlQuery:
    """One stable page of a category's members with their popularity signals."""
    pattern = check_category(category)
    text = TEMPLATES["members_page"].substitute(
        pattern=pattern,
        limit=check_int(limit, "limit", 1, MAX_LIMIT),
        offset=check_int(offset, "offset", 0, MAX_OFFSET),
    )
    return SparqlQuery(parse_check(text, f"membership pattern of {category.name!r}"))


def entity_terms(qid: str) -> SparqlQuery:
    """Labels, descriptions and aliases of one item in the app's languages."""
    return SparqlQuery(TEMPLATES["entity_terms"].substitute(qid=check_qid(qid), langs=_LANGS))


def entity_claims(qid: str) -> SparqlQuery:
    """Statements of one item, with ranks, datatypes and labels of what they mention."""
    return SparqlQuery(TEMPLATES["entity_claims"].substitute(qid=check_qid(qid), langs=_LANGS))


MAX_VALUES_SUBJECTS = 200  # bound subjects per triple_values request


def triple_values(subjects: list[str], pid: str, limit: int, offset: int) -> SparqlQuery:
    """One page of the item values of ``pid`` for up to 200 bound subjects."""
    if not subjects or len(subjects) > MAX_VALUES_SUBJECTS:
        raise QueryError(
            f"triple_values needs 1 to {MAX_VALUES_SUBJECTS} subjects, not {len(subjects)}"
        )
    return SparqlQuery(
        TEMPLATES["triple_values"].substitute(
            subjects=" ".join(f"wd:{check_qid(q)}" for q in subjects),
            pid=check_pid(pid),
            limit=check_int(limit, "limit", 1, MAX_LIMIT),
            offset=check_int(offset, "offset", 0, MAX_OFFSET),
        )
    )


def item_labels(ids: list[str], lang: str) -> SparqlQuery:
    """Labels of up to 200 items or properties in ``lang``."""
    if not ids or len(ids) > MAX_VALUES_SUBJECTS:
        raise QueryError(f"item_labels needs 1 to {MAX_VALUES_SUBJECTS} ids, not {len(ids)}")
    checked = [check_pid(i) if i.startswith("P") else check_qid(i) for i in ids]
    return SparqlQuery(
        TEMPLATES["item_labels"].substitute(
            items=" ".join(f"wd:{i}" for i in checked), lang=string_literal(check_lang(lang))
        )
    )


def property_type(pid: str) -> SparqlQuery:
    """The datatype of a property; no row when the source does not know it."""
    return SparqlQuery(TEMPLATES["property_type"].substitute(pid=check_pid(pid)))
