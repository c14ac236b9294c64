"""The streamed RDF export: escapes, both formats the same graph, no repeated lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib import Graph, Literal, URIRef
from rdflib.compare import isomorphic
from sqlalchemy import select

from core.formats.rdf import TL, WD, build_graph, export_rdf
from core.formats.wdv.importer import import_wdv
from core.store import SessionStore
from core.store.models import UnitTriple
from tests.fixtures.wdv_records import wdv_records, write_wdv

NASTY = 'a "quoted" \\ back\nslash\r\tand ünïcode ✓'


@pytest.fixture
def session(store: SessionStore, tmp_path: Path) -> SessionStore:
    import_wdv(store, write_wdv(tmp_path / "wdv.json", wdv_records()))
    with store.unit_of_work() as db:
        rows = db.scalars(select(UnitTriple).order_by(UnitTriple.id)).all()
        rows[0].object_override = NASTY  # an item object: only its label changes
        rows[1].object_override = NASTY  # a literal object: the value itself
        rows[2].lang = "not a tag"  # a language RDF cannot carry
    return store


def test_formats_agree_and_escape(session: SessionStore, tmp_path: Path) -> None:
    graphs = {}
    for fmt in ("nt", "turtle"):
        out = tmp_path / f"x.{fmt}"
        report = export_rdf(session, out, fmt=fmt)
        assert (report.entries, report.units, report.triples) == (3, 3, 3)
        text = out.read_text(encoding="utf-8")
        lines = [line for line in text.splitlines() if line and not line.startswith("@")]
        assert len(lines) == len(set(lines))  # shared labels are written once
        graphs[fmt] = Graph().parse(out, format=fmt)
    assert isomorphic(graphs["nt"], graphs["turtle"])
    graph, _ = build_graph(session)
    assert isomorphic(graph, graphs["nt"])
    nt = graphs["nt"]
    assert (URIRef(WD + "Q38"), None, Literal(NASTY, lang="en")) in nt
    assert any(
        o == Literal(NASTY, lang="en")
        for o in nt.objects(None, None)
        if isinstance(o, Literal) and o.language == "en"
    )
    # The row whose language is not a tag keeps its label, without a language.
    assert (URIRef(WD + "Q90"), None, Literal("Paris")) in nt
    assert len(set(nt.subjects(predicate=URIRef(TL + "uid")))) == 3


def test_empty_session(store: SessionStore, tmp_path: Path) -> None:
    report = export_rdf(store, tmp_path / "e.ttl", fmt="turtle")
    assert (report.entries, report.references, report.triples) == (0, 0, 0)
    assert len(Graph().parse(tmp_path / "e.ttl", format="turtle")) == 0
