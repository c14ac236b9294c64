"""Prompts and reply parsing (METHODS §6)."""

from __future__ import annotations

import pytest

from core.verbalise.prompts import (
    ANSWER_MARKERS,
    PromptError,
    default_template,
    linearise_graph,
    parse_reply,
    render_prompt,
    seq2seq_prefix,
    templates_for,
)
from tests.shared_data import APPENDIX_H, require

TRIPLES = (("Paris", "country", "France"), ("Paris", "mayor", "Anne Hidalgo"))


@pytest.mark.parametrize("lang", ["en", "it", "es"])
def test_each_bundled_template_asks_for_its_own_marker(lang: str) -> None:
    template = default_template(lang)
    assert template.count("{triples}") == 1
    assert ANSWER_MARKERS[lang] in template


def test_render_prompt_lists_triples_as_bracketed_lines() -> None:
    prompt = render_prompt("Facts:\n{triples}\nGo {on} {{braces}}", TRIPLES, "en")
    # A user's braces are left alone: the template is not a format string.
    assert prompt == (
        "Facts:\n[Paris, country, France]\n[Paris, mayor, Anne Hidalgo]\nGo {on} {{braces}}"
    )


def test_a_template_without_the_placeholder_is_refused() -> None:
    with pytest.raises(PromptError, match="exactly once"):
        render_prompt("no placeholder", TRIPLES, "en")
    with pytest.raises(PromptError, match="exactly once"):
        templates_for(["en"], {"en": "{triples} {triples}"})
    with pytest.raises(PromptError, match="no such language"):
        templates_for(["en"], {"de": "{triples}"})


@pytest.mark.parametrize(
    ("reply", "text"),
    [
        ("Sure!\nThe final verbalization is: [Paris is in France.]", "Paris is in France."),
        ("La verbalizzazione finale è: [Parigi è in Francia.]", "Parigi è in Francia."),
        ("la verbalización final es:  [París está en Francia.] ", "París está en Francia."),
        ("The final verbalization is: Paris is in France.", "Paris is in France."),
        ('The final verbalisation is: "Paris is in France."', "Paris is in France."),
        # The last marker wins (models sometimes restate the instruction first).
        ("The final verbalization is: [x]\nThe final verbalization is: [Paris.]", "Paris."),
        (
            "The final verbalization is: [Paris [the city] is in France.]",
            "Paris [the city] is in France.",
        ),
    ],
)
def test_parse_reply_takes_the_text_after_the_marker(reply: str, text: str) -> None:
    parsed = parse_reply(reply)
    assert parsed.ok and parsed.text == text


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("Paris is in France.", "no answer marker"),
        ("", "empty reply"),
        ("The final verbalization is: []", "nothing inside"),
        ("The final verbalization is:   ", "nothing after"),
        # Cut off by max new tokens before the bracket closed: the text so far stays in the
        # raw reply only, never stored as a parsed text.
        ("The final verbalization is: [Paris is in", "cut off inside the brackets"),
        ("\x00\x01PK\x03\x04", "binary"),
    ],
)
def test_missing_marker_or_empty_answer_is_flagged(reply: str, reason: str) -> None:
    parsed = parse_reply(reply)
    assert not parsed.ok and parsed.text is None
    assert reason in parsed.reason


def test_seq2seq_input_marks_head_relation_tail() -> None:
    assert seq2seq_prefix("it") == "translate from Graph to Text: "  # WDV's, any language
    assert seq2seq_prefix("it", "translate Graph to {language}: ") == (
        "translate Graph to Italian: "
    )
    assert linearise_graph(TRIPLES, "p: ") == (
        "p: <H> Paris <R> country <T> France <H> Paris <R> mayor <T> Anne Hidalgo"
    )


@pytest.mark.parametrize("lang", ["en", "it", "es"])
def test_default_prompts_are_appendix_h_verbatim(lang: str) -> None:

    from core.verbalise.prompts import DEFAULT_PRESET, PRESETS, default_templates, preset_of

    source = require(*APPENDIX_H)
    text = source.read_text(encoding="utf-8")
    template = default_template(lang)
    assert DEFAULT_PRESET == "tailnlg" and set(PRESETS) == {"tailnlg", "taillens"}
    instructions, _, rest = template.partition("\n\n{triples}")
    assert rest == "\n" and instructions in text  # verbatim, line breaks included
    heading = {"en": "English version", "it": "Italian version", "es": "Spanish version"}[lang]
    assert text.index(heading) < text.index(instructions)
    assert instructions.count("\n") >= 3 and ANSWER_MARKERS[lang] in instructions
    # The previous wording stays a preset; the presets are told apart.
    assert default_template(lang, "taillens") != template
    assert preset_of(default_templates(preset="taillens")) == "taillens"
    assert preset_of({lang: "edited {triples}"}) is None
    with pytest.raises(PromptError, match="no prompt preset"):
        default_template(lang, "nope")


@pytest.mark.parametrize(
    ("lang", "reply", "text"),
    [
        ("en", "The final verbalization is: [Paris is in France.]", "Paris is in France."),
        ("it", "La verbalizzazione finale è: [Parigi è in Francia.]", "Parigi è in Francia."),
        ("es", "La verbalización final es: [París está en Francia.]", "París está en Francia."),
    ],
)
def test_replies_in_appendix_h_format_parse(lang: str, reply: str, text: str) -> None:
    # A model that restates Appendix H's instruction before answering: the answer wins.
    instruction = next(
        line for line in default_template(lang).splitlines() if ANSWER_MARKERS[lang] in line
    )
    for candidate in (reply, f"{instruction}\n{reply}"):
        parsed = parse_reply(candidate)
        assert parsed.ok and parsed.text == text
