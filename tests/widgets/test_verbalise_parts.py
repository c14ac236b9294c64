"""The Verbalise panel's parts: the settings the panel reads are the parts' own, and a
panel shows saved settings without signalling a change."""

from __future__ import annotations

from widgets.theme import TONES
from widgets.verbalise import DEFAULTS, VerbalisePanel
from widgets.verbalise.model_form import ModelForm
from widgets.verbalise.scope_form import ScopeForm

PRESETS = {
    "tailnlg": ("TailNLG", {"en": "T {triples}", "it": "I {triples}", "es": "E {triples}"}),
    "taillens": ("TailLens", {"en": "L {triples}", "it": "M {triples}", "es": "N {triples}"}),
}


def panel(qtbot) -> VerbalisePanel:
    widget = VerbalisePanel()
    qtbot.addWidget(widget)
    widget.set_presets(PRESETS, "tailnlg")
    widget.show_models([("tiny · causal · 1 KB", "/m/tiny", "causal", "/m/tiny")])
    widget.show_unit_groups(7, [("head", 4), ("long_tail", 3)], [("City", 2)])
    return widget


def test_settings_round_trip_through_the_parts_without_a_signal(qtbot) -> None:
    source = panel(qtbot)
    assert source.settings() == {
        **{k: v for k, v in DEFAULTS.items() if k not in ("tier", "category")},
        "tier": "head",  # the first listed
        "category": "City",
        "templates": {},
    }
    source.model_combo.setCurrentIndex(1)
    source.device.setCurrentText("cpu")
    source.candidates.setValue(5)
    source.temperature.setValue(1.25)
    source.task_prefix.setText("to {language}: ")
    source.scope_radios["tier"].setChecked(True)
    source.tier_combo.setCurrentIndex(source.tier_combo.findData("long_tail"))
    source.lang_checks["es"].setChecked(False)
    source.resume_check.setChecked(False)
    source.preset_combo.setCurrentIndex(source.preset_combo.findData("taillens"))
    source.template_edits["it"].setPlainText("Edited {triples}")
    saved = source.settings()
    assert saved["model"] == "/m/tiny" and saved["device"] == "cpu"
    assert (saved["scope"], saved["tier"], saved["langs"]) == ("tier", "long_tail", ["en", "it"])
    assert saved["prompt_preset"] == "taillens" and saved["templates"] == {"it": "Edited {triples}"}

    target = panel(qtbot)
    signals: list[str] = []
    for name in ("settings_changed", "model_changed", "template_edited", "preview_requested"):
        getattr(target, name).connect(lambda *_a, n=name: signals.append(n))
    target.apply_settings(saved)
    assert signals == []
    assert target.settings() == saved
    assert target.template_tabs.tabText(1) == "it *" and target.templates()["en"] == "L {triples}"
    assert target.local_box.isEnabled() and not target.server_box.isEnabled()


def test_a_part_signals_the_panel(qtbot) -> None:
    widget = panel(qtbot)
    assert isinstance(widget.model_form, ModelForm) and isinstance(widget.scope_form, ScopeForm)
    with qtbot.waitSignal(widget.settings_changed):
        widget.batch_size.setValue(3)
    with qtbot.waitSignals([widget.model_changed, widget.settings_changed]):
        widget.dtype.setCurrentText("float16")
    with qtbot.waitSignals([widget.template_edited, widget.settings_changed]):
        widget.template_edits["en"].setPlainText("Mine {triples}")
    with qtbot.waitSignal(widget.preview_requested):
        widget.template_tabs.setCurrentIndex(2)
    with qtbot.waitSignal(widget.run_selected) as blocker:
        from core.verbalise.runs import RunOverview

        widget.show_runs([RunOverview(4, "m", "causal", "failed", 2)], None)
        widget.runs_view.selectRow(0)
    assert blocker.args == [4]
    assert widget.runs_model.item(0, 3).foreground().color().name() == TONES["error"][0]
