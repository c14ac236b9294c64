"""WebNLG releases as published: texts without a language, folders, enriched mentions."""
# ruff: noqa: E501 - fixtures keep the release files' long lines as published

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import func, select

from core.formats import FormatError, detect_format, export_webnlg, import_webnlg
from core.formats.report import FileImport, LanguageDecision
from core.formats.webnlg.importer import file_language, language_in_file_name
from core.references.mentions import annotated_references, mentions_of
from core.store import SessionStore
from core.store.models import DataUnit, ReferenceMention, UnitReference
from tests.fixtures.table_digest import table_digest
from tests.fixtures.webnlg_release_samples import WEBNLG_2017, WEBNLG_2020
from tests.fixtures.webnlg_xml import assert_same_element
from tests.shared_data import ENRICHED_DEV, require


def write(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    return path


def reference_langs(store: SessionStore) -> list[str]:
    with store.unit_of_work() as db:
        return list(db.scalars(select(UnitReference.lang).order_by(UnitReference.id)))


def test_language_in_file_name() -> None:
    assert language_in_file_name("rdf-to-text-generation-test-data-with-refs-en.xml") == "en"
    assert language_in_file_name("rdf-to-text-generation-test-data-with-refs-ru.xml") == "ru"
    assert language_in_file_name("webnlg_ru_train.xml") == "ru"
    # "to" is Tonga's code, but only the end of the stem or a part between underscores
    # names the language.
    assert language_in_file_name("rdf-to-text.xml") is None
    assert language_in_file_name("Airport.xml") is None
    assert language_in_file_name("longTailWebNLG-v1.0.xml") is None
    assert file_language("x-ru.xml", "IT") == LanguageDecision("it", "asked", "--lang it")
    assert "--lang" in file_language("x-ru.xml", "it").rule
    assert file_language("x-ru.xml") == LanguageDecision("ru", "filename", "x-ru.xml")
    assert "file name" in file_language("x-ru.xml").rule
    assert file_language("x-ru.xml").confidence == "inferred"
    assert file_language("Airport.xml") == LanguageDecision("en", "default")
    assert file_language("Airport.xml").confidence == "assumed"
    with pytest.raises(FormatError, match="'xx' is not a two-letter ISO 639-1 code"):
        file_language("a.xml", "xx")


def test_webnlg_2020_layout_takes_the_file_name_language_and_round_trips(
    store: SessionStore, tmp_path: Path
) -> None:
    source = write(tmp_path / "rdf-to-text-generation-test-data-with-refs-en.xml", WEBNLG_2020)
    report = import_webnlg(store, source)
    assert (report.units, report.references, report.errors) == (2, 3, [])
    assert reference_langs(store) == ["en", "en", "en"]
    assert report.files == [
        FileImport(source.name, 2, 2, 3, 0, LanguageDecision("en", "filename", source.name), 3)
    ]
    assert report.files[0].to_json() == {
        "file": source.name,
        "entries": 2,
        "units": 2,
        "references": 3,
        "errors": 0,
        "unmarked_texts": 3,
        "lang": "en",
        "how": "filename",
        "confidence": "inferred",
        "evidence": source.name,
    }
    assert report.files[0].line() == (
        f"{source.name}: 2 entries, 2 units, 3 references, 0 errors; 3 texts without a "
        f"language taken as en (from the file name {source.name})"
    )
    out = tmp_path / "out.xml"
    export_webnlg(store, out, flavour="webnlg")
    exported = ET.parse(out).getroot()
    # lang="" comes back as the file had it, in its place.
    assert [list(lex.attrib.items()) for lex in exported.iter("lex")][0] == [
        ("lang", ""),
        ("lid", "Id1"),
    ]
    assert_same_element(ET.fromstring(WEBNLG_2020.encode()), exported)


def test_lang_option_wins_over_the_file_name(store: SessionStore, tmp_path: Path) -> None:
    source = write(tmp_path / "test-data-ru.xml", WEBNLG_2020)
    report = import_webnlg(store, source, lang="de")
    assert reference_langs(store) == ["de", "de", "de"]
    assert report.files[0].language == LanguageDecision("de", "asked", "--lang de")
    assert report.files[0].how == "asked" and report.files[0].unmarked == 3
    assert "taken as de (as asked for the import (--lang))" in report.files[0].line()


def test_webnlg_2017_layout_without_lang_is_english_by_default(
    store: SessionStore, tmp_path: Path
) -> None:
    source = write(tmp_path / "Airport.xml", WEBNLG_2017)
    report = import_webnlg(store, source)
    assert reference_langs(store) == ["en"] and report.errors == []
    assert (report.files[0].how, report.files[0].language.lang) == ("default", "en")
    assert "1 text without a language taken as en (English by default" in report.files[0].line()
    out = tmp_path / "out.xml"
    export_webnlg(store, out, flavour="webnlg")
    assert "lang" not in ET.parse(out).getroot().find(".//lex").attrib
    assert_same_element(ET.fromstring(WEBNLG_2017.encode()), ET.parse(out).getroot())


def test_a_folder_imports_recursively_in_one_transaction(
    store: SessionStore, tmp_path: Path
) -> None:
    folder = tmp_path / "release"
    write(folder / "1triples" / "Airport.xml", WEBNLG_2017)
    # The same file name and eids in another folder: the path below the folder keeps
    # the ids apart.
    write(folder / "2triples" / "Airport.xml", WEBNLG_2017)
    write(folder / "test" / "data-with-refs-ru.xml", WEBNLG_2020)
    (folder / "README.md").write_text("not XML", encoding="utf-8")
    assert detect_format(folder) == "webnlg"
    report = import_webnlg(store, folder)
    assert report.summary_line() == "4 entries, 4 units, 5 references, 0 errors"
    assert [file.file for file in report.files] == [
        "1triples/Airport.xml",
        "2triples/Airport.xml",
        "test/data-with-refs-ru.xml",
    ]
    assert report.files[2].language == LanguageDecision("ru", "filename", "data-with-refs-ru.xml")
    assert "taken as ru (from the file name data-with-refs-ru.xml)" in report.files[2].line()
    with store.unit_of_work() as db:
        assert db.scalars(select(DataUnit.uid).order_by(DataUnit.id)).all() == [
            "1triples/Airport:Id1",
            "2triples/Airport:Id1",
            "test/data-with-refs-ru:Id6",
            "test/data-with-refs-ru:Id8",
        ]
        assert (
            db.scalars(select(UnitReference.provenance).order_by(UnitReference.id)).first()
            == "1triples/Airport.xml#Id1"
        )
    assert reference_langs(store) == ["en", "en", "ru", "ru", "ru"]


def test_a_folder_with_one_malformed_file_changes_nothing(
    store: SessionStore, tmp_path: Path
) -> None:
    import_webnlg(store, write(tmp_path / "seed.xml", WEBNLG_2017))
    before = table_digest(store)
    folder = tmp_path / "release"
    write(folder / "1triples" / "Airport.xml", WEBNLG_2020)
    broken = WEBNLG_2017.replace("Bundsgaard.</lex>", "Bundsgaard.</lx>")
    write(folder / "2triples" / "Broken.xml", broken)
    with pytest.raises(FormatError) as caught:
        import_webnlg(store, folder)
    message = str(caught.value)
    assert message.startswith("2triples/Broken.xml is not well-formed XML: mismatched tag")
    assert "(in entry 1, eid Id1)" in message and "line 11" in message
    assert table_digest(store) == before


def test_an_empty_folder_is_refused(store: SessionStore, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(FormatError, match="holds no .xml files"):
        import_webnlg(store, tmp_path / "empty")


ENRICHED_LEX = """<?xml version="1.0" ?>
<benchmark>
  <entries>
    <entry category="Airport" eid="Id2" size="1">
      <modifiedtripleset>
        <mtriple>Aarhus_Airport | runwayLength | 2702.0</mtriple>
      </modifiedtripleset>
      <lex comment="good" lid="Id1">
        <sortedtripleset>
          <sentence ID="1"><striple>Aarhus_Airport | runwayLength | 2702.0</striple></sentence>
        </sortedtripleset>
        <references>
          <reference entity="Aarhus_Airport" number="1" tag="AGENT-1" type="name">Aarhus Airport 's</reference>
          <reference entity="2702.0" number="3" tag="PATIENT-1" type="name">2702.0</reference>
        </references>
        <text>Aarhus Airport's runway length is 2702.0.</text>
        <template>AGENT-1 runway length is PATIENT-1 .</template>
      </lex>
    </entry>
  </entries>
</benchmark>
"""


def test_enriched_mentions_are_rows_and_export_from_there(
    store: SessionStore, tmp_path: Path
) -> None:
    source = write(tmp_path / "Airport.xml", ENRICHED_LEX)
    assert import_webnlg(store, source).mentions == 2
    [annotated] = annotated_references(store)
    assert annotated.text == "Aarhus Airport's runway length is 2702.0."
    assert [(m.entity, m.mention, m.tag, m.mention_type) for m in annotated.mentions] == [
        ("Aarhus_Airport", "Aarhus Airport 's", "AGENT-1", "name"),
        ("2702.0", "2702.0", "PATIENT-1", "name"),
    ]
    assert mentions_of(store, annotated.reference_id) == list(annotated.mentions)
    # No copy of the references element hides in the layout: the rows are the truth.
    with store.unit_of_work() as db:
        unit = db.scalars(select(DataUnit)).one()
        assert "Aarhus Airport 's" not in repr(unit.attributes)
        row = db.scalars(select(ReferenceMention).where(ReferenceMention.position == 0)).one()
        row.mention = "Aarhus Airport"
    out = tmp_path / "out.xml"
    export_webnlg(store, out, flavour="webnlg")
    mentions = ET.parse(out).getroot().findall(".//references/reference")
    assert [m.text for m in mentions] == ["Aarhus Airport", "2702.0"]
    assert [m.get("number") for m in mentions] == ["1", "3"]  # as written, not renumbered
    expected = ET.fromstring(ENRICHED_LEX.encode())
    expected.find(".//references/reference").text = "Aarhus Airport"
    assert_same_element(expected, ET.parse(out).getroot())


@pytest.fixture
def enriched_dev() -> Path:
    return require(*ENRICHED_DEV)


def test_enriched_webnlg_dev_folder_round_trips(
    store: SessionStore, enriched_dev: Path, tmp_path: Path
) -> None:
    report = import_webnlg(store, enriched_dev)
    assert report.summary_line() == "872 entries, 872 units, 2268 references, 0 errors"
    files = sorted(enriched_dev.rglob("*.xml"))
    assert len(report.files) == len(files)
    originals = [ET.parse(f).getroot() for f in files]
    in_files = [r for root in originals for r in root.iter("reference")]
    assert report.mentions == len(in_files)
    with store.unit_of_work() as db:
        rows = db.execute(
            select(
                ReferenceMention.entity,
                ReferenceMention.mention,
                ReferenceMention.tag,
                ReferenceMention.mention_type,
            ).order_by(ReferenceMention.id)
        ).all()
        assert db.scalar(select(func.count()).select_from(UnitReference)) == 2268
    assert rows == [(r.get("entity"), r.text, r.get("tag"), r.get("type")) for r in in_files]
    annotated = annotated_references(store, lang="en")
    # Texts whose references element is empty (10 in dev) have no mentions to list.
    assert len(annotated) == sum(len(r) > 0 for root in originals for r in root.iter("references"))
    assert Counter(m.mention_type for a in annotated for m in a.mentions) == Counter(
        r.get("type") for r in in_files
    )

    out = tmp_path / "dev.xml"
    assert export_webnlg(store, out, flavour="webnlg").references == 2268
    exported = ET.parse(out).getroot().find("entries")
    entries = [entry for root in originals for entry in root.find("entries")]
    assert len(exported) == len(entries) == 872
    for original, written in zip(entries, exported, strict=True):
        assert_same_element(original, written)


def test_a_file_whose_texts_all_carry_a_language_says_so() -> None:
    from core.formats.report import FileImport, LanguageDecision

    carried = FileImport("a.xml", 2, 2, 3, 0, LanguageDecision("en", "default"))
    assert carried.line() == (
        "a.xml: 2 entries, 2 units, 3 references, 0 errors; every text carried its own language"
    )
