"""Replies as instruction-tuned models write them.

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
from sqlalchemy import select

from core.jobs import JobSucceeded, run_job
from core.store import SessionStore
from core.store.models import Verbalisation
from core.verbalise.base import GenerationParams
from core.verbalise.job import verbalise_job
from core.verbalise.openai import OpenAIVerbaliser
from core.verbalise.prompts import parse_reply
from core.verbalise.runs import unit_outputs
from tests.fixtures.fake_openai_server import FakeServer
from tests.fixtures.verbalise_units import add_units
from tests.shared_data import APPENDIX_H, require

CORPUS_FILE = Path(__file__).parents[2] / "fixtures" / "replies.jsonl"
CORPUS = [
    json.loads(line)
    for line in CORPUS_FILE.read_text(encoding="utf-8").splitlines()
    if line.strip()
]
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


def test_the_parser_says_which_marker_it_looks_for() -> None:
    reason = parse_reply("Sure! Rome is in Italy.").reason
    assert "no answer marker" in reason and "The final verbalization is:" in reason


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("", "empty reply"),
        ("\x00\x00\x13\x88PK\x03\x04\x00\x14", "binary reply"),
        ("The final verbalization is: [Rome is the capital of", "cut off inside the brackets"),
    ],
)
def test_bad_server_replies_are_stored_raw_and_flagged_never_as_text(
    store: SessionStore, content: str, reason: str
) -> None:
    add_units(store, 1, langs=("en",))
    server = FakeServer()
    server.script = [
        (
            200,
            {},
            json.dumps(
                {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
            ).encode(),
        )
    ]
    try:
        verbaliser = OpenAIVerbaliser(server.url, "m", GenerationParams(candidates=1))
        outcome = run_job(verbalise_job(store, verbaliser, "all", ["en"]))
    finally:
        server.close()
    assert isinstance(outcome, JobSucceeded), outcome
    assert outcome.result.unparsable == 1
    with store.unit_of_work() as db:
        [row] = db.scalars(select(Verbalisation)).all()
        stored = (row.raw_output, row.text, row.parse_ok, row.unit_id)
    assert stored[:3] == (content.strip(), None, False)
    [output] = unit_outputs(store, outcome.result.run_id, stored[3]).outputs
    assert (output.text, output.parse_ok) == ("", False)
    assert reason in output.reason


# The format line of each language's Appendix H prompt: "...: <marker> [<placeholder>]".
FORMAT_LINE = re.compile(
    r"(?:format|formato|forma):\s*(?P<marker>[^\[\n]+?)\s*"
    r"\[(?P<placeholder>[^\]\n]+)\]"
)


def test_the_markers_of_the_appendix_h_prompts_are_parsed() -> None:
    """The TailNLG study's own prompts (METHODS §6 defaults) ask for these markers: a
    reply written as they ask parses, and one that only echoes their format does not."""
    appendix_h = require(*APPENDIX_H)
    found = FORMAT_LINE.findall(appendix_h.read_text(encoding="utf-8"))
    assert len(found) == 3, found  # en, es, it
    for marker, placeholder in found:
        assert parse_reply(f"{marker} [Rome is in Italy.]").text == "Rome is in Italy."
        assert parse_reply(f"**{marker}** [Rome is in Italy.]\n\nDone.").text == (
            "Rome is in Italy."
        )
        echoed = parse_reply(f"{marker} [{placeholder}]")
        assert not echoed.ok and "placeholder" in echoed.reason
