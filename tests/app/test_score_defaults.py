"""The Score dialog's defaults fit the machine: METEOR is not ticked without a WordNet,
BERTScore not without a GPU, and the dialog says why beside each."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.scores.dialog import score_choices
from app.scores.notes import ModelNotes
from core.metrics import BERTSCORE, BLEU, DEFAULT_METRICS, ESA, METEOR, machine_defaults
from core.metrics.meteor import WordNetStatus


def test_machine_defaults_leave_out_what_this_machine_cannot_do_well() -> None:
    checked, why = machine_defaults(wordnet_found=True, accelerator=True)
    assert checked == DEFAULT_METRICS and why == {}
    checked, why = machine_defaults(wordnet_found=False, accelerator=False)
    assert METEOR not in checked and BERTSCORE not in checked
    assert {BLEU, ESA} <= set(checked)
    assert "WordNet" in why[METEOR] and "GPU" in why[BERTSCORE]
    checked, why = machine_defaults(wordnet_found=None, accelerator=True)  # not looked for
    assert METEOR in checked and why == {}


@pytest.mark.parametrize("found", [True, False])
def test_the_dialog_ticks_the_machine_defaults_and_says_why(qtbot, monkeypatch, found) -> None:
    from widgets.scores.dialog import ScoreDialog

    monkeypatch.setattr(ModelNotes, "mbert_cached", lambda self: False)
    wordnet = WordNetStatus(Path("/x") if found else None, "setting" if found else "", ())
    choices = score_choices([], None, wordnet, ModelNotes(), accelerator=False)
    dialog = ScoreDialog(choices)
    qtbot.addWidget(dialog)
    assert not dialog.metric_checks[BERTSCORE].isChecked()
    assert "no GPU here" in dialog.metric_notes[BERTSCORE].toolTip()
    assert dialog.metric_checks[METEOR].isChecked() is found
    assert ("no WordNet" in dialog.metric_notes[METEOR].toolTip()) is not found
    assert dialog.metric_checks[BLEU].isChecked()
