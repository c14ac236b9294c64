"""``taillens import`` of WebNLG releases: folders, --lang, and bad input (exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from core.store import SessionStore
from tests.fixtures.webnlg_release_samples import WEBNLG_2017, WEBNLG_2020
from tests.fixtures.webnlg_xml import HEAD, TAIL, entry

ROOT = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_folder_import_prints_a_line_per_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "release"
    (folder / "1triples").mkdir(parents=True)
    (folder / "1triples" / "Airport.xml").write_text(WEBNLG_2017, encoding="utf-8")
    (folder / "test-ru.xml").write_text(WEBNLG_2020, encoding="utf-8")
    session = tmp_path / "s.taillens"
    status, out, err = run(capsys, "import", str(folder), "--session", str(session), "--quiet")
    assert status == 0, err
    assert out.splitlines() == [
        "  1triples/Airport.xml: 1 entry, 1 unit, 1 reference, 0 errors; 1 text without "
        "a language taken as en (English by default: no --lang, no language in the file name)",
        "  test-ru.xml: 2 entries, 2 units, 3 references, 0 errors; 3 texts without a "
        "language taken as ru (from the file name test-ru.xml)",
        "release: 3 entries, 3 units, 4 references, 0 errors",
    ]
    with SessionStore.open(session) as store:
        assert store.row_counts()["unit_references"] == 4


def test_lang_option(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = tmp_path / "test-ru.xml"
    source.write_text(WEBNLG_2020, encoding="utf-8")
    session = tmp_path / "s.taillens"
    status, out, err = run(
        capsys, "import", str(source), "--session", str(session), "--lang", "en", "--quiet"
    )
    assert status == 0, err
    assert "3 texts without a language taken as en (as asked for the import (--lang))" in out
    status, out, err = run(
        capsys, "import", str(source), "--session", str(tmp_path / "b"), "--lang", "xx", "--quiet"
    )
    assert status == 2 and "'xx' is not a two-letter ISO 639-1 code" in err
    assert not (tmp_path / "b").exists()


def test_dev_null_is_not_a_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    session = tmp_path / "s.taillens"
    for extra in (["--format", "tailnlg"], []):
        status, out, err = run(capsys, "import", "/dev/null", "--session", str(session), *extra)
        assert status == 2 and "/dev/null: it is not a regular file" in err, err
        assert "folder" not in err.split("regular file")[0]
    assert not session.exists()  # refused before the session was created


def test_warnings_go_to_stderr(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    body = (
        HEAD
        + entry("W1", lang="it")
        + entry("W1b")
        .replace('lid="Id1" lang="en"', 'lid="Id1" lang="es"')
        .replace("</entry>", '  <lex lid="Id2">Senza.</lex>\n    </entry>')
        + TAIL
    )
    source = tmp_path / "tail.xml"
    source.write_text(body, encoding="utf-8")
    status, out, err = run(
        capsys, "import", str(source), "--session", str(tmp_path / "s.taillens"), "--quiet"
    )
    assert status == 0
    assert "imported, but entry 2 (eid W1b): lex Id2 has no language and was stored as en" in err


@pytest.mark.parametrize(
    "name, body, expected",
    [
        (
            "klingon.xml",
            (HEAD + entry("K") + TAIL).replace("utf-8", "x-klingon"),
            "declares encoding 'x-klingon'",
        ),
        (
            "deep.xml",
            HEAD + entry("D").replace("Text D.", "<a>" * 20_000 + "</a>" * 20_000) + TAIL,
            "nest deeper than 100 levels (in entry 1, eid D)",
        ),
    ],
    ids=["unknown-encoding", "deep-nesting"],
)
def test_bad_xml_exits_2_without_a_traceback(
    tmp_path: Path, name: str, body: str, expected: str
) -> None:
    source = tmp_path / name
    source.write_text(body, encoding="utf-8")
    env = dict(os.environ, TAILLENS_HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            "import",
            str(source),
            "--session",
            str(tmp_path / "s.taillens"),
            "--quiet",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert expected in result.stderr and "Traceback" not in result.stderr
