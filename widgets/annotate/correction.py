"""The correction editor of the Annotate panel: the corrected text, a word diff against
the original, and promotion of the correction to a gold reference."""

from __future__ import annotations

import difflib
import html
import re

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

# Words and punctuation marks, each with the spaces after it (so a changed phrase is one
# marked run, not a word-space-word patchwork).
_TOKEN = re.compile(r"\w+\s*|[^\w\s]\s*|\s+")


def diff_html(original: str, corrected: str) -> str:
    """A word diff of ``corrected`` against ``original`` as Qt rich text: deletions struck
    through on red, insertions underlined on green (difflib on words and punctuation)."""
    a, b = _TOKEN.findall(original), _TOKEN.findall(corrected)
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(html.escape("".join(a[i1:i2])))
            continue
        if op in ("delete", "replace"):
            out.append(
                "<span style='background:#f6c9c9;color:#8a1c1c;"
                "text-decoration:line-through'>"
                f"{html.escape(''.join(a[i1:i2]))}</span>"
            )
        if op in ("insert", "replace"):
            out.append(
                "<span style='background:#c9efc9;color:#145214;"
                "text-decoration:underline'>"
                f"{html.escape(''.join(b[j1:j2]))}</span>"
            )
    return "".join(out)


class CorrectionEditor(QGroupBox):
    """The corrected text, with a word diff against the original, that can be promoted
    to a gold reference."""

    promote_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Correction (C; Esc to leave)", parent)
        self.original = ""
        self.edit = QPlainTextEdit()
        self.edit.setPlaceholderText("Correct the text here (optional)")
        self.edit.setTabChangesFocus(True)
        self.edit.setMaximumHeight(90)
        self.edit.textChanged.connect(self._show_diff)
        self.diff_view = QTextBrowser()
        self.diff_view.setMaximumHeight(70)
        self.diff_view.setPlaceholderText("The diff against the original shows here")
        self.diff_view.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        reset = QPushButton("Reset")
        reset.setToolTip("Back to the original text")
        reset.clicked.connect(lambda: self.edit.setPlainText(self.original))
        self.promote_button = QPushButton("Promote to gold reference")
        self.promote_button.setToolTip(
            "Save the rating with this correction and make the "
            "corrected text a gold reference of the unit (who, when "
            "and from which text are kept)"
        )
        self.promote_button.clicked.connect(self.promote_requested)
        layout = QVBoxLayout(self)
        layout.addWidget(self.edit)
        layout.addWidget(self.diff_view)
        buttons = QHBoxLayout()
        buttons.addWidget(reset)
        buttons.addStretch(1)
        buttons.addWidget(self.promote_button)
        layout.addLayout(buttons)

    def show_text(self, original: str, corrected: str | None) -> None:
        """The original text, and the correction in the editor (else the original)."""
        self.original = original
        self.edit.setPlainText(corrected or original)
        self._show_diff()

    def corrected_text(self) -> str | None:
        """The correction, only when it differs from the original."""
        corrected = self.edit.toPlainText().strip()
        return corrected if corrected and corrected != self.original.strip() else None

    def focus(self) -> None:
        self.edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.edit.moveCursor(self.edit.textCursor().MoveOperation.End)

    def _show_diff(self) -> None:
        text = self.edit.toPlainText()
        changed = bool(self.original) and text.strip() != self.original.strip()
        self.diff_view.setHtml(diff_html(self.original, text) if changed else "")
        self.promote_button.setEnabled(changed and bool(text.strip()))
