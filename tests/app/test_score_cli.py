"""``taillens score`` and ``taillens import-outputs`` on a small real session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from tests.fixtures.scoring_session import build_session
from tests.fixtures.table_digest import table_digest


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def session(tmp_path: Path) -> str:
    build_session(tmp_path / "s.taillens")
    return str(tmp_path / "s.taillens")


def test_import_outputs_then_score_them(
    capsys: pytest.CaptureFixture[str], session: str, tmp_path: Path
) -> None:
    outputs = tmp_path / "system.txt"
    outputs.write_text(
        "Ada Lovelace was a mathematician.\nRome is the capital of Italy.\n", encoding="utf-8"
    )
    status, out, _ = run(
        capsys,
        "import-outputs",
        str(outputs),
        "--session",
        session,
        "--system",
        "baseline",
        "--json",
    )
    assert status == 0
    imported = json.loads(out)
    assert imported["lines"] == 2 and imported["system"] == "baseline"

    status, out, err = run(
        capsys,
        "score",
        "--session",
        session,
        "--metrics",
        "bleu,chrf,esa",
        "--runs",
        str(imported["run"]),
        "--json",
        "--quiet",
    )
    assert status == 0, err
    result = json.loads(out)
    corpus = {(c["metric"], c["quality"]): c for c in result["corpus"]}
    assert set(corpus) == {
        ("bleu", "gold"),
        ("bleu", "silver"),
        ("chrf++", "gold"),
        ("chrf++", "silver"),
        ("esa", None),
    }
    assert corpus[("bleu", "silver")]["n"] == 1 and corpus[("bleu", "gold")]["n"] == 2
    assert corpus[("esa", None)]["details"]["esi@1"] == 0.5  # Ada's birth date is missing
    assert corpus[("bleu", "gold")]["signature"].startswith("metric:bleu|nrefs:var")


def test_summary_table_and_progress(capsys: pytest.CaptureFixture[str], session: str) -> None:
    status, out, err = run(capsys, "score", "--session", session, "--metrics", "rouge,esa")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith("scored 6 texts")
    assert lines[1].split() == [
        "run",
        "model",
        "lang",
        "quality",
        "rouge1",
        "rouge2",
        "rougeL",
        "esa",
    ]
    assert any(line.split()[:4] == ["1", "template", "en", "gold"] for line in lines)
    assert "Scoring:" in err and "note: run 1, it: 1 of 2 texts have no gold reference" in err
    # English has a silver reference (unit 1's), so unit 2's lack of one is worth a note;
    # Italian has no silver reference at all: no note about it.
    assert "note: run 1, en: 1 of 2 texts have no silver reference" in err
    assert "it: 2 of 2 texts have no silver reference" not in err


def test_the_table_sorts_runs_by_number(capsys: pytest.CaptureFixture[str]) -> None:
    from app.commands.score import _print_table
    from core.metrics.scoring.request import CorpusScore

    corpus = [
        CorpusScore("bleu", run, f"m{run}", "en", "gold", 1.0, 1, None, {})
        for run in (10, 2, None, 1, 11, 9)
    ]
    _print_table(corpus)
    runs = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]
    assert runs == ["-", "1", "2", "9", "10", "11"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("score", "--metrics", "bleu,cider"), "unknown metric 'cider'"),
        (("score", "--runs", "7"), "no run 7 in this session"),
        (("score", "--langs", "english"), "not a language code"),
        (
            ("score", "--bertscore-model", "no-org/no-model", "--metrics", "esa,bertscore"),
            "neither a folder nor in the local Hugging Face cache",
        ),
    ],
)
def test_bad_input_exits_2_and_changes_nothing(
    capsys: pytest.CaptureFixture[str], session: str, args: tuple[str, ...], message: str
) -> None:
    from core.store import SessionStore

    with SessionStore.open(session) as store:
        before = table_digest(store)
    status, _, err = run(capsys, *args, "--session", session, "--quiet")
    assert status == 2 and message in err
    with SessionStore.open(session) as store:
        assert table_digest(store) == before


def test_import_outputs_refuses_a_line_count_mismatch(
    capsys: pytest.CaptureFixture[str], session: str, tmp_path: Path
) -> None:
    outputs = tmp_path / "short.txt"
    outputs.write_text("just one\n", encoding="utf-8")
    status, _, err = run(
        capsys, "import-outputs", str(outputs), "--session", session, "--system", "x"
    )
    assert status == 2 and "has 1 line but the session has 2 units" in err
    status, out, _ = run(capsys, "score", "--session", session, "--list-runs", "--json")
    assert [r["name"] for r in json.loads(out)] == ["template", "other"]


def test_empty_lines_count_and_meteor_says_why_it_is_absent(
    capsys: pytest.CaptureFixture[str], session: str, tmp_path: Path
) -> None:
    outputs = tmp_path / "system.txt"
    outputs.write_text("Ada Lovelace was a mathematician.\n\n", encoding="utf-8")
    status, out, _ = run(
        capsys, "import-outputs", str(outputs), "--session", session, "--system", "half-empty"
    )
    assert status == 0 and "1 empty lines: scored as empty texts" in out
    run_id = out.split(" as run ")[1].split()[0]
    no_wordnet = tmp_path / "no-wordnet"
    status, out, err = run(
        capsys,
        "score",
        "--session",
        session,
        "--metrics",
        "webnlg",
        "--runs",
        run_id,
        "--wordnet",
        str(no_wordnet),
        "--quiet",
    )
    assert status == 0, err
    assert f"METEOR is absent: the WordNet folder {no_wordnet} does not exist" in err
    assert "1 empty outputs were scored as empty texts" in err
    assert "ter" in out.splitlines()[1] and "meteor" not in out
    status, out, err = run(
        capsys,
        "score",
        "--session",
        session,
        "--metrics",
        "chrf",
        "--runs",
        run_id,
        "--exclude-empty",
        "--json",
        "--quiet",
    )
    gold = next(c for c in json.loads(out)["corpus"] if c["quality"] == "gold")
    assert gold["n"] == 1
    assert any("LEFT OUT" in note for note in json.loads(out)["notes"])


def test_a_language_without_references_is_noted_once_not_per_quality(
    capsys: pytest.CaptureFixture[str], session: str, tmp_path: Path
) -> None:
    outputs = tmp_path / "es.txt"
    outputs.write_text("Ada Lovelace era matemática.\nRoma es la capital de Italia.\n", "utf-8")
    status, out, err = run(
        capsys,
        "import-outputs",
        str(outputs),
        "--session",
        session,
        "--system",
        "es-sys",
        "--lang",
        "es",
        "--json",
    )
    assert status == 0, err
    run_id = json.loads(out)["run"]
    status, out, err = run(
        capsys,
        "score",
        "--session",
        session,
        "--metrics",
        "bleu",
        "--runs",
        str(run_id),
        "--json",
        "--quiet",
    )
    assert status == 0, err
    notes = json.loads(out)["notes"]
    assert (
        f"run {run_id}, es: no text has a reference in es; reference-based scores are "
        "absent (not 0)" in notes
    )
    assert not any("have no gold reference" in n or "have no silver" in n for n in notes)
