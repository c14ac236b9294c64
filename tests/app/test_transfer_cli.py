"""``taillens import`` and ``taillens export`` with the real TailNLG benchmark."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from app.cli import main
from core.store import SessionStore

TAILNLG = Path("/work/shared/data/tailnlg/longTailWebNLG-v1.0.xml")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def tailnlg() -> Path:
    if not TAILNLG.is_file():
        pytest.skip(f"the TailNLG benchmark is not at {TAILNLG}")
    return TAILNLG


def test_import_then_export(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, tailnlg: Path
) -> None:
    session = tmp_path / "s.taillens"
    status, out, err = run(capsys, "import", str(tailnlg), "--session", str(session), "--quiet")
    assert status == 0, err
    assert out.strip() == (
        f"{tailnlg.name}: 615 entries, 615 units, 1845 references, 0 errors"
    )
    with SessionStore.open(session) as store:
        counts = store.row_counts()
    assert (counts["data_units"], counts["unit_references"]) == (615, 1845)

    # Again: every id is already there, so nothing is imported and the exit status says so.
    status, out, err = run(capsys, "import", str(tailnlg), "--session", str(session),
                           "--format", "tailnlg", "--quiet")
    assert status == 2 and "615 entries, 0 units, 0 references, 615 errors" in out
    assert "already in the session" in err and "… and 595 more" in err
    assert len([line for line in err.splitlines() if "already in the session" in line]) == 20

    out_file = tmp_path / "export.xml"
    status, out, err = run(capsys, "export", "--session", str(session), "--format", "tailnlg",
                           str(out_file), "--quiet")
    assert status == 0, err
    assert out.strip() == "export.xml: 615 entries written (tailnlg)"
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
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    status, _, err = run(capsys, "import", str(other), "--session", str(session))
    assert status == 2 and "Cannot tell the format of notes.txt" in err
    status, _, err = run(capsys, "export", "--session", str(session), "--format", "webnlg",
                         str(tmp_path / "missing" / "out.xml"))
    assert status == 2 and "Cannot export to" in err
