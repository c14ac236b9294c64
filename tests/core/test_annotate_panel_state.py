"""core/annotation/panel_state.py: the Annotate panel's state without a window."""

from __future__ import annotations

from core.annotation.panel_state import ANY, AnnotateState
from core.annotation.types import NO, YES, QueueFilter, QueueOptions

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
