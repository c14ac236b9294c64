"""RDF export (METHODS §10): a session as Turtle or N-Triples, through rdflib.

Triples whose subject and property ids are known become Wikidata statements, in the
shape the Wikidata Query Service uses, so the export joins with Wikidata dumps:

* ``wd:Qs p:Pp ?st . ?st ps:Pp ?o ; wikibase:rank wikibase:NormalRank`` and, for a
  rank other than deprecated, the truthy ``wd:Qs wdt:Pp ?o``; ``?o`` is ``wd:Qo`` when the
  value is an item, else the object label. The statement node is ``wds:`` + the claim's
  statement id where the session knows it, else a node under the unit.
* ``rdfs:label`` with language tags on the subject, property and item object.

Everything else uses TailLens' own vocabulary (``tl:``, ``https://taillens.org/ns#``):
``tl:DataUnit`` (``tl:uid``, ``tl:shape``, ``tl:size``, ``tl:tier``, ``tl:subTier``,
``tl:rootItem``, ``tl:hasStatement``, ``tl:triple``), ``tl:Triple`` for triples without
ids (``tl:subjectLabel``, ``tl:predicateLabel``, ``tl:objectLabel``, ``tl:lang``,
``tl:position``, ``tl:tripleset``), ``tl:Reference`` (``tl:text``, ``tl:lang``,
``tl:quality``, ``tl:ofUnit``), ``tl:Verbalisation`` (``tl:text``, ``tl:lang``,
``tl:ofUnit``, ``tl:candidate``, ``tl:producedBy`` a ``tl:ModelRun``) and
``tl:Annotation`` (``tl:fluency``, ``tl:adequacy``, ``tl:annotator``, ``tl:of``).
Node IRIs live under ``https://taillens.org/id/``; labels have overrides applied.

rdflib is imported inside the functions: it is slow to import and only exports need it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from core.formats.csv_export import category_of
from core.formats.files import FormatError, atomic_output
from core.formats.report import ExportReport
from core.jobs import Job, JobContext

RdfFormat = Literal["turtle", "nt"]

TL = "https://taillens.org/ns#"
ID = "https://taillens.org/id/"
WD = "http://www.wikidata.org/entity/"
WDS = "http://www.wikidata.org/entity/statement/"
WDT = "http://www.wikidata.org/prop/direct/"
P = "http://www.wikidata.org/prop/"
PS = "http://www.wikidata.org/prop/statement/"
WIKIBASE = "http://wikiba.se/ontology#"
RANKS = {"preferred": "PreferredRank", "normal": "NormalRank", "deprecated": "DeprecatedRank"}
_QID = re.compile(r"Q[1-9][0-9]*")
_PID = re.compile(r"P[1-9][0-9]*")


def _text(row: Any, name: str) -> str:
    override = getattr(row, f"{name}_override")
    return override if override is not None else getattr(row, name)


def _node(*parts: str | int) -> Any:
    from rdflib import URIRef

    return URIRef(ID + "/".join(quote(str(part), safe="") for part in parts))


def _rank(triple: Any, unit: Any, claims: dict[int, Any]) -> str:
    claim = claims.get(triple.claim_id) if triple.claim_id is not None else None
    if claim is not None:
        return claim.rank or "normal"
    attributes = unit.attributes if isinstance(unit.attributes, dict) else {}
    record = attributes.get("record") if attributes.get("format") == "wdv" else None
    rank = record.get("rank") if isinstance(record, dict) else None
    return rank if rank in RANKS else "normal"


_STREAM = 1000  # rows fetched at a time from each table


def build_graph(store: Any, ctx: JobContext | None = None) -> tuple[Any, ExportReport]:
    """The session as an rdflib Graph, and what it holds: every unit (none is skipped),
    its references and its triples (a statement counts once per language row).
    For a large session prefer :func:`export_rdf`, which streams."""
    from rdflib import Graph, Namespace

    graph = Graph()
    for prefix, namespace in PREFIXES.items():
        graph.bind(prefix, Namespace(namespace))
    summary: dict[str, int] = {}
    for triple in iter_triples(store, ctx, summary):
        graph.add(triple)
    return graph, _report(summary)


def _report(summary: dict[str, int]) -> ExportReport:
    return ExportReport(summary["units"], summary["units"], summary["references"], [],
                        triples=summary["triples"])


PREFIXES = {"tl": TL, "wd": WD, "wds": WDS, "wdt": WDT, "p": P, "ps": PS,
            "wikibase": WIKIBASE}


def iter_triples(store: Any, ctx: JobContext | None = None,
                 summary: dict[str, int] | None = None) -> Iterator[tuple[Any, Any, Any]]:
    """The session's RDF, triple by triple, reading each table a batch at a time, so
    memory does not grow with the session. A triple may come more than once (a label
    shared by units); RDF graphs are sets, so that changes nothing. At the end
    ``summary`` holds the counts of units, references and unit triples."""
    from rdflib import RDF, RDFS, XSD, Literal, Namespace
    from sqlalchemy import func, select

    from core.store.models import (
        Annotation,
        Annotator,
        Category,
        Claim,
        DataUnit,
        ModelRun,
        UnitReference,
        UnitTriple,
        Verbalisation,
    )

    summary = summary if summary is not None else {}
    tl, wd, wdt, p, ps = Namespace(TL), Namespace(WD), Namespace(WDT), Namespace(P), Namespace(PS)
    wikibase = Namespace(WIKIBASE)
    namespaces = (tl, wd, wdt, p, ps, wikibase)

    def stream(statement: Any) -> Iterator[Any]:
        return db.scalars(statement.execution_options(yield_per=_STREAM))

    with store.unit_of_work() as db:
        total = int(db.scalar(select(func.count()).select_from(DataUnit)) or 0)
        categories = {row.id: row.name for row in db.execute(select(Category.id, Category.name))}
        used = select(UnitTriple.claim_id).where(UnitTriple.claim_id.is_not(None))
        claims = {c.id: c for c in db.scalars(select(Claim).where(Claim.id.in_(used)))}
        uids: dict[int, str] = {}
        # Units and their triples, both in unit order: merged, one unit's rows at a time.
        triple_rows = iter(stream(select(UnitTriple).order_by(
            UnitTriple.unit_id, UnitTriple.lang, UnitTriple.tripleset, UnitTriple.position)))
        pending = next(triple_rows, None)
        triple_count = 0
        done = 0
        for unit in stream(select(DataUnit).order_by(DataUnit.id)):
            if ctx is not None and done % 200 == 0:
                ctx.check_cancelled()
            rows = []
            while pending is not None and pending.unit_id <= unit.id:
                if pending.unit_id == unit.id:
                    rows.append(pending)
                pending = next(triple_rows, None)
            uids[unit.id] = unit.uid
            yield from _unit_triples(unit, rows, categories, claims, namespaces)
            triple_count += len(rows)
            done += 1
            if ctx is not None and (done % 200 == 0 or done == total):
                ctx.progress(done, total, f"{done} units")
            db.expunge(unit)
            for row in rows:
                db.expunge(row)

        references = 0
        for ref in stream(select(UnitReference).order_by(UnitReference.id)):
            references += 1
            node, unit_node = _node("reference", ref.id), _node("unit", uids[ref.unit_id])
            yield node, RDF.type, tl.Reference
            yield node, tl.ofUnit, unit_node
            yield unit_node, tl.hasReference, node
            yield node, tl.text, Literal(ref.text)
            yield node, tl.lang, Literal(ref.lang)
            yield node, tl.quality, Literal(ref.quality)
            if ref.lid:
                yield node, tl.lid, Literal(ref.lid)
            db.expunge(ref)
        for run in db.scalars(select(ModelRun).order_by(ModelRun.id)):
            node = _node("run", run.id)
            yield node, RDF.type, tl.ModelRun
            yield node, tl.kind, Literal(run.kind)
            yield node, tl.modelId, Literal(run.model_id)
            if run.system_name:
                yield node, tl.systemName, Literal(run.system_name)
        if ctx is not None:
            ctx.check_cancelled()
        for verbalisation in stream(select(Verbalisation).order_by(Verbalisation.id)):
            node = _node("verbalisation", verbalisation.id)
            yield node, RDF.type, tl.Verbalisation
            yield node, tl.ofUnit, _node("unit", uids[verbalisation.unit_id])
            yield node, tl.producedBy, _node("run", verbalisation.run_id)
            yield node, tl.lang, Literal(verbalisation.lang)
            yield node, tl.candidate, Literal(verbalisation.candidate_index,
                                              datatype=XSD.integer)
            yield node, tl.parseOk, Literal(bool(verbalisation.parse_ok))
            # An unparsed output has no text; its raw output is still what the model said.
            yield node, tl.rawOutput, Literal(verbalisation.raw_output)
            if verbalisation.text is not None:
                yield node, tl.text, Literal(verbalisation.text)
            db.expunge(verbalisation)
        for annotator in db.scalars(select(Annotator).order_by(Annotator.id)):
            node = _node("annotator", annotator.id)
            yield node, RDF.type, tl.Annotator
            yield node, RDFS.label, Literal(annotator.name)
            yield node, tl.anonymous, Literal(bool(annotator.is_anonymous))
        if ctx is not None:
            ctx.check_cancelled()
        for annotation in stream(select(Annotation).order_by(Annotation.id)):
            node = _node("annotation", annotation.id)
            yield node, RDF.type, tl.Annotation
            yield node, tl.annotator, _node("annotator", annotation.annotator_id)
            if annotation.verbalisation_id is not None:
                yield node, tl.of, _node("verbalisation", annotation.verbalisation_id)
            if annotation.reference_id is not None:
                yield node, tl.of, _node("reference", annotation.reference_id)
            for name in ("fluency", "adequacy"):
                value = getattr(annotation, name)
                if value is not None:
                    yield node, tl[name], Literal(value, datatype=XSD.integer)
            if annotation.corrected_text is not None:
                yield node, tl.correctedText, Literal(annotation.corrected_text)
            db.expunge(annotation)
    summary.update(units=done, references=references, triples=triple_count)


def _unit_triples(unit: Any, rows: list[Any], categories: dict[int, str],
                  claims: dict[int, Any], namespaces: tuple[Any, ...]
                  ) -> Iterator[tuple[Any, Any, Any]]:
    from rdflib import RDF, XSD, Literal

    tl, wd = namespaces[0], namespaces[1]
    node = _node("unit", unit.uid)
    yield node, RDF.type, tl.DataUnit
    yield node, tl.uid, Literal(unit.uid)
    yield node, tl.size, Literal(unit.size, datatype=XSD.integer)
    yield node, tl.origin, Literal(unit.origin)
    for name, value in (("shape", unit.shape), ("tier", unit.tier),
                        ("subTier", unit.sub_tier),
                        ("category", category_of(unit, categories) or None)):
        if value:
            yield node, tl[name], Literal(value)
    if unit.root_qid and _QID.fullmatch(unit.root_qid):
        yield node, tl.rootItem, wd[unit.root_qid]
    said: set[tuple[Any, Any, Any]] = set()  # rows of other languages repeat a statement
    for row in rows:
        labels = (_text(row, "subject"), _text(row, "predicate"), _text(row, "object"))
        if (row.subject_qid and _QID.fullmatch(row.subject_qid) and row.property_pid
                and _PID.fullmatch(row.property_pid)):
            for triple in _statement(node, unit, row, labels, claims, *namespaces):
                if triple not in said:
                    said.add(triple)
                    yield triple
            continue
        triple = _node("unit", unit.uid, "triple", row.lang, row.tripleset, row.position)
        yield node, tl.triple, triple
        yield triple, RDF.type, tl.Triple
        yield triple, tl.subjectLabel, Literal(labels[0])
        yield triple, tl.predicateLabel, Literal(labels[1])
        yield triple, tl.objectLabel, Literal(labels[2])
        yield triple, tl.lang, Literal(row.lang)
        yield triple, tl.tripleset, Literal(row.tripleset)
        yield triple, tl.position, Literal(row.position, datatype=XSD.integer)


def _statement(unit_node: Any, unit: Any, row: Any, labels: tuple[str, str, str],
               claims: dict[int, Any], tl: Any, wd: Any, wdt: Any, p: Any, ps: Any,
               wikibase: Any) -> Iterator[tuple[Any, Any, Any]]:
    """One triple with ids as a Wikidata statement; the rows of other languages at the same
    position describe the same statement and only add labels in their language."""
    from rdflib import RDF, RDFS, XSD, Literal, URIRef

    claim = claims.get(row.claim_id) if row.claim_id is not None else None
    if claim is not None and claim.statement_id:
        statement = URIRef(WDS + quote(claim.statement_id.replace("$", "-"), safe=""))
    else:
        statement = _node("unit", unit.uid, "statement", row.tripleset, row.position)
    subject, prop = wd[row.subject_qid], row.property_pid
    obj_is_item = bool(row.object_value and _QID.fullmatch(row.object_value))
    value = wd[row.object_value] if obj_is_item else Literal(labels[2], lang=row.lang)
    rank = _rank(row, unit, claims)
    yield unit_node, tl.hasStatement, statement
    yield statement, RDF.type, wikibase.Statement
    yield statement, tl.position, Literal(row.position, datatype=XSD.integer)
    yield subject, p[prop], statement
    yield statement, ps[prop], value
    yield statement, wikibase.rank, wikibase[RANKS[rank]]
    if rank != "deprecated":
        yield subject, wdt[prop], value
    yield subject, RDFS.label, Literal(labels[0], lang=row.lang)
    yield wd[prop], RDFS.label, Literal(labels[1], lang=row.lang)
    if obj_is_item:
        yield value, RDFS.label, Literal(labels[2], lang=row.lang)


_SAFE_LOCAL = re.compile(r"[A-Za-z0-9_]+")


def _turtle_term(term: Any, prefixes: list[tuple[str, str]]) -> str:
    """A term in Turtle: a prefixed name where the local part is plainly safe, else its
    N-Triples form (which Turtle reads as well)."""
    from rdflib import Literal
    from rdflib.plugins.serializers.nt import _quoteLiteral

    if isinstance(term, Literal):
        return _quoteLiteral(term)
    text = str(term)
    for namespace, prefix in prefixes:
        if text.startswith(namespace) and _SAFE_LOCAL.fullmatch(text[len(namespace):]):
            return f"{prefix}:{text[len(namespace):]}"
    return term.n3()


def write_triples(triples: Iterator[tuple[Any, Any, Any]], handle: Any, fmt: RdfFormat) -> None:
    """Write ``triples`` to a binary ``handle`` one line each, as they come: N-Triples, or
    Turtle with the export's prefixes. A triple written once is not written again."""
    from rdflib.plugins.serializers.nt import _nt_row

    # Longest namespace first, so wds: wins over wd: for a statement node.
    prefixes = sorted(((ns, prefix) for prefix, ns in PREFIXES.items()),
                      key=lambda item: -len(item[0]))
    if fmt == "turtle":
        handle.write("".join(f"@prefix {prefix}: <{ns}> .\n"
                             for prefix, ns in PREFIXES.items()).encode())
        handle.write(b"@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n\n")
    # Only Wikidata's own nodes (items, properties, statements) are shared by units, so
    # only their triples are remembered: memory grows with distinct facts, not units.
    seen: set[str] = set()
    buffer: list[str] = []
    for triple in triples:
        if fmt == "nt":
            line = _nt_row(triple)
        else:
            line = " ".join(_turtle_term(term, prefixes) for term in triple) + " .\n"
        if str(triple[0]).startswith(WD):
            if line in seen:
                continue
            seen.add(line)
        buffer.append(line)
        if len(buffer) >= 4096:
            handle.write("".join(buffer).encode("utf-8"))
            buffer.clear()
    handle.write("".join(buffer).encode("utf-8"))


def export_rdf(store: Any, path: Path | str, *, fmt: RdfFormat = "turtle",
               ctx: JobContext | None = None) -> ExportReport:
    """Write the session to ``path`` as Turtle or N-Triples; the report's entries are the
    data units written (every unit of the session)."""
    if fmt not in ("turtle", "nt"):
        raise FormatError(f"Unknown RDF format {fmt!r}: use turtle or nt.")
    summary: dict[str, int] = {}
    with atomic_output(path, binary=True) as handle:
        write_triples(iter_triples(store, ctx, summary), handle, fmt)
        if ctx is not None:
            ctx.check_cancelled()
    return replace(_report(summary), path=str(path), format=fmt)


def export_job(store: Any, path: Path | str, *, fmt: RdfFormat = "turtle") -> Job[ExportReport]:
    path = Path(path)
    return Job(title=f"Export {path.name}",
               run=lambda ctx: export_rdf(store, path, fmt=fmt, ctx=ctx),
               kind="export", params={"path": str(path), "format": fmt})
