"""The Units panel's Search… dialog: a knowledge beam search (LINK, METHODS §3).

The user writes a unit template with variables (``?x P19 ?a . ?a P17 ?b``), names the
root's class (a category or a class QID) and a local causal model, and picks the
direction (tail, head or both), the beam width, the share kept per step and how many
units to save. The dialog only collects the values; app/units.py checks them and runs
the search as a job.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QComboBox,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from core.vocab import LANGUAGES
from widgets.dialogs import FittedDialog

if TYPE_CHECKING:
    from core.units.beam_search import SearchRequest

DEFAULT_TEMPLATE = "?x P17 ?a . ?a P36 ?b"


class UnitSearchDialog(FittedDialog):
    """Template, root class, model and the search's settings."""

    def __init__(
        self, parent: QWidget | None = None, *, category: str | None = None, model: str = ""
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Search units")
        self.template = QLineEdit(DEFAULT_TEMPLATE)
        self.template.setToolTip(
            "Patterns '?subject Pnn ?object' joined by ' . '; the first "
            "subject is the root, each pattern binds a new variable"
        )
        self.root_kind = QComboBox()
        self.root_kind.addItem("Category", "category")
        self.root_kind.addItem("Class QID", "class")
        self.root = QLineEdit(category or "")
        self.root.setPlaceholderText("City, or a class id like Q515")
        if category is None:
            self.root_kind.setCurrentIndex(1)
            self.root.setText("Q515")
        root_row = QHBoxLayout()
        root_row.addWidget(self.root_kind)
        root_row.addWidget(self.root, 1)
        self.model = QLineEdit(model)
        self.model.setPlaceholderText("causal LM folder or cached HF id")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        model_row.addWidget(browse)
        self.direction = QComboBox()
        for value, text in (
            ("both", "both (reports δ)"),
            ("tail", "tail (lowest first)"),
            ("head", "head (highest first)"),
        ):
            self.direction.addItem(text, value)
        self.beam = _spin(1, 100_000, 200)
        self.beam.setToolTip("At most this many partial statements kept per step (LINK: 200)")
        self.keep = QDoubleSpinBox()
        self.keep.setRange(0.01, 1.0)
        self.keep.setSingleStep(0.05)
        self.keep.setValue(0.75)
        self.keep.setToolTip("Share of each step's candidates kept (LINK: 75 %)")
        self.units = _spin(1, 10_000, 20)
        self.lang = QComboBox()
        self.lang.addItems(list(LANGUAGES))
        form = QFormLayout(self)
        form.addRow("Template", self.template)
        form.addRow("Root", root_row)
        form.addRow("Model", model_row)
        form.addRow("Direction", self.direction)
        form.addRow("Beam width", self.beam)
        form.addRow("Keep per step", self.keep)
        form.addRow("Units per direction", self.units)
        form.addRow("Language", self.lang)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Model folder", self.model.text())
        if folder:
            self.model.setText(folder)

    def request(self) -> SearchRequest:
        """The search asked for (app/units.py checks it and runs it)."""
        from core.units.beam_search import SearchRequest

        root = self.root.text().strip()
        by_class = self.root_kind.currentData() == "class"
        return SearchRequest(
            template=self.template.text(),
            model=self.model.text().strip(),
            class_qid=root if by_class else None,
            category=None if by_class else root,
            direction=self.direction.currentData(),
            beam=self.beam.value(),
            keep=round(self.keep.value(), 4),
            units=self.units.value(),
            lang=self.lang.currentText(),
        )


def _spin(low: int, high: int, value: int) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    spin.setValue(value)
    return spin
