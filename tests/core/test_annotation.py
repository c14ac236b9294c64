"""Annotation: annotators, validation, saving and undo, queues, golden items, promotion,
and aggregates/agreement against hand-worked cases and the krippendorff package."""

from __future__ import annotations

from pathlib import Path

import krippendorff
import numpy as np
import pytest
from sqlalchemy import func, select

from core.annotation import (
    NO,
    NOT_SURE,
    YES,
    AnnotationError,
    ItemRef,
    QueueFilter,
    Rating,
    add_annotator,
    aggregate_annotations,
    build_queue,
    find_annotator,
    golden_accuracy,
    krippendorff_alpha,
    list_annotators,
    normalise_blame,
    promote_correction,
    rating_of,
    reliability_matrix,
    save_rating,
    set_golden_answer,
    undo_last_rating,
    validate_rating,
)
from core.annotation import aggregates as wdv_aggregates
from core.formats.wdv.importer import import_wdv
from core.store import SessionStore
from core.store.models import Annotation, UnitReference
from tests.fixtures import report_session as fixture_module
from tests.fixtures.report_session import CORRECTION, RATINGS, ReportSession
from tests.fixtures.wdv_records import wdv_records, write_wdv

report_session = fixture_module.report_session  # registers the fixture here

nan = np.nan


@pytest.fixture
def store(report_session: ReportSession):
    with SessionStore.open(report_session.path) as opened:
        yield opened


def _v(session: ReportSession, uid: str, model: str = "model-a", lang: str = "en") -> ItemRef:
    return ItemRef("verbalisation", session.verbalisations[(model, uid, lang)])


# -- annotators and validation --------------------------------------------------------------


def test_annotators_are_added_listed_and_refused_when_bad(store: SessionStore) -> None:
    eve = add_annotator(store, "  Eve   Example ")
    assert eve.name == "Eve Example" and not eve.is_anonymous
    names = {a.name: a for a in list_annotators(store)}
    assert names["ana"].ratings == 5 and names["dora"].golden_answers == 1
    assert find_annotator(store, "Eve Example").id == eve.id
    with pytest.raises(AnnotationError, match="already an annotator"):
        add_annotator(store, "ana")
    with pytest.raises(AnnotationError, match="needs a name"):
        add_annotator(store, "   ")
    with pytest.raises(AnnotationError, match="at most 100"):
        add_annotator(store, "x" * 101)
    with pytest.raises(AnnotationError, match="no annotator"):
        find_annotator(store, "nobody")


@pytest.mark.parametrize(
    ("rating", "message"),
    [
        (Rating(fluency=6), "Fluency must be"),
        (Rating(fluency=-1), "Fluency must be"),
        (Rating(fluency=2.5), "Fluency must be"),  # type: ignore[arg-type]
        (Rating(fluency=True), "Fluency must be"),
        (Rating(adequacy=3), "Adequacy must be"),
        (Rating(adequacy=YES, blame="object"), "only recorded when adequacy is No"),
        (Rating(adequacy=NO, blame="verb"), "Unknown blame 'verb'"),
        (Rating(adequacy=NO, blame="other"), "needs a few words"),
        (Rating(adequacy=NO, blame="object", blame_other="why"), "only kept with blame 'other'"),
        (Rating(fluency=3, checks={"pretty": True}), "Unknown check"),
        (Rating(fluency=3, checks={"fluent_natural": "yes"}), "true or false"),  # type: ignore
        (Rating(error_taxonomy={"style": ["x"]}), "Unknown error family"),
        (Rating(error_taxonomy={"accuracy": ["grammar"]}), "Unknown accuracy error"),
        (Rating(), "Nothing to save"),
        (Rating(corrected_text="   "), "Nothing to save"),
    ],
)
def test_bad_ratings_are_refused_with_a_reason(rating: Rating, message: str) -> None:
    with pytest.raises(AnnotationError, match=message):
        validate_rating(rating)


def test_valid_rating_is_normalised() -> None:
    values = validate_rating(
        Rating(
            fluency=4,
            adequacy=NOT_SURE,
            blame=["object", "other", "subject"],
            blame_other=" odd date ",
            checks={"no_spelling_grammar_errors": False, "fluent_natural": True},
            error_taxonomy={"fluency": ["spelling", "grammar"], "accuracy": []},
            corrected_text=" Fixed. ",
        )
    )
    assert values == {
        "fluency": 4,
        "adequacy": 2,
        "blame": "subject+object+other",
        "blame_other": "odd date",
        "checks": {"fluent_natural": True, "no_spelling_grammar_errors": False},
        "error_taxonomy": {"fluency": ["grammar", "spelling"]},
        "corrected_text": "Fixed.",
    }
    assert normalise_blame("combination") == "combination"
    assert normalise_blame("object+text") == "text+object"


# -- saving, undo, promotion ------------------------------------------------------------------


def test_save_replaces_and_undo_restores(
    store: SessionStore, report_session: ReportSession
) -> None:
    ana = report_session.annotators["ana"]
    item = _v(report_session, "u1")
    saved = save_rating(store, ana, item, Rating(fluency=2, adequacy=NO, blame="predicate"))
    assert saved.previous is not None and saved.previous["fluency"] == 5
    stored = rating_of(store, ana, item)
    assert (stored.fluency, stored.adequacy, stored.blame) == (2, NO, "predicate")
    with store.unit_of_work() as db:  # one rating per annotator and item
        assert (
            db.scalar(
                select(func.count())
                .select_from(Annotation)
                .where(Annotation.annotator_id == ana, Annotation.verbalisation_id == item.id)
            )
            == 1
        )

    queue = build_queue(store, ana, QueueFilter(unrated_only=False))
    index = queue.index_of(item)
    queue.save(index, Rating(fluency=1))
    assert queue.undo() == item and rating_of(store, ana, item).fluency == 2
    from core.annotation import undo_rating

    assert undo_rating(store, saved)
    assert rating_of(store, ana, item).fluency == 5  # back to the fixture's rating

    fresh = _v(report_session, "u8", "model-b", "it")
    new = save_rating(store, ana, fresh, Rating(fluency=3))
    assert new.previous is None
    assert undo_last_rating(store, ana) == fresh and rating_of(store, ana, fresh) is None
    with pytest.raises(AnnotationError, match="no verbalisation 999"):
        save_rating(store, ana, ItemRef("verbalisation", 999), Rating(fluency=3))
    with pytest.raises(AnnotationError, match="no annotator 999"):
        save_rating(store, 999, fresh, Rating(fluency=3))


def test_correction_becomes_a_gold_reference_with_provenance(
    store: SessionStore, report_session: ReportSession
) -> None:
    annotation = report_session.annotations[("u5", "ana")]
    reference_id = promote_correction(store, annotation)
    assert promote_correction(store, annotation) == reference_id  # not twice
    with store.unit_of_work() as db:
        ref = db.get(UnitReference, reference_id)
        assert (ref.text, ref.quality, ref.lang) == (CORRECTION, "gold", "en")
        assert ref.unit_id == report_session.units["u5"]
        assert ref.created_by == report_session.annotators["ana"]
        assert ref.source_verbalisation_id == _v(report_session, "u5").id
        assert "correction by ana" in ref.provenance and ref.created_at is not None
    with pytest.raises(AnnotationError, match="no corrected text"):
        promote_correction(store, report_session.annotations[("u1", "ana")])
    queue = build_queue(
        store,
        report_session.annotators["ben"],
        QueueFilter(unrated_only=False, langs=("en",), models=("model-a",)),
    )
    with pytest.raises(AnnotationError, match="Save a corrected text"):
        queue.promote(queue.index_of(_v(report_session, "u1")))


# -- queues ----------------------------------------------------------------------------------------


def test_queue_filters_and_shows_triples_in_the_annotation_language(
    store: SessionStore, report_session: ReportSession
) -> None:
    eve = add_annotator(store, "eve").id
    everything = build_queue(store, eve)
    assert len(everything) == 31  # 32 texts less the golden item
    italian = build_queue(
        store, eve, QueueFilter(models=("model-b",), langs=("it",), tiers=("long_tail_en",))
    )
    assert [i.unit_uid for i in italian] == ["u5", "u7"]
    first = italian[0]
    assert first.triples == (("Entità 5", "paese", "Italia"),) and first.triples_lang == "it"
    assert first.text == "u5 it text by model-b." and first.model == "model-b"
    assert (first.tier, first.sub_tier, first.category) == ("long_tail", "long_tail_en", "City")
    people = build_queue(
        store,
        eve,
        QueueFilter(
            categories=("Person",), tiers=("head",), run_ids=(report_session.runs["model-a"],)
        ),
    )
    # u3's English text is golden, so only its Italian one is queued
    assert sorted((i.unit_uid, i.lang) for i in people) == [
        ("u3", "it"),
        ("u4", "en"),
        ("u4", "it"),
    ]
    refs = build_queue(
        store, eve, QueueFilter(target="references", qualities=("silver",), langs=("it",))
    )
    assert len(refs) == 8 and all(i.quality == "silver" and i.ref.kind == "reference" for i in refs)
    with pytest.raises(AnnotationError, match="golden item rate"):
        build_queue(store, eve, QueueFilter(golden_rate=0.9))


def test_queue_skips_rated_items_puts_disagreements_first_and_tracks_progress(
    store: SessionStore, report_session: ReportSession
) -> None:
    ana = report_session.annotators["ana"]
    mine = build_queue(store, ana, QueueFilter(models=("model-a",), langs=("en",)))
    assert {i.unit_uid for i in mine} == {"u4", "u7", "u8"}  # rated u1-u3, u5, u6
    # Progress counts the filter's texts, those left out as rated already included.
    assert (mine.progress().done, mine.progress().total) == (4, 7)
    eve = add_annotator(store, "eve").id
    queue = build_queue(
        store, eve, QueueFilter(models=("model-a",), langs=("en",), disagreements_first=True)
    )
    # u5: 1 − 2/3 (adequacy 1, 1, 2) + range 2/5 = 0.733; u6: 0.5 + 1/5; u1: 1/5.
    assert [i.unit_uid for i in queue] == ["u5", "u6", "u1", "u2", "u4", "u7", "u8"]
    assert queue[0].disagreement == pytest.approx(1 / 3 + 0.4)
    assert queue.progress().done == 0 and queue.progress().total == 7
    queue.save(0, Rating(fluency=4, adequacy=YES))
    queue.save(1, Rating(adequacy=NO, blame=["subject", "object"]))
    progress = queue.progress()
    assert (progress.done, progress.total) == (2, 7) and progress.fraction == pytest.approx(2 / 7)
    assert queue.next_index() == 2 and queue.next_index(after=6) == 2
    assert queue.undo() == queue[1].ref and queue.progress().done == 1


def test_golden_items_are_mixed_in_and_annotators_are_scored(
    store: SessionStore, report_session: ReportSession
) -> None:
    eve = add_annotator(store, "eve").id
    queue = build_queue(
        store, eve, QueueFilter(models=("model-a",), langs=("en",), golden_rate=0.25, seed=3)
    )
    golden = [i for i in queue if i.is_golden]
    assert len(queue) == 8 and [i.unit_uid for i in golden] == ["u3"]
    assert (
        build_queue(
            store, eve, QueueFilter(models=("model-a",), langs=("en",), golden_rate=0.25, seed=3)
        ).items
        == queue.items
    )

    queue.save(queue.index_of(golden[0].ref), Rating(fluency=4, adequacy=YES))
    scores = {g.annotator: g for g in golden_accuracy(store)}
    assert (scores["ana"].adequacy_accuracy, scores["ana"].fluency_accuracy) == (1.0, 1.0)
    assert scores["ben"].adequacy_accuracy == 0.0 and scores["ben"].fluency_mae == 2.0
    assert scores["eve"].adequacy_accuracy == 1.0 and scores["eve"].fluency_within == 1
    assert "dora" not in scores  # the expert's answers are not checked against themselves
    # Nor is an ordinary rating the expert gives the same golden item.
    dora = report_session.annotators["dora"]
    save_rating(store, dora, golden[0].ref, Rating(fluency=0, adequacy=NO, blame=["text"]))
    assert "dora" not in {g.annotator for g in golden_accuracy(store)}

    set_golden_answer(
        store, report_session.annotators["dora"], _v(report_session, "u1"), fluency=5, adequacy=YES
    )
    assert len(build_queue(store, eve)) == 30  # u1 (model-a, en) is now golden
    with pytest.raises(AnnotationError, match="needs a known"):
        set_golden_answer(store, eve, _v(report_session, "u2"))


# -- aggregation and agreement -------------------------------------------------------------------


def test_alpha_of_hand_worked_cases() -> None:
    # Nominal, coders [0, 0, 1] and [0, 1, 1]: coincidences o00 = 2, o01 = o10 = 1,
    # o11 = 2; n = 6, n0 = n1 = 3; alpha = 1 − (n − 1)·2 / (2·n0·n1) = 1 − 10/18 = 4/9.
    assert krippendorff_alpha([[0, 0, 1], [0, 1, 1]], "nominal") == pytest.approx(4 / 9)
    # Interval, coders [1, 2, 3] and [1, 2, 4]: D_o = 2·1²/6; pooled values 1 1 2 2 3 4
    # give Σ_ordered (v_i − v_j)² = 2·(6·35 − 13²) = 82, D_e = 82/30; alpha = 36/41.
    assert krippendorff_alpha([[1, 2, 3], [1, 2, 4]], "interval") == pytest.approx(36 / 41)
    # Krippendorff (2011), four observers and twelve units: 0.743 nominal, 0.849 interval.
    data = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
    assert krippendorff_alpha(data, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(data, "interval") == pytest.approx(0.849, abs=5e-4)
    # Undefined: nothing pairable, or no variation.
    assert krippendorff_alpha([[1, nan], [nan, 2]], "interval") is None
    assert krippendorff_alpha([[3, 3], [3, 3]], "interval") is None


def test_aggregates_of_the_fixture_by_hand(store: SessionStore) -> None:
    summary = aggregate_annotations(store, by=("tier",), agreement=True)
    items = {i.unit_id: i for i in summary.items}
    assert len(items) == 5  # the golden answer is not a rating
    head, tail = summary.groups
    assert head.group == (("tier", "head"),) and tail.group == (("tier", "long_tail"),)
    # head items: u1 (5, 4, 5), u2 (4, 4), u3 (5, 3): means 14/3, 4, 4; Yes shares 1, 1, 0.5
    assert head.items == 3 and head.ratings == 7
    assert head.fluency_mean == pytest.approx((14 / 3 + 4 + 4) / 3)
    assert head.adequacy_yes == pytest.approx(2.5 / 3)
    assert head.pooled_fluency_mean == pytest.approx(30 / 7)
    # tail items: u5 (2, 3, 1; No, No, Not sure), u6 (3, 2; Yes, No → tie goes to No,
    # the more cautious answer, as WDV)
    assert tail.fluency_mean == pytest.approx((2 + 2.5) / 2)
    assert tail.fluency_median == pytest.approx((2 + 2.5) / 2)
    assert tail.pooled_fluency_mean == pytest.approx(11 / 5)
    assert tail.adequacy_yes == pytest.approx(0.25) and tail.pooled_adequacy_yes == 0.2
    assert tail.majority_yes == 0.0
    assert [i.adequacy_majority for i in summary.items if i.tier == "long_tail"] == [NO, NO]
    assert summary.overall.items == 5 and summary.overall.annotators == 3


def test_alpha_per_group_equals_the_package_on_the_fixture(store: SessionStore) -> None:
    summary = aggregate_annotations(store, by=("tier",), agreement=True)
    names = ("ana", "ben", "cleo")

    def matrix(units: list[str], column: int) -> np.ndarray:
        return np.array(
            [
                [next((r[column] for r in RATINGS[u] if r[0] == name), nan) for u in units]
                for name in names
            ],
            dtype=float,
        )

    everything = list(RATINGS)
    assert summary.overall.alpha_fluency == pytest.approx(
        krippendorff.alpha(matrix(everything, 1), level_of_measurement="interval")
    )
    assert summary.overall.alpha_adequacy == pytest.approx(
        krippendorff.alpha(matrix(everything, 2), level_of_measurement="nominal")
    )
    head = summary.groups[0]
    assert head.alpha_fluency == pytest.approx(
        krippendorff.alpha(matrix(["u1", "u2", "u3"], 1), level_of_measurement="interval")
    )
    by_category = aggregate_annotations(store, by=("category",), agreement=True)
    assert [g.label for g in by_category.groups] == ["category=City", "category=Person"]
    with pytest.raises(AnnotationError, match="Cannot group ratings by colour"):
        aggregate_annotations(store, by=("colour",))


def test_reliability_matrix_layout() -> None:
    matrix = reliability_matrix([(2, "b", 1), (1, "a", 3), (1, "b", None), (2, "a", 4)])
    np.testing.assert_array_equal(matrix, [[3, nan], [4, 1]])


def test_wdv_crowd_ratings_aggregate_and_give_an_alpha(tmp_path: Path) -> None:
    records = wdv_records()
    path = write_wdv(tmp_path / "wdv.json", records)
    with SessionStore.create(tmp_path / "w.taillens") as store:
        import_wdv(store, path)
        workers = [a for a in list_annotators(store) if a.is_anonymous]
        assert [a.name for a in workers] == [f"wdv-worker-{i}" for i in range(1, 6)]
        summary = aggregate_annotations(store, by=("model",), agreement=True)
    assert [g.label for g in summary.groups] == ["model=WDV"]
    for item, record in zip(summary.items, records, strict=True):
        expected = wdv_aggregates(
            record["annotations"]["fluency_scores"], record["annotations"]["adequacy_scores"]
        )
        assert item.fluency_mean == pytest.approx(expected["fluency_mean"])
        assert item.fluency_median == pytest.approx(expected["fluency_median"])
        assert item.adequacy_majority == expected["adequacy_majority_voted"]
        assert item.adequacy_yes == pytest.approx(expected["adequacy_percentage"])

    def matrix(name: str) -> np.ndarray:
        width = max(len(r["annotations"][name]) for r in records)
        return np.array(
            [
                [
                    r["annotations"][name][w] if w < len(r["annotations"][name]) else nan
                    for r in records
                ]
                for w in range(width)
            ],
            dtype=float,
        )

    assert summary.overall.alpha_fluency == pytest.approx(
        krippendorff.alpha(matrix("fluency_scores"), level_of_measurement="interval")
    )
    assert summary.overall.alpha_adequacy == pytest.approx(
        krippendorff.alpha(matrix("adequacy_scores"), level_of_measurement="nominal")
    )
    assert summary.overall.alpha_fluency is not None


# -- WDV's aggregation rules (METHODS §9) -------------------------------------------------


@pytest.mark.parametrize(
    ("votes", "majority", "percentage"),
    [
        ([YES, YES, YES, NO, NOT_SURE], YES, 0.6),  # a strict majority
        ([NO, NO, NO, YES, YES], NO, 0.4),
        ([YES, YES, NO, NO, NOT_SURE], NO, 0.4),  # a tie: the more cautious answer
        ([YES, YES, NOT_SURE, NOT_SURE, NO], NOT_SURE, 0.0),  # majority Not sure: 0
        ([NO, NO, NOT_SURE, NOT_SURE, YES], NOT_SURE, 0.0),
        ([NOT_SURE, NOT_SURE, NOT_SURE, YES, YES], NOT_SURE, 0.0),
        ([YES, NO, NOT_SURE], NOT_SURE, 0.0),  # three-way tie
        ([YES, NO], NO, 0.5),  # half is not a majority
        ([YES, YES, NO, NOT_SURE], YES, 0.5),  # no majority, one answer has the most votes
        ([YES], YES, 1.0),
        ([], None, None),
    ],
)
def test_adequacy_majority_and_percentage_as_wdv(
    votes: list[int], majority: int | None, percentage: float | None
) -> None:
    from core.annotation import adequacy_majority, adequacy_percentage

    assert adequacy_majority(votes) == majority
    assert adequacy_majority(list(reversed(votes))) == majority  # order never matters
    assert adequacy_percentage(votes) == (None if percentage is None else pytest.approx(percentage))
    agg = wdv_aggregates([3] * len(votes), votes)
    assert agg["adequacy_majority_voted"] == majority


def test_wdv_figures_are_recomputed_with_the_cautious_rules_and_weighted(tmp_path: Path) -> None:
    records = wdv_records()
    # A tie between Yes and No, and a Not sure majority, with different sampling weights.
    records[0]["annotations"]["adequacy_scores"] = [0, 0, 1, 1, 2]
    records[1]["annotations"]["adequacy_scores"] = [2, 2, 2, 0, 0]
    records[2]["annotations"]["adequacy_scores"] = [0, 0, 0]
    for record, weight in zip(records, (1.0, 3.0, 6.0), strict=True):
        record["sampling_weight"] = weight
    path = write_wdv(tmp_path / "wdv.json", records)
    with SessionStore.create(tmp_path / "w.taillens") as store:
        import_wdv(store, path)
        plain = aggregate_annotations(store, agreement=False)
        weighted = aggregate_annotations(store, agreement=False, weighted=True)
    assert [i.adequacy_majority for i in plain.items] == [NO, NOT_SURE, YES]
    assert [i.adequacy_yes for i in plain.items] == pytest.approx([0.4, 0.0, 1.0])
    assert [i.weight for i in plain.items] == [1.0, 3.0, 6.0]
    assert plain.overall.adequacy_yes == pytest.approx((0.4 + 0.0 + 1.0) / 3)
    assert plain.overall.majority_yes == pytest.approx(1 / 3)
    assert not plain.weighted and weighted.weighted and weighted.overall.weighted
    assert weighted.overall.adequacy_yes == pytest.approx((0.4 * 1 + 0.0 * 3 + 1.0 * 6) / 10)
    assert weighted.overall.majority_yes == pytest.approx(6 / 10)
    fluency = [
        sum(r["annotations"]["fluency_scores"]) / len(r["annotations"]["fluency_scores"])
        for r in records
    ]
    assert weighted.overall.fluency_mean == pytest.approx(
        (fluency[0] * 1 + fluency[1] * 3 + fluency[2] * 6) / 10
    )
    # Pooled figures pool ratings and stay unweighted.
    assert weighted.overall.pooled_adequacy_yes == plain.overall.pooled_adequacy_yes


def test_sampling_weight_reads_only_positive_numbers() -> None:
    from core.annotation import sampling_weight

    assert sampling_weight({"record": {"sampling_weight": 2.5}}) == 2.5
    for bad in (
        None,
        {},
        {"record": {"sampling_weight": "3"}},
        {"record": {"sampling_weight": True}},
        {"record": {"sampling_weight": 0}},
        {"record": {"sampling_weight": float("nan")}},
        {"record": []},
    ):
        assert sampling_weight(bad) is None


@pytest.mark.parametrize(
    ("claim", "votes", "majority", "percentage"),
    [
        # Votes and the figures WDV stored for them, from the WDV repository's
        # crowdsourced_campaign_sampled_df_verbalised_english.csv (adequacy, adequacy_maj,
        # adequacy_perc). Ties between Yes and No went to No.
        ("Minna Airport | elevation above sea level | 834 foot", [1, 1, 2, 0, 0], NO, 0.4),
        ("Michael J. Adams | conflict | Korean War", [1, 0, 2, 0, 1], NO, 0.4),
        ("Buzz Aldrin | conflict | Korean War", [1, 0, 1, 0, 1], NO, 0.4),
        ("Billy Bones | narrative role | supporting character", [1, 0, 0, 2, 0], YES, 0.6),
        (
            "Naval Outlying Field Coupeville | operator | United States Navy",
            [0, 0, 0, 2, 1],
            YES,
            0.6,
        ),
    ],
)
def test_items_as_wdv_stored_them(
    claim: str, votes: list[int], majority: int, percentage: float
) -> None:
    agg = wdv_aggregates([], votes)
    assert agg["adequacy_majority_voted"] == majority, claim
    assert agg["adequacy_percentage"] == pytest.approx(percentage), claim
