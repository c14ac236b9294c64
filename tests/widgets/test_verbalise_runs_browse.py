"""Verbalise ▸ Results browses what a run produced, and every run list marks
a cancelled or wholly unparsable run."""

from __future__ import annotations

from pathlib import Path

from core.store import SessionStore
from core.verbalise.runs import RunOverview, UnitOutput, list_runs, run_outputs
from tests.fixtures.scoring_session import TEXTS, build_session
from widgets.verbalise.results import ResultsView


def test_a_runs_texts_with_their_units(tmp_path: Path) -> None:
    path = tmp_path / "s.taillens"
    ids = build_session(path)
    with SessionStore.open(path) as store:
        runs = {r.id: r for r in list_runs(store)}
        for run_id in ids.runs:
            texts, total = run_outputs(store, run_id)
            assert total == runs[run_id].texts == len(texts) > 0
            assert {t.unit_id for t in texts} <= set(ids.units)
            assert all(t.uid for t in texts)
        texts, total = run_outputs(store, ids.runs[0], limit=1)
        assert len(texts) == 1 and total > 1
    assert sum(r.texts for r in runs.values()) == len(TEXTS)


def test_marks_say_cancelled_and_unparsable() -> None:
    assert RunOverview(1, "m", "causal", "finished", 9).marks == ""
    assert RunOverview(1, "m", "causal", "cancelled", 9).marks == "cancelled"
    assert RunOverview(1, "m", "causal", "finished", 9, 9).marks == "all unparsable"
    assert RunOverview(1, "m", "causal", "finished", 9, 2).marks == "2 unparsable"


def test_the_runs_table_marks_them_and_the_outputs_name_their_units(qtbot) -> None:
    view = ResultsView()
    qtbot.addWidget(view)
    view.show_runs(
        [
            RunOverview(3, "tiny", "causal", "finished", 9, 9),
            RunOverview(2, "tiny", "causal", "cancelled", 4),
            RunOverview(1, "template", "template", "finished", 10),
        ],
        select=1,
    )
    statuses = [view.runs_model.item(r, 3).text() for r in range(3)]
    assert statuses == ["finished · all unparsable", "cancelled", "finished"]
    assert "Left out of the report" in view.runs_model.item(0, 3).toolTip()
    outputs = [UnitOutput("en", 0, "A text.", "A text.", True), UnitOutput("it", 0, "", "?", False)]
    view.show_outputs("run 1: 2 texts", outputs, ["Q1X", "Q2Y"])
    assert [view.outputs_model.item(r, 3).text() for r in range(2)] == ["Q1X", "Q2Y"]
    assert view.outputs_model.item(1, 2).text().startswith("unparsable")
