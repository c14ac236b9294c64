"""The Verbalise panel's state, driven without a window: what is offered, what the user
chose, the presets the templates follow, and restoring saved settings."""

from __future__ import annotations

from core.verbalise.panel_state import DEFAULTS, SERVER, TEMPLATE, VerbaliseState

PRESETS = {
    "tailnlg": ("TailNLG", {"en": "T {triples}", "it": "I {triples}", "es": "E {triples}"}),
    "taillens": ("TailLens", {"en": "L {triples}", "it": "M {triples}", "es": "N {triples}"}),
}


def offered() -> VerbaliseState:
    state = VerbaliseState()
    state.set_presets(PRESETS, "tailnlg")
    state.show_models([("tiny · causal", "/m/tiny", "causal", "/m/tiny")])
    state.show_groups(7, [("head", 4), ("long_tail", 3)], (("City", 2),))
    return state


def test_defaults_are_the_settings_of_a_new_state() -> None:
    state = offered()
    assert state.settings() == {**DEFAULTS, "tier": "head", "category": "City", "templates": {}}
    assert [m.spec for m in state.models] == [TEMPLATE, "/m/tiny", SERVER]
    assert state.templates == PRESETS["tailnlg"][1]
    assert state.model_kind == "template"


def test_a_model_no_longer_listed_falls_back_to_the_template_verbaliser() -> None:
    state = offered()
    state.model = "/m/tiny"
    assert state.model_kind == "causal"
    state.show_models([("other", "/m/other", "seq2seq", "")])
    assert state.model == TEMPLATE and state.model_kind == "template"


def test_a_tier_still_held_stays_chosen_and_a_gone_one_takes_the_first() -> None:
    state = offered()
    state.tier = "long_tail"
    state.show_groups(9, [("head", 5), ("long_tail", 4)], ())
    assert state.tier == "long_tail" and state.category is None
    state.show_groups(2, [("torso", 2)], ())
    assert state.tier == "torso"
    assert not state.scope_open("category") and state.scope_open("tier")


def test_a_preset_carries_the_unedited_templates_only() -> None:
    state = offered()
    seen: list[set[str]] = []
    state.watch(lambda changes: seen.append(set(changes)))
    state.templates = state.with_template("it", "Mine {triples}")
    state.prompt_preset = "taillens"
    assert state.templates == {"en": "L {triples}", "it": "Mine {triples}", "es": "N {triples}"}
    assert state.edited_templates() == {"it": "Mine {triples}"}
    assert seen[-1] == {"prompt_preset", "templates", "defaults"}  # one change, all three


def test_languages_keep_the_vocabulary_order() -> None:
    state = offered()
    state.langs = state.with_lang("en", False)
    state.langs = state.with_lang("en", True)
    assert state.langs == ("en", "it", "es")
    assert state.with_lang("it", False) == ("en", "es")


def test_restore_shows_saved_settings_and_turns_off_what_is_off_now() -> None:
    saved = {
        **DEFAULTS,
        "model": "/m/tiny",
        "candidates": 5,
        "scope": "selected",  # no unit is selected: all units
        "tier": "long_tail",
        "category": "Gone",  # not held: the category stays as shown
        "langs": ["es", "en", "xx"],
        "prompt_preset": "taillens",
        "templates": {"it": "Edited {triples}"},
        "unknown": 1,
    }
    state = offered()
    state.restore(saved)
    settings = state.settings()
    assert settings["model"] == "/m/tiny" and settings["candidates"] == 5
    assert (settings["scope"], settings["tier"], settings["category"]) == (
        "all",
        "long_tail",
        "City",
    )
    assert settings["langs"] == ["en", "es"]
    assert settings["templates"] == {"it": "Edited {triples}"}
    assert state.templates["en"] == "L {triples}"  # the saved preset's text
    state.selected_unit = "Paris0"
    state.restore({**saved, "scope": "selected"})
    assert state.scope == "selected"


def test_restore_of_nothing_is_the_defaults() -> None:
    state = offered()
    state.update(candidates=9, resume=False, scope="tier")
    state.restore({})
    assert state.settings() == {**DEFAULTS, "tier": "head", "category": "City", "templates": {}}
