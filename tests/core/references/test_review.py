"""Writing gold references, sampling translations below Good, F.2 reviews promoted to
gold, the Table 1 figures and the agreement per pair."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from sqlalchemy import select

from core.annotation.types import AnnotationError
from core.jobs import CancelToken, JobSucceeded, run_job
from core.references.qe import qe_job
from core.references.review import (
    ReviewError,
    review_report,
    sample_for_review,
    save_review,
    units_to_write,
    write_reference,
)
from core.references.translate import LocalTranslator, TranslateParams, translate_job
from core.store import SessionStore
from core.store.models import Annotation, UnitReference
from tests.fixtures.gold_reference_session import seed_session
from tests.fixtures.stub_comet_scorer import StubCometScorer

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models

PARAMS = TranslateParams(num_beams=1, max_new_tokens=4, batch=8, device="cpu")
TEXTS = tuple(f"Sentence number {n} about Paris." for n in range(8))


def _run(job):
    outcome = run_job(job, CancelToken(), lambda progress: None)
    assert isinstance(outcome, JobSucceeded), outcome
    return outcome.result


@pytest.fixture
def scored(tmp_path: Path, tiny_marian: Path) -> Path:
    """8 units translated en→it and en→es; QE scores: below Good for the first 5 of each."""
    session = seed_session(tmp_path / "s.taillens", TEXTS)
    with SessionStore.open(session) as store:
        _run(translate_job(store, LocalTranslator(tiny_marian, PARAMS), "en", ["it", "es"], PARAMS))
        scores: Sequence[float] = [0.3, 0.5, 0.7, 0.75, 0.1, 0.9, 0.95, 0.99] * 2
        _run(qe_job(store, StubCometScorer(scores)))
    return session


def test_units_without_a_reference_in_the_language_come_first(tmp_path: Path) -> None:
    session = seed_session(tmp_path / "s.taillens", ("a", "b", "c"), it_gold=1)
    with SessionStore.open(session) as store:
        order = units_to_write(store, "it")
        assert [u.uid for u in order] == ["u0", "u2", "u1"]
        assert order[0].triples == (("Paris", "country", "France"),)
        ref = write_reference(store, 1, order[0].unit_id, "it", "  Parigi è in Francia. ")
        with store.snapshot() as db:
            row = db.get_one(UnitReference, ref)
            assert (row.quality, row.created_by, row.text) == ("gold", 1, "Parigi è in Francia.")
            assert row.provenance.startswith("written by ann at ")
        assert [u.uid for u in units_to_write(store, "it")] == ["u2", "u0", "u1"]
        with pytest.raises(ReviewError, match="empty text"):
            write_reference(store, 1, order[0].unit_id, "it", "   ")


def test_sample_takes_n_per_pair_below_good_reproducibly(scored: Path) -> None:
    with SessionStore.open(scored) as store:
        sample = sample_for_review(store, 3, seed=7)
        assert sample.per_pair == {"en→es": 3, "en→it": 3}
        assert sample.eligible == {"en→es": 5, "en→it": 5}
        assert all(item.band in ("weak", "moderate") for item in sample.items)
        assert sample_for_review(store, 3, seed=7).items == sample.items
        assert len(sample_for_review(store, 50).items) == 10  # fewer than N: all of them
        assert sample.note is None


def test_without_bands_the_sample_is_from_all_translations_and_says_so(
    tmp_path: Path, tiny_marian: Path
) -> None:
    session = seed_session(tmp_path / "s.taillens", TEXTS[:4])
    with SessionStore.open(session) as store:
        _run(translate_job(store, LocalTranslator(tiny_marian, PARAMS), "en", ["it"], PARAMS))
        sample = sample_for_review(store, 2)
        assert sample.per_pair == {"en→it": 2} and "has a quality band" in (sample.note or "")


def test_reviews_promote_corrections_and_give_table_1_and_agreement(scored: Path) -> None:
    with SessionStore.open(scored) as store:
        items = [i for i in sample_for_review(store, 5).items if i.pair == "en→it"]
        assert len(items) == 5
        ann_flags = [
            {"accuracy": ["mistranslation"], "fluency": []},
            {"accuracy": [], "fluency": []},
            {"accuracy": ["omission", "addition"], "fluency": ["grammar"]},
            {"accuracy": [], "fluency": ["style"]},
            {"accuracy": ["untranslated"], "fluency": ["spelling", "typography"]},
        ]
        bob_flags = [
            {"accuracy": ["mistranslation"], "fluency": ["style"]},
            {"accuracy": [], "fluency": []},
            {"accuracy": ["omission"], "fluency": ["grammar"]},
            {"accuracy": [], "fluency": []},
            {"accuracy": ["untranslated", "terminology"], "fluency": ["spelling"]},
        ]
        for item, flags in zip(items, ann_flags, strict=True):
            corrected = "Parigi è la capitale." if item is items[0] else None
            annotation, gold = save_review(store, 1, item.reference_id, flags, corrected)
            assert (gold is not None) == (corrected is not None)
        for item, flags in zip(items, bob_flags, strict=True):
            save_review(store, 2, item.reference_id, flags)
        with store.snapshot() as db:
            clean = db.scalar(
                select(Annotation.error_taxonomy).where(
                    Annotation.annotator_id == 1, Annotation.reference_id == items[1].reference_id
                )
            )
            assert clean == {"accuracy": [], "fluency": []}  # a review with no error is kept
            gold = db.scalars(
                select(UnitReference).where(
                    UnitReference.quality == "gold", UnitReference.lang == "it"
                )
            ).all()
            assert [g.text for g in gold] == ["Parigi è la capitale."]
            assert gold[0].created_by == 1 and gold[0].unit_id == items[0].unit_id
        report = review_report(store)
        (it,) = report.pairs
        assert (it.pair, it.reviews, it.items, it.corrected) == ("en→it", 10, 5, 1)
        # Accuracy = 5 - accuracy flags: ann 4,5,3,5,4; bob 4,5,4,5,3 → mean 4.2.
        assert it.accuracy_mean == pytest.approx(4.2)
        assert it.fluency_mean == pytest.approx((5 + 5 + 4 + 4 + 3 + 4 + 5 + 4 + 5 + 4) / 10)
        assert it.flags["accuracy.mistranslation"] == 2
        assert it.paired_items == 5
        assert it.spearman is not None and it.pearson is not None and it.alpha is not None
        assert -1 <= it.spearman <= 1 and "5 minus the flags" in report.formula


def test_bad_reviews_are_refused(scored: Path) -> None:
    with SessionStore.open(scored) as store:
        ref = sample_for_review(store, 1).items[0].reference_id
        with pytest.raises(AnnotationError, match="Unknown accuracy error"):
            save_review(store, 1, ref, {"accuracy": ["grammar"]})
        with pytest.raises(ReviewError, match="Unknown error family"):
            save_review(store, 1, ref, {"style": ["x"]})
        with pytest.raises(ReviewError, match="at least one"):
            sample_for_review(store, 0)
