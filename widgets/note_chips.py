"""Notes as compact chips: one short line per note, the whole note in its tooltip.

After scoring, thirteen lines of "Note: run 1, es: 507 of 679 texts have no gold
reference…" pushed the Scores table down to five rows; the report's notes did the same to
its tables. A ``NoteChips`` row takes one line whatever the number of notes: each note is a
chip, elided to ``CHIP_CHARS`` characters, its full text in the tooltip; past ``max_chips``
one more chip says how many are left. Clicking a chip unfolds every note in full below the
row (and clicking again folds it). Warnings (a model not rescaled, a run left out) are
tinted; colours come from the palette, so the chips read in light and dark themes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from widgets.theme import themed_style_sheet

CHIP_CHARS = 42
INFO, WARNING = "info", "warning"


@dataclass(frozen=True)
class Note:
    text: str  # the whole note (the tooltip, and the unfolded list)
    kind: str = INFO  # INFO or WARNING
    label: str = ""  # the chip's words ("" : the text, elided)

    def chip(self) -> str:
        words = " ".join((self.label or self.text).split())
        return words if len(words) <= CHIP_CHARS else words[: CHIP_CHARS - 1].rstrip() + "…"


def notes_of(texts: Sequence[str], kind: str = INFO) -> list[Note]:
    return [Note(t.strip().rstrip("."), kind) for t in texts if t.strip()]


class NoteChips(QWidget):
    """A row of chips (``set_notes``); hidden while there is no note."""

    def __init__(self, parent: QWidget | None = None, *, max_chips: int = 4) -> None:
        super().__init__(parent)
        self.max_chips = max_chips
        self.notes: list[Note] = []
        self.chips: list[QToolButton] = []
        self.row = QHBoxLayout()
        self.row.setContentsMargins(0, 0, 0, 0)
        self.row.setSpacing(4)
        self.full = QLabel()  # every note in full, unfolded by a click on a chip
        self.full.setWordWrap(True)
        self.full.setTextFormat(Qt.TextFormat.RichText)  # never guessed: a note is text
        self.full.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.full.setVisible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(self.row)
        layout.addWidget(self.full)
        self.setVisible(False)

    def set_notes(self, notes: Sequence[Note]) -> None:
        self.notes = list(notes)
        for chip in self.chips:
            self.row.removeWidget(chip)
            chip.deleteLater()
        while self.row.count():  # the stretch
            self.row.takeAt(0)
        self.chips = []
        shown = (
            self.notes if len(self.notes) <= self.max_chips else self.notes[: self.max_chips - 1]
        )
        for note in shown:
            self._add_chip(note.chip(), _html(note.text), note.kind)
        rest = self.notes[len(shown) :]
        if rest:
            tip = "<br>".join(f"• {_html(n.text)}" for n in rest)
            warn = WARNING if any(n.kind == WARNING for n in rest) else INFO
            self._add_chip(f"+{len(rest)} more notes", tip, warn)
        self.row.addStretch(1)
        self.full.setText("<br>".join(f"• {_html(n.text)}" for n in self.notes))
        self.full.setVisible(False)
        self.setVisible(bool(self.notes))

    def texts(self) -> list[str]:
        return [n.text for n in self.notes]

    def _add_chip(self, text: str, tip: str, kind: str) -> None:
        chip = QToolButton()
        chip.setText(("⚠ " if kind == WARNING else "ⓘ ") + text)
        # <qt> makes the tooltip rich text whatever the note holds: Qt guesses from the
        # first line only, and a note with a line break showed "<br>•" and "&#x27;".
        chip.setToolTip(f"<qt>{tip}<br><i>Click to show every note in full.</i></qt>")
        chip.setAutoRaise(False)
        chip.setProperty("noteKind", kind)
        themed_style_sheet(chip, lambda palette: _chip_style(palette, kind))
        chip.clicked.connect(self._toggle)
        self.row.addWidget(chip)
        self.chips.append(chip)

    def _toggle(self) -> None:
        self.full.setVisible(not self.full.isVisible())


def _html(text: str) -> str:
    """A note as rich text that shows its characters as written, line breaks kept."""
    return escape(text, quote=False).replace("\n", "<br>")


def _chip_style(palette: QPalette, kind: str) -> str:
    text = palette.color(QPalette.ColorRole.WindowText)
    dark = text.lightness() > 128  # light text: a dark theme
    if kind == WARNING:
        background, border = ("#4a3a10", "#8a6d1e") if dark else ("#fff4d6", "#d9b44a")
    else:
        background, border = ("#2b3440", "#4b5a6c") if dark else ("#eef2f7", "#b9c4d2")
    return (
        f"QToolButton {{ background: {background}; border: 1px solid {border}; "
        f"border-radius: 8px; padding: 0px 6px; color: {text.name()}; }}"
    )
