"""Output paths and exports, with real ``python -m app`` processes: no output path destroys
a session (the open one through any path, another without --force), a killed export's
temporary file is swept by the next, a failed import into a new path leaves no session,
and CSV exports are safe to open in a spreadsheet unless --raw-csv."""

from __future__ import annotations

import csv
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.formats import import_webnlg
from core.io.output_guard import is_session_file
from core.store import SessionStore
from tests.shared_data import TAILNLG, require

ROOT = Path(__file__).resolve().parents[2]

# Imported data whose cells a spreadsheet would run: category, triples, a reference.
HOSTILE_XML = """<?xml version="1.0" encoding="utf-8"?>
<benchmark>
  <entries>
    <entry category="=HYPERLINK(&quot;http://evil.example&quot;,&quot;x&quot;)" eid="Id1"
           size="1">
      <originaltripleset><otriple>A | b | C</otriple></originaltripleset>
      <modifiedtripleset><mtriple>@SUM(A1) | p | +1+2</mtriple></modifiedtripleset>
      <lex comment="good" lid="Id1" lang="en">-2+3+cmd|' /C calc'!A0</lex>
      <lex comment="good" lid="Id2" lang="en">A plain sentence.</lex>
    </entry>
    <entry category="Airport" eid="Id2" size="1">
      <originaltripleset><otriple>X | y | Z</otriple></originaltripleset>
      <modifiedtripleset><mtriple>X | y | Z</mtriple></modifiedtripleset>
      <lex comment="good" lid="Id1" lang="en">X is y Z.</lex>
    </entry>
  </entries>
</benchmark>
"""


def taillens(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "app", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real session made once by the CLI, holding the hostile units."""
    folder = tmp_path_factory.mktemp("made")
    source = folder / "hostile.xml"
    source.write_text(HOSTILE_XML, encoding="utf-8")
    path = folder / "s.taillens"
    result = taillens("import", source, "--session", path, "--format", "webnlg", "--quiet")
    assert result.returncode == 0, result.stderr
    return path


@pytest.fixture
def session(made: Path, tmp_path: Path) -> Path:
    """A copy of that session of the test's own (a closed session is one file)."""
    path = tmp_path / "work" / "s.taillens"
    path.parent.mkdir()
    shutil.copyfile(made, path)
    return path


def refused_onto_the_session(session: Path, how: str, command: str) -> None:
    folder = session.parent
    (folder / "sub").mkdir()
    target = {
        "same": "s.taillens",
        "dot": "./s.taillens",
        "dotdot": "sub/../s.taillens",
        "hardlink": "hard.csv",
        "symlink": "link.csv",
    }[how]
    if how == "hardlink":
        os.link(session, folder / target)
    elif how == "symlink":
        (folder / target).symlink_to(session)
    before = digest(session)
    if command == "html":
        args = ["report", "--session", "s.taillens", "--html", target, "--force"]
    else:
        args = ["export", "--session", "s.taillens", "--format", command, target, "--force"]
    result = taillens(*args, cwd=folder)
    assert result.returncode == 2, result.stdout
    assert "taillens: Refusing to write" in result.stderr
    assert "it is the session being read" in result.stderr
    assert "Traceback" not in result.stderr
    assert digest(session) == before and is_session_file(session)
    assert not list(folder.glob(".*.tmp"))


@pytest.mark.parametrize("how", ["same", "dot", "dotdot", "hardlink", "symlink"])
def test_an_export_onto_the_session_is_refused_by_any_path(session: Path, how: str) -> None:
    refused_onto_the_session(session, how, "csv")


@pytest.mark.parametrize(("how", "command"), [("same", "turtle"), ("symlink", "html")])
def test_turtle_and_the_html_report_are_refused_too(session: Path, how: str, command: str) -> None:
    refused_onto_the_session(session, how, command)


def test_the_sessions_wal_and_shm_are_refused(session: Path) -> None:
    for name in ("s.taillens-wal", "s.taillens-shm"):
        target = session.parent / name
        result = taillens("export", "--session", session, "--format", "csv", target, "--force")
        assert result.returncode == 2 and "it is the session being read" in result.stderr
        assert not target.exists()


def test_another_session_and_a_backup_need_force(session: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.taillens"
    SessionStore.create(other).close()
    backup = session.with_name("s.backup-rev0004-20260101-000000.taillens")
    backup.write_bytes(session.read_bytes())  # a session's backup is a session too
    for target in (other, backup):
        before = digest(target)
        result = taillens("export", "--session", session, "--format", "turtle", target)
        assert result.returncode == 2
        assert "it is a TailLens session" in result.stderr and "--force" in result.stderr
        assert digest(target) == before
    result = taillens("report", "--session", session, "--html", other)
    assert result.returncode == 2 and "it is a TailLens session" in result.stderr
    result = taillens("export", "--session", session, "--format", "turtle", other, "--force")
    assert result.returncode == 0, result.stderr
    assert not is_session_file(other) and b"@prefix" in other.read_bytes()


def test_a_folder_is_refused(session: Path) -> None:
    result = taillens("export", "--session", session, "--format", "csv", session.parent)
    assert result.returncode == 2 and "it is a folder" in result.stderr


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_dead_exports_temporary_file_is_removed_by_the_next(session: Path) -> None:
    target = session.parent / "out.ttl"
    stale = session.parent / f".out.ttl.{dead_pid()}-0badf00d.tmp"
    stale.write_bytes(b"<a> <b> <c> .\n" * 100_000)
    result = taillens("export", "--session", session, "--format", "turtle", target, "--quiet")
    assert result.returncode == 0, result.stderr
    assert not stale.exists() and target.is_file()


def test_an_export_killed_mid_write_is_swept_by_the_next(tmp_path: Path) -> None:
    tailnlg = require(*TAILNLG)
    session = tmp_path / "big.taillens"
    with SessionStore.open(session, create=True) as store:
        import_webnlg(store, tailnlg)  # 615 units: a Turtle export of about 1.5 MB
    target = tmp_path / "out.ttl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    leftovers: list[Path] = []
    for _attempt in range(5):  # the kill must land while the file is being written
        process = subprocess.Popen(
            [sys.executable, "-m", "app", "export", "--session", str(session)]
            + ["--format", "turtle", str(target), "--quiet"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            leftovers = list(tmp_path.glob(".out.ttl.*.tmp"))
            if leftovers:
                break
            time.sleep(0.002)
        process.send_signal(signal.SIGKILL)
        process.wait()
        leftovers = list(tmp_path.glob(".out.ttl.*.tmp"))
        if leftovers:
            break
        target.unlink(missing_ok=True)
    else:
        pytest.skip("the export finished before it could be killed five times")
    assert process.returncode == -signal.SIGKILL
    assert leftovers[0].name.startswith(f".out.ttl.{process.pid}-")
    result = taillens("export", "--session", session, "--format", "turtle", target, "--quiet")
    assert result.returncode == 0, result.stderr
    assert not list(tmp_path.glob(".out.ttl.*.tmp"))
    assert target.read_bytes().startswith(b"@prefix")


@pytest.mark.parametrize(
    "content",
    [
        "<benchmark><entries><entry eid='1'>",  # not well-formed: the import raises
        "<benchmark><entries><entry eid='1' category='A' size='1'></entry>"
        "</entries></benchmark>",  # well-formed, but its one entry has no triples
    ],
)
def test_a_failed_import_into_a_new_path_leaves_no_session(tmp_path: Path, content: str) -> None:
    source = tmp_path / "bad.xml"
    source.write_text(content, encoding="utf-8")
    new = tmp_path / "new.taillens"
    result = taillens("import", source, "--session", new, "--format", "webnlg", "--quiet")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.xml"]


def test_a_failed_import_into_an_existing_session_keeps_it(session: Path, tmp_path: Path) -> None:
    source = tmp_path / "bad.xml"
    source.write_text("<benchmark><entries><entry eid='1'>", encoding="utf-8")
    before = digest(session)
    result = taillens("import", source, "--session", session, "--quiet")
    assert result.returncode == 2 and is_session_file(session)
    assert digest(session) == before


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_csv_export_neutralises_formulas_and_raw_writes_them(session: Path) -> None:
    safe = session.parent / "safe.csv"
    result = taillens("export", "--session", session, "--format", "csv", safe, "--quiet")
    assert result.returncode == 0, result.stderr
    assert "CSV cells: spreadsheet-safe (3 cells prefixed)" in result.stdout
    first, second = read_csv(safe)
    assert first["category"] == '\'=HYPERLINK("http://evil.example","x")'
    assert first["triples_en"] == "'@SUM(A1) | p | +1+2"
    assert first["references_en"] == "'-2+3+cmd|' /C calc'!A0 || A plain sentence."
    assert first["size"] == "1"
    assert second["category"] == "Airport" and second["references_en"] == "X is y Z."

    raw = session.parent / "raw.csv"
    result = taillens("export", "--session", session, "--format", "csv", raw, "--raw-csv")
    assert result.returncode == 0, result.stderr
    assert "CSV cells: raw" in result.stdout
    first, _ = read_csv(raw)
    assert first["category"].startswith("=HYPERLINK(")
    assert first["references_en"].startswith("-2+3+cmd|")

    result = taillens("export", "--session", session, "--format", "turtle", raw, "--raw-csv")
    assert result.returncode == 2 and "--raw-csv applies to --format csv" in result.stderr
