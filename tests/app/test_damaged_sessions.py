"""A session with one impossible row: every reading command names it, skips it (with the
rows that belong to it), works on the rest and writes nothing wrong.

A real session (the report fixture's runs, scores and ratings, a WebNLG file imported by
``taillens import``, encodings cached by ``taillens retrieve``) is damaged one row per
case with the sqlite3 module, foreign keys off, as another program could; then the
commands run as real processes (``python -m app``).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fixtures.report_session import build_report_session
from tests.fixtures.tiny_models import built_in_a_child

ROOT = Path(__file__).resolve().parents[2]
ENTRY = """    <entry category="Airport" eid="Id{n}" size="1">
      <modifiedtripleset>
        <mtriple>City_{n} | leaderName | Person_{n}</mtriple>
      </modifiedtripleset>
      <lex comment="good" lid="Id1">The leader of City {n} is Person {n}.</lex>
    </entry>
"""


@dataclass
class Base:
    path: Path
    encoder: Path
    ids: dict[str, int]


def taillens(*args: str | Path, check: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-m", "app", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def query(path: Path, sql: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql, params).fetchall()


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Base:
    folder = tmp_path_factory.mktemp("damaged")
    path = folder / "s.taillens"
    built = build_report_session(path)
    source = folder / "Airport.xml"
    source.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<benchmark><entries>\n'
        + "".join(ENTRY.format(n=n) for n in (1, 2))
        + "</entries></benchmark>\n",
        encoding="utf-8",
    )
    taillens("import", "--session", path, "--quiet", source, check=True)
    # Built in a child: only the commands, each its own process, load it.
    encoder = (
        built_in_a_child(
            "build_tiny_sentence_encoder",
            folder / "encoder",
            module="tests.fixtures.tiny_sentence_encoder",
        )
        / "encoder"
    )
    taillens("retrieve", "--session", path, "--encoder", encoder, "--quiet", check=True)
    imported = query(path, "SELECT id FROM data_units WHERE uid LIKE '%Id1'")[0][0]
    score = query(
        path,
        "SELECT id FROM scores WHERE verbalisation_id = ? AND metric = 'bleu' "
        "AND json_extract(details, '$.quality') = 'gold'",
        (built.verbalisations[("model-a", "u2", "en")],),
    )[0][0]
    ids = {
        "imported": int(str(imported)),
        "u2-en": built.verbalisations[("model-a", "u2", "en")],
        "model-a": built.runs["model-a"],
        "score": int(str(score)),
        "rating": built.annotations[("u1", "ana")],
    }
    return Base(path, encoder, ids)


def damaged(base: Base, tmp_path: Path, sql: str) -> Path:
    """A copy of the base session with ``sql`` applied (foreign keys off)."""
    path = tmp_path / "damaged.taillens"
    shutil.copy(base.path, path)
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA foreign_keys=OFF")
        assert conn.execute(sql).rowcount == 1
        conn.commit()
    finally:
        conn.close()
    return path


def assert_skipped(done: subprocess.CompletedProcess[str], named: str) -> None:
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert f"skipped 1 damaged row: {named}" in done.stderr


def test_a_verbalisation_of_a_missing_unit(base: Base, tmp_path: Path) -> None:
    vid = base.ids["u2-en"]
    path = damaged(base, tmp_path, f"UPDATE verbalisations SET unit_id = 9999 WHERE id = {vid}")
    named = f"verbalisations id {vid}: unit_id 9999 points at no data_units row"
    before = query(path, "SELECT id, value FROM scores WHERE verbalisation_id = ?", (vid,))

    turtle = tmp_path / "out.ttl"
    assert_skipped(taillens("export", "--session", path, "--format", "turtle", turtle), named)
    text = turtle.read_text(encoding="utf-8")
    assert f"verbalisation/{vid}>" not in text and f"verbalisation/{vid + 1}>" in text

    report = taillens("report", "--session", path)
    assert_skipped(report, named)
    assert "model-a" in report.stdout and "model-b" in report.stdout

    score = taillens("score", "--session", path, "--metrics", "bleu", "--quiet")
    assert_skipped(score, named)
    # Scored the rest; wrote nothing for the damaged text, which is left as it was.
    assert query(path, "SELECT id, value FROM scores WHERE verbalisation_id = ?", (vid,)) == before
    assert query(path, "SELECT unit_id FROM verbalisations WHERE id = ?", (vid,)) == [(9999,)]


def test_a_score_value_that_is_not_a_number(base: Base, tmp_path: Path) -> None:
    sid = base.ids["score"]
    path = damaged(base, tmp_path, f"UPDATE scores SET value = 'abc' WHERE id = {sid}")
    report = taillens("report", "--session", path, "--json")
    assert_skipped(report, f"scores id {sid}: value 'abc' is not a number")
    assert json.loads(report.stdout)["tables"]


def test_a_score_of_a_missing_verbalisation(base: Base, tmp_path: Path) -> None:
    sid = base.ids["score"]
    path = damaged(base, tmp_path, f"UPDATE scores SET verbalisation_id = 9999 WHERE id = {sid}")
    report = taillens("report", "--session", path)
    assert_skipped(
        report, f"scores id {sid}: verbalisation_id 9999 points at no verbalisations row"
    )
    assert "model-a" in report.stdout


def test_attributes_that_are_not_json(base: Base, tmp_path: Path) -> None:
    uid = base.ids["imported"]
    path = damaged(base, tmp_path, f"UPDATE data_units SET attributes = '{{oops' WHERE id = {uid}")
    named = f"data_units id {uid}: attributes is not JSON: '{{oops'"
    for fmt, name in (("csv", "out.csv"), ("webnlg", "out.xml"), ("turtle", "out.ttl")):
        out = tmp_path / name
        done = taillens("export", "--session", path, "--format", fmt, out)
        assert_skipped(done, named)
        text = out.read_text(encoding="utf-8")
        assert "City_2" in text and "City_1" not in text, fmt
        if fmt == "csv":
            assert "u8" in text  # the other units are all there
    units = taillens("units", "list", "--session", path, "--json")
    assert_skipped(units, named)
    listed = {u["id"] for u in json.loads(units.stdout)}
    assert uid not in listed and len(listed) == 9
    assert_skipped(taillens("report", "--session", path), named)
    # Nothing was written back: the row still holds what it held.
    assert query(path, "SELECT attributes FROM data_units WHERE id = ?", (uid,)) == [("{oops",)]


def test_run_parameters_that_are_a_list(base: Base, tmp_path: Path) -> None:
    rid = base.ids["model-a"]
    path = damaged(base, tmp_path, f"UPDATE model_runs SET parameters = '[1, 2]' WHERE id = {rid}")
    named = f"model_runs id {rid}: parameters is a JSON array, not an object"
    report = taillens("report", "--session", path)
    assert_skipped(report, named)
    assert "model-b" in report.stdout
    assert "16 rows of verbalisations that belong to damaged rows" in report.stderr
    before = query(path, "SELECT count(*), sum(value) FROM scores WHERE run_id = ?", (rid,))
    score = taillens("score", "--session", path, "--metrics", "bleu", "--quiet")
    assert_skipped(score, named)
    assert query(path, "SELECT count(*), sum(value) FROM scores WHERE run_id = ?", (rid,)) == before


@pytest.mark.slow
def test_a_cached_encoding_of_the_wrong_size_is_rebuilt(base: Base, tmp_path: Path) -> None:
    path = damaged(
        base, tmp_path, "UPDATE encodings SET vector = substr(vector, 1, 8) WHERE id = 1"
    )
    named = "encodings id 1: vector holds 8 bytes, not 4 × dim 32"
    check = taillens("session", "check", path)
    assert check.returncode == 1 and named in check.stdout
    done = taillens("retrieve", "--session", path, "--encoder", base.encoder, "--json", "--quiet")
    assert_skipped(done, named)
    assert json.loads(done.stdout)["encoded"] == 1  # the one damaged vector, encoded again
    assert query(path, "SELECT length(vector), dim FROM encodings WHERE id = 1") == [(128, 32)]
    assert taillens("session", "check", path).returncode == 0


def test_a_rating_outside_the_scale_is_left_out_of_the_means(base: Base, tmp_path: Path) -> None:
    aid = base.ids["rating"]
    healthy = taillens("annotations", "--session", base.path, "--json", check=True)
    path = damaged(base, tmp_path, f"UPDATE annotations SET fluency = 33 WHERE id = {aid}")
    done = taillens("annotations", "--session", path, "--json")
    assert_skipped(done, f"annotations id {aid}: fluency 33 is outside 0–5")
    overall = json.loads(done.stdout)["overall"]
    assert overall["ratings"] == json.loads(healthy.stdout)["overall"]["ratings"] - 1
    # u1's ratings without ana's: ben 4, cleo 5; all fluency values stay on the scale.
    assert 0 <= overall["fluency_mean"] <= 5 and 0 <= overall["pooled_fluency_mean"] <= 5


def test_session_check_lists_every_damaged_row(base: Base, tmp_path: Path) -> None:
    healthy = taillens("session", "check", base.path)
    assert healthy.returncode == 0 and "ok, no damaged rows" in healthy.stdout
    path = damaged(base, tmp_path, "UPDATE scores SET details = 'x' WHERE id = 2")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE annotations SET adequacy = 7 WHERE id = 3")
    done = taillens("session", "check", path, "--json")
    assert done.returncode == 1
    found = json.loads(done.stdout)["damaged"]
    assert found == [
        {"table": "annotations", "id": 3, "problem": "adequacy 7 is outside 0–2"},
        {"table": "scores", "id": 2, "problem": "details is not JSON: 'x'"},
    ]
    # Nothing was changed by the check.
    assert query(path, "SELECT details FROM scores WHERE id = 2") == [("x",)]
