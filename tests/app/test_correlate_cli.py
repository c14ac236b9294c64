"""``taillens import-judgments`` and ``taillens correlate`` on a small real session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from core.store import SessionStore
from tests.fixtures.correlation_session import SYSTEMS, build, write_release
from tests.fixtures.table_digest import table_digest


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_import_then_correlate(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    session = tmp_path / "s.taillens"
    build(session)
    status, out, err = run(
        capsys, "import-judgments", str(write_release(tmp_path / "r")), "--session", str(session)
    )
    assert status == 0, err
    assert len(out.splitlines()) == len(SYSTEMS) and "matched by WebNLG entry id" in out
    status, out, err = run(
        capsys,
        "correlate",
        "--session",
        str(session),
        "--metrics",
        "chrf++:gold",
        "--human",
        "webnlg:correctness,webnlg:fluency",
        "--json",
        "--quiet",
    )
    assert status == 0, err
    rows = json.loads(out)["rows"]
    # System level twice, labelled: the mean of per-text chrF++ and the corpus chrF++.
    assert {(r["level"], r["human"]) for r in rows} == {
        (level, human)
        for level in ("text", "system", "system-corpus")
        for human in ("webnlg:correctness", "webnlg:fluency")
    }
    assert all(r["pearson"] is not None and 0 <= r["pearson_p"] <= 1 for r in rows)
    status, out, _ = run(
        capsys, "correlate", "--session", str(session), "--level", "system", "--quiet"
    )
    assert status == 0 and out.splitlines()[0].startswith("level")
    assert all(
        line.startswith("system") for line in out.splitlines()[1:] if not line.startswith("note")
    )
    assert "note: system level (system-corpus): per run, the metric's corpus score" in out


def test_bad_input_exits_2_and_stores_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    session = tmp_path / "s.taillens"
    build(session)
    bad = tmp_path / "human_eval_id_bt5.json"
    bad.write_text(
        json.dumps(
            {
                "500": {
                    "W": {
                        "Correctness": 1,
                        "DataCoverage": 1,
                        "Fluency": 1,
                        "Relevance": 1,
                        "TextStructure": 1,
                    }
                }
            }
        ),
        "utf-8",
    )
    with SessionStore.open(session) as store:
        before = table_digest(store)
    status, _, err = run(capsys, "import-judgments", str(bad), "--session", str(session))
    assert status == 2 and "no sample id matches a text of run" in err and "500" in err
    assert "Traceback" not in err
    with SessionStore.open(session) as store:
        assert table_digest(store) == before
    status, _, err = run(capsys, "correlate", "--session", str(session), "--quiet")
    assert status == 2 and "holds no human judgments" in err
    status, _, err = run(
        capsys, "correlate", "--session", str(session), "--metrics", "nope", "--quiet"
    )
    assert status == 2
