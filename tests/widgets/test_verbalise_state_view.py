"""The Verbalise panel follows its state: a field set in code shows in the widgets, and a
widget's edit lands in the field, with what is offered refilled without a stray edit."""

from __future__ import annotations

from widgets.verbalise import VerbalisePanel

PRESETS = {
    "tailnlg": ("TailNLG", {"en": "T {triples}", "it": "I {triples}", "es": "E {triples}"}),
    "taillens": ("TailLens", {"en": "L {triples}", "it": "M {triples}", "es": "N {triples}"}),
}


def panel(qtbot) -> VerbalisePanel:
    widget = VerbalisePanel()
    qtbot.addWidget(widget)
    widget.set_presets(PRESETS, "tailnlg")
    widget.show_models([("tiny · seq2seq", "/m/t5", "seq2seq", "/m/t5")])
    widget.show_unit_groups(7, [("head", 4), ("long_tail", 3)], [("City", 2)])
    return widget


def test_fields_set_on_the_state_show_in_the_widgets(qtbot) -> None:
    view = panel(qtbot)
    state = view.state
    state.update(model="/m/t5", candidates=6, device="cpu", scope="tier", tier="long_tail")
    assert view.model_combo.currentText() == "tiny · seq2seq"
    assert view.num_beams.isEnabled() and not view.temperature.isEnabled()  # seq2seq
    assert view.candidates.value() == 6 and view.device.currentText() == "cpu"
    assert view.scope_radios["tier"].isChecked()
    assert view.tier_combo.currentData() == "long_tail"
    state.langs = ("it",)
    assert [lang for lang, c in view.lang_checks.items() if c.isChecked()] == ["it"]
    state.prompt_preset = "taillens"
    assert view.template_edits["es"].toPlainText() == "N {triples}"


def test_refilled_choices_keep_the_choice_and_reach_no_setting(qtbot) -> None:
    view = panel(qtbot)
    view.tier_combo.setCurrentIndex(view.tier_combo.findData("long_tail"))
    view.model_combo.setCurrentIndex(1)
    assert view.state.tier == "long_tail" and view.state.model == "/m/t5"
    changed: list[str] = []
    view.settings_changed.connect(lambda: changed.append("settings"))
    view.show_unit_groups(9, [("torso", 2), ("long_tail", 7)], [])
    view.show_models([("other", "/m/other", "causal", ""), ("tiny", "/m/t5", "seq2seq", "")])
    assert view.tier_combo.currentData() == "long_tail" and view.state.tier == "long_tail"
    assert view.model_combo.currentData() == {"spec": "/m/t5", "kind": "seq2seq"}
    assert view.scope_radios["all"].text() == "All units (9)"
    assert not view.scope_radios["category"].isEnabled()
    assert changed == []


def test_typing_a_prefix_is_a_setting_at_each_key(qtbot) -> None:
    view = panel(qtbot)
    with qtbot.waitSignals([view.preview_requested, view.settings_changed]):
        view.task_prefix.setText("to {language}: ")
    assert view.state.seq2seq_prefix == "to {language}: "
