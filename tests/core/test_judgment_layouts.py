"""WebNLG 2020 human judgments in the layouts the challenge published them in:
per-system folders (``results/en/<SYSTEM>/primary.json``), the all-teams JSON list, run
names as well as ids for ``--run``, entries with no ratings skipped and counted, and every
message naming the system and the file.

The layout is WebNLG/challenge-2020's ``evaluation/human-evaluation/results/en/``:
``Baseline-FORGE2020/primary.json`` (``{"3": {"A3HBMKX19GBOGR": {"Correctness": 88,
"DataCoverage": 80, "Fluency": 98, "Relevance": 88, "TextStructure": 100}, …}, …}``, with
``"1124": {}``) and ``english_humeval_data_all_teams.json`` (``[{"submission_id":
"Amazon_AI_(Shanghai)", "size": "1", "sample_id": "3", "domain": "type3", "category":
"Airport", "Correctness": 0.42…, …}, …]``). No WebNLG 2020 file lies in the shared data
folder, so the fixtures are written in that shape (tests.fixtures.correlation_session)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.cli import main
from core.agreement.human import human_values
from core.agreement.judgments import import_webnlg_judgments
from core.formats.webnlg.human_eval import JudgmentError
from core.store import SessionStore
from tests.fixtures.correlation_session import (
    CRITERIA,
    SAMPLES,
    build,
    ratings_for,
    write_challenge_layout,
    zscores_for,
)
from tests.fixtures.table_digest import table_digest


@pytest.fixture
def session(tmp_path: Path):
    made = build(tmp_path / "s.taillens")
    store = SessionStore.open(tmp_path / "s.taillens")
    yield store, made
    store.close()


def test_the_challenge_folder_imports_in_one_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    session = tmp_path / "s.taillens"
    made = build(session)
    # Folders for three systems; the all-teams list holds those three, TGen (no folder)
    # and a team with no run in this session.
    root = write_challenge_layout(
        tmp_path / "challenge-2020",
        per_system=("AmazonAI", "bt5", "NILC"),
        all_teams=("AmazonAI", "bt5", "NILC", "TGen", "Amazon_AI_(Shanghai)"),
    )
    status = main(["import-judgments", str(root), "--session", str(session)])
    out, err = capsys.readouterr()
    assert status == 0, err
    lines = out.splitlines()
    for system in ("AmazonAI", "bt5", "NILC"):
        line = next(x for x in lines if x.startswith(f"{system} ({system}/primary.json): "))
        assert f"24 ratings of {SAMPLES} texts to run" in line
        assert "1 entry with no ratings skipped (1124)" in line
    tgen = next(x for x in lines if x.startswith("TGen (english_humeval_data_all_teams.json)"))
    assert f"z-scores of {SAMPLES} texts to run 4 (TGen)" in tgen
    assert lines[-1].startswith("4 systems of the all-teams file left out: ")
    assert "Amazon_AI_(Shanghai) (no run of that name)" in lines[-1]
    assert "bt5 (run 2 (bt5) has its raters in bt5/primary.json)" in lines[-1]
    with SessionStore.open(session) as store:
        raw = human_values(store)["webnlg:correctness"]
        z = human_values(store, zscore=True)["webnlg:correctness"]
    # The per-system files' raters; TGen's z-scores count only with --zscore, as given.
    assert raw[made[("bt5", 1)]] == pytest.approx(
        sum(r["Correctness"] for r in ratings_for("bt5", 1).values()) / 3
    )
    assert made[("TGen", 1)] not in raw
    assert z[made[("TGen", 3)]] == pytest.approx(zscores_for("TGen", 3)["Correctness"])
    status = main(["correlate", "--session", str(session), "--quiet", "--metrics", "chrf++:gold"])
    out, _ = capsys.readouterr()
    assert status == 0
    assert "note: 1 system rated only in the all-teams file (z-scores: TGen) left out" in out


def test_a_system_maps_to_its_run_by_name(session, tmp_path: Path) -> None:
    store, made = session
    root = write_challenge_layout(
        tmp_path / "c", per_system=("Baseline-FORGE2020",), all_teams=("Amazon_AI_(Shanghai)",)
    )
    # Names differ from the runs': --run takes a run name (or id), SYSTEM=RUN maps one.
    result = import_webnlg_judgments(
        store,
        [root],
        runs=["Baseline-FORGE2020=bt5", "Amazon_AI_(Shanghai)=amazonai"],
    )
    assert {(f.system, f.run_name) for f in result.files} == {
        ("Baseline-FORGE2020", "bt5"),
        ("Amazon_AI_(Shanghai)", "AmazonAI"),
    }
    one = root / "Baseline-FORGE2020" / "primary.json"
    again = import_webnlg_judgments(store, [one], runs=["NILC"])
    assert again.files[0].run_name == "NILC" and again.files[0].empty == ("1124",)
    assert made[("NILC", 2)] in human_values(store)["webnlg:fluency"]
    # Case and punctuation aside, the folder's name finds the run: "nilc" is NILC.
    (root / "Baseline-FORGE2020").rename(root / "nilc")
    third = import_webnlg_judgments(store, [root / "nilc" / "primary.json"])
    assert third.files[0].run_name == "NILC"
    with pytest.raises(JudgmentError, match=r"--run RUN names the run of ONE system; .* 2 systems"):
        import_webnlg_judgments(store, [root], runs=["bt5"])
    with pytest.raises(JudgmentError, match="--run names a system that no file holds: nope"):
        import_webnlg_judgments(store, [one.parent.parent / "nilc"], runs=["nope=bt5"])


def test_without_a_run_the_message_names_the_system_and_both_names_tried(
    session, tmp_path: Path
) -> None:
    store, _made = session
    root = write_challenge_layout(tmp_path / "c", per_system=("Baseline-FORGE2020",), all_teams=())
    before = table_digest(store)
    with pytest.raises(
        JudgmentError,
        match=r"^Baseline-FORGE2020 \(Baseline-FORGE2020/primary.json\): no run named "
        r"'Baseline-FORGE2020' or 'primary' in this session \(runs: 1: AmazonAI, ",
    ):
        import_webnlg_judgments(store, [root])
    assert table_digest(store) == before


@pytest.mark.parametrize(
    ("where", "content", "message"),
    [
        (
            "Baseline-FORGE2020/primary.json",
            {"3": {"W1": dict.fromkeys(CRITERIA, 101)}},
            "Baseline-FORGE2020 (Baseline-FORGE2020/primary.json), entry '3', rater 'W1': "
            "Correctness is 101, not a number from 0 to 100",
        ),
        (
            "Baseline-FORGE2020/primary.json",
            {"3": {}, "4": {}},
            "Baseline-FORGE2020 (Baseline-FORGE2020/primary.json): no entry holds a rating",
        ),
        (
            "english_humeval_data_all_teams.json",
            [
                {"submission_id": "bt5", "sample_id": "1", **dict.fromkeys(CRITERIA, 0.5)},
                {"submission_id": "bt5", "sample_id": "2", **dict.fromkeys(CRITERIA, "x")},
            ],
            "bt5 (english_humeval_data_all_teams.json, record 1): Correctness is 'x', "
            "not a number (a z-score)",
        ),
        (  # a name a terminal would obey, or one that breaks the line: escaped, one line
            "english_humeval_data_all_teams.json",
            [{"submission_id": "bt5\n\x1b[2J", "sample_id": "1"}],
            "'bt5\\n\\x1b[2J' (english_humeval_data_all_teams.json, record 0): no Correctness",
        ),
        (
            "english_humeval_data_all_teams.json",
            [{"sample_id": "1"}],
            "english_humeval_data_all_teams.json, record 0: no submission_id (the system)",
        ),
        (
            "english_humeval_data_all_teams.json",
            [{"submission_id": "bt5", "sample_id": "Id1"}],
            "bt5 (english_humeval_data_all_teams.json, record 0): sample_id is 'Id1'",
        ),
    ],
)
def test_bad_entries_name_system_file_and_entry(
    session, tmp_path: Path, where: str, content: object, message: str
) -> None:
    store, _made = session
    root = tmp_path / "results" / "en"
    (root / where).parent.mkdir(parents=True, exist_ok=True)
    (root / where).write_text(json.dumps(content), "utf-8")
    before = table_digest(store)
    with pytest.raises(JudgmentError, match="^" + re.escape(message)):
        import_webnlg_judgments(
            store, [root], runs=["Baseline-FORGE2020=bt5"] if "Base" in where else []
        )
    assert table_digest(store) == before


def test_two_files_for_one_run_are_refused_naming_both(session, tmp_path: Path) -> None:
    store, _made = session
    root = write_challenge_layout(tmp_path / "c", per_system=("bt5",), all_teams=())
    (root / "human_eval_id_bt5.json").write_text(
        json.dumps({str(n): ratings_for("bt5", n) for n in range(1, SAMPLES + 1)}), "utf-8"
    )
    with pytest.raises(
        JudgmentError,
        match=r"^bt5 \(human_eval_id_bt5.json\): run 2 \(bt5\) already has bt5/primary.json",
    ):
        import_webnlg_judgments(store, [root])
