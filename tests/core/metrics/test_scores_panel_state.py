"""The Scores panel's state, driven without a window: the filters' choices and the job."""

from __future__ import annotations

from core.metrics.score_pages import ScoresFilter
from core.metrics.scoring.panel_state import ScoresState


def test_a_choice_still_offered_stays_and_a_gone_one_goes_back_to_all() -> None:
    state = ScoresState()
    state.set_choices([(1, "run 1"), (2, "run 2")], ["en", "it"], ["head", "long_tail"])
    state.update(run_id=2, lang="it", tier="head", search=" italy ")
    assert state.filter() == ScoresFilter(run_id=2, lang="it", tier="head", search="italy")
    seen: list[set[str]] = []
    state.watch(lambda changes: seen.append(set(changes)))
    state.set_choices([(1, "run 1")], ["en", "it"], ["head"])
    assert state.filter() == ScoresFilter(run_id=None, lang="it", tier="head", search="italy")
    assert seen == [{"runs", "tiers", "run_id"}]  # one change: choices and the filter


def test_the_job_runs_progresses_and_ends_with_its_notes() -> None:
    state = ScoresState()
    assert not state.busy
    state.job_started("Scoring esa")
    assert state.busy and state.progress is None
    state.job_progressed(2, 4, "esa")
    assert state.progress == (2, 4, "esa")
    state.job_finished("Scored 4 texts.", ["2 texts without a reference"])
    assert not state.busy and state.outcome == "Scored 4 texts."
    assert state.job_notes == ("2 texts without a reference",)
