"""core/report/panel_state.py: the Report's options without a window."""

from __future__ import annotations

from core.report import ReportRequest, Settings
from core.report.panel_state import ReportOptionsState, ReportState


def test_the_defaults_ask_for_the_default_report() -> None:
    state = ReportOptionsState()
    state.metrics = (("bleu", 10), ("chrf", 10))
    assert state.request() == ReportRequest()


def test_the_request_follows_every_choice() -> None:
    state = ReportOptionsState(metrics=(("bleu", 4), ("chrf", 4), ("ter", 2)))
    state.update(
        by=("lang", "model"),
        unticked_metrics=("chrf",),
        repetitions=3,
        sample_size=50,
        alpha=0.0123456789,
        seed=7,
        study_refs="gold:pooled",
        statistic="median",
        correction="bh",
        bootstrap=0,
        where=" esa.undetected>=1 ;; tier=long_tail ",
    )
    state.offer_runs(((1, "m", "finished"), (2, "n", "running")))
    state.runs = (2,)
    request = state.request()
    assert request.by == ("lang", "model")
    assert request.metrics == ("bleu", "ter")
    assert request.runs == (2,)
    assert request.where == ("esa.undetected>=1", "tier=long_tail")
    assert request.settings == Settings(
        repetitions=3,
        sample_size=50,
        alpha=0.012346,
        seed=7,
        study_quality="gold",
        study_references="pooled",
        statistic="median",
        correction="bh",
        bootstrap_resamples=0,
    )


def test_no_dimension_ticked_compares_by_tier_and_no_metric_ticked_asks_for_none() -> None:
    state = ReportOptionsState(metrics=(("bleu", 1),), by=(), unticked_metrics=("bleu",))
    assert state.request().by == ("tier",) and state.request().metrics == ()


def test_ticked_runs_no_longer_offered_are_dropped() -> None:
    state = ReportOptionsState()
    state.offer_runs(((1, "m", "finished"), (2, "m", "finished")))
    state.runs = (1, 2)
    state.offer_runs(((2, "m", "finished"), (3, "n", "finished")))
    assert state.runs == (2,)
    state.offer_runs(())
    assert state.request().runs is None


def test_a_metric_offered_later_starts_ticked() -> None:
    state = ReportOptionsState(metrics=(("bleu", 1), ("chrf", 1)), unticked_metrics=("chrf",))
    state.metrics = (("bleu", 2), ("chrf", 2), ("comet", 2))
    assert state.ticked_metrics() == ("bleu", "comet")


def test_choices_round_trip_and_bad_values_are_skipped() -> None:
    state = ReportOptionsState(by=("lang",), seed=9, alpha=0.1, correction="none", where="x>1")
    state.runs = (4,)  # the session's, not a choice
    kept = state.choices()
    assert "runs" not in kept and kept["by"] == ["lang"]
    again = ReportOptionsState()
    again.restore(kept)
    assert again.choices() == kept
    again.restore({"seed": "eleven", "alpha": True, "by": [1, 2], "statistic": "median"})
    assert (again.seed, again.alpha, again.by, again.statistic) == (9, 0.1, ("lang",), "median")
    again.restore({"alpha": 1})  # an int where a float is kept: still a number
    assert again.alpha == 1.0 and isinstance(again.alpha, float)


def test_a_build_can_start_with_a_session_and_none_running() -> None:
    state = ReportState()
    assert state.can_build()
    state.progress = (1, 2, "old")
    state.started()
    assert state.busy and state.progress is None and not state.can_build()
    state.update(busy=False, session=False)
    assert not state.can_build()
    assert "busy" not in state.choices() and "stale" not in state.choices()
