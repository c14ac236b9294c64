"""Each verbaliser's own preview (what the Verbalise panel shows before a run), for the
verbalisers that need no model: the template one and an OpenAI-compatible server's (no
server is reached: the preview is the prompt)."""

from __future__ import annotations

import pytest

from core.verbalise.openai import OpenAIVerbaliser
from core.verbalise.prompts import PromptError
from core.verbalise.template import TemplateVerbaliser, verbalise_triples

TRIPLES = (("Paris", "country", "France"),)


def test_the_template_preview_shows_the_triples_and_the_sentence() -> None:
    verbaliser = TemplateVerbaliser()
    verbaliser.use_prompt({"en": "anything"}, "tailnlg", "anything: ")  # reads no prompt
    preview = verbaliser.preview(TRIPLES, "en", exact=False)
    sentence = verbalise_triples(TRIPLES, "en")
    assert sentence and preview.text.endswith(f"Output:\n{sentence}")
    assert preview.text.startswith("Input (the triples; no prompt):\n[Paris, country, France]")
    assert preview == verbaliser.preview(TRIPLES, "en", exact=True)
    assert not preview.needs_tokenizer and preview.warning is None
    assert verbaliser.summary([]).startswith("Rule-based sentences")


def test_a_server_preview_is_the_edited_prompt_and_a_bad_edit_changes_nothing() -> None:
    verbaliser = OpenAIVerbaliser("http://127.0.0.1:9/v1", "m")
    verbaliser.use_prompt({"it": "Fatti:\n{triples}\nScrivi."}, "tailnlg", None)
    preview = verbaliser.preview(TRIPLES, "it", exact=False)
    assert preview.text == "Fatti:\n[Paris, country, France]\nScrivi."
    assert "server applies the model's chat template" in preview.note
    with pytest.raises(PromptError):
        verbaliser.use_prompt({"it": "no placeholder"}, "tailnlg", None)
    assert verbaliser.preview(TRIPLES, "it", exact=True).text == preview.text
    assert verbaliser.summary([]) == f"Chat completions from {verbaliser.base_url}."
