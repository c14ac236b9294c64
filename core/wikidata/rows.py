"""Neutral rows (variable -> :class:`RdfTerm`) from SPARQL JSON or pyoxigraph solutions,
and the records made from them: one converter for every source, so two sources over the
same data return equal records."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.vocab import LANGUAGES
from core.wikidata import queries
from core.wikidata.categories import PID_RE, QID_RE, Category
from core.wikidata.records import ClaimRecord, EntityDetails, EntityRecord, MembersPage, Term

if TYPE_CHECKING:
    pass

XSD = "http://www.w3.org/2001/XMLSchema#"
_INT_TYPES = {XSD + t for t in ("integer", "int", "long", "nonNegativeInteger", "decimal")}


@dataclass(frozen=True)
class RdfTerm:
    kind: str  # "uri" | "literal" | "bnode"
    value: str
    lang: str | None = None
    datatype: str | None = None


Row = Mapping[str, RdfTerm]


class BadResults(ValueError):
    """Results that do not have the shape a query promises; the caller names the source."""


class Rows(list[dict[str, RdfTerm]]):
    """Neutral rows; ``dropped`` counts the rows past ``max_rows`` left unread."""

    dropped = 0


def rows_from_json(data: Any, max_rows: int | None = None) -> Rows:
    """SPARQL 1.1 JSON results -> neutral rows; any malformed part raises BadResults.
    Past ``max_rows`` rows are only counted (a server that ignores LIMIT)."""
    if not isinstance(data, dict):
        raise BadResults("the answer is not a JSON object")
    results = data.get("results")
    bindings = results.get("bindings") if isinstance(results, dict) else None
    if not isinstance(bindings, list):
        raise BadResults("the answer has no results.bindings list")
    rows = Rows()
    if max_rows is not None and len(bindings) > max_rows:
        rows.dropped = len(bindings) - max_rows
        bindings = bindings[:max_rows]
    for index, binding in enumerate(bindings):
        if not isinstance(binding, dict):
            raise BadResults(f"result {index} is not an object")
        row = {}
        for var, term in binding.items():
            if not isinstance(term, dict) or not isinstance(term.get("value"), str):
                raise BadResults(f"result {index} has a malformed value for ?{var}")
            kind = term.get("type")
            if kind == "typed-literal":  # the SPARQL XML-era spelling some servers use
                kind = "literal"
            if kind not in ("uri", "literal", "bnode"):
                raise BadResults(f"result {index} has an unknown term type {kind!r} for ?{var}")
            row[var] = RdfTerm(kind, term["value"], term.get("xml:lang"), term.get("datatype"))
        rows.append(row)
    return rows


def rows_from_oxigraph(solutions: Any) -> list[dict[str, RdfTerm]]:
    import pyoxigraph

    names = [v.value for v in solutions.variables]
    rows = []
    for solution in solutions:
        row = {}
        for name in names:
            term = solution[name]
            if term is None:
                continue
            if isinstance(term, pyoxigraph.NamedNode):
                row[name] = RdfTerm("uri", term.value)
            elif isinstance(term, pyoxigraph.BlankNode):
                row[name] = RdfTerm("bnode", term.value)
            else:
                datatype = term.datatype.value
                lang = term.language
                # JSON results omit xsd:string and rdf:langString; match them.
                if lang or datatype == XSD + "string":
                    datatype = None
                row[name] = RdfTerm("literal", term.value, lang, datatype)
        rows.append(row)
    return rows


# -- converters -----------------------------------------------------------------------


def _need(row: Row, var: str, index: int) -> RdfTerm:
    term = row.get(var)
    if term is None:
        raise BadResults(f"result {index} lacks ?{var}")
    return term


def _entity_id(term: RdfTerm, index: int, var: str) -> str:
    if term.kind != "uri" or not term.value.startswith(queries.ENTITY):
        raise BadResults(f"result {index}: ?{var} is not a Wikidata entity ({term.value!r})")
    local = term.value[len(queries.ENTITY) :]
    if not (QID_RE.match(local) or PID_RE.match(local)):
        raise BadResults(f"result {index}: ?{var} is not a Wikidata id ({term.value!r})")
    return local


def _count(row: Row, var: str, index: int) -> int:
    term = row.get(var)
    if term is None:
        return 0  # items without the count triple (rare) rank as having none
    try:
        value = int(term.value)
    except ValueError:
        raise BadResults(f"result {index}: ?{var} is not a number ({term.value!r})") from None
    if term.kind != "literal" or value < 0:
        raise BadResults(f"result {index}: ?{var} is not a count ({term.value!r})")
    return value


def _flag(row: Row, var: str, index: int) -> bool:
    term = _need(row, var, index)
    if term.kind != "literal" or term.value not in ("true", "false", "1", "0"):
        raise BadResults(f"result {index}: ?{var} is not a boolean ({term.value!r})")
    return term.value in ("true", "1")


def members_from_rows(category: Category, offset: int, rows: Iterable[Row]) -> MembersPage:
    records: dict[str, EntityRecord] = {}
    for index, row in enumerate(rows):
        qid = _entity_id(_need(row, "item", index), index, "item")
        if not QID_RE.match(qid):
            raise BadResults(f"result {index}: ?item {qid} is not an item")
        label = row.get("label")
        if label is not None and label.kind != "literal":
            raise BadResults(f"result {index}: ?label is not text")
        wikis = frozenset(lang for lang in LANGUAGES if _flag(row, f"wiki_{lang}", index))
        record = EntityRecord(
            qid,
            label.value if label is not None else None,
            _count(row, "statements", index),
            _count(row, "sitelinks", index),
            wikis,
        )
        # Two English labels would give two rows; the first one wins, deterministically
        # only because endpoints return them in a stable order, which is good enough.
        records.setdefault(qid, record)
    ordered = tuple(records[q] for q in sorted(records))
    return MembersPage(category.name, offset, ordered)


def _statement_id(term: RdfTerm, index: int) -> str | None:
    # wds:Q42-F078E5B3-... is the RDF form of the statement id Q42$F078E5B3-...
    if term.kind != "uri":
        return None
    local = term.value.rsplit("/", 1)[-1]
    head, sep, tail = local.partition("-")
    if not sep or not QID_RE.match(head):
        return local or None
    return f"{head}${tail}"


def terms_from_rows(qid: str, rows: Iterable[Row]) -> list[Term]:
    seen: dict[tuple[str, str], list[str]] = {}
    for index, row in enumerate(rows):
        kind = _need(row, "kind", index).value
        text = _need(row, "text", index)
        if kind not in ("label", "description", "alias") or text.lang not in LANGUAGES:
            raise BadResults(f"result {index}: unexpected term {kind!r}@{text.lang}")
        seen.setdefault((kind, text.lang), []).append(text.value)
    terms: list[Term] = []
    for (kind, lang), texts in seen.items():
        unique = sorted(set(texts))
        if kind != "alias":
            unique = unique[:1]  # one label/description per language
        terms.extend(Term(qid, lang, kind, text, i) for i, text in enumerate(unique))
    return terms


def details_from_rows(
    qid: str, term_rows: Iterable[Row], claim_rows: Iterable[Row]
) -> EntityDetails:
    terms = terms_from_rows(qid, term_rows)
    claims: dict[str, ClaimRecord] = {}
    property_types: dict[str, str] = {}
    labels: dict[tuple[str, str], str] = {}
    for index, row in enumerate(claim_rows):
        if "labelled" in row:
            item = _entity_id(row["labelled"], index, "labelled")
            text = _need(row, "ltext", index)
            if text.lang in LANGUAGES and item != qid:
                labels.setdefault((item, text.lang), text.value)
            continue
        st = _need(row, "st", index)
        pid = _entity_id(_need(row, "prop", index), index, "prop")
        ptype_iri = _need(row, "ptype", index).value
        local = ptype_iri.removeprefix(queries.WIKIBASE)
        datatype = queries.PROPERTY_TYPES.get(local, local.lower())
        rank_iri = _need(row, "rank", index).value
        if rank_iri not in queries.RANK_NAMES:
            raise BadResults(f"result {index}: unknown rank {rank_iri!r}")
        property_types[pid] = datatype
        statement_id = _statement_id(st, index)
        value_term = row.get("value")
        value: str | None = None
        value_json: dict[str, Any] | None = None
        if "novalue" in row:
            snak = "novalue"
        elif (
            value_term is None
            or value_term.kind == "bnode"
            or (value_term.value.startswith(queries.GENID))
        ):
            snak = "somevalue"
        else:
            snak = "value"
            if value_term.kind == "uri" and value_term.value.startswith(queries.ENTITY):
                value = value_term.value[len(queries.ENTITY) :]
            else:
                value = value_term.value
            extra: dict[str, Any] = {}
            if value_term.lang:
                extra["language"] = value_term.lang
            if "precision" in row:
                extra["precision"] = int(row["precision"].value)
            if "unit" in row:
                unit = row["unit"].value
                extra["unit"] = unit.removeprefix(queries.ENTITY) if unit != "1" else "1"
            value_json = extra or None
        key = statement_id or f"{pid}|{snak}|{value}|{index}"
        claims.setdefault(
            key,
            ClaimRecord(
                statement_id,
                qid,
                pid,
                value,
                datatype,
                queries.RANK_NAMES[rank_iri],
                snak,
                value_json,
            ),
        )
    terms.extend(Term(item, lang, "label", text) for (item, lang), text in labels.items())
    return canonical_details(qid, terms, claims.values(), property_types)


def canonical_details(
    qid: str, terms: Iterable[Term], claims: Iterable[ClaimRecord], property_types: dict[str, str]
) -> EntityDetails:
    """Details in one fixed order, so equal data gives equal records from any source."""

    def id_key(item_id: str) -> tuple[str, int]:
        return (item_id[:1], int(item_id[1:]) if item_id[1:].isdigit() else 0)

    kinds = {"label": 0, "description": 1, "alias": 2}
    return EntityDetails(
        qid,
        tuple(
            sorted(
                terms,
                key=lambda t: (
                    t.item_id != qid,
                    id_key(t.item_id),
                    kinds.get(t.kind, 3),
                    t.lang,
                    t.ordinal,
                ),
            )
        ),
        tuple(
            sorted(
                claims,
                key=lambda c: (
                    id_key(c.property_pid),
                    c.statement_id or "",
                    c.value or "",
                ),
            )
        ),
        dict(sorted(property_types.items(), key=lambda kv: id_key(kv[0]))),
    )
