"""Notes are chips, not paragraphs: the Scores table keeps its rows."""

from __future__ import annotations

from widgets.note_chips import CHIP_CHARS, WARNING, Note, NoteChips, notes_of
from widgets.scores import ScoresPanel

NOTES = [
    f"run {run}, {lang}: {n} of 679 texts have no gold reference; BLEU, chrF++ and TER "
    "against gold skip them"
    for run in (1, 2, 3, 4)
    for lang, n in (("es", 507), ("it", 498), ("en", 12))
] + ["METEOR is absent: WordNet was not found"]


def test_thirteen_notes_take_one_row_of_chips(qtbot) -> None:
    chips = NoteChips(max_chips=4)
    qtbot.addWidget(chips)
    chips.set_notes(notes_of(NOTES, WARNING))
    chips.resize(900, 200)
    chips.show()
    assert len(NOTES) == 13 and len(chips.chips) == 4  # three notes and "+10 more notes"
    assert chips.chips[-1].text().endswith("+10 more notes")
    assert all(len(c.text()) <= CHIP_CHARS + 2 for c in chips.chips)
    assert NOTES[0] in chips.chips[0].toolTip()  # the whole note in the tooltip
    assert "METEOR is absent" in chips.chips[-1].toolTip()
    assert chips.sizeHint().height() < 40  # one line
    chips.chips[0].click()  # unfolds every note in full; again folds them
    assert chips.full.isVisible() and "METEOR is absent" in chips.full.text()
    chips.chips[0].click()
    assert not chips.full.isVisible()
    chips.set_notes([])
    assert chips.isHidden()


def test_a_short_label_stands_for_its_note() -> None:
    note = Note("BERTScore: all-MiniLM-L6-v2 — the packaged encoder …", WARNING, label="raw F1")
    assert note.chip() == "raw F1"


def test_scoring_notes_leave_the_scores_table_its_rows(qtbot) -> None:
    panel = ScoresPanel()
    qtbot.addWidget(panel)
    panel.resize(1360, 640)
    panel.show()
    qtbot.waitExposed(panel)
    height = panel.tabs.height()
    panel.job_finished("Scored 2,933 texts in 7.6 s.", NOTES)
    qtbot.wait(50)
    assert "Note:" not in panel.progress_label.text()
    assert panel.notes.texts() == [n.rstrip(".") for n in NOTES]
    # the tabs (table and detail) lose no more than a line of chips and the message line
    assert height - panel.tabs.height() <= 2 * 32, (height, panel.tabs.height())


def test_notes_show_as_text_never_as_escaped_markup(qtbot) -> None:
    """A note with a line break and an apostrophe: its chip's tooltip (also the "+N more"
    one) and the unfolded list read as the note's words, with no "<br>" or "&#x27;"."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import Qt as GuiQt  # mightBeRichText lives in QtGui's Qt
    from PySide6.QtGui import QTextDocument

    chips = NoteChips(max_chips=2)
    qtbot.addWidget(chips)
    note = "METEOR left out: nltk's WordNet is missing\nset a folder in Score…"
    chips.set_notes([Note(n) for n in (note, "second <kept> note", note)])

    def shown(rich: str) -> str:
        assert GuiQt.mightBeRichText(rich)  # Qt shows it as rich text, not as its source
        document = QTextDocument()
        document.setHtml(rich)
        return document.toPlainText()

    for chip in chips.chips:
        words = shown(chip.toolTip())
        assert "nltk's WordNet" in words and "<br>" not in words and "&#" not in words
    assert "second <kept> note" in shown(chips.chips[0].toolTip()) or "second <kept> note" in (
        shown(chips.chips[1].toolTip())
    )
    assert chips.full.textFormat() == Qt.TextFormat.RichText
    full = shown(chips.full.text())
    assert full.count("nltk's WordNet is missing") == 2 and "<br>" not in full
