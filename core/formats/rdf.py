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
from collections import defaultdict
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


def build_graph(store: Any, ctx: JobContext | None = None) -> tuple[Any, ExportReport]:
    """The session as an rdflib Graph, and what it holds: every unit (none is skipped),
    its references and its triples (a statement counts once per language row)."""
    from rdflib import RDF, RDFS, XSD, Graph, Literal, Namespace
    from sqlalchemy import select

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

    tl, wd, wdt, p, ps = Namespace(TL), Namespace(WD), Namespace(WDT), Namespace(P), Namespace(PS)
    wikibase = Namespace(WIKIBASE)
    with store.unit_of_work() as db:
        units = list(db.scalars(select(DataUnit).order_by(DataUnit.id)))
        triples: dict[int, list[Any]] = defaultdict(list)
        for row in db.scalars(select(UnitTriple).order_by(
                UnitTriple.unit_id, UnitTriple.lang, UnitTriple.tripleset, UnitTriple.position)):
            triples[row.unit_id].append(row)
        references = list(db.scalars(select(UnitReference).order_by(UnitReference.id)))
        claim_ids = {t.claim_id for rows in triples.values() for t in rows if t.claim_id}
        claims = {c.id: c for c in db.scalars(select(Claim).where(Claim.id.in_(claim_ids)))}
        runs = list(db.scalars(select(ModelRun).order_by(ModelRun.id)))
        verbalisations = list(db.scalars(select(Verbalisation).order_by(Verbalisation.id)))
        annotations = list(db.scalars(select(Annotation).order_by(Annotation.id)))
        annotators = list(db.scalars(select(Annotator).order_by(Annotator.id)))
        categories = {row.id: row.name for row in db.execute(select(Category.id, Category.name))}
        db.expunge_all()

    graph = Graph()
    for prefix, namespace in (("tl", TL), ("wd", WD), ("wds", WDS), ("wdt", WDT), ("p", P),
                              ("ps", PS), ("wikibase", WIKIBASE)):
        graph.bind(prefix, Namespace(namespace))
    add = graph.add
    unit_nodes: dict[int, Any] = {}
    triple_count = 0
    for done, unit in enumerate(units, start=1):
        if ctx is not None:
            ctx.check_cancelled()
        node = unit_nodes[unit.id] = _node("unit", unit.uid)
        add((node, RDF.type, tl.DataUnit))
        add((node, tl.uid, Literal(unit.uid)))
        add((node, tl.size, Literal(unit.size, datatype=XSD.integer)))
        add((node, tl.origin, Literal(unit.origin)))
        for name, value in (("shape", unit.shape), ("tier", unit.tier),
                            ("subTier", unit.sub_tier),
                            ("category", category_of(unit, categories) or None)):
            if value:
                add((node, tl[name], Literal(value)))
        if unit.root_qid and _QID.fullmatch(unit.root_qid):
            add((node, tl.rootItem, wd[unit.root_qid]))
        for row in triples[unit.id]:
            labels = (_text(row, "subject"), _text(row, "predicate"), _text(row, "object"))
            if (row.subject_qid and _QID.fullmatch(row.subject_qid) and row.property_pid
                    and _PID.fullmatch(row.property_pid)):
                _statement(graph, node, unit, row, labels, claims, tl, wd, wdt, p, ps, wikibase)
                continue
            triple = _node("unit", unit.uid, "triple", row.lang, row.tripleset, row.position)
            add((node, tl.triple, triple))
            add((triple, RDF.type, tl.Triple))
            add((triple, tl.subjectLabel, Literal(labels[0])))
            add((triple, tl.predicateLabel, Literal(labels[1])))
            add((triple, tl.objectLabel, Literal(labels[2])))
            add((triple, tl.lang, Literal(row.lang)))
            add((triple, tl.tripleset, Literal(row.tripleset)))
            add((triple, tl.position, Literal(row.position, datatype=XSD.integer)))
        triple_count += len(triples[unit.id])
        if ctx is not None:
            ctx.progress(done, len(units), f"{done} units")

    for ref in references:
        node = _node("reference", ref.id)
        add((node, RDF.type, tl.Reference))
        add((node, tl.ofUnit, unit_nodes[ref.unit_id]))
        add((unit_nodes[ref.unit_id], tl.hasReference, node))
        add((node, tl.text, Literal(ref.text)))
        add((node, tl.lang, Literal(ref.lang)))
        add((node, tl.quality, Literal(ref.quality)))
        if ref.lid:
            add((node, tl.lid, Literal(ref.lid)))
    for run in runs:
        node = _node("run", run.id)
        add((node, RDF.type, tl.ModelRun))
        add((node, tl.kind, Literal(run.kind)))
        add((node, tl.modelId, Literal(run.model_id)))
        if run.system_name:
            add((node, tl.systemName, Literal(run.system_name)))
    for verbalisation in verbalisations:
        node = _node("verbalisation", verbalisation.id)
        add((node, RDF.type, tl.Verbalisation))
        add((node, tl.ofUnit, unit_nodes[verbalisation.unit_id]))
        add((node, tl.producedBy, _node("run", verbalisation.run_id)))
        add((node, tl.lang, Literal(verbalisation.lang)))
        add((node, tl.candidate, Literal(verbalisation.candidate_index, datatype=XSD.integer)))
        add((node, tl.parseOk, Literal(bool(verbalisation.parse_ok))))
        # An unparsed output has no text; its raw output is still what the model said.
        add((node, tl.rawOutput, Literal(verbalisation.raw_output)))
        if verbalisation.text is not None:
            add((node, tl.text, Literal(verbalisation.text)))
    for annotator in annotators:
        node = _node("annotator", annotator.id)
        add((node, RDF.type, tl.Annotator))
        add((node, RDFS.label, Literal(annotator.name)))
        add((node, tl.anonymous, Literal(bool(annotator.is_anonymous))))
    for annotation in annotations:
        node = _node("annotation", annotation.id)
        add((node, RDF.type, tl.Annotation))
        add((node, tl.annotator, _node("annotator", annotation.annotator_id)))
        if annotation.verbalisation_id is not None:
            add((node, tl.of, _node("verbalisation", annotation.verbalisation_id)))
        if annotation.reference_id is not None:
            add((node, tl.of, _node("reference", annotation.reference_id)))
        for name in ("fluency", "adequacy"):
            value = getattr(annotation, name)
            if value is not None:
                add((node, tl[name], Literal(value, datatype=XSD.integer)))
        if annotation.corrected_text is not None:
            add((node, tl.correctedText, Literal(annotation.corrected_text)))
    return graph, ExportReport(len(units), len(units), len(references), [],
                               triples=triple_count)


def _statement(graph: Any, unit_node: Any, unit: Any, row: Any, labels: tuple[str, str, str],
               claims: dict[int, Any], tl: Any, wd: Any, wdt: Any, p: Any, ps: Any,
               wikibase: Any) -> None:
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
    graph.add((unit_node, tl.hasStatement, statement))
    graph.add((statement, RDF.type, wikibase.Statement))
    graph.add((statement, tl.position, Literal(row.position, datatype=XSD.integer)))
    graph.add((subject, p[prop], statement))
    graph.add((statement, ps[prop], value))
    graph.add((statement, wikibase.rank, wikibase[RANKS[rank]]))
    if rank != "deprecated":
        graph.add((subject, wdt[prop], value))
    graph.add((subject, RDFS.label, Literal(labels[0], lang=row.lang)))
    graph.add((wd[prop], RDFS.label, Literal(labels[1], lang=row.lang)))
    if obj_is_item:
        graph.add((value, RDFS.label, Literal(labels[2], lang=row.lang)))


def export_rdf(store: Any, path: Path | str, *, fmt: RdfFormat = "turtle",
               ctx: JobContext | None = None) -> ExportReport:
    """Write the session to ``path`` as Turtle or N-Triples; the report's entries are the
    data units written (every unit of the session)."""
    if fmt not in ("turtle", "nt"):
        raise FormatError(f"Unknown RDF format {fmt!r}: use turtle or nt.")
    graph, report = build_graph(store, ctx)
    if ctx is not None:
        ctx.check_cancelled()
    data = graph.serialize(format=fmt, encoding="utf-8")
    with atomic_output(path, binary=True) as handle:
        handle.write(data)
    return replace(report, path=str(path), format=fmt)


def export_job(store: Any, path: Path | str, *, fmt: RdfFormat = "turtle") -> Job[ExportReport]:
    path = Path(path)
    return Job(title=f"Export {path.name}",
               run=lambda ctx: export_rdf(store, path, fmt=fmt, ctx=ctx),
               kind="export", params={"path": str(path), "format": fmt})
