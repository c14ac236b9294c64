"""``taillens import`` and ``taillens export`` with the real TailNLG benchmark."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from app.cli import main
from core.store import SessionStore
from tests.shared_data import TAILNLG, require


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def tailnlg() -> Path:
    return require(*TAILNLG)


def test_import_then_export(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, tailnlg: Path
) -> None:
    session = tmp_path / "s.taillens"
    status, out, err = run(capsys, "import", str(tailnlg), "--session", str(session), "--quiet")
    assert status == 0, err
    assert out.strip() == (f"{tailnlg.name}: 615 entries, 615 units, 1845 references, 0 errors")
    with SessionStore.open(session) as store:
        counts = store.row_counts()
    assert (counts["data_units"], counts["unit_references"]) == (615, 1845)

    # Again (a re-run after a crash): every entry is there with the same content, so it
    # is "already imported", not an error, and the session is as it was.
    status, out, err = run(
        capsys, "import", str(tailnlg), "--session", str(session), "--format", "tailnlg", "--quiet"
    )
    assert status == 0, err
    assert "615 entries, 0 units, 0 references, 0 errors, 615 already imported" in out
    with SessionStore.open(session) as store:
        assert store.row_counts() == counts

    out_file = tmp_path / "export.xml"
    status, out, err = run(
        capsys, "export", "--session", str(session), "--format", "tailnlg", str(out_file), "--quiet"
    )
    assert status == 0, err
    assert out.strip() == "export.xml: 615 entries, 615 units, 1845 references, 0 errors (tailnlg)"
    exported, original = ET.parse(out_file).getroot(), ET.parse(tailnlg).getroot()
    assert len(exported.findall("entries/entry")) == 615
    assert [e.attrib for e in exported.iter("entry")] == [e.attrib for e in original.iter("entry")]


def test_bad_files_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    session = tmp_path / "s.taillens"
    broken = tmp_path / "broken.xml"
    broken.write_text('<?xml version="1.0"?>\n<benchmark>\n  <entries>\n</benchmark>\n')
    status, _, err = run(capsys, "import", str(broken), "--session", str(session), "--quiet")
    assert status == 2
    assert "taillens: broken.xml is not well-formed XML: mismatched tag at line 4" in err
    assert not session.exists()  # the session made for the failed import is gone again
    SessionStore.create(session).close()
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    status, _, err = run(capsys, "import", str(other), "--session", str(session))
    assert status == 2 and "Cannot tell the format of notes.txt" in err
    status, _, err = run(
        capsys,
        "export",
        "--session",
        str(session),
        "--format",
        "webnlg",
        str(tmp_path / "missing" / "out.xml"),
    )
    assert status == 2 and "Cannot export to" in err


def test_wdv_import_then_turtle_and_csv_export(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import csv
    import json

    from rdflib import Graph, Namespace

    from tests.fixtures.wdv_records import wdv_records, write_wdv

    session = tmp_path / "s.taillens"
    source = write_wdv(tmp_path / "wdv.json", wdv_records())
    # Detected from the file's first bytes (a JSON array of records with claim_id).
    status, out, err = run(capsys, "import", str(source), "--session", str(session), "--quiet")
    assert status == 0, err
    assert out.strip() == "wdv.json: 3 entries, 3 units, 0 references, 0 errors"

    turtle = tmp_path / "out.ttl"
    status, out, err = run(
        capsys, "export", "--session", str(session), "--format", "turtle", str(turtle), "--quiet"
    )
    assert status == 0, err
    assert out.strip() == "out.ttl: 3 entries, 3 units, 0 references, 0 errors (turtle)"
    graph = Graph().parse(turtle, format="turtle")
    tl = Namespace("https://taillens.org/ns#")
    assert len(set(graph.subjects(None, tl.DataUnit))) == 3

    table = tmp_path / "out.csv"
    status, out, err = run(
        capsys, "export", "--session", str(session), "--format", "csv", str(table), "--quiet"
    )
    assert status == 0, err
    with table.open(encoding="utf-8", newline="") as handle:
        assert [row["uid"] for row in csv.DictReader(handle)] == [
            "wdv:Q2158$ABC-1",
            "wdv:Q2158$ABC-2",
            "wdv:Q90$XYZ",
        ]

    back = tmp_path / "back.json"
    status, _, err = run(
        capsys, "export", "--session", str(session), "--format", "wdv", str(back), "--quiet"
    )
    assert status == 0, err
    assert json.loads(back.read_text(encoding="utf-8")) == wdv_records()

    # Again: the same records are "already imported" (exit 0); a changed one is an error.
    status, out, err = run(
        capsys, "import", str(source), "--session", str(session), "--format", "wdv", "--quiet"
    )
    assert status == 0 and "0 errors, 3 already imported" in out, err
    changed = wdv_records()
    changed[0]["verbalisation"] = "Something else entirely."
    source = write_wdv(tmp_path / "wdv2.json", changed)
    status, out, err = run(
        capsys, "import", str(source), "--session", str(session), "--format", "wdv", "--quiet"
    )
    assert status == 2 and "1 error, 2 already imported" in out
    assert "already in the session with different content" in err


def test_format_choices_come_from_the_registries(capsys: pytest.CaptureFixture[str]) -> None:
    from core.formats import EXPORT_FORMATS, IMPORT_FORMATS

    with pytest.raises(SystemExit):
        main(["export", "--help"])
    out, _ = capsys.readouterr()
    for name in EXPORT_FORMATS:
        assert name in out
    with pytest.raises(SystemExit):
        main(["import", "--help"])
    out, _ = capsys.readouterr()
    for name in ("auto", *IMPORT_FORMATS):
        assert name in out


def test_export_lists_the_units_a_format_cannot_hold(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from core.store.models import DataUnit, UnitTriple
    from tests.fixtures.wdv_records import wdv_records, write_wdv

    session = tmp_path / "s.taillens"
    source = write_wdv(tmp_path / "wdv.json", wdv_records())
    assert run(capsys, "import", str(source), "--session", str(session), "--quiet")[0] == 0
    with SessionStore.open(session) as store, store.unit_of_work() as db:
        pair = DataUnit(uid="pair", origin="built", size=2, shape="sibling", root_qid="Q90")
        pair.triples = [
            UnitTriple(
                lang="en", tripleset="main", position=i, subject="Paris", predicate=p, object=o
            )
            for i, (p, o) in enumerate([("country", "France"), ("mayor", "X")])
        ]
        db.add(pair)
    status, out, err = run(
        capsys,
        "export",
        "--session",
        str(session),
        "--format",
        "wdv",
        str(tmp_path / "back.json"),
        "--quiet",
    )
    assert status == 0, err
    assert out.strip() == "back.json: 3 entries, 4 units, 0 references, 1 error (wdv)"
    assert err.strip() == (
        "skipped unit pair: 2 triples: a WDV record holds exactly one "
        "claim, so only single-triple units are exported"
    )

    # A session whose units none fits the format writes an empty file, exit status 2.
    only_pair = tmp_path / "pair.taillens"
    with SessionStore.create(only_pair) as store, store.unit_of_work() as db:
        db.add(DataUnit(uid="p", origin="built", size=2, shape="sibling"))
    status, out, _ = run(
        capsys,
        "export",
        "--session",
        str(only_pair),
        "--format",
        "wdv",
        str(tmp_path / "none.json"),
        "--quiet",
    )
    assert status == 2 and "0 entries, 1 unit, 0 references, 1 error" in out
