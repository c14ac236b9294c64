"""CSV export: one row per unit, triples and references per language, read back with csv."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from sqlalchemy import select

from core.formats import import_webnlg
from core.formats.csv_export import COLUMNS, export_csv
from core.formats.wdv.importer import import_wdv
from core.store import SessionStore
from core.store.models import DataUnit, UnitTriple
from tests.fixtures.wdv_records import wdv_records, write_wdv

ENTRY = """<?xml version="1.0" encoding="utf-8"?>
<benchmark>
  <entries>
    <entry category="City" eid="Id1" shape="" shape_type="sibling" size="2" unique_id="u1"
           qid="Q2158" type="tail" subtype="deep">
      <originaltripleset><otriple>Gubbio | country | Italy</otriple></originaltripleset>
      <modifiedtripleset>
        <mtriple>Gubbio | country | Italy</mtriple>
        <mtriple>Gubbio | population | "31,000"</mtriple>
      </modifiedtripleset>
      <spanishtripleset><striple>Gubbio | país | Italia</striple></spanishtripleset>
      <italiantripleset><itriple>Gubbio | paese | Italia</itriple></italiantripleset>
      <lex lid="Id1" lang="en" quality="gold">Gubbio, in Italy, has 31,000 people.</lex>
      <lex lid="Id2" lang="en" quality="silver">Gubbio is an Italian town; "31,000" live
there.</lex>
      <lex lid="Id3" lang="it" quality="gold">Gubbio è in Italia.</lex>
    </entry>
  </entries>
</benchmark>
"""


def test_rows_per_unit(store: SessionStore, tmp_path: Path) -> None:
    source = tmp_path / "one.xml"
    source.write_text(ENTRY, encoding="utf-8")
    import_webnlg(store, source, flavour="tailnlg")
    import_wdv(store, write_wdv(tmp_path / "w.json", wdv_records()[:1]))
    with store.unit_of_work() as db:
        unit_id = db.scalars(select(DataUnit.id).where(DataUnit.uid == "u1")).one()
        row = db.scalars(
            select(UnitTriple).where(UnitTriple.unit_id == unit_id, UnitTriple.lang == "es")
        ).one()
        row.object_override = "España"  # a manual correction is what gets exported
    out = tmp_path / "out.csv"
    report = export_csv(store, out)
    assert (report.entries, report.units, report.skipped, report.format) == (2, 2, [], "csv")
    # u1: 2 en + 1 it + 1 es main triples, 3 references; the WDV record: 1 triple.
    assert (report.references, report.triples) == (3, 5)
    with out.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames or ()) == COLUMNS
        rows = list(reader)
    assert rows[0] == {
        "uid": "u1",
        "category": "City",
        "shape": "sibling",
        "size": "2",
        "tier": "tail",
        "sub_tier": "deep",
        "root_qid": "Q2158",
        "triples_en": 'Gubbio | country | Italy ; Gubbio | population | "31,000"',
        "references_en": "Gubbio, in Italy, has 31,000 people. || "
        'Gubbio is an Italian town; "31,000" live\nthere.',
        "triples_it": "Gubbio | paese | Italia",
        "references_it": "Gubbio è in Italia.",
        "triples_es": "Gubbio | país | España",
        "references_es": "",
    }
    assert rows[1]["uid"] == "wdv:Q2158$ABC-1" and rows[1]["size"] == "1"
    assert rows[1]["triples_en"] == "Gubbio | country | Italy"
    assert rows[1]["references_en"] == rows[1]["triples_it"] == ""


def test_export_to_a_folder_fails_cleanly(store: SessionStore, tmp_path: Path) -> None:
    from core.formats import FormatError

    with pytest.raises(FormatError, match="is a folder"):
        export_csv(store, tmp_path)
    with pytest.raises(FormatError, match="Cannot export to"):
        export_csv(store, tmp_path / "missing" / "out.csv")
    # No temporary file is left behind, and the session is all that is there.
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("s.taillens")) == []
