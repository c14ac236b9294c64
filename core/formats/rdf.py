"""RDF export (METHODS §10): a session as Turtle or N-Triples, streamed.

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

The export streams: rows are read a batch at a time and each triple is written as a
line as it is made (N-Triples; Turtle is the same lines with prefixed names), so memory
stays flat however large the session. rdflib is only used by :func:`build_graph`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

from core.formats.common import FormatError, atomic_output
from core.formats.csv_export import category_of
from core.formats.report import ExportReport
from core.jobs import Job, JobContext
from core.labels import plural

if TYPE_CHECKING:
    from core.store import SessionStore

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


def _rank(triple: Any, unit: Any, claims: dict[int, Any]) -> str:
    claim = claims.get(triple.claim_id) if triple.claim_id is not None else None
    if claim is not None:
        return claim.rank or "normal"
    attributes = unit.attributes if isinstance(unit.attributes, dict) else {}
    record = attributes.get("record") if attributes.get("format") == "wdv" else None
    rank = record.get("rank") if isinstance(record, dict) else None
    return rank if rank in RANKS else "normal"


_STREAM = 1000  # rows fetched at a time from each table
PREFIXES = {"tl": TL, "wd": WD, "wds": WDS, "wdt": WDT, "p": P, "ps": PS, "wikibase": WIKIBASE}
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
RDFS_LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
_LANG_TAG = re.compile(r"[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*")

# Terms are written as N-Triples text directly (rdflib term objects cost more than the
# rest of the export together). IRIs are built from fixed namespaces and ids checked or
# percent-encoded, so they need no escaping; literals escape what N-Triples requires.


def _iri(text: str) -> str:
    return f"<{text}>"


def _tl(name: str) -> str:
    return f"<{TL}{name}>"


def _lit(value: object) -> str:
    text = str(value)
    if "\\" in text or '"' in text or "\n" in text or "\r" in text:
        text = (
            text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
        )
    return f'"{text}"'


def _lit_lang(value: str, lang: str | None) -> str:
    # A tag RDF cannot carry (it came from a file) leaves the text without one.
    return _lit(value) + (f"@{lang}" if lang and _LANG_TAG.fullmatch(lang) else "")


def _int(value: int) -> str:
    return f'"{int(value)}"^^<{XSD}integer>'


def _bool(value: object) -> str:
    return f'"{"true" if value else "false"}"^^<{XSD}boolean>'


def _node_iri(*parts: str | int) -> str:
    return "<" + ID + "/".join(quote(str(part), safe="") for part in parts) + ">"


def build_graph(store: SessionStore, ctx: JobContext | None = None) -> tuple[Any, ExportReport]:
    """The session as an rdflib Graph, and what it holds (for tests and small sessions;
    :func:`export_rdf` streams and is what large sessions need)."""
    from rdflib import Graph

    summary: dict[str, int] = {}
    lines = [" ".join(triple) + " .\n" for triple in iter_triples(store, ctx, summary)]
    graph = Graph()
    for prefix, namespace in PREFIXES.items():
        graph.bind(prefix, namespace)
    graph.parse(data="".join(lines), format="nt")
    return graph, _report(summary)


def _report(summary: dict[str, int]) -> ExportReport:
    return ExportReport(
        summary["units"], summary["units"], summary["references"], [], triples=summary["triples"]
    )


def iter_triples(
    store: SessionStore, ctx: JobContext | None = None, summary: dict[str, int] | None = None
) -> Iterator[tuple[str, str, str]]:
    """The session's RDF as N-Triples terms, triple by triple, reading each table a
    batch at a time, so memory does not grow with the session. A triple may come more
    than once (a label shared by units); RDF graphs are sets, so that changes nothing.
    At the end ``summary`` holds the counts of units, references and unit triples."""
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

    def stream(statement: Any) -> Iterator[Any]:
        return db.scalars(statement.execution_options(yield_per=_STREAM))

    with store.unit_of_work() as db:
        total = int(db.scalar(select(func.count()).select_from(DataUnit)) or 0)
        categories = {row.id: row.name for row in db.execute(select(Category.id, Category.name))}
        used = select(UnitTriple.claim_id).where(UnitTriple.claim_id.is_not(None))
        claims = {c.id: c for c in db.scalars(select(Claim).where(Claim.id.in_(used)))}
        db.expunge_all()
        uids: dict[int, str] = {}
        # Units and their triples, both in unit order: merged, one unit's rows at a time.
        triple_rows = iter(
            stream(
                select(UnitTriple).order_by(
                    UnitTriple.unit_id, UnitTriple.lang, UnitTriple.tripleset, UnitTriple.position
                )
            )
        )
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
            yield from _unit_triples(unit, rows, categories, claims)
            triple_count += len(rows)
            done += 1
            if ctx is not None and (done % 200 == 0 or done == total):
                ctx.progress(done, total, plural(done, "unit"))
            db.expunge(unit)
            for row in rows:
                db.expunge(row)

        references = 0
        for ref in stream(select(UnitReference).order_by(UnitReference.id)):
            references += 1
            node, unit_node = _node_iri("reference", ref.id), _node_iri("unit", uids[ref.unit_id])
            yield node, RDF_TYPE, _tl("Reference")
            yield node, _tl("ofUnit"), unit_node
            yield unit_node, _tl("hasReference"), node
            yield node, _tl("text"), _lit(ref.text)
            yield node, _tl("lang"), _lit(ref.lang)
            yield node, _tl("quality"), _lit(ref.quality)
            if ref.lid:
                yield node, _tl("lid"), _lit(ref.lid)
            db.expunge(ref)
        for run in db.scalars(select(ModelRun).order_by(ModelRun.id)):
            node = _node_iri("run", run.id)
            yield node, RDF_TYPE, _tl("ModelRun")
            yield node, _tl("kind"), _lit(run.kind)
            yield node, _tl("modelId"), _lit(run.model_id)
            if run.system_name:
                yield node, _tl("systemName"), _lit(run.system_name)
        if ctx is not None:
            ctx.check_cancelled()
        for verbalisation in stream(select(Verbalisation).order_by(Verbalisation.id)):
            node = _node_iri("verbalisation", verbalisation.id)
            yield node, RDF_TYPE, _tl("Verbalisation")
            yield node, _tl("ofUnit"), _node_iri("unit", uids[verbalisation.unit_id])
            yield node, _tl("producedBy"), _node_iri("run", verbalisation.run_id)
            yield node, _tl("lang"), _lit(verbalisation.lang)
            yield node, _tl("candidate"), _int(verbalisation.candidate_index)
            yield node, _tl("parseOk"), _bool(verbalisation.parse_ok)
            # An unparsed output has no text; its raw output is still what the model said.
            yield node, _tl("rawOutput"), _lit(verbalisation.raw_output)
            if verbalisation.text is not None:
                yield node, _tl("text"), _lit(verbalisation.text)
            db.expunge(verbalisation)
        for annotator in db.scalars(select(Annotator).order_by(Annotator.id)):
            node = _node_iri("annotator", annotator.id)
            yield node, RDF_TYPE, _tl("Annotator")
            yield node, RDFS_LABEL, _lit(annotator.name)
            yield node, _tl("anonymous"), _bool(annotator.is_anonymous)
        if ctx is not None:
            ctx.check_cancelled()
        for annotation in stream(select(Annotation).order_by(Annotation.id)):
            node = _node_iri("annotation", annotation.id)
            yield node, RDF_TYPE, _tl("Annotation")
            yield node, _tl("annotator"), _node_iri("annotator", annotation.annotator_id)
            if annotation.verbalisation_id is not None:
                yield node, _tl("of"), _node_iri("verbalisation", annotation.verbalisation_id)
            if annotation.reference_id is not None:
                yield node, _tl("of"), _node_iri("reference", annotation.reference_id)
            for name in ("fluency", "adequacy"):
                value = getattr(annotation, name)
                if value is not None:
                    yield node, _tl(name), _int(value)
            if annotation.corrected_text is not None:
                yield node, _tl("correctedText"), _lit(annotation.corrected_text)
            db.expunge(annotation)
    summary.update(units=done, references=references, triples=triple_count)


def _unit_triples(
    unit: Any, rows: list[Any], categories: dict[int, str], claims: dict[int, Any]
) -> Iterator[tuple[str, str, str]]:
    node = _node_iri("unit", unit.uid)
    yield node, RDF_TYPE, _tl("DataUnit")
    yield node, _tl("uid"), _lit(unit.uid)
    yield node, _tl("size"), _int(unit.size)
    yield node, _tl("origin"), _lit(unit.origin)
    for name, value in (
        ("shape", unit.shape),
        ("tier", unit.tier),
        ("subTier", unit.sub_tier),
        ("category", category_of(unit, categories) or None),
    ):
        if value:
            yield node, _tl(name), _lit(value)
    if unit.root_qid and _QID.fullmatch(unit.root_qid):
        yield node, _tl("rootItem"), _iri(WD + unit.root_qid)
    said: set[tuple[str, str, str]] = set()  # rows of other languages repeat a statement
    for row in rows:
        labels = (_text(row, "subject"), _text(row, "predicate"), _text(row, "object"))
        if (
            row.subject_qid
            and _QID.fullmatch(row.subject_qid)
            and row.property_pid
            and _PID.fullmatch(row.property_pid)
        ):
            for triple in _statement(node, unit, row, labels, claims):
                if triple not in said:
                    said.add(triple)
                    yield triple
            continue
        place = _node_iri("unit", unit.uid, "triple", row.lang, row.tripleset, row.position)
        yield node, _tl("triple"), place
        yield place, RDF_TYPE, _tl("Triple")
        yield place, _tl("subjectLabel"), _lit(labels[0])
        yield place, _tl("predicateLabel"), _lit(labels[1])
        yield place, _tl("objectLabel"), _lit(labels[2])
        yield place, _tl("lang"), _lit(row.lang)
        yield place, _tl("tripleset"), _lit(row.tripleset)
        yield place, _tl("position"), _int(row.position)


def _statement(
    unit_node: str, unit: Any, row: Any, labels: tuple[str, str, str], claims: dict[int, Any]
) -> Iterator[tuple[str, str, str]]:
    """One triple with ids as a Wikidata statement; the rows of other languages at the same
    position describe the same statement and only add labels in their language."""
    claim = claims.get(row.claim_id) if row.claim_id is not None else None
    if claim is not None and claim.statement_id:
        statement = _iri(WDS + quote(claim.statement_id.replace("$", "-"), safe=""))
    else:
        statement = _node_iri("unit", unit.uid, "statement", row.tripleset, row.position)
    subject, prop = _iri(WD + row.subject_qid), row.property_pid
    obj_is_item = bool(row.object_value and _QID.fullmatch(row.object_value))
    value = _iri(WD + row.object_value) if obj_is_item else _lit_lang(labels[2], row.lang)
    rank = _rank(row, unit, claims)
    yield unit_node, _tl("hasStatement"), statement
    yield statement, RDF_TYPE, _iri(WIKIBASE + "Statement")
    yield statement, _tl("position"), _int(row.position)
    yield subject, _iri(P + prop), statement
    yield statement, _iri(PS + prop), value
    yield statement, _iri(WIKIBASE + "rank"), _iri(WIKIBASE + RANKS[rank])
    if rank != "deprecated":
        yield subject, _iri(WDT + prop), value
    yield subject, RDFS_LABEL, _lit_lang(labels[0], row.lang)
    yield _iri(WD + prop), RDFS_LABEL, _lit_lang(labels[1], row.lang)
    if obj_is_item:
        yield value, RDFS_LABEL, _lit_lang(labels[2], row.lang)


_SAFE_LOCAL = re.compile(r"[A-Za-z0-9_]+")


def write_triples(triples: Iterator[tuple[str, str, str]], handle: Any, fmt: RdfFormat) -> None:
    """Write ``triples`` to a binary ``handle`` one line each, as they come: N-Triples, or
    Turtle with the export's prefixes (a prefixed name where the local part is plainly
    safe; Turtle reads the N-Triples form of everything else)."""
    # Longest namespace first, so wds: wins over wd: for a statement node.
    prefixes = sorted(
        ((f"<{ns}", prefix) for prefix, ns in PREFIXES.items()), key=lambda item: -len(item[0])
    )
    short: dict[str, str] = {}

    def turtle(term: str) -> str:
        if not term.startswith("<"):
            return term
        found = short.get(term)
        if found is None:
            found = term
            for namespace, prefix in prefixes:
                local = term[len(namespace) : -1]
                if term.startswith(namespace) and _SAFE_LOCAL.fullmatch(local):
                    found = f"{prefix}:{local}"
                    break
            if len(short) < 100_000:  # the vocabulary and frequent items, not every node
                short[term] = found
        return found

    if fmt == "turtle":
        handle.write(
            "".join(f"@prefix {prefix}: <{ns}> .\n" for prefix, ns in PREFIXES.items()).encode()
        )
        handle.write(b"\n")
    # Only Wikidata's own nodes (items, properties, statements) are shared by units, so
    # only their triples are remembered: memory grows with distinct facts, not units.
    seen: set[str] = set()
    shared = f"<{WD}"
    buffer: list[str] = []
    for triple in triples:
        if fmt == "turtle":
            line = f"{turtle(triple[0])} {turtle(triple[1])} {turtle(triple[2])} .\n"
        else:
            line = f"{triple[0]} {triple[1]} {triple[2]} .\n"
        if triple[0].startswith(shared):
            if line in seen:
                continue
            seen.add(line)
        buffer.append(line)
        if len(buffer) >= 4096:
            handle.write("".join(buffer).encode("utf-8"))
            buffer.clear()
    handle.write("".join(buffer).encode("utf-8"))


def export_rdf(
    store: SessionStore,
    path: Path | str,
    *,
    fmt: RdfFormat = "turtle",
    ctx: JobContext | None = None,
    force: bool = False,
) -> ExportReport:
    """Write the session to ``path`` as Turtle or N-Triples; the report's entries are the
    data units written (every unit of the session)."""
    if fmt not in ("turtle", "nt"):
        raise FormatError(f"Unknown RDF format {fmt!r}: use turtle or nt.")
    summary: dict[str, int] = {}
    with atomic_output(path, binary=True, force=force) as handle:
        write_triples(iter_triples(store, ctx, summary), handle, fmt)
        if ctx is not None:
            ctx.check_cancelled()
    return replace(_report(summary), path=str(path), format=fmt)


def export_job(
    store: SessionStore, path: Path | str, *, fmt: RdfFormat = "turtle"
) -> Job[ExportReport]:
    path = Path(path)
    return Job(
        title=f"Export {path.name}",
        run=lambda ctx: export_rdf(store, path, fmt=fmt, ctx=ctx),
        kind="export",
        params={"path": str(path), "format": fmt},
    )
