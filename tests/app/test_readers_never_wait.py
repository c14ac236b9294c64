"""Reading never waits for a writer: read-only commands read a WAL snapshot.

A real writer process holds the session's write lock (an open ``BEGIN IMMEDIATE`` with an
uncommitted row) for as long as the test needs; with a 5 s busy timeout, a reader that
took the write lock (as every command did before) fails with "in use by another…". Each
read-only command succeeds and sees the committed state only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.store import SessionStore
from tests.fixtures.write_lock_holder import HOLDER, ROOT

ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture
def session(tmp_path: Path) -> Path:
    from app.cli import main
    from tests.fixtures.wdv_records import wdv_records, write_wdv

    path = tmp_path / "s.taillens"
    source = write_wdv(tmp_path / "w.json", wdv_records())
    assert main(["import", str(source), "--session", str(path), "--quiet"]) == 0
    return path


def test_read_only_commands_succeed_while_a_writer_holds_the_lock(
    session: Path, tmp_path: Path
) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(session)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdin is not None and holder.stdout is not None
        assert holder.stdout.readline().strip() == "holding"
        commands = {
            "export": [
                "export",
                str(tmp_path / "out.csv"),
                "--session",
                str(session),
                "--format",
                "csv",
                "--quiet",
            ],
            "units list": ["units", "list", "--session", str(session)],
            "annotations": ["annotations", "--session", str(session), "--json"],
            "annotators": ["annotators", "--session", str(session), "--json"],
            "session info": ["session", "info", str(session)],
            "report": ["report", "--session", str(session), "--json"],
        }
        outputs = {}
        for name, args in commands.items():
            done = subprocess.run(
                [sys.executable, "-m", "app", *args],
                cwd=ROOT,
                env=ENV,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, (name, done.stderr)
            assert "in use" not in done.stderr
            outputs[name] = done.stdout
        assert outputs["units list"].strip().endswith("3 units")  # not the uncommitted 4th
        assert "uncommitted" not in outputs["units list"]
        names = [a["name"] for a in json.loads(outputs["annotators"])]
        assert "uncommitted writer" not in names
        assert json.loads(outputs["session info"])["tables"]["data_units"] == 3
        assert (tmp_path / "out.csv").read_text(encoding="utf-8").count("wdv:") == 3
        # A writer in this process still waits, and is told so: the lock is real.
        with SessionStore.open(session, busy_timeout_s=0.2) as store:
            from core.store import SessionLockedError

            with pytest.raises(SessionLockedError):
                store.set_meta("probe", "1")
    finally:
        if holder.stdin is not None:
            holder.stdin.write("\n")
            holder.stdin.flush()
        holder.wait(30)
    assert holder.returncode == 0


def test_a_read_only_store_refuses_to_write(session: Path) -> None:
    from core.store import SessionReadOnlyError
    from core.store.models import Annotator

    with SessionStore.open_read_only(session) as store:
        assert store.read_only and store.row_counts()["data_units"] == 3
        with pytest.raises(SessionReadOnlyError), store.unit_of_work() as db:
            db.add(Annotator(name="nope"))
    assert sorted(os.listdir(session.parent)) == ["s.taillens", "w.json"]


def test_panel_readers_read_a_snapshot_while_a_writer_holds_the_lock(session: Path) -> None:
    """The functions the panels read through, on the window's own (writable) store: with
    a 0.2 s busy timeout, one that took the write lock would raise SessionLockedError."""
    from core.metrics.scoring import corpus_scores, sentence_score_table
    from core.units.builder.saved import list_units, load_unit
    from core.verbalise.runs import list_runs, unit_outputs, units_overview

    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(session)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdin is not None and holder.stdout is not None
        assert holder.stdout.readline().strip() == "holding"
        with SessionStore.open(session, busy_timeout_s=0.2) as store:
            units = list_units(store)
            assert [u.uid for u in units] == ["wdv:Q2158$ABC-1", "wdv:Q2158$ABC-2", "wdv:Q90$XYZ"]
            assert load_unit(store, units[0].id).uid == units[0].uid
            runs = list_runs(store)
            assert [r.texts for r in runs] == [3]
            assert unit_outputs(store, runs[0].id, units[0].id).outputs
            assert len(units_overview(store).units) == 3
            corpus_scores(store)
            sentence_score_table(store)
            # Writing still waits for the lock (and says so): the snapshot did not hide it.
            from core.store import SessionLockedError

            with pytest.raises(SessionLockedError):
                store.set_meta("probe", "1")
            # After a snapshot the connection writes again once the lock is free.
            holder.stdin.write("\n")
            holder.stdin.flush()
            holder.wait(30)
            store.set_meta("probe", "2")
            assert store.get_meta("probe") == "2"
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(10)


def test_a_write_inside_a_snapshot_is_refused(session: Path) -> None:
    from core.store import SessionReadOnlyError
    from core.store.models import Annotator

    with SessionStore.open(session) as store:
        with pytest.raises(SessionReadOnlyError), store.snapshot() as db:
            db.add(Annotator(name="in a snapshot"))
            db.flush()
        with store.snapshot() as db:
            assert "in a snapshot" not in {a.name for a in db.query(Annotator)}
