"""The Scores panel's paged queries (core.metrics.score_pages) on real sessions.

Every figure is checked against the Python path it replaces: ``sentence_score_table``
(every text, read whole) filtered, sorted and summarised in Python (``summarise_rows``).
The "mixed" session is built through core.store with what a sort and a filter must get
right: ties, missing values, an empty output, a newline, TailNLG's top_head, sub-tiers,
two candidates, a run named only by its model id, and LIKE's wildcard characters.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from core.errors import UserFacingError
from core.groups import head_tier
from core.jobs import run_job
from core.metrics.score_pages import (
    KEY_COLUMNS,
    ScoresFilter,
    ScoreSort,
    column_order,
    read_overview,
    read_page,
    read_row,
    read_scores,
    read_summary,
)
from core.metrics.scoring import (
    ScoringRequest,
    SentenceScoreRow,
    score_job,
    sentence_score_table,
    summarise_rows,
)
from core.store import SessionStore
from core.store.models import DataUnit, ModelRun, Score, Verbalisation
from tests.fixtures.scoring_session import build_session

TIERS = [("head", None), ("top_head", None), ("torso", None), ("long_tail", "long_tail_it")]
TEXTS = ["A text.", "", "b 100% sure", "a_b", "Two\nlines", None, "A text."]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    """42 texts: 3 runs × 7 units × (en, it) (run 3: two candidates in en, none in it),
    esa with ties and gaps, bleu gold/silver on some, a NULL value stored."""
    path = tmp_path_factory.mktemp("pages") / "mixed.taillens"
    rng = random.Random(11)
    with SessionStore.create(path) as store, store.unit_of_work() as db:
        units = []
        for i in range(7):
            tier, sub = TIERS[i % len(TIERS)]
            unit = DataUnit(uid=f"u{i % 4}-{i}", size=1, origin="test", tier=tier, sub_tier=sub)
            db.add(unit)
            units.append(unit)
        runs = [
            ModelRun(kind="external", model_id="m/one", system_name="zeta", status="finished"),
            ModelRun(kind="external", model_id="m/two", system_name="", status="finished"),
            ModelRun(kind="external", model_id="m/three", system_name="alpha", status="finished"),
        ]
        db.add_all(runs)
        db.flush()
        texts = []
        for r, run in enumerate(runs):
            for u, unit in enumerate(units):
                for lang, candidates in (("en", 2 if r == 2 else 1), ("it", 0 if r == 2 else 1)):
                    for c in range(candidates):
                        text = TEXTS[(u + r + c) % len(TEXTS)]
                        texts.append(
                            Verbalisation(
                                run_id=run.id,
                                unit_id=unit.id,
                                lang=lang,
                                candidate_index=c,
                                raw_output=text or "",
                                text=text,
                            )
                        )
        rng.shuffle(texts)  # ids not in the session's order
        db.add_all(texts)
        db.flush()
        for v in texts:
            if rng.random() < 0.8:  # ties: four values only
                value = rng.choice([0.0, 0.25, 0.5, 1.0])
                db.add(_score("esa", v, value))
            if rng.random() < 0.5:
                db.add(_score("bleu", v, rng.choice([10.0, 20.0]), "gold"))
            if v.lang == "en" and rng.random() < 0.3:  # English only
                db.add(_score("bleu", v, rng.choice([5.0, None]), "silver"))
        db.add(Score(metric="bleu", value=33.0, level="corpus", run_id=runs[0].id, lang="en"))
    return path


def _score(metric: str, v: Verbalisation, value: float | None, quality: str | None = None):
    return Score(
        metric=metric,
        value=value,
        level="sentence",
        verbalisation_id=v.id,
        run_id=v.run_id,
        lang=v.lang,
        details={"quality": quality} if quality else {},
    )


def _cell(row: SentenceScoreRow, column: str):
    """What the table shows (and sorts by) in ``column``: app/scores.py's cells."""
    text = (row.text or "").replace("\n", " ")
    tier = row.sub_tier if row.sub_tier and row.sub_tier != row.tier else row.tier
    cells = {
        "unit": row.unit_uid,
        "model": row.model,
        "lang": row.lang,
        "#": row.candidate_index,
        "tier": tier or "",
        "text": text if text else "(no parsed text)",
    }
    return cells[column] if column in cells else row.scores.get(column)


def _reference(rows: list[SentenceScoreRow], sort: ScoreSort) -> list[int]:
    """The sort as specified: by the value shown, missing last in both directions, ties
    by the text's id."""
    present = [r for r in rows if _cell(r, sort.column) is not None]
    missing = [r for r in rows if _cell(r, sort.column) is None]
    present.sort(key=lambda r: r.verbalisation_id)
    present.sort(key=lambda r: _cell(r, sort.column), reverse=sort.descending)  # stable
    missing.sort(key=lambda r: r.verbalisation_id)
    return [r.verbalisation_id for r in present + missing]


def _passes(row: SentenceScoreRow, flt: ScoresFilter) -> bool:
    return (
        (flt.run_id is None or row.run_id == flt.run_id)
        and (flt.lang is None or row.lang == flt.lang)
        and (flt.tier is None or head_tier(row.tier) == flt.tier)
        and (
            not flt.search
            or flt.search.lower() in (row.text or "").lower()
            or flt.search.lower() in row.unit_uid.lower()
        )
    )


def _columns(rows: list[SentenceScoreRow]) -> list[str]:
    return sorted({c for r in rows for c in r.scores}, key=column_order)


def test_unsorted_first_page_is_the_whole_table_in_the_sessions_order(mixed: Path) -> None:
    with SessionStore.open(mixed) as store:
        every = sentence_score_table(store)
        assert len(every) == 42
        page = read_scores(store, limit=100)
        assert page.rows == every  # same texts, cells and scores, in the same order
        assert page.matching == 42 and page.sorted_by is None
        assert page.columns == _columns(every) == ["bleu:gold", "bleu:silver", "esa"]
        assert page.scored == sum(any(v is not None for v in r.scores.values()) for r in every)
        for column in page.columns:
            values = [v for r in every if (v := r.scores.get(column)) is not None]
            assert page.ranges[column] == (min(values), max(values))
        assert read_row(store, every[5].verbalisation_id) == every[5]
        assert read_row(store, 10_000) is None


@pytest.mark.parametrize("column", [*KEY_COLUMNS, "esa", "bleu:gold", "bleu:silver"])
@pytest.mark.parametrize("descending", [False, True])
def test_sorted_pages_follow_the_sort_with_missing_last_and_ties_by_id(
    mixed: Path, column: str, descending: bool
) -> None:
    sort = ScoreSort(column, descending)
    with SessionStore.open(mixed) as store:
        expected = _reference(sentence_score_table(store), sort)
        # Page by page (7 a page: the last one is short), then past the end.
        got: list[int] = []
        for offset in range(0, 49, 7):
            page = read_page(store, sort=sort, offset=offset, limit=7)
            assert len(page) == min(7, max(0, 42 - offset))
            got += [r.verbalisation_id for r in page]
        assert got == expected
        assert read_page(store, sort=sort, offset=42, limit=7) == []
        first = read_scores(store, sort=sort, limit=7)
        assert [r.verbalisation_id for r in first.rows] == expected[:7]
        assert first.sorted_by == sort


def test_a_sort_by_a_column_the_texts_lack_keeps_the_sessions_order(mixed: Path) -> None:
    with SessionStore.open(mixed) as store:
        every = [r.verbalisation_id for r in sentence_score_table(store)]
        page = read_scores(store, sort=ScoreSort("rougeL:gold", True), limit=50)
        assert page.sorted_by is None and [r.verbalisation_id for r in page.rows] == every
        # Italian texts have no silver BLEU: sorted by it, they keep the session's order.
        italian = ScoresFilter(lang="it")
        page = read_scores(store, italian, ScoreSort("bleu:silver", True), limit=50)
        assert "bleu:silver" not in page.columns and page.sorted_by is None
        assert [r.verbalisation_id for r in page.rows] == [
            r.verbalisation_id for r in sentence_score_table(store, langs=["it"])
        ]
        assert [
            r.verbalisation_id
            for r in read_page(store, italian, ScoreSort("bleu:silver", True), limit=50)
        ] == [r.verbalisation_id for r in page.rows]


@pytest.mark.parametrize(
    "flt",
    [
        ScoresFilter(lang="it"),
        ScoresFilter(tier="head"),  # top_head counts as head
        ScoresFilter(tier="long_tail"),
        ScoresFilter(run_id=2, lang="en"),
        ScoresFilter(run_id=3, tier="torso"),
        ScoresFilter(search="TEXT"),
        ScoresFilter(search="100%"),  # % is a character, not LIKE's wildcard
        ScoresFilter(search="a_b"),  # and so is _
        ScoresFilter(search="u2-"),  # the unit's id
        ScoresFilter(lang="fr"),  # nothing
    ],
)
def test_filters_match_the_python_filter_in_rows_figures_and_summary(
    mixed: Path, flt: ScoresFilter
) -> None:
    with SessionStore.open(mixed) as store:
        every = sentence_score_table(store)
        # Run ids as the session numbered them (1, 2, 3 in creation order).
        wanted = [r for r in every if _passes(r, flt)]
        sort = ScoreSort("esa", descending=True)
        page = read_scores(store, flt, sort, limit=5)
        assert page.matching == len(wanted)
        assert [r.verbalisation_id for r in page.rows] == _reference(wanted, sort)[:5]
        assert page.columns == _columns(wanted)
        assert page.scored == sum(any(v is not None for v in r.scores.values()) for r in wanted)
        rest = read_page(store, flt, sort, offset=5, limit=100)
        assert [r.verbalisation_id for r in page.rows + rest] == _reference(wanted, sort)
        _same_summary(read_summary(store, flt), summarise_rows(wanted))
        _same_summary(page.summary, summarise_rows(wanted))
        for column in page.columns:  # the colour scale: every matching text's values
            values = [v for r in wanted if (v := r.scores.get(column)) is not None]
            assert page.ranges.get(column) == ((min(values), max(values)) if values else None)


def _same_summary(got, expected) -> None:
    assert [(g.metric, g.quality, g.group, g.n) for g in got] == [
        (g.metric, g.quality, g.group, g.n) for g in expected
    ]
    for a, b in zip(got, expected, strict=True):
        assert a.mean == pytest.approx(b.mean) and a.median == pytest.approx(b.median)


def test_summary_matches_summarise_rows_for_every_grouping(mixed: Path) -> None:
    with SessionStore.open(mixed) as store:
        every = sentence_score_table(store)
        for by in [("model", "lang", "tier"), ("tier",), ("sub_tier", "run_id"), ()]:
            _same_summary(read_summary(store, by=by), summarise_rows(every, by=by))
        with pytest.raises(UserFacingError, match="cannot group by"):
            read_summary(store, by=("colour",))


def test_overview_lists_runs_languages_and_head_tiers(mixed: Path) -> None:
    with SessionStore.open(mixed) as store:
        every = sentence_score_table(store)
        overview = read_overview(store)
    assert overview.total == 42
    assert overview.runs == [(1, "zeta", 14), (2, "m/two", 14), (3, "alpha", 14)]
    assert overview.langs == ["en", "it"]
    assert overview.tiers == sorted({head_tier(r.tier) for r in every if r.tier})
    assert "top_head" not in overview.tiers and "head" in overview.tiers


def test_scored_session_pages_agree_with_the_table(tmp_path: Path) -> None:
    """The scoring job's own rows (bleu per quality, esa, hallucination)."""
    path = tmp_path / "s.taillens"
    build_session(path)
    with SessionStore.open(path) as store:
        outcome = run_job(score_job(store, ScoringRequest(metrics=("esa", "bleu"))))
        assert outcome.__class__.__name__ == "JobSucceeded", outcome
        every = sentence_score_table(store)
        page = read_scores(store, ScoresFilter(lang="en"), ScoreSort("bleu:gold", True))
        english = [r for r in every if r.lang == "en"]
        assert [r.verbalisation_id for r in page.rows] == _reference(
            english, ScoreSort("bleu:gold", True)
        )
        assert page.rows[0].scores == next(
            r.scores for r in every if r.verbalisation_id == page.rows[0].verbalisation_id
        )
        _same_summary(read_summary(store), summarise_rows(every))


def test_empty_session_has_no_rows_and_no_figures(tmp_path: Path) -> None:
    path = tmp_path / "empty.taillens"
    SessionStore.create(path).close()
    with SessionStore.open(path) as store:
        page = read_scores(store, ScoresFilter(search="x"), ScoreSort("esa"))
        assert page.rows == [] and page.matching == 0 and page.scored == 0
        assert page.columns == [] and page.ranges == {} and page.sorted_by is None
        assert read_scores(store, sort=ScoreSort("unit")).sorted_by == ScoreSort("unit")
        assert read_page(store, offset=200) == []
        assert read_summary(store) == []
        overview = read_overview(store)
        assert (overview.runs, overview.langs, overview.tiers, overview.total) == ([], [], [], 0)
