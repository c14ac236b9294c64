"""The per-text table (``taillens export --texts``) as CSV, JSON Lines and
Parquet, written by a real ``python -m app`` process and read back with pandas: one row
per text, the right types, the session's values, signatures named."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from core.store import SessionStore
from core.store.models import (
    Score,
)
from tests.fixtures.texts_table_session import TEXTS, build


@pytest.fixture
def pd() -> ModuleType:
    """pandas, imported by the tests that read with it (not at collection: every worker
    would hold it)."""
    return pytest.importorskip("pandas")


ROOT = Path(__file__).resolve().parents[2]


def taillens(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "app", *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("texts") / "s.taillens")


def expected(path: Path) -> dict[int, dict[str, float | None]]:
    """Each text's score columns as the session holds them (newest row per column)."""
    with SessionStore.open_read_only(path) as store, store.snapshot() as db:
        out: dict[int, dict[str, float | None]] = {}
        for score in db.query(Score).filter_by(level="sentence").order_by(Score.id):
            if score.verbalisation_id is None:
                continue
            quality = (score.details or {}).get("quality")
            column = f"{score.metric}:{quality}" if quality else score.metric
            out.setdefault(score.verbalisation_id, {})[column] = score.value
        return out


def export(session: Path, out: Path, *extra: str) -> str:
    result = taillens("export", "--texts", out, "--session", session, "--quiet", *extra)
    assert result.returncode == 0, result.stderr
    return result.stdout


def check_frame(frame, session: Path, *, strict_ints: bool) -> None:
    import pandas as pd

    outputs = frame[frame["kind"] == "output"]
    references = frame[frame["kind"] == "reference"]
    assert len(outputs) == len(TEXTS)
    # The silver reference is rated; no reference has a sentence score of its own.
    assert list(references["quality"]) == ["silver"]
    assert list(references["model"]) == ["(references)"]
    assert references["run"].isna().all()
    for column in ("bleu:gold", "bleu:silver", "esa", "fluency_mean", "adequacy_percentage"):
        assert frame[column].dtype == "float64", column
    if strict_ints:
        for column in ("run", "candidate", "fluency__alice", "adequacy__bob", "ratings"):
            assert str(frame[column].dtype) == "Int64", column
    for column in ("unit", "model", "text", "category", "kind"):
        assert pd.api.types.is_string_dtype(frame[column]) or frame[column].dtype == object
    values = expected(session)
    for _, row in outputs.iterrows():
        for column, value in values[int(row["verbalisation_id"])].items():
            if value is None or math.isnan(value):
                assert pd.isna(row[column])
            else:
                assert row[column] == pytest.approx(value, rel=1e-12), column
    by_text = outputs.set_index("text")
    rome = by_text.loc["Rome is the capital of Italy."]
    assert (rome["unit"], rome["model"], rome["category"], rome["tier"]) == (
        "u-rome",
        "Alpha",
        "City",
        "head",
    )
    assert (rome["fluency__alice"], rome["fluency__bob"], rome["ratings"]) == (5, 4, 2)
    assert rome["fluency_mean"] == 4.5 and rome["adequacy_percentage"] == 1.0
    tiber = by_text.loc["The Tiber flows."]
    assert (tiber["category"], tiber["sub_tier"]) == ("River", "long_tail_it")
    # bob's golden answer is no rating of the item
    assert tiber["ratings"] == 1 and pd.isna(tiber["fluency__bob"])
    assert tiber["adequacy_majority_voted"] == 1
    assert json.loads(tiber["details"])["esa"]["missing"] == ["Rome"]
    assert outputs["text"].isna().sum() == 1  # the output that did not parse


def test_csv_round_trips_through_pandas(pd, session: Path, tmp_path: Path) -> None:
    out = tmp_path / "texts.csv"
    stdout = export(session, out, "--raw-csv")
    assert "texts.csv: 5 texts (4 outputs, 1 reference) of 2 units" in stdout
    assert "signature bleu:gold: metric:bleu|nrefs:1" in stdout
    sidecar = json.loads((tmp_path / "texts.csv.signatures.json").read_text("utf-8"))
    assert sidecar["signatures"]["bleu:gold"][0].startswith("metric:bleu|nrefs:1")
    typed = sidecar["signature_fields"]["bleu:gold"][0]
    assert (typed["metric"], typed["library"]) == ("bleu", "sacrebleu")
    assert typed["settings"]["nrefs"] == "1" and typed["settings"]["tok"] == "13a"
    assert set(sidecar["signatures"]) >= {"bleu:gold", "bleu:silver", "esa"}
    plain = pd.read_csv(out)
    assert plain["bleu:gold"].dtype == "float64"
    frame = pd.read_csv(out, dtype=sidecar["pandas_dtypes"])
    check_frame(frame, session, strict_ints=True)
    tiber = frame.set_index("text").loc["The Tiber flows."]
    assert tiber["esa:undetected_entities"] == "Rome"  # a joined string in CSV
    assert "=1+2 Italy" in set(frame["text"])  # --raw-csv: as it is


def test_csv_is_spreadsheet_safe_by_default(pd, session: Path, tmp_path: Path) -> None:
    out = tmp_path / "safe.csv"
    stdout = export(session, out)
    assert "CSV cells: spreadsheet-safe (1 cells prefixed)" in stdout
    frame = pd.read_csv(out)
    assert "'=1+2 Italy" in set(frame["text"])


def test_json_lines_round_trip_through_pandas(pd, session: Path, tmp_path: Path) -> None:
    out = tmp_path / "texts.jsonl"
    export(session, out)
    lines = out.read_text("utf-8").splitlines()
    assert all(line.startswith('{"kind": ') for line in lines)  # rows only, no header line
    sidecar = json.loads((tmp_path / "texts.jsonl.signatures.json").read_text("utf-8"))
    frame = pd.read_json(out, lines=True, dtype=sidecar["pandas_dtypes"])
    check_frame(frame, session, strict_ints=True)
    tiber = frame.set_index("text").loc["The Tiber flows."]
    assert tiber["esa:undetected_entities"] == ["Rome"]  # a list


def test_parquet_round_trips_through_pandas(pd, session: Path, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "texts.parquet"
    stdout = export(session, out)
    assert "signature esa:" in stdout
    assert not (tmp_path / "texts.parquet.signatures.json").exists()
    frame = pd.read_parquet(out)  # no hints: the file says its types
    check_frame(frame, session, strict_ints=True)
    tiber = frame.set_index("text").loc["The Tiber flows."]
    assert list(tiber["esa:undetected_entities"]) == ["Rome"]
    schema = pq.read_schema(out)
    meta = json.loads(schema.metadata[b"taillens"])
    assert meta["signatures"]["bleu:gold"][0].startswith("metric:bleu|nrefs:1")
    assert schema.field("bleu:gold").metadata[b"signature"].startswith(b"metric:bleu|nrefs:1")
    listed = schema.field("esa:undetected_entities").type
    assert (str(listed.value_type), listed.id) == ("string", pa.list_(pa.string()).id)


def test_filters_and_refusals(pd, session: Path, tmp_path: Path) -> None:
    out = tmp_path / "beta.jsonl"
    stdout = export(session, out, "--runs", "2")
    assert "2 texts (2 outputs, 0 references)" in stdout
    frame = pd.read_json(out, lines=True)
    assert set(frame["model"]) == {"Beta"}
    wrong = taillens("export", "--texts", tmp_path / "t.xlsx", "--session", session)
    assert wrong.returncode == 2
    assert "name the file .csv, .jsonl or .parquet" in wrong.stderr
    unknown = taillens("export", "--texts", tmp_path / "t.csv", "--session", session, "--runs", "9")
    assert unknown.returncode == 2 and "run 9 is not in this session" in unknown.stderr
    # The output guard: another session is not replaced without --force.
    victim = tmp_path / "other.parquet"
    victim.write_bytes(session.read_bytes())
    refused = taillens("export", "--texts", victim, "--session", session)
    assert refused.returncode == 2 and "it is a TailLens session" in refused.stderr
    assert victim.read_bytes() == session.read_bytes()
