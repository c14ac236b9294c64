"""The Annotate panel renders its AnnotateState and writes the annotator's edits into it."""

from __future__ import annotations

from core.annotation import AnnotatorInfo
from core.annotation.panel_state import AnnotateState
from core.annotation.types import NO, NOT_SURE, QueueOptions
from widgets.annotate import AnnotatePanel


def info(annotator_id: int, name: str, anonymous: bool = False) -> AnnotatorInfo:
    return AnnotatorInfo(annotator_id, name, is_anonymous=anonymous)


def test_the_filter_and_the_form_follow_the_state(qtbot) -> None:
    state = AnnotateState()
    panel = AnnotatePanel(state=state)
    qtbot.addWidget(panel)
    panel.item_area.setEnabled(True)  # as when an item is shown
    state.offer(QueueOptions(models=("m1",), langs=("en", "it"), tiers=("long_tail",)))
    state.update(lang="it", target="references:gold", blind=False, golden_percent=15)
    assert panel.lang_combo.currentData() == "it"
    assert panel.target_combo.currentText() == "gold references"
    assert not panel.blind_check.isChecked() and panel.golden_spin.value() == 15
    state.update(fluency=3, adequacy=NOT_SURE)
    assert [b.isChecked() for b in panel.fluency_buttons] == [i == 3 for i in range(6)]
    assert panel.adequacy_buttons[NOT_SURE].isChecked() and panel.blame_box.isEnabled()
    state.filter_open = False
    assert not panel.filter_toggle.isChecked() and panel.filter_box.isHidden()


def test_edits_in_the_widgets_are_the_state(qtbot) -> None:
    panel = AnnotatePanel()
    qtbot.addWidget(panel)
    panel.item_area.setEnabled(True)  # as when an item is shown
    state = panel.state
    panel.show_filter_options(QueueOptions(models=("m1", "m2"), langs=("en",)))
    panel.model_combo.setCurrentIndex(panel.model_combo.findData("m2"))
    panel.unrated_check.setChecked(False)
    assert state.model == "m2" and not state.unrated_only
    panel.model_combo.setCurrentIndex(0)  # any
    assert state.model == "" and panel.queue_filter().models == ()
    panel.fluency_buttons[4].click()
    panel.adequacy_buttons[NO].click()
    assert (state.fluency, state.adequacy) == (4, NO)
    panel.fluency_buttons[4].click()  # a second press clears it
    assert state.fluency is None
    # Options listed again keep the choice they still offer, without writing it back.
    panel.lang_combo.setCurrentIndex(panel.lang_combo.findData("en"))
    panel.show_filter_options(QueueOptions(models=("m1",), langs=("en", "it")))
    assert state.lang == "en" and panel.lang_combo.currentData() == "en"


def test_the_annotators_shown_are_the_states(qtbot) -> None:
    panel = AnnotatePanel()
    qtbot.addWidget(panel)
    panel.show_annotators([info(1, "ana"), info(2, "crowd", anonymous=True), info(3, "ben")], 3)
    combo = panel.annotator_combo
    names = [combo.itemText(i) for i in range(combo.count())]
    assert names == ["Choose…", "ana", "ben", "New annotator…"]
    assert panel.state.annotator_name() == "ben" and combo.currentText() == "ben"
    assert "Annotating as <b>ben</b>" in panel.who_label.text()
    assert panel.build_button.isEnabled()
    panel.state.annotator = None
    assert combo.currentIndex() == 0 and "No annotator chosen" in panel.who_label.text()
    assert not panel.build_button.isEnabled()


def test_the_boxes_of_the_form_are_the_states(qtbot) -> None:
    panel = AnnotatePanel()
    qtbot.addWidget(panel)
    panel.item_area.setEnabled(True)  # as when an item is shown
    state = panel.state
    state.update(adequacy=NO, blame=("object", "other"), is_reference=True)
    assert panel.blame_checks["object"].isChecked() and panel.blame_other.isEnabled()
    assert not panel.blame_checks["subject"].isChecked()
    assert not panel.taxonomy_box.isHidden()
    panel.blame_checks["object"].setChecked(False)
    panel.check_boxes["fluent_natural"].setChecked(True)
    panel.taxonomy_checks[("accuracy", "omission")].setChecked(True)
    assert state.blame == ("other",) and state.checks == ("fluent_natural",)
    assert state.checks_touched and state.taxonomy == (("accuracy", "omission"),)
    panel.blame_other.setText("the year")  # not left yet: the rating still takes it
    rating = panel.rating()
    assert rating.blame == ["other"] and rating.blame_other == "the year"
    assert rating.error_taxonomy == {"accuracy": ["omission"]}
    state.show_rating(None)
    assert not panel.check_boxes["fluent_natural"].isChecked()
    assert not panel.blame_other.isEnabled() and panel.blame_other.text() == ""
