"""TailNLG and WebNLG XML: import into a session, export, and compare element by element."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from sqlalchemy import func, select

from core.formats import (
    EXPORT_FORMATS,
    IMPORT_FORMATS,
    detect_format,
    export_webnlg,
    import_webnlg,
)
from core.store import SessionStore
from core.store.models import DataUnit, UnitReference, UnitTriple
from tests.fixtures.webnlg_xml import assert_same_element


def test_tailnlg_counts_and_round_trip(
    store: SessionStore, tailnlg_path: Path, tmp_path: Path
) -> None:
    assert detect_format(tailnlg_path) == "tailnlg"
    report = import_webnlg(store, tailnlg_path)
    assert report.summary_line() == "615 entries, 615 units, 1845 references, 0 errors"
    original = ET.parse(tailnlg_path).getroot()
    with store.unit_of_work() as db:
        assert db.scalar(select(func.count()).select_from(DataUnit)) == 615
        sets = Counter(db.execute(select(UnitTriple.lang, UnitTriple.tripleset)))
        assert sets == {
            ("en", "original"): 1293,
            ("en", "main"): 1293,
            ("es", "main"): 1282,
            ("it", "main"): 1271,
        }
        refs = db.execute(
            select(
                UnitReference.lang,
                UnitReference.quality,
                UnitReference.lid,
                UnitReference.text,
                UnitReference.provenance,
            ).order_by(UnitReference.id)
        ).all()
        first = db.scalars(select(DataUnit).order_by(DataUnit.id).limit(1)).one()
        assert (
            first.uid,
            first.root_qid,
            first.shape,
            first.size,
            first.tier,
            first.sub_tier,
            first.origin,
            first.source,
        ) == (
            "66J3S7",
            "Q823491",
            "chain",
            4,
            "long_tail",
            "long_tail_en",
            "imported",
            tailnlg_path.name,
        )
        assert list(first.attributes["entry"]) == [
            "category",
            "eid",
            "shape",
            "shape_type",
            "size",
            "unique_id",
            "qid",
            "type",
            "subtype",
        ]
        split = db.execute(
            select(UnitTriple.subject, UnitTriple.predicate, UnitTriple.object)
            .where(UnitTriple.unit_id == first.id, UnitTriple.lang == "es")
            .order_by(UnitTriple.position)
        ).first()
        assert split == (
            "Maidarzhavyn Ganzorig",
            "país de nacionalidad",
            "República Popular de Mongolia",
        )
    lexes = [lex for lex in original.iter("lex")]
    assert len(refs) == len(lexes) == 1845
    for (lang, quality, lid, text, provenance), lex in zip(refs, lexes, strict=True):
        assert (lang, quality, lid, text) == (
            lex.get("lang"),
            lex.get("quality"),
            lex.get("lid"),
            lex.text,
        )
        assert provenance == f"{tailnlg_path.name}#{lid}"
    assert Counter(q for _, q, *_ in refs) == Counter(x.get("quality") for x in lexes)

    out = tmp_path / "out.xml"
    report = export_webnlg(store, out, flavour="tailnlg")
    triple_sets = {"originaltripleset", "modifiedtripleset", "spanishtripleset", "italiantripleset"}
    in_file = sum(len(s) for entry in original.iter("entry") for s in entry if s.tag in triple_sets)
    assert (report.entries, report.units, report.references, report.skipped) == (615, 615, 1845, [])
    assert report.triples == in_file and report.format == "tailnlg"
    assert report.summary_line() == "615 entries, 615 units, 1845 references, 0 errors"
    assert out.read_bytes().startswith(b'<?xml version="1.0" encoding="utf-8"?>\n<benchmark>')
    assert_same_element(original, ET.parse(out).getroot())


WEBNLG = """<?xml version="1.0" encoding="utf-8"?>
<benchmark>
  <entries>
    <entry category="Airport" eid="Id1" shape="(X (X))" shape_type="NA" size="1" extra="x&amp;y">
      <originaltripleset>
        <otriple>Aarhus_Airport | cityServed | "Aarhus, Denmark"@en</otriple>
      </originaltripleset>
      <originaltripleset>
        <otriple>Aarhus_Airport | cityServed | Aarhus</otriple>
      </originaltripleset>
      <modifiedtripleset>
        <mtriple>Aarhus_Airport | cityServed |   "Aarhus, Denmark"</mtriple>
      </modifiedtripleset>
      <lex comment="good" lid="Id1">The Aarhus is the airport of Aarhus, Denmark.</lex>
      <lex lid="Id2" lang="ru">Аэропорт Орхус обслуживает город Орхус, Дания.</lex>
      <dbpedialinks>
        <dbpedialink direction="en2ru">Aarhus_Airport | sameAs | Орхус_(аэропорт)</dbpedialink>
      </dbpedialinks>
      <links>
        <link direction="en2ru">cityServed | sameAs | город</link>
      </links>
      <entitymap>
        <entity>Aarhus_Airport | Aarhus_Airport</entity>
      </entitymap>
    </entry>
    <entry category="Airport" eid="Id2" shape="" shape_type="sibling" size="2">
      <modifiedtripleset>
        <mtriple>Abilene | isPartOf | Texas</mtriple>
        <mtriple>Abilene | country | United_States</mtriple>
      </modifiedtripleset>
      <lex lid="Id1">Abilene is in Texas, United States.</lex>
    </entry>
  </entries>
</benchmark>
"""


def test_webnlg_fixture_round_trip(store: SessionStore, tmp_path: Path) -> None:
    source = tmp_path / "webnlg_dev.xml"
    source.write_text(WEBNLG, encoding="utf-8")
    assert detect_format(source) == "webnlg"
    report = import_webnlg(store, source, flavour="webnlg")
    assert (report.entries, report.units, report.references, report.errors) == (2, 2, 3, [])
    with store.unit_of_work() as db:
        units = db.scalars(select(DataUnit).order_by(DataUnit.id)).all()
        assert [u.uid for u in units] == ["webnlg_dev:Id1", "webnlg_dev:Id2"]
        assert units[0].shape is None and units[1].shape == "sibling"
        assert units[0].attributes["entry"]["extra"] == "x&y"
        sets = Counter(db.execute(select(UnitTriple.tripleset)).scalars())
        assert sets == {"original": 1, "original.1": 1, "main": 3}
        refs = db.execute(select(UnitReference.lang, UnitReference.quality)).all()
        assert refs == [("en", "gold"), ("ru", "gold"), ("en", "gold")]
    out = tmp_path / "out.xml"
    report = export_webnlg(store, out, flavour="webnlg")
    assert (report.entries, report.units, report.references, report.triples) == (2, 2, 3, 5)
    exported = out.read_text(encoding="utf-8")
    # Odd spacing inside an unchanged triple comes back as written.
    assert '<mtriple>Aarhus_Airport | cityServed |   "Aarhus, Denmark"</mtriple>' in exported
    assert_same_element(ET.fromstring(WEBNLG.encode()), ET.parse(out).getroot())


def test_edits_and_units_built_in_the_app_are_exported(store: SessionStore, tmp_path: Path) -> None:
    source = tmp_path / "small.xml"
    source.write_text(WEBNLG, encoding="utf-8")
    import_webnlg(store, source)
    with store.unit_of_work() as db:
        unit = db.scalars(select(DataUnit).where(DataUnit.uid == "small:Id2")).one()
        row = db.scalars(
            select(UnitTriple).where(UnitTriple.unit_id == unit.id, UnitTriple.position == 1)
        ).one()
        row.object_override = "USA"
        built = DataUnit(
            uid="built-1", origin="built", size=1, shape="sibling", root_qid="Q90", tier="head"
        )
        built.triples = [
            UnitTriple(
                lang="en",
                tripleset="main",
                position=0,
                subject="Paris",
                predicate="country",
                object="France",
            )
        ]
        built.references = [
            UnitReference(lang="en", text="Paris is in France.", quality="gold", lid="Id1")
        ]
        db.add(built)
    out = tmp_path / "out.xml"
    report = export_webnlg(store, out, flavour="tailnlg")
    assert (report.entries, report.units, report.references, report.errors) == (3, 3, 4, [])
    entries = ET.parse(out).getroot().findall("entries/entry")
    assert entries[1].find("modifiedtripleset")[1].text == "Abilene | country | USA"
    generated = entries[2]
    assert generated.get("eid") == "Id3" and generated.get("unique_id") == "built-1"
    assert generated.find("modifiedtripleset/mtriple").text == "Paris | country | France"
    assert generated.find("lex").attrib == {"lid": "Id1", "lang": "en", "quality": "gold"}


def test_registry_names_the_formats() -> None:
    assert {"tailnlg", "webnlg"} <= IMPORT_FORMATS.keys()
    assert {"tailnlg", "webnlg"} <= EXPORT_FORMATS.keys()
    description, file_filter, function = IMPORT_FORMATS["tailnlg"]
    assert "*.xml" in file_filter and callable(function) and description


ENRICHED = """<?xml version="1.0" encoding="utf-8"?>
<benchmark>
  <entries>
    <entry category="Airport" eid="Id1" size="1">
      <modifiedtripleset>
        <mtriple>A | b | C</mtriple>
      </modifiedtripleset>
      <lex comment="good" lid="Id1">
        <sortedtripleset>
          <sentence ID="1"><striple>A | b | C</striple></sentence>
        </sortedtripleset>
        <text>A is b of C.</text>
        <template>AGENT-1 is b of PATIENT-1 .</template>
      </lex>
    </entry>
  </entries>
</benchmark>
"""


def test_webnlg_2_enriched_lex_round_trips(store: SessionStore, tmp_path: Path) -> None:
    # WebNLG 2.x keeps the reference in lex/text, next to templates and sorted triples.
    source = tmp_path / "enriched.xml"
    source.write_text(ENRICHED, encoding="utf-8")
    assert import_webnlg(store, source).references == 1
    with store.unit_of_work() as db:
        assert db.scalars(select(UnitReference.text)).all() == ["A is b of C."]
    out = tmp_path / "out.xml"
    export_webnlg(store, out, flavour="webnlg")
    assert_same_element(ET.fromstring(ENRICHED.encode()), ET.parse(out).getroot())
