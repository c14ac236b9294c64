"""A session file from elsewhere, opened as a session (not merged as a pack): its schema is
checked, and every statement on it runs within the bounds of a file from elsewhere
(``core.store.bounds``: a deadline, Ctrl+C, a longest value, our own page cache). Each
crafted file is refused with one line and left byte for byte as it was; ``taillens
session check`` also lists what a merge of the file as a pack would refuse.

The sessions are real ones (the report fixture), edited afterwards with plain sqlite3 as
another program could."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

import core.store.bounds as bounds
from app.cli import main
from core.store import (
    SessionBoundsError,
    SessionForeignSchemaError,
    SessionStore,
    read_session_info,
)
from core.store.errors import SessionValueTooLongError
from core.store.fileinfo import connect_read_only
from tests.cli_process import python_script
from tests.fixtures import report_session as fixture_module
from tests.fixtures.report_session import ReportSession

report_session = fixture_module.report_session

# A text of 70 MB, longer than any value a session may hold (64 MB).
_GIANT = "printf('%.*c', 70000000, 'x')"
_ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _crafted(session: ReportSession, tmp_path: Path, sql: str) -> Path:
    """A copy of the fixture session changed by another program (plain sqlite3)."""
    target = tmp_path / "crafted.taillens"
    shutil.copy(session.path, target)
    with closing(sqlite3.connect(target, isolation_level=None)) as conn:
        conn.executescript(sql)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")
    return target


def _one_line(error: BaseException) -> str:
    text = str(error)
    assert "\n" not in text.strip()
    return text


def test_a_giant_text_in_a_settings_row_is_refused_when_described(
    report_session: ReportSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _crafted(
        report_session, tmp_path, f"INSERT INTO session_meta VALUES ('planted', {_GIANT});"
    )
    before = _digest(path)
    with pytest.raises(SessionBoundsError) as caught:
        read_session_info(path)
    assert "longer than 64,000,000 bytes" in _one_line(caught.value)
    assert main(["session", "info", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "longer than 64,000,000 bytes" in err and "\n" not in err
    assert _digest(path) == before


def test_a_giant_text_in_a_rated_text_is_refused_when_its_table_is_read(
    report_session: ReportSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _crafted(
        report_session,
        tmp_path,
        f"UPDATE annotations SET corrected_text = {_GIANT} "
        "WHERE id = (SELECT min(id) FROM annotations);",
    )
    before = _digest(path)
    # The check of the annotations table reads every text: SQLite's length limit on the
    # session's own connection stops it before the value is copied into the process.
    with SessionStore.open_read_only(path) as store, pytest.raises(SessionBoundsError) as caught:
        store.check()
    assert "longer than 64,000,000 bytes" in _one_line(caught.value)
    assert main(["session", "check", str(path)]) == 2
    assert "longer than 64,000,000 bytes" in capsys.readouterr().err
    assert _digest(path) == before


def test_every_statement_on_a_session_from_elsewhere_runs_under_the_deadline(
    report_session: ReportSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 50,000 job history rows: PRAGMA quick_check before the open, and the check of that
    # table at its first read, each take more than one look of the progress handler. With
    # the deadline at 0 s each stops at its first look (the real one is a minute).
    path = _crafted(
        report_session,
        tmp_path,
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 50000) "
        "INSERT INTO job_history (kind, title, status) SELECT 'k', 't', 'done' FROM r;",
    )
    before = _digest(path)
    monkeypatch.setattr(bounds, "STATEMENT_S", 0.0)
    for open_it in (SessionStore.open, SessionStore.open_read_only, read_session_info):
        with pytest.raises(SessionBoundsError) as caught:
            open_it(path)
        assert "reading it took longer than 0 s" in _one_line(caught.value)
    monkeypatch.undo()
    with SessionStore.open_read_only(path) as store:
        monkeypatch.setattr(bounds, "STATEMENT_S", 0.0)
        with pytest.raises(SessionBoundsError, match="took longer than 0 s"):
            store.check()
        monkeypatch.undo()
        assert store.check() == []  # the same check within the real deadline
    assert _digest(path) == before


def test_a_generated_column_is_refused_before_a_row_is_read(
    report_session: ReportSession, tmp_path: Path
) -> None:
    # PRAGMA table_info does not list a generated column: the tables looked like ours.
    path = _crafted(
        report_session,
        tmp_path,
        f"ALTER TABLE session_meta ADD COLUMN extra TEXT GENERATED ALWAYS AS ({_GIANT}) VIRTUAL;",
    )
    before = _digest(path)
    for open_it in (SessionStore.open, SessionStore.open_read_only, read_session_info):
        with pytest.raises(SessionForeignSchemaError) as caught:
            open_it(path)
        assert "generated column 'session_meta.extra'" in _one_line(caught.value)
    assert _digest(path) == before


def test_the_page_cache_is_ours_not_the_one_a_file_header_suggests(
    report_session: ReportSession, tmp_path: Path
) -> None:
    # 2,000,000 pages of 4 KB: 8 GB of cache SQLite would grant every connection.
    path = _crafted(report_session, tmp_path, "PRAGMA default_cache_size = 2000000;")
    with closing(sqlite3.connect(path)) as plain:
        assert plain.execute("PRAGMA cache_size").fetchone()[0] == 2_000_000
    with closing(connect_read_only(path)) as conn:
        assert conn.execute("PRAGMA cache_size").fetchone()[0] == -bounds.CACHE_KIB
    with SessionStore.open(path) as store, store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA cache_size").scalar() == -bounds.CACHE_KIB


# Runs an endless statement on a bounded connection and sends itself SIGINT (Ctrl+C) half a
# second in: prints what reached the caller.
_CTRL_C = f"""
import os, signal, sys, threading
from pathlib import Path
from core.store import SessionStore
from core.store.fileinfo import reading

def endless(run):
    threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    try:
        run("{_ENDLESS}")
    except BaseException as error:
        print(type(error).__name__)

def read_only(sql):
    with reading(path) as conn:
        conn.execute(sql).fetchall()

path = Path(sys.argv[1])
endless(read_only)
with SessionStore.open(path) as store, store.engine.connect() as db:
    endless(lambda sql: db.exec_driver_sql(sql).all())
"""


def test_ctrl_c_stops_a_statement_on_a_file_from_elsewhere(
    report_session: ReportSession,
) -> None:
    # Python raises Ctrl+C's KeyboardInterrupt as the progress handler is entered; the
    # statement stops and the caller gets the KeyboardInterrupt (not an SQLite error),
    # on a read-only check's connection and on a session store's.
    done = python_script(_CTRL_C, report_session.path, timeout=60)
    assert done.stdout.split() == ["KeyboardInterrupt", "KeyboardInterrupt"], done.stderr


def test_session_check_lists_what_a_merge_would_refuse(
    report_session: ReportSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["session", "check", str(report_session.path)]) == 0
    assert "nothing a merge would refuse" in capsys.readouterr().out
    # Two ratings the session's own row checks accept but the app would never save: free
    # text for a blame that is not 'other', and an error family that does not exist.
    first, second = sorted(report_session.annotations.values())[:2]
    path = _crafted(
        report_session,
        tmp_path,
        f"UPDATE annotations SET adequacy = 1, blame = 'text', blame_other = 'because' "
        f"WHERE id = {first};"
        f'UPDATE annotations SET error_taxonomy = \'{{"style": ["odd"]}}\' WHERE id = {second};',
    )
    before = _digest(path)
    with SessionStore.open_read_only(path) as store:
        assert store.check() == []
    assert main(["session", "check", str(path)]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines == [
        f"a merge would refuse rating {first}: Free text for the blame is only kept with "
        "blame 'other'.",
        f"a merge would refuse rating {second}: Unknown error family 'style': choose accuracy "
        "or fluency.",
    ]
    assert main(["session", "check", str(path), "--json"]) == 1
    assert '"merge_refuses"' in capsys.readouterr().out
    assert _digest(path) == before


def test_a_value_longer_than_a_session_holds_is_not_written(
    report_session: ReportSession,
) -> None:
    # The length limit holds for writes too: the change is refused in words that say so
    # (not that the file holds such a value), and nothing of it is kept.
    with SessionStore.open(report_session.path) as store:
        with pytest.raises(SessionValueTooLongError) as caught:
            store.set_meta("planted", "x" * 70_000_000)
        assert "longer than 64,000,000 bytes was not written" in _one_line(caught.value)
        assert store.get_meta("planted") is None
