"""Replies as instruction-tuned models write them (issue 10, item 4).

``tests/fixtures/replies.jsonl`` holds realistic replies in en/it/es in the styles of
Llama 3, Qwen 2.5 and Gemma 3 instruct models: Markdown around the marker or the
brackets, code fences, preambles, commentary, another language's marker, several
markers, replies cut off by max new tokens, empty and binary replies. Each has the text
it must parse to (or ``parse_ok`` false and a word of the reason).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.verbalise.prompts import parse_reply

CORPUS_FILE = Path(__file__).parents[2] / "fixtures" / "replies.jsonl"
CORPUS = [json.loads(line) for line in CORPUS_FILE.read_text(encoding="utf-8").splitlines()
          if line.strip()]
# Markdown a stored text must never keep (brackets only where they are the answer's own).
MARKUP = re.compile(r"\*|`|^#|^>|(?<!\w)__?|__?(?!\w)|^\[|\]$")


def test_the_corpus_covers_three_languages_and_three_model_styles() -> None:
    assert len(CORPUS) >= 30
    assert {case["lang"] for case in CORPUS} == {"en", "it", "es"}
    assert {case["style"] for case in CORPUS} == {"llama3", "qwen2.5", "gemma3"}
    assert all(case["parse_ok"] is (case["text"] is not None) for case in CORPUS)
    assert len({case["id"] for case in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("case", CORPUS, ids=[case["id"] for case in CORPUS])
def test_each_reply_parses_to_its_expected_text(case: dict) -> None:
    parsed = parse_reply(case["reply"])
    assert (parsed.ok, parsed.text) == (case["parse_ok"], case["text"]), case["note"]
    if parsed.ok:
        assert parsed.reason == ""
        assert not MARKUP.search(parsed.text), parsed.text
        assert parsed.text == parsed.text.strip() and "\n" not in parsed.text
    else:
        assert case["reason"] in parsed.reason, parsed.reason


def test_bytes_that_are_not_utf8_are_a_binary_reply() -> None:
    parsed = parse_reply(b"\xff\xfe\x00The final verbalization is: [x]")
    assert (parsed.ok, parsed.text) == (False, None)
    assert "binary" in parsed.reason
    assert parse_reply(b"The final verbalization is: [Rome.]").text == "Rome."


def test_a_few_replacement_characters_in_text_are_not_binary() -> None:
    reply = "The final verbalization is: [S\ufffdo Paulo is in Brazil, a large country.]"
    assert parse_reply(reply).ok
