"""Annotate's Known answer… dialog: make the text shown a golden item (the answer other
annotators' ratings of it are checked against, Agreement ▸ Accuracy on golden items), or
remove its known answer. The dialog only asks; the panel's controller applies the edit
(``core.edits.ratings.GoldenEdit``) through the session's undo stack."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPushButton,
    QWidget,
)

from core.annotation import ADEQUACY_LABELS
from widgets.dialogs import FittedDialog

NOT_GIVEN = "not given"
FLUENCY_VALUES = range(6)  # 0–5, as the rating form's buttons


class GoldenAnswerDialog(FittedDialog):
    """The known fluency and adequacy of one text, filled in from the rating form.

    Accepted with :meth:`answer` the values to set, or ``None`` when "Remove known
    answer" was pressed."""

    def __init__(
        self,
        fluency: int | None,
        adequacy: int | None,
        parent: QWidget | None = None,
        *,
        who: str = "",
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Known answer")
        self.removing = False
        note = QLabel(
            "A text with a known answer is a golden item: other annotators' ratings of "
            "it are checked against this answer (Agreement tab, accuracy on golden "
            "items). It is never shown to them as such."
            + (f" The answer is given by {who}." if who else "")
        )
        note.setWordWrap(True)
        self.fluency = QComboBox()
        self.fluency.addItem(NOT_GIVEN, None)
        for value in FLUENCY_VALUES:
            self.fluency.addItem(str(value), value)
        self.adequacy = QComboBox()
        self.adequacy.addItem(NOT_GIVEN, None)
        for code, label in ADEQUACY_LABELS.items():
            self.adequacy.addItem(label, code)
        self.fluency.setCurrentIndex(max(self.fluency.findData(fluency), 0))
        self.adequacy.setCurrentIndex(max(self.adequacy.findData(adequacy), 0))
        self.fluency.currentIndexChanged.connect(self._check)
        self.adequacy.currentIndexChanged.connect(self._check)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.set_button = QPushButton("Set known answer")
        self.set_button.setDefault(True)
        self.remove_button = QPushButton("Remove known answer")
        self.remove_button.setToolTip("The text is no longer a golden item")
        buttons.addButton(self.set_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(self.remove_button, QDialogButtonBox.ButtonRole.DestructiveRole)
        self.set_button.clicked.connect(self.accept)
        self.remove_button.clicked.connect(self._remove)
        buttons.rejected.connect(self.reject)

        form = QFormLayout(self)
        form.addRow(note)
        form.addRow("Fluency (0–5)", self.fluency)
        form.addRow("Adequacy", self.adequacy)
        form.addRow(buttons)
        self._check()

    def _check(self) -> None:
        # A known answer needs a fluency, an adequacy or both.
        given = self.fluency.currentData() is not None or self.adequacy.currentData() is not None
        self.set_button.setEnabled(given)

    def _remove(self) -> None:
        self.removing = True
        self.accept()

    def answer(self) -> tuple[int | None, int | None] | None:
        """(fluency, adequacy) to set, or None: remove the known answer."""
        if self.removing:
            return None
        return self.fluency.currentData(), self.adequacy.currentData()
