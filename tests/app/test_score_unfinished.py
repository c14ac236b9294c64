"""Scores describe finished things: a run a live process is still writing is skipped by
``score`` with a note, or scored partly with ``--partial`` (its corpus rows marked
partial); corpus figures are recomputed when the run has grown."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import delete, select, update

from app.cli import main
from core.store import SessionStore
from core.store.models import ModelRun, Score, Verbalisation
from tests.fixtures.scoring_session import TEXTS, build_session


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def writer() -> Iterator[subprocess.Popen[bytes]]:
    """A live process standing in for the one writing the run (its owner)."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    yield process
    process.kill()
    process.wait(10)


@pytest.fixture
def session(tmp_path: Path, writer: subprocess.Popen[bytes]) -> tuple[Path, int, int]:
    """Run 1 finished; run 2 'running', owned by the live writer, with one of its texts."""
    path = tmp_path / "s.taillens"
    ids = build_session(path)
    growing = ids.runs[1]
    with SessionStore.open(path) as store, store.unit_of_work() as db:
        db.execute(
            update(ModelRun)
            .where(ModelRun.id == growing)
            .values(
                status="running",
                software={"owner": {"pid": writer.pid, "host": socket.gethostname(), "job": "t"}},
            )
        )
        db.execute(
            delete(Verbalisation).where(Verbalisation.id == ids.verbalisations[(2, 2, "en")])
        )
    return path, ids.runs[0], growing


def corpus_rows(path: Path, run_id: int) -> list[tuple[str, str, int, bool]]:
    with SessionStore.open_read_only(path) as store, store.unit_of_work() as db:
        rows = db.execute(
            select(Score.metric, Score.details).where(
                Score.level == "corpus", Score.run_id == run_id
            )
        ).all()
    return sorted((m, d.get("quality"), int(d["n"]), bool(d.get("partial"))) for m, d in rows)


def test_a_run_being_written_is_skipped_with_a_note(
    capsys: pytest.CaptureFixture[str], session: tuple[Path, int, int]
) -> None:
    path, finished, growing = session
    status, out, err = run(capsys, "score", "--session", str(path), "--metrics", "bleu", "--quiet")
    assert status == 0, err
    assert f"note: run {growing} (other) is still being written by process" in err
    assert "not scored" in err and "--partial" in err
    assert corpus_rows(path, growing) == []
    assert corpus_rows(path, finished)  # the finished run was scored
    # Asked for that run alone: nothing to score is an error that says why.
    status, _, err = run(
        capsys,
        "score",
        "--session",
        str(path),
        "--metrics",
        "bleu",
        "--runs",
        str(growing),
        "--quiet",
    )
    assert status == 2 and "nothing to score" in err and "still being written" in err


def test_partial_scores_are_labelled_and_recomputed_when_the_run_grows(
    capsys: pytest.CaptureFixture[str], session: tuple[Path, int, int]
) -> None:
    path, _, growing = session
    status, out, err = run(
        capsys,
        "score",
        "--session",
        str(path),
        "--metrics",
        "bleu",
        "--runs",
        str(growing),
        "--partial",
        "--json",
        "--quiet",
    )
    assert status == 0, err
    corpus = json.loads(out)["corpus"]
    assert corpus and all(c["details"]["partial"] is True for c in corpus)
    assert corpus_rows(path, growing) == [("bleu", "gold", 1, True), ("bleu", "silver", 1, True)]
    status, out, err = run(
        capsys,
        "score",
        "--session",
        str(path),
        "--metrics",
        "bleu",
        "--runs",
        str(growing),
        "--partial",
        "--quiet",
    )
    assert "other (partial)" in out and "scored partly" in err

    # The run grows and finishes; scoring again recomputes its corpus figures from all
    # of its texts, no longer partial.
    with SessionStore.open(path) as store, store.unit_of_work() as db:
        rome = db.scalars(
            select(Verbalisation.unit_id).where(
                Verbalisation.run_id != growing, Verbalisation.text == TEXTS[(1, 2, "en")]
            )
        ).one()
        db.add(
            Verbalisation(
                run_id=growing,
                unit_id=rome,
                lang="en",
                candidate_index=0,
                raw_output=TEXTS[(2, 2, "en")],
                text=TEXTS[(2, 2, "en")],
                parse_ok=True,
            )
        )
        db.execute(update(ModelRun).where(ModelRun.id == growing).values(status="finished"))
    status, out, err = run(
        capsys,
        "score",
        "--session",
        str(path),
        "--metrics",
        "bleu",
        "--runs",
        str(growing),
        "--quiet",
    )
    assert status == 0, err
    assert corpus_rows(path, growing) == [("bleu", "gold", 2, False), ("bleu", "silver", 1, False)]


def test_a_running_run_whose_owner_is_gone_is_scored_as_it_is(
    capsys: pytest.CaptureFixture[str],
    session: tuple[Path, int, int],
    writer: subprocess.Popen[bytes],
) -> None:
    """A run left 'running' by a killed process is what it is: nobody will add to it."""
    path, _, growing = session
    writer.kill()
    writer.wait(10)
    status, _, err = run(
        capsys,
        "score",
        "--session",
        str(path),
        "--metrics",
        "bleu",
        "--runs",
        str(growing),
        "--quiet",
    )
    assert status == 0, err
    assert corpus_rows(path, growing) == [("bleu", "gold", 1, False), ("bleu", "silver", 1, False)]


def test_corpus_figures_of_a_run_that_grew_are_marked_stale_until_scored_again(
    capsys: pytest.CaptureFixture[str], session: tuple[Path, int, int]
) -> None:
    from core.metrics.scoring import corpus_scores

    path, finished, _ = session
    assert (
        run(
            capsys,
            "score",
            "--session",
            str(path),
            "--metrics",
            "bleu",
            "--runs",
            str(finished),
            "--quiet",
        )[0]
        == 0
    )
    with SessionStore.open_read_only(path) as store:
        before = [c for c in corpus_scores(store) if c.run_id == finished]
    assert before and not any(c.details.get("stale") for c in before)
    assert {c.details["run_texts"] for c in before if c.lang == "en"} == {2}
    with SessionStore.open(path) as store, store.unit_of_work() as db:
        unit = db.scalars(
            select(Verbalisation.unit_id).where(Verbalisation.run_id == finished)
        ).first()
        db.add(
            Verbalisation(
                run_id=finished,
                unit_id=unit,
                lang="en",
                candidate_index=1,
                raw_output="Another candidate.",
                text="Another candidate.",
                parse_ok=True,
            )
        )
    with SessionStore.open_read_only(path) as store:
        grown = {
            (c.lang, c.quality): c.details.get("stale")
            for c in corpus_scores(store)
            if c.run_id == finished
        }
    assert grown[("en", "gold")] is True and grown[("it", "gold")] is None
    assert (
        run(
            capsys,
            "score",
            "--session",
            str(path),
            "--metrics",
            "bleu",
            "--runs",
            str(finished),
            "--quiet",
        )[0]
        == 0
    )
    with SessionStore.open_read_only(path) as store:
        again = [c for c in corpus_scores(store) if c.run_id == finished]
    assert not any(c.details.get("stale") for c in again)
    assert {c.details["run_texts"] for c in again if c.lang == "en"} == {3}
