"""``taillens retrieve`` and ``taillens train-encoder`` on a small real session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from core.store import SessionStore
from tests.fixtures.scoring_session import REFS, build_session
from tests.fixtures.table_digest import table_digest

# Loads models, sentence-transformers or bert-score among them: in a parallel run its tests
# go to workers kept for them, and start on one that has not loaded torch yet
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models("encoders")


@pytest.fixture(scope="module")
def encoder(tiny_encoder: Path) -> str:
    return str(tiny_encoder)


@pytest.fixture
def session(tmp_path: Path) -> str:
    build_session(tmp_path / "s.taillens")
    return str(tmp_path / "s.taillens")


def digest(path: str) -> dict[str, str]:
    with SessionStore.open(path) as store:
        return table_digest(store)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_retrieve_reports_both_directions_then_reads_the_cache(
    capsys: pytest.CaptureFixture[str], session: str, encoder: str
) -> None:
    status, out, _ = run(
        capsys,
        "retrieve",
        "--session",
        session,
        "--encoder",
        encoder,
        "--json",
        "--quiet",
        "--worst",
        "2",
    )
    assert status == 0
    first = json.loads(out)
    assert first["pairs"] == sum(len(t) for t in REFS.values())
    assert first["encoded"] == first["graphs"] + first["texts"]
    for direction in ("text_to_graph", "graph_to_text"):
        scores = first[direction]
        assert 0 <= scores["top1"] <= scores["top5"] <= 1 and 0 < scores["mrr"] <= 1
    assert len(first["worst"]) == 2
    assert first["worst"][0]["similarity"] <= first["worst"][1]["similarity"]
    status, out, _ = run(capsys, "retrieve", "--session", session, "--encoder", encoder, "--quiet")
    assert status == 0 and "text → graph: top-1" in out and "0 encoded now" in out
    status, out, _ = run(
        capsys,
        "retrieve",
        "--session",
        session,
        "--encoder",
        encoder,
        "--run",
        "2",
        "--quiet",
        "--json",
    )
    assert status == 0 and json.loads(out)["pairs"] == 2
    status, out, _ = run(
        capsys,
        "retrieve",
        "--session",
        session,
        "--encoder",
        encoder,
        "--text",
        "Rome is the capital of Italy.",
        "--langs",
        "en",
        "--top",
        "2",
        "--quiet",
    )
    assert status == 0 and len(out.strip().splitlines()) == 2 and "[S]" in out


def test_bad_input_exits_2_and_changes_nothing(
    capsys: pytest.CaptureFixture[str], session: str, tmp_path: Path
) -> None:
    (tmp_path / "notamodel").mkdir()
    before = digest(session)
    status, _, err = run(
        capsys,
        "retrieve",
        "--session",
        session,
        "--encoder",
        str(tmp_path / "notamodel"),
        "--quiet",
    )
    assert status == 2 and "not a model folder" in err and "Traceback" not in err
    status, _, err = run(
        capsys,
        "retrieve",
        "--session",
        session,
        "--run",
        "42",
        "--quiet",
        "--encoder",
        str(tmp_path / "notamodel"),
    )
    assert status == 2
    status, _, err = run(
        capsys,
        "train-encoder",
        "--session",
        session,
        "--out",
        str(tmp_path / "m"),
        "--base",
        str(tmp_path / "notamodel"),
    )
    assert status == 2 and "not a model folder" in err
    assert digest(session) == before
    empty = tmp_path / "empty.taillens"
    SessionStore.create(empty).close()
    status, _, err = run(
        capsys, "train-encoder", "--session", str(empty), "--out", str(tmp_path / "m")
    )
    assert status == 2 and "no references" in err
    assert not (tmp_path / "m").exists()


def test_train_encoder_writes_a_model_retrieve_can_use(
    capsys: pytest.CaptureFixture[str], session: str, encoder: str, tmp_path: Path
) -> None:
    out_dir = tmp_path / "trained"
    status, out, err = run(
        capsys,
        "train-encoder",
        "--session",
        session,
        "--out",
        str(out_dir),
        "--base",
        encoder,
        "--batch-size",
        "4",
        "--epochs",
        "3",
        "--max-steps",
        "2",
        "--json",
        "--quiet",
    )
    assert status == 0, err
    result = json.loads(out)
    assert result["steps"] == 2 and (out_dir / "taillens-encoder.json").is_file()
    status, out, _ = run(
        capsys, "retrieve", "--session", session, "--encoder", str(out_dir), "--json", "--quiet"
    )
    assert status == 0 and json.loads(out)["encoder"] == "trained"
    status, _, err = run(
        capsys, "train-encoder", "--session", session, "--out", str(out_dir), "--base", encoder
    )
    assert status == 2 and "already exists" in err, err
