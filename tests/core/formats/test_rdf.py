"""RDF export: the TailNLG benchmark plus WDV records, parsed back, hold the same facts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from rdflib import RDF, Graph, Literal, Namespace, URIRef
from sqlalchemy import select

from core.formats import FormatError, import_webnlg
from core.formats.rdf import TL, WD, export_rdf
from core.formats.wdv.importer import import_wdv
from core.store import SessionStore
from core.store.models import UnitReference, UnitTriple
from tests.fixtures.wdv_records import wdv_records, write_wdv
from tests.shared_data import TAILNLG, require

tl = Namespace(TL)
wd = Namespace(WD)
PREFIXES = {
    "tl": tl,
    "wd": wd,
    "wdt": Namespace("http://www.wikidata.org/prop/direct/"),
    "p": Namespace("http://www.wikidata.org/prop/"),
    "ps": Namespace("http://www.wikidata.org/prop/statement/"),
    "wikibase": Namespace("http://wikiba.se/ontology#"),
    "rdfs": Namespace("http://www.w3.org/2000/01/rdf-schema#"),
}


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionStore]:
    tailnlg = require(*TAILNLG)
    folder = tmp_path_factory.mktemp("rdf")
    with SessionStore.create(folder / "s.taillens") as store:
        import_webnlg(store, tailnlg, flavour="tailnlg")
        import_wdv(store, write_wdv(folder / "wdv.json", wdv_records()))
        # An override must be what the export says.
        with store.unit_of_work() as db:
            row = db.scalars(select(UnitTriple).where(UnitTriple.subject_qid == "Q90")).one()
            row.object_override = "la France"
        yield store


@pytest.fixture(scope="module", params=["turtle", "nt"])
def graph(
    request: pytest.FixtureRequest, session: SessionStore, tmp_path_factory: pytest.TempPathFactory
) -> Graph:
    out = tmp_path_factory.mktemp("out") / f"export.{request.param}"
    report = export_rdf(session, out, fmt=request.param)
    assert (report.entries, report.units, report.references, report.skipped) == (618, 618, 1845, [])
    parsed = Graph()
    parsed.parse(out, format=request.param)
    return parsed


def count(graph: Graph, query: str) -> int:
    return int(next(iter(graph.query(query, initNs=PREFIXES)))[0])


def test_every_unit_and_triple(graph: Graph, session: SessionStore) -> None:
    assert len(set(graph.subjects(RDF.type, tl.DataUnit))) == 618
    with session.unit_of_work() as db:
        expected = Counter(
            db.scalars(select(UnitTriple.lang).where(UnitTriple.subject_qid.is_(None)))
        )
        first = db.scalars(select(UnitTriple).order_by(UnitTriple.id)).first()
        assert first is not None
        uid = first.unit.uid
        spot = (first.subject, first.predicate, first.object, first.lang, first.position)
    rows = graph.query(
        "SELECT ?lang (COUNT(?t) AS ?n) WHERE { ?u tl:triple ?t . "
        "?t a tl:Triple ; tl:lang ?lang } GROUP BY ?lang",
        initNs=PREFIXES,
    )
    assert {str(lang): int(n) for lang, n in rows} == dict(expected)
    assert set(expected) == {"en", "es", "it"}
    found = graph.query(
        "SELECT ?s ?p ?o WHERE { ?u tl:uid ?uid ; tl:triple ?t . ?t tl:lang ?lang ; "
        "tl:position ?pos ; tl:tripleset ?set ; tl:subjectLabel ?s ; tl:predicateLabel ?p ; "
        "tl:objectLabel ?o }",
        initNs=PREFIXES,
        initBindings={
            "uid": Literal(uid),
            "lang": Literal(spot[3]),
            "pos": Literal(spot[4]),
            "set": Literal(first.tripleset),
        },
    )
    assert [tuple(map(str, row)) for row in found] == [spot[:3]]


def test_references_with_quality(graph: Graph, session: SessionStore) -> None:
    with session.unit_of_work() as db:
        expected = Counter(db.execute(select(UnitReference.lang, UnitReference.quality)).all())
        some = db.scalars(select(UnitReference).order_by(UnitReference.id)).first()
        assert some is not None
        spot = (some.unit.uid, some.text, some.lang, some.quality)
    rows = graph.query(
        "SELECT ?lang ?q (COUNT(?r) AS ?n) WHERE { ?r a tl:Reference ; "
        "tl:lang ?lang ; tl:quality ?q ; tl:ofUnit ?u } GROUP BY ?lang ?q",
        initNs=PREFIXES,
    )
    assert {(str(lang), str(q)): int(n) for lang, q, n in rows} == dict(expected)
    assert sum(expected.values()) == 1845
    assert (
        count(
            graph,
            "SELECT (COUNT(*) AS ?n) WHERE { ?u tl:uid ?uid ; tl:hasReference ?r . "
            f"?r tl:text {Literal(spot[1]).n3()} ; tl:lang '{spot[2]}' ; "
            f"tl:quality '{spot[3]}' . FILTER(?uid = {Literal(spot[0]).n3()}) }}",
        )
        == 1
    )


def test_wdv_statements_verbalisations_and_scores(graph: Graph) -> None:
    ns = PREFIXES
    gubbio, italy = wd.Q2158, wd.Q38
    assert (gubbio, ns["wdt"].P17, italy) in graph
    assert (
        gubbio,
        URIRef("http://www.w3.org/2000/01/rdf-schema#label"),
        Literal("Gubbio", lang="en"),
    ) in graph
    assert (
        count(
            graph,
            "SELECT (COUNT(*) AS ?n) WHERE { wd:Q2158 p:P1082 ?st . "
            "?st ps:P1082 '31,000'@en ; wikibase:rank wikibase:PreferredRank }",
        )
        == 1
    )
    assert (wd.Q90, ns["wdt"].P17, wd.Q142) in graph
    assert (wd.Q142, ns["rdfs"].label, Literal("la France", lang="en")) in graph
    assert (
        count(
            graph,
            "SELECT (COUNT(DISTINCT ?st) AS ?n) WHERE { ?u a tl:DataUnit ; tl:hasStatement ?st }",
        )
        == 3
    )
    assert (
        count(
            graph,
            "SELECT (COUNT(*) AS ?n) WHERE { ?v a tl:Verbalisation ; "
            "tl:producedBy ?run ; tl:candidate 0 ; tl:lang 'en' ; tl:ofUnit ?u . "
            "?run tl:systemName 'WDV' }",
        )
        == 3
    )
    rows = graph.query(
        "SELECT ?text (SUM(?f) AS ?fs) (COUNT(?a) AS ?n) WHERE { ?a a tl:Annotation ; tl:of ?v ; "
        "tl:fluency ?f ; tl:annotator ?who . ?v tl:text ?text } GROUP BY ?text",
        initNs=ns,
    )
    assert {str(t): (int(f), int(n)) for t, f, n in rows} == {
        "Gubbio is in Italy.": (23, 5),
        "Gubbio has 31,000 inhabitants.": (21, 5),
        "Paris is a city in France.": (12, 3),
    }
    assert count(graph, "SELECT (COUNT(*) AS ?n) WHERE { ?a tl:adequacy 2 }") == 2


def test_unknown_format_is_refused(session: SessionStore, tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="Unknown RDF format"):
        export_rdf(session, tmp_path / "x.rdf", fmt="xml")  # type: ignore[arg-type]
    assert not (tmp_path / "x.rdf").exists()
