"""The Scores panel follows its state: the filters' choices and choice, and the job."""

from __future__ import annotations

from core.metrics.score_pages import ScoresFilter
from widgets.scores import ScoresPanel


def test_filters_follow_the_state_and_write_into_it(qtbot) -> None:
    panel = ScoresPanel()
    qtbot.addWidget(panel)
    seen: list[ScoresFilter] = []
    panel.filters_changed.connect(seen.append)
    panel.set_filter_choices([(1, "run 1"), (2, "run 2")], ["en", "it"], ["head"])
    assert panel.run_combo.count() == 3 and seen == []  # filling is nobody's choice
    panel.state.update(run_id=2, lang="it")
    assert panel.run_combo.currentText() == "run 2" and panel.lang_combo.currentText() == "it"
    assert seen[-1] == ScoresFilter(run_id=2, lang="it")
    panel.tier_combo.setCurrentIndex(1)
    assert panel.state.tier == "head" and seen[-1].tier == "head"
    panel.lang_combo.setCurrentIndex(0)  # "Language": every language
    assert panel.state.lang is None
    count = len(seen)
    panel.set_filter_choices([(1, "run 1")], ["en"], ["head"])  # run 2 is gone
    assert panel.state.run_id is None and panel.run_combo.currentIndex() == 0
    assert len(seen) == count  # the read that offered these already fell back to all
    panel.search_edit.setText("italy")
    panel.search_edit.editingFinished.emit()  # Return: at once, not after the delay
    assert seen[-1].search == "italy"


def test_the_job_shows_from_the_state(qtbot) -> None:
    panel = ScoresPanel()
    qtbot.addWidget(panel)
    panel.state.job_started("Scoring esa")
    assert not panel.progress_box.isHidden() and not panel.score_button.isEnabled()
    panel.state.job_progressed(1, 4, "esa")
    assert panel.progress.maximum() == 1000 and panel.progress.value() == 250
    panel.state.job_finished("Scored 4 texts.", ["2 texts without a reference"])
    assert panel.progress_box.isHidden() and panel.score_button.isEnabled()
    assert panel.progress_label.text() == "Scored 4 texts."
    assert "2 texts without a reference" in panel.notes.notes[0].text
