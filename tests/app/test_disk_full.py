"""A full disk during ``session new``, ``import``, ``verbalise`` and ``score`` ends in one
line that says the disk is full, where, and what was kept (exit 2), never a
``sqlite3.OperationalError`` traceback; the session holds everything committed before.

Two ways to fill the disk, each in a real ``python -m app`` process:

* portable (always runs): SQLite's ``PRAGMA max_page_count`` on every connection, which
  fails a write with the very error a full disk gives (SQLITE_FULL, "database or disk is
  full");
* a real small file system (a 4 MB tmpfs, where the machine lets the tests mount one).
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNITS = 200

ENTRY = """    <entry category="Airport" eid="Id{n}" size="1">
      <modifiedtripleset>
        <mtriple>City_{n} | leaderName | Person_{n}</mtriple>
      </modifiedtripleset>
      <lex comment="good" lid="Id1">The leader of City {n} is Person {n}. {padding}</lex>
    </entry>
"""

# Run the CLI with every SQLite connection limited to PAGES pages of the main database:
# a write past it fails with SQLITE_FULL, exactly as on a full disk.
LIMITED = """
import sys
from sqlalchemy import event
from sqlalchemy.pool import Pool

pages = int(sys.argv[1])

@event.listens_for(Pool, "connect")
def _limit(connection, _record):
    connection.execute(f"PRAGMA max_page_count={pages}")

from app.cli import main
sys.exit(main(sys.argv[2:]))
"""


def webnlg(path: Path, entries: int, padding: int = 0) -> Path:
    text = "".join(ENTRY.format(n=n, padding="x" * padding) for n in range(1, entries + 1))
    path.write_text(
        f'<?xml version="1.0" encoding="UTF-8"?>\n<benchmark><entries>\n{text}</entries>'
        "</benchmark>\n",
        encoding="utf-8",
    )
    return path


def taillens(*args: str, home: Path, pages: int | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TAILLENS_HOME=str(home), PYTHONPATH=str(ROOT))
    command = [sys.executable, "-m", "app", *args]
    if pages is not None:
        command = [sys.executable, "-c", LIMITED, str(pages), *args]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def page_count(session: Path) -> int:
    with sqlite3.connect(session) as connection:
        return int(connection.execute("PRAGMA page_count").fetchone()[0])


def counts(session: Path) -> dict[str, int]:
    """Rows per table, after SQLite's own integrity check of the file."""
    with sqlite3.connect(session) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return {
            table: connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("data_units", "model_runs", "verbalisations", "scores")
        }


def assert_disk_full_message(result: subprocess.CompletedProcess[str], session: Path) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "OperationalError" not in result.stderr
    lines = result.stderr.strip().splitlines()
    message = lines[-1]
    assert message.startswith("taillens: Cannot "), result.stderr
    assert f"the session {session.name}: the disk is full (in {session.parent}" in message
    assert "Free some space and run it again" in message
    return message


# -- portable: SQLite says the database is full ------------------------------------------


def test_session_new_on_a_full_disk_leaves_nothing(tmp_path: Path, taillens_home: Path) -> None:
    session = tmp_path / "new.taillens"
    result = taillens("session", "new", str(session), home=taillens_home, pages=3)
    message = assert_disk_full_message(result, session)
    assert "Cannot create the session" in message and "Nothing was left behind" in message
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.fixture
def session(tmp_path: Path, taillens_home: Path) -> Path:
    path = tmp_path / "s.taillens"
    source = webnlg(tmp_path / "small.xml", UNITS)
    result = taillens("import", str(source), "--session", str(path), "--quiet", home=taillens_home)
    assert result.returncode == 0, result.stderr
    return path


def test_import_on_a_full_disk_keeps_the_session_as_it_was(
    session: Path, tmp_path: Path, taillens_home: Path
) -> None:
    before = counts(session)
    big = webnlg(tmp_path / "big.xml", 400, padding=400)
    result = taillens(
        "import", str(big), "--session", str(session), "--quiet",
        home=taillens_home, pages=page_count(session) + 4,
    )  # fmt: skip
    message = assert_disk_full_message(result, session)
    assert "Nothing of this import was saved" in message
    assert counts(session) == before


def test_verbalise_on_a_full_disk_keeps_its_batches_and_resumes(
    session: Path, taillens_home: Path
) -> None:
    args = ("verbalise", "--session", str(session), "--langs", "en", "--batch-size", "1")
    result = taillens(*args, "--quiet", home=taillens_home, pages=page_count(session) + 2)
    message = assert_disk_full_message(result, session)
    kept = re.search(r"Run 1 keeps the (\d+) texts?", message)
    assert kept, message
    assert "the same verbalise command resumes it" in message
    held = counts(session)
    assert held["model_runs"] == 1 and held["verbalisations"] == int(kept.group(1)) < UNITS
    # With room again, the same command finishes run 1 (nothing twice).
    again = taillens(*args, "--quiet", "--json", home=taillens_home)
    assert again.returncode == 0, again.stderr
    assert '"resumed": true' in again.stdout
    assert counts(session)["verbalisations"] == UNITS and counts(session)["model_runs"] == 1


def test_score_on_a_full_disk_keeps_the_scores_it_had(session: Path, taillens_home: Path) -> None:
    done = taillens("verbalise", "--session", str(session), "--quiet", home=taillens_home)
    assert done.returncode == 0, done.stderr
    before = counts(session)
    result = taillens(
        "score", "--session", str(session), "--metrics", "bleu,chrf", "--quiet",
        home=taillens_home, pages=page_count(session) + 1,
    )  # fmt: skip
    message = assert_disk_full_message(result, session)
    assert "keeps the scores it had before" in message and "score again to finish" in message
    assert counts(session) == before


# -- a real small file system ---------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MB tmpfs, or a skip saying why the machine does not allow one."""
    folder = tmp_path / "disk"
    folder.mkdir()
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root on Linux")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path, leave: int) -> Path:
    """Take all the free space of ``folder``'s file system but ``leave`` bytes."""
    filler = folder / "filler"
    stats = os.statvfs(folder)
    with filler.open("wb") as handle:
        os.posix_fallocate(handle.fileno(), 0, max(1, stats.f_bavail * stats.f_frsize - leave))
    return filler


def test_a_real_full_disk(small_disk: Path, tmp_path: Path, taillens_home: Path) -> None:
    session = small_disk / "s.taillens"
    # session new on a disk with no room: nothing left behind
    filler = fill(small_disk, 0)
    result = taillens("session", "new", str(session), home=taillens_home)
    assert "Cannot create the session" in assert_disk_full_message(result, session)
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler"]
    filler.unlink()

    assert taillens("session", "new", str(session), home=taillens_home).returncode == 0
    small = webnlg(tmp_path / "small.xml", 60)
    result = taillens("import", str(small), "--session", str(session), home=taillens_home)
    assert result.returncode == 0, result.stderr
    before = counts(session)

    # import: one transaction, so nothing of it, and the session as it was
    big = webnlg(tmp_path / "big.xml", 2000, padding=400)  # ~1 MB of text, more with indexes
    filler = fill(small_disk, 600_000)
    result = taillens("import", str(big), "--session", str(session), home=taillens_home)
    assert "Nothing of this import was saved" in assert_disk_full_message(result, session)
    filler.unlink()
    assert counts(session) == before and before["data_units"] == 60

    # verbalise: the batches written before are kept, and resumed later
    filler = fill(small_disk, 40_000)
    args = ("verbalise", "--session", str(session), "--batch-size", "1", "--quiet")
    result = taillens(*args, home=taillens_home)
    kept = re.search(r"Run 1 keeps the ([\d,]+) texts?", assert_disk_full_message(result, session))
    assert kept, result.stderr
    filler.unlink()
    assert counts(session)["verbalisations"] == int(kept.group(1).replace(",", ""))
    again = taillens(*args, "--json", home=taillens_home)
    assert again.returncode == 0 and '"resumed": true' in again.stdout, again.stderr
    held = counts(session)
    assert held["model_runs"] == 1

    # score: each metric in one transaction, so no half-written metric
    filler = fill(small_disk, 0)
    result = taillens("score", "--session", str(session), "--metrics", "bleu", home=taillens_home)
    assert "keeps the scores it had before" in assert_disk_full_message(result, session)
    filler.unlink()
    assert counts(session) == held


def test_save_a_copy_onto_a_full_disk(small_disk: Path, session: Path) -> None:
    """File ▸ Save a Copy (SQLite's backup API) onto a full disk: the message names the
    copy, nothing is left there, and the session copied is unchanged."""
    from core.store import SessionStorageError, SessionStore

    before = counts(session)
    fill(small_disk, 0)
    copy = small_disk / "copy.taillens"
    with SessionStore.open(session) as store, pytest.raises(SessionStorageError) as raised:
        store.copy_to(copy)
    message = str(raised.value)
    assert message.startswith(
        f"Cannot write the copy copy.taillens: the disk is full (in {small_disk}"
    )
    assert "Nothing was written" in message
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler"]
    assert counts(session) == before
