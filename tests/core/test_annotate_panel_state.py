"""core/annotation/panel_state.py: the Annotate panel's state without a window."""

from __future__ import annotations

from core.annotation.panel_state import ANY, AnnotateState
from core.annotation.types import (
    CHECKS,
    COMBINATION,
    NO,
    NOT_SURE,
    YES,
    QueueFilter,
    QueueOptions,
    Rating,
    StoredRating,
)

OPTIONS = QueueOptions(
    models=("m1", "m2"), langs=("en", "it"), categories=("City",), tiers=("head",)
)


def test_the_default_filter_is_a_blind_queue_of_unrated_model_outputs() -> None:
    assert AnnotateState().queue_filter() == QueueFilter(blind=True)


def test_the_filter_follows_every_choice() -> None:
    state = AnnotateState()
    state.offer(OPTIONS)
    state.update(
        target="references:silver",
        model="m2",
        lang="it",
        tier="head",
        unrated_only=False,
        disagreements_first=True,
        blind=False,
        golden_percent=20,
    )
    spec = state.queue_filter()
    assert (spec.target, spec.qualities) == ("references", ("silver",))
    assert spec.models == ()  # a model is chosen for model outputs only
    assert (spec.langs, spec.categories, spec.tiers) == (("it",), (), ("head",))
    assert not spec.unrated_only and spec.disagreements_first and not spec.blind
    assert spec.golden_rate == 0.2
    state.target = "verbalisations"
    assert state.queue_filter().models == ("m2",)


def test_a_choice_no_longer_offered_falls_back_to_any() -> None:
    state = AnnotateState()
    state.offer(OPTIONS)
    state.update(model="m1", lang="it")
    state.offer(QueueOptions(models=("m2",), langs=("it",)))
    assert (state.model, state.lang) == (ANY, "it")


def test_a_saved_filter_comes_back_with_only_what_is_offered() -> None:
    state = AnnotateState()
    state.offer(OPTIONS)
    saved = QueueFilter(
        target="references",
        qualities=("gold",),
        langs=("en",),
        categories=("Airport",),  # not offered any more
        golden_rate=0.1,
        blind=False,
    )
    state.set_filter(saved)
    assert state.target == "references:gold" and state.lang == "en"
    assert state.category == ANY and state.golden_percent == 10 and not state.blind
    assert state.queue_filter() == QueueFilter(
        target="references", qualities=("gold",), langs=("en",), golden_rate=0.1
    )


def test_who_annotates_and_whether_blame_applies() -> None:
    state = AnnotateState(annotators=((1, "ana"), (2, "ben")), annotator=2)
    assert state.annotator_name() == "ben"
    state.annotator = 7  # not among those offered
    assert state.annotator_name() is None
    state.adequacy = YES
    assert not state.blame_applies()
    state.adequacy = NO
    assert state.blame_applies()


def stored(**values) -> StoredRating:
    fields = dict(
        annotation_id=1,
        annotator_id=1,
        item=None,
        fluency=None,
        adequacy=None,
        blame=None,
        blame_other=None,
        checks=None,
        error_taxonomy=None,
        corrected_text=None,
        is_golden=False,
    )
    return StoredRating(**{**fields, **values})


def test_the_rating_is_made_of_the_forms_fields() -> None:
    state = AnnotateState(is_reference=True)
    state.update(fluency=2, adequacy=NOT_SURE, blame=("other", "object", "subject"))
    state.update(blame_other=" wrong year ", taxonomy=(("fluency", "spelling"),))
    rating = state.rating("fixed")
    assert rating.blame == ["subject", "object", "other"]  # in the parts' order
    assert rating.blame_other == "wrong year" and rating.corrected_text == "fixed"
    assert rating.checks is None  # untouched
    assert rating.error_taxonomy == {"fluency": ["spelling"]}
    state.checks = ("fluent_natural",)  # the annotator ticked one: recorded from now on
    assert state.checks_touched
    assert state.rating(None).checks == {name: name == "fluent_natural" for name in CHECKS}
    state.adequacy = YES  # blame is asked for No and Not sure only
    assert state.rating(None).blame is None and state.rating(None).blame_other is None
    state.update(adequacy=NO, blame=(COMBINATION,))
    assert state.rating(None).blame == COMBINATION
    state.is_reference = False
    assert state.rating(None).error_taxonomy is None


def test_a_stored_rating_fills_the_form_and_gives_itself_back() -> None:
    state = AnnotateState(is_reference=True)
    rating = stored(
        fluency=4,
        adequacy=NO,
        blame="subject+other",
        blame_other="odd",
        checks={"fluent_natural": False, "all_and_only_information": True},
        error_taxonomy={"accuracy": ["omission"]},
    )
    state.show_rating(rating)
    assert state.blame == ("subject", "other") and state.checks == ("all_and_only_information",)
    assert state.checks_touched and state.taxonomy == (("accuracy", "omission"),)
    again = state.rating(None)
    assert (again.fluency, again.adequacy, again.blame, again.blame_other) == (
        4,
        NO,
        ["subject", "other"],
        "odd",
    )
    assert again.checks == {**dict.fromkeys(CHECKS, False), "all_and_only_information": True}
    state.show_rating(None)
    assert state.rating(None) == Rating()
