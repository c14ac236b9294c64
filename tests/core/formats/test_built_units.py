"""Units built in the app (not imported) leave through TailNLG XML and RDF intact.

The unit is built the way the Units panel builds one: claims stored in the session by
``store_entity`` (ranks included), read back with ``load_entity``, picked into a draft,
rendered in en/it/es and saved by ``core.units.builder``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib import RDFS, Graph, Literal, Namespace
from sqlalchemy import select

from core.formats import import_webnlg
from core.formats.rdf import export_rdf
from core.formats.webnlg.writer import export_webnlg
from core.store import SessionStore
from core.store.models import DataUnit, UnitTriple
from core.units.builder.draft import UnitDraft
from core.units.builder.render import parallel_languages, render_unit
from core.units.builder.saved import save_unit, set_override
from core.wikidata.cache import load_entity, store_entity
from core.wikidata.records import ClaimRecord, EntityDetails, Term

WD = Namespace("http://www.wikidata.org/entity/")
WDS = Namespace("http://www.wikidata.org/entity/statement/")
WDT = Namespace("http://www.wikidata.org/prop/direct/")
P = Namespace("http://www.wikidata.org/prop/")
PS = Namespace("http://www.wikidata.org/prop/statement/")
WIKIBASE = Namespace("http://wikiba.se/ontology#")
TL = Namespace("https://taillens.org/ns#")


def labels(item: str, en: str, it: str, es: str) -> tuple[Term, ...]:
    return tuple(
        Term(item, lang, "label", text) for lang, text in (("en", en), ("it", it), ("es", es))
    )


ROME = EntityDetails(
    "Q220",
    terms=(
        *labels("Q220", "Rome", "Roma", "Roma"),
        *labels("P17", "country", "paese", "país"),
        *labels("P571", "inception", "data di fondazione", "fecha de fundación"),
        *labels("Q38", "Italy", "Italia", "Italia"),
    ),
    claims=(
        ClaimRecord("Q220$A1", "Q220", "P17", "Q38", "wikibase-item", rank="preferred"),
        ClaimRecord(
            "Q220$A2", "Q220", "P571", "-0753-04-21T00:00:00Z", "time", value_json={"precision": 11}
        ),
    ),
    property_types={"P17": "wikibase-item", "P571": "time"},
)
ITALY = EntityDetails(
    "Q38",
    terms=(
        *labels("Q38", "Italy", "Italia", "Italia"),
        *labels("P38", "currency", "valuta", "moneda"),
        *labels("Q4916", "euro", "euro", "euro"),
    ),
    claims=(ClaimRecord("Q38$B1", "Q38", "P38", "Q4916", "wikibase-item"),),
    property_types={"P38": "wikibase-item"},
)
RANKS = {"Q220$A1": "PreferredRank", "Q220$A2": "NormalRank", "Q38$B1": "NormalRank"}


@pytest.fixture
def built(tmp_path: Path) -> SessionStore:
    """A session holding one unit built from stored claims: Rome → Italy → euro, plus
    Rome's founding date (a mixed unit of three triples, parallel in en/it/es)."""
    with SessionStore.create(tmp_path / "built.taillens") as store:
        store_entity(store, ROME, "test")
        store_entity(store, ITALY, "test")
        details = {qid: load_entity(store, qid) for qid in ("Q220", "Q38")}
        claims = {c.statement_id: c for d in details.values() if d for c in d.claims}
        assert claims["Q220$A1"].rank == "preferred"  # the rank came from the Claim row
        draft = UnitDraft("Q220", tier="long_tail", sub_tier="long_tail_it")
        for statement in ("Q220$A1", "Q38$B1", "Q220$A2"):
            draft = draft.add(claims[statement])
        rendered = render_unit(draft, details)  # type: ignore[arg-type]
        assert parallel_languages(rendered) == {"en", "it", "es"}
        unit_id = save_unit(store, draft, rendered, uid="rome-built", source="test")
        # A manual correction must leave as the text of the triple.
        set_override(store, unit_id, "es", 2, "object", "21 de abril del 753 a. C.")
        yield store


def shown_triples(store: SessionStore) -> dict[str, list[tuple[str, str, str]]]:
    """Main triples per language as displayed (overrides in place of the labels)."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    with store.unit_of_work() as db:
        for row in db.scalars(
            select(UnitTriple)
            .where(UnitTriple.tripleset == "main")
            .order_by(UnitTriple.lang, UnitTriple.position)
        ):
            out.setdefault(row.lang, []).append(
                tuple(  # type: ignore[arg-type]
                    getattr(row, f"{p}_override") or getattr(row, p)
                    for p in ("subject", "predicate", "object")
                )
            )
    return out


def test_tailnlg_export_of_a_built_unit_reimports_with_the_same_triples(
    built: SessionStore, tmp_path: Path
) -> None:
    expected = shown_triples(built)
    assert expected["en"] == [
        ("Rome", "country", "Italy"),
        ("Italy", "currency", "euro"),
        ("Rome", "inception", "21 April 753 BC"),
    ]
    assert expected["it"][1] == ("Italia", "valuta", "euro")
    assert expected["es"][2] == ("Roma", "fecha de fundación", "21 de abril del 753 a. C.")

    out = tmp_path / "built.xml"
    report = export_webnlg(built, out, flavour="tailnlg")
    # original + modified (en), Spanish and Italian sets: 4 × 3 triples, no references.
    assert (report.entries, report.units, report.references, report.triples) == (1, 1, 0, 12)

    with SessionStore.create(tmp_path / "again.taillens") as again:
        imported = import_webnlg(again, out, flavour="tailnlg")
        assert (imported.units, imported.errors) == (1, [])
        assert shown_triples(again) == expected
        with again.unit_of_work() as db:
            unit = db.scalars(select(DataUnit)).one()
            assert (unit.uid, unit.shape, unit.size, unit.root_qid, unit.tier, unit.sub_tier) == (
                "rome-built",
                "mixed",
                3,
                "Q220",
                "long_tail",
                "long_tail_it",
            )
            original = db.scalars(
                select(UnitTriple)
                .where(UnitTriple.tripleset == "original")
                .order_by(UnitTriple.position)
            ).all()
            assert [(t.subject, t.predicate, t.object) for t in original] == expected["en"]


def test_rdf_export_of_a_built_unit_holds_its_statements_and_ranks(
    built: SessionStore, tmp_path: Path
) -> None:
    out = tmp_path / "built.ttl"
    report = export_rdf(built, out, fmt="turtle")
    assert (report.entries, report.units, report.triples) == (1, 1, 9)
    graph = Graph().parse(out, format="turtle")
    shown = shown_triples(built)
    unit = next(graph.subjects(TL.uid, Literal("rome-built")))
    statements = set(graph.objects(unit, TL.hasStatement))
    assert statements == {WDS[s.replace("$", "-")] for s in RANKS}
    items = {
        "Q220$A1": ("Q220", "P17", WD.Q38),
        "Q38$B1": ("Q38", "P38", WD.Q4916),
        "Q220$A2": ("Q220", "P571", None),
    }
    for statement_id, (subject, pid, value) in items.items():
        node = WDS[statement_id.replace("$", "-")]
        assert (WD[subject], P[pid], node) in graph
        assert graph.value(node, WIKIBASE.rank) == WIKIBASE[RANKS[statement_id]]
        objects = set(graph.objects(node, PS[pid]))
        if value is not None:
            assert objects == {value}
            assert (WD[subject], WDT[pid], value) in graph  # truthy: the rank is not deprecated
        else:  # a date: its rendering in each language, the Spanish override included
            assert objects == {Literal(shown[lang][2][2], lang=lang) for lang in shown}
    # Every word of every language is in the graph as a label of its item or property.
    for lang, rows in shown.items():
        # items is in the unit's triple order.
        for (subject, predicate, obj), (qid, pid, value) in zip(rows, items.values(), strict=True):
            assert Literal(subject, lang=lang) in set(graph.objects(WD[qid], RDFS.label))
            assert Literal(predicate, lang=lang) in set(graph.objects(WD[pid], RDFS.label))
            if value is not None:
                assert Literal(obj, lang=lang) in set(graph.objects(value, RDFS.label))
