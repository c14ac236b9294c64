"""Annotate's Known answer… dialog: filled in from the rating form, Set only with a
fluency or an adequacy, Remove asks for no answer."""

from __future__ import annotations

from core.annotation import NOT_SURE, YES
from widgets.annotate.golden import GoldenAnswerDialog


def test_the_dialog_offers_the_forms_rating_and_needs_a_value(qtbot) -> None:
    dialog = GoldenAnswerDialog(3, NOT_SURE, who="ana")
    qtbot.addWidget(dialog)
    assert dialog.answer() == (3, NOT_SURE)
    assert dialog.set_button.isEnabled()
    dialog.fluency.setCurrentIndex(0)  # not given
    dialog.adequacy.setCurrentIndex(0)
    assert not dialog.set_button.isEnabled()  # an answer needs a fluency or an adequacy
    dialog.adequacy.setCurrentIndex(dialog.adequacy.findData(YES))
    assert dialog.set_button.isEnabled() and dialog.answer() == (None, YES)


def test_remove_asks_for_no_answer(qtbot) -> None:
    dialog = GoldenAnswerDialog(None, None)
    qtbot.addWidget(dialog)
    assert not dialog.set_button.isEnabled()
    with qtbot.waitSignal(dialog.accepted):
        dialog.remove_button.click()
    assert dialog.answer() is None
