"""Long commands re-run after a crash end in the same state with exit 0; two processes
creating one session cooperate. Real CLI processes, killed with SIGKILL."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.store import SessionStore
from tests.fixtures.webnlg_xml import HEAD, TAIL, entry, xml_file

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=120)
    return process.returncode, out, err


def exported(session: Path, out: Path) -> bytes:
    status, _, err = finish(
        cli("export", str(out), "--session", str(session), "--format", "webnlg", "--quiet")
    )
    assert status == 0, err
    return out.read_bytes()


def test_import_killed_then_rerun_ends_as_one_clean_import(tmp_path: Path) -> None:
    source = xml_file(tmp_path, uids=tuple(f"E{i}" for i in range(300)))
    reference = tmp_path / "reference.taillens"
    status, _, err = finish(cli("import", str(source), "--session", str(reference), "--quiet"))
    assert status == 0, err
    wanted = exported(reference, tmp_path / "reference.xml")

    rng = random.Random(11)
    codes = []
    for attempt in range(2):
        session = tmp_path / f"s{attempt}.taillens"
        victim = cli("import", str(source), "--session", str(session), "--quiet")
        time.sleep(rng.uniform(0.3, 1.5))
        victim.send_signal(signal.SIGKILL)
        victim.communicate(timeout=30)
        rerun = []
        for _ in range(2 - attempt):  # re-run (twice the first time): the same state
            status, out, err = finish(
                cli("import", str(source), "--session", str(session), "--quiet")
            )
            rerun.append(status)
            assert status == 0, err
            assert "0 errors" in out and "Traceback" not in err
        codes.append((victim.returncode, rerun))
        assert exported(session, tmp_path / f"s{attempt}.xml") == wanted
        leftovers = [n for n in os.listdir(tmp_path) if n.startswith(".")]
        assert leftovers == []
    print(f"\nkilled import (exit code of the kill, exit codes of the re-runs): {codes}")


def test_same_id_with_different_content_stays_an_error(tmp_path: Path) -> None:
    session = tmp_path / "s.taillens"
    first = xml_file(tmp_path, "a.xml", uids=("E1", "E2"))
    assert finish(cli("import", str(first), "--session", str(session), "--quiet"))[0] == 0
    changed = tmp_path / "b.xml"
    changed.write_text(HEAD + entry("E1") + entry("E2", "Another text") + TAIL, encoding="utf-8")
    status, out, err = finish(cli("import", str(changed), "--session", str(session), "--quiet"))
    assert status == 2
    assert "2 entries, 0 units, 0 references, 1 error, 1 already imported" in out
    assert "'E2' is already in the session with different content" in err


def test_two_processes_creating_one_session_cooperate(tmp_path: Path) -> None:
    source = xml_file(tmp_path, uids=tuple(f"E{i}" for i in range(50)))
    for attempt in range(2):
        session = tmp_path / f"s{attempt}.taillens"
        both = [cli("import", str(source), "--session", str(session), "--quiet") for _ in range(2)]
        results = [finish(p) for p in both]
        assert [status for status, _, _ in results] == [0, 0], [e for _, _, e in results]
        outs = sorted(out for _, out, _ in results)
        # One imported the 50 entries; the other found them there (or both raced to
        # create the file and one opened the other's).
        assert any("50 units" in o for o in outs)
        assert any("50 already imported" in o for o in outs)
        with SessionStore.open_read_only(session) as store:
            assert store.row_counts()["data_units"] == 50
    assert sorted(n for n in os.listdir(tmp_path) if n.endswith(".taillens")) == [
        "s0.taillens",
        "s1.taillens",
    ]
    assert [n for n in os.listdir(tmp_path) if n.startswith(".")] == []


def test_import_outputs_rerun_adds_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli import main

    session = tmp_path / "s.taillens"
    source = xml_file(tmp_path, uids=("E1", "E2"))
    assert main(["import", str(source), "--session", str(session), "--quiet"]) == 0
    outputs = tmp_path / "sys.txt"
    outputs.write_text("One.\nTwo.\n", encoding="utf-8")
    codes = []
    for _ in range(2):
        codes.append(
            main(["import-outputs", str(outputs), "--session", str(session), "--system", "base"])
        )
    out = capsys.readouterr().out
    assert codes == [0, 0]
    assert "already imported: the same 2 en outputs of base are run 1; nothing added" in out
    outputs.write_text("One.\nTwo, changed.\n", encoding="utf-8")
    assert (
        main(["import-outputs", str(outputs), "--session", str(session), "--system", "base"]) == 0
    )
    assert "as run 2" in capsys.readouterr().out  # other outputs: a run of their own
    with SessionStore.open_read_only(session) as store:
        assert store.row_counts()["model_runs"] == 2
