"""The session file the user names is the file used, and a foreign file is never touched.

Formerly a path went into an SQLite URI unquoted (``a%20b`` wrote into ``a b``, ``?`` cut
the name), and another program's database with an ``alembic_version`` table of its own was
switched to WAL and backed up. Driven through the CLI, as a user would.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import pytest

from app.cli import main
from core.store import APPLICATION_ID, SessionStore, inspect_file
from tests.fixtures.webnlg_xml import xml_file


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def listing(folder: Path) -> set[str]:
    return set(os.listdir(folder))


ODD_NAMES = (
    "a%20b.taillens",
    "run%41.taillens",
    "q?x=1.taillens",
    "x?y.taillens",
    "h#frag.taillens",
    "p%3Fq#r?s=%2F.taillens",
)


@pytest.mark.parametrize("name", ODD_NAMES)
def test_session_new_writes_exactly_the_named_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    folder = tmp_path / "w"
    folder.mkdir()
    status, out, err = run(capsys, "session", "new", str(folder / name))
    assert status == 0, err
    assert listing(folder) == {name}, "a stray file, or the wrong name"
    assert inspect_file(folder / name).is_current
    status, out, err = run(capsys, "session", "info", str(folder / name))
    assert status == 0 and f'"path": "{folder / name}"' in out


@pytest.mark.parametrize("name", ODD_NAMES)
def test_import_and_annotators_use_the_named_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    source = xml_file(tmp_path)
    folder = tmp_path / "w"
    folder.mkdir()
    session = folder / name
    status, out, err = run(capsys, "import", str(source), "--session", str(session), "--quiet")
    assert status == 0, err
    status, out, err = run(capsys, "annotators", "--session", str(session), "--add", "X")
    assert status == 0, err
    assert listing(folder) == {name}
    with SessionStore.open_read_only(session) as store:
        counts = store.row_counts()
    assert counts["data_units"] == 2 and counts["annotators"] >= 1


def test_an_existing_decoy_is_not_written_instead(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``a%20b`` must not resolve to ``a b`` even when ``a b`` is a session too."""
    decoy = tmp_path / "a b.taillens"
    SessionStore.create(decoy).close()
    named = tmp_path / "a%20b.taillens"
    SessionStore.create(named).close()
    before = decoy.read_bytes()
    status, _, err = run(capsys, "annotators", "--session", str(named), "--add", "X")
    assert status == 0, err
    assert decoy.read_bytes() == before
    with SessionStore.open_read_only(named) as store:
        assert store.row_counts()["annotators"] >= 1


def foreign_database(path: Path, revision: str, application_id: int = 0) -> None:
    with sqlite3.connect(path) as conn:
        if application_id:
            conn.execute(f"PRAGMA application_id={application_id}")
        conn.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
        conn.execute("INSERT INTO alembic_version VALUES (?)", (revision,))
        conn.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT)")
        conn.execute("INSERT INTO accounts (owner) VALUES ('someone')")
    conn.close()


@pytest.mark.parametrize("revision", ["0001", "0003", "0004", "abc123"])
@pytest.mark.parametrize("application_id", [0, 0x12345678])
def test_foreign_database_with_alembic_version_is_refused_untouched(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, revision: str, application_id: int
) -> None:
    folder = tmp_path / "w"
    folder.mkdir()
    other = folder / "other.taillens"
    foreign_database(other, revision, application_id)
    digest = hashlib.sha256(other.read_bytes()).hexdigest()
    source = xml_file(tmp_path)
    attempts = [
        ("annotators", "--session", str(other), "--add", "X"),
        ("annotators", "--session", str(other)),
        ("import", str(source), "--session", str(other), "--quiet"),
        ("export", str(tmp_path / "out.xml"), "--session", str(other), "--format", "webnlg"),
        ("units", "list", "--session", str(other)),
        ("session", "info", str(other)),
        ("session", "new", str(other)),
    ]
    for attempt in attempts:
        status, _, err = run(capsys, *attempt)
        assert status == 2, (attempt, err)
        assert "Traceback" not in err
        if attempt[0] != "session" or attempt[1] != "new":
            assert "not a TailLens session" in err and "was not changed" in err, err
        assert hashlib.sha256(other.read_bytes()).hexdigest() == digest, attempt
        assert listing(folder) == {"other.taillens"}, attempt  # no -wal, -shm, backup
    with sqlite3.connect(f"{other.as_uri()}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()


def test_a_real_session_still_carries_the_application_id(tmp_path: Path) -> None:
    path = tmp_path / "s.taillens"
    SessionStore.create(path).close()
    assert inspect_file(path).application_id == APPLICATION_ID
