"""Metrics against human judgments: WebNLG 2020 human-evaluation files in their exact
layout, the session's own annotations, Pearson/Spearman/Kendall checked against scipy."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from core.agreement.correlate import CorrelationRequest, correlate
from core.agreement.human import human_values
from core.agreement.judgments import import_webnlg_judgments
from core.annotation import Rating, add_annotator, save_rating
from core.formats.webnlg.human_eval import JudgmentError
from core.metrics.scoring import sentence_score_table
from core.store import SessionStore
from tests.fixtures.correlation_session import (
    CRITERIA,
    SAMPLES,
    SYSTEMS,
    build,
    ratings_for,
    write_release,
)
from tests.fixtures.lazy_modules import scipy_stats as stats
from tests.fixtures.table_digest import table_digest


@pytest.fixture
def session(tmp_path: Path):
    made = build(tmp_path / "s.taillens")
    store = SessionStore.open(tmp_path / "s.taillens")
    yield store, made
    store.close()


def test_import_maps_sample_ids_to_the_systems_texts(session, tmp_path: Path) -> None:
    store, made = session
    result = import_webnlg_judgments(store, [write_release(tmp_path / "release")])
    assert sorted((f.system, f.texts, f.ratings) for f in result.files) == sorted(
        (s, SAMPLES, 3 * SAMPLES) for s in SYSTEMS
    )
    assert all(f.rule == "WebNLG entry id Id<N>" for f in result.files)
    values = human_values(store)
    assert set(values) == {
        f"webnlg:{c}"
        for c in ("correctness", "data_coverage", "fluency", "relevance", "text_structure")
    }
    for (system, n), vid in made.items():
        raters = ratings_for(system, n).values()
        assert values["webnlg:fluency"][vid] == pytest.approx(sum(r["Fluency"] for r in raters) / 3)


def test_coefficients_at_text_and_system_level_are_scipys(session, tmp_path: Path) -> None:
    store, made = session
    imported = import_webnlg_judgments(store, [write_release(tmp_path / "release", with_text=True)])
    # The files' "text" fields are empty here: the import warns that they differ.
    assert all(f.text_mismatches == SAMPLES for f in imported.files)
    assert "differ from the run's stored outputs" in imported.summary_lines()[0]
    result = correlate(
        store, CorrelationRequest(metrics=("chrf++:gold",), humans=("webnlg:correctness",))
    )
    rows = {r.level: r for r in result.rows}
    table = {r.verbalisation_id: r for r in sentence_score_table(store)}
    human = human_values(store)["webnlg:correctness"]
    xs = [table[vid].scores["chrf++:gold"] for vid in made.values()]
    ys = [human[vid] for vid in made.values()]
    text = rows["text"]
    assert text.n == len(SYSTEMS) * SAMPLES
    assert (text.pearson, text.pearson_p) == pytest.approx(tuple(stats.pearsonr(xs, ys)))
    assert (text.spearman, text.spearman_p) == pytest.approx(tuple(stats.spearmanr(xs, ys)))
    assert (text.kendall, text.kendall_p) == pytest.approx(tuple(stats.kendalltau(xs, ys)))
    sx = [
        sum(table[made[(s, n)]].scores["chrf++:gold"] for n in range(1, SAMPLES + 1)) / SAMPLES
        for s in SYSTEMS
    ]
    sy = [sum(human[made[(s, n)]] for n in range(1, SAMPLES + 1)) / SAMPLES for s in SYSTEMS]
    system = rows["system"]
    assert system.n == len(SYSTEMS)
    assert (system.pearson, system.pearson_p) == pytest.approx(tuple(stats.pearsonr(sx, sy)))
    assert (system.kendall, system.kendall_p) == pytest.approx(tuple(stats.kendalltau(sx, sy)))


def test_zscores_per_rater_as_the_webnlg_analysis(session, tmp_path: Path) -> None:
    store, _made = session
    import_webnlg_judgments(store, [write_release(tmp_path / "release")])
    raw = human_values(store)["webnlg:fluency"]
    z = human_values(store, zscore=True)["webnlg:fluency"]
    assert set(raw) == set(z) and raw != z
    assert all(-5 < v < 5 for v in z.values())


def test_the_sessions_own_annotations_correlate_too(session) -> None:
    store, made = session
    ada = add_annotator(store, "ada")
    rng = random.Random(1)
    for vid in list(made.values())[:12]:
        save_rating(
            store, ada.id, vid, Rating(fluency=rng.randint(0, 5), adequacy=rng.choice((0, 1, 2)))
        )
    result = correlate(store, CorrelationRequest(levels=("text",), metrics=("bleu:gold",)))
    assert {r.human for r in result.rows} == {"fluency", "adequacy"}
    assert all(r.n == 12 for r in result.rows)


def test_too_few_pairs_and_constant_sides_give_a_note_not_a_number(session) -> None:
    store, made = session
    ada = add_annotator(store, "ada")
    for vid in list(made.values())[:2]:
        save_rating(store, ada.id, vid, Rating(fluency=3))
    row = correlate(
        store, CorrelationRequest(levels=("text",), metrics=("bleu:gold",), humans=("fluency",))
    ).rows[0]
    assert (row.n, row.pearson, row.note) == (2, None, "fewer than 3 pairs")


def test_positions_are_used_when_units_have_no_webnlg_ids(tmp_path: Path) -> None:
    made = build(tmp_path / "p.taillens", webnlg_ids=False)
    with SessionStore.open(tmp_path / "p.taillens") as store:
        result = import_webnlg_judgments(store, [write_release(tmp_path / "r", ("bt5",))])
        assert result.files[0].rule == "N-th text of the run in unit order"
        values = human_values(store)["webnlg:relevance"]
        assert set(values) == {made[("bt5", n)] for n in range(1, SAMPLES + 1)}


def test_ids_that_match_no_text_store_nothing(session, tmp_path: Path) -> None:
    store, _made = session
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "human_eval_id_bt5.json").write_text(
        json.dumps({"901": ratings_for("bt5", 1), "902": ratings_for("bt5", 2)}), "utf-8"
    )
    before = table_digest(store)
    with pytest.raises(
        JudgmentError,
        match=r"^bt5 \(human_eval_id_bt5.json\): no sample id matches a "
        r"text of run \d+ \(bt5\)",
    ):
        import_webnlg_judgments(store, [folder])
    assert table_digest(store) == before
    # One good file and one with a stray id: the whole import is refused.
    write_release(folder, ("NILC",))
    (folder / "human_eval_id_bt5.json").write_text(
        json.dumps({"1": ratings_for("bt5", 1), "99": ratings_for("bt5", 2)}), "utf-8"
    )
    with pytest.raises(JudgmentError, match="1 of 2 sample ids match no text.*e.g. 99"):
        import_webnlg_judgments(store, [folder])
    assert table_digest(store) == before


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]", "human_eval_id_bt5.json, record 0: expected an object with submission_id"),
        ("{}", "bt5 (human_eval_id_bt5.json): expected a JSON object from sample ids"),
        ('{"3": ', "not JSON (line 1"),
        (json.dumps({"Id3": {}}), "entry 'Id3': a sample id is a test-set number"),
        (
            json.dumps({"3": {"W1": {"Correctness": 90}}}),
            "entry '3', rater 'W1': no DataCoverage, Fluency, Relevance, TextStructure",
        ),
        (
            json.dumps({"3": {"W1": dict.fromkeys(CRITERIA, 101)}}),
            "Correctness is 101, not a number from 0 to 100",
        ),
        (json.dumps({"3": {"hits": []}}), '"hits" is not an object'),
    ],
)
def test_malformed_files_name_file_entry_and_reason(
    session, tmp_path: Path, content: str, message: str
) -> None:
    store, _made = session
    path = tmp_path / "human_eval_id_bt5.json"
    path.write_text(content, "utf-8")
    before = table_digest(store)
    with pytest.raises(JudgmentError, match=re.escape(message)):
        import_webnlg_judgments(store, [path])
    assert table_digest(store) == before


def test_a_system_with_no_run_is_named(session, tmp_path: Path) -> None:
    store, _made = session
    write_release(tmp_path / "r", ("Huawei",))
    with pytest.raises(JudgmentError, match="no run named 'Huawei'.*--run"):
        import_webnlg_judgments(store, [tmp_path / "r"])
    with pytest.raises(
        JudgmentError, match=r"^Huawei \(human_eval_id_Huawei.json\): no run '99' \(id or name\)"
    ):
        import_webnlg_judgments(store, [tmp_path / "r" / "human_eval_id_Huawei.json"], runs=["99"])


def test_no_judgments_is_a_clear_message(session) -> None:
    store, _made = session
    from core.errors import UserFacingError

    with pytest.raises(UserFacingError, match="holds no human judgments"):
        correlate(store)
