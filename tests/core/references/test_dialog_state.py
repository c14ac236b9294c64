"""The References pipeline dialog's Qt-free state: remembered choices come back (what does
not fit is skipped), each step's request is what the CLI would build, and a form that
cannot run says why."""

from __future__ import annotations

import pytest

from core.errors import UserFacingError
from core.references.dialog_state import (
    QE,
    TRANSLATE,
    ReferencesState,
    cancelled_line,
    translated_line,
)
from core.references.translate import TranslateSummary


def test_choices_round_trip_and_what_does_not_fit_is_skipped() -> None:
    state = ReferencesState(targets="it,es", translate_model="/m/opus", beams=2, running=QE)
    again = ReferencesState()
    again.restore(state.choices())
    assert again.choices() == state.choices() and again.running == ""
    again.restore({"beams": "many", "targets": 3, "qe_batch": True, "unknown": 1})
    assert again.beams == 2 and again.targets == "it,es" and again.qe_batch == 8


def test_requests_are_what_the_cli_builds_and_bad_forms_say_why() -> None:
    state = ReferencesState(targets="it, es", translate_model="/m/opus", beams=2)
    request = state.translate_request()
    assert (request.source, request.targets, request.server_model) == ("en", ["it", "es"], None)
    assert request.params.num_beams == 2 and request.params.max_new_tokens == 256
    state.update(translate_model="http://127.0.0.1:9/v1", translate_server_model="m")
    assert state.translate_request().server_model == "m"
    for bad in ({"translate_model": ""}, {"targets": "en"}, {"targets": "xx"}, {"beams": 0}):
        with pytest.raises(UserFacingError):
            ReferencesState(**{"targets": "it", "translate_model": "/m", **bad}).translate_request()
    with pytest.raises(UserFacingError, match="post-editing model"):
        state.postedit_request()
    state.refused(TRANSLATE, "no model")
    assert state.translate_message == "Not run: no model"


def test_lines_say_what_a_run_did() -> None:
    summary = TranslateSummary("/m/opus", "marian", "en", ["it"], {"en→it": 2}, {"en→it": 1})
    assert translated_line(summary).startswith("en→it 2 translated (1 already were); marian")
    assert "Run again resumes" in cancelled_line(TRANSLATE)
