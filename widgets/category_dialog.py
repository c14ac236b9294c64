"""Dialog to add a category or edit a category's SPARQL membership pattern."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.wikidata.categories import Category, default_pattern
from widgets.dialogs import FittedDialog


class CategoryDialog(FittedDialog):
    """Collects name, class, membership property and pattern; the caller validates."""

    def __init__(self, category: Category | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Edit category" if category else "New category")
        self.name_edit = QLineEdit(category.name if category else "")
        self.name_edit.setReadOnly(category is not None)
        self.class_edit = QLineEdit(category.class_qid if category else "")
        self.class_edit.setPlaceholderText("Q515")
        self.property_combo = QComboBox()
        self.property_combo.setEditable(True)
        self.property_combo.addItems(["P31", "P106"])
        self.property_combo.setToolTip("P31 (instance of) for things, P106 (occupation) for people")
        if category:
            self.property_combo.setCurrentText(category.membership_property)
        self.pattern_edit = QPlainTextEdit(category.pattern if category else "")
        self.pattern_edit.setPlaceholderText("?item wdt:P31/wdt:P279* wd:Q515 .")
        self.pattern_edit.setMinimumHeight(80)
        reset = QPushButton("Default pattern")
        reset.setToolTip("?item wdt:PROPERTY/wdt:P279* wd:CLASS .")
        reset.clicked.connect(self._reset_pattern)
        note = QLabel(
            "The pattern binds <tt>?item</tt> with triple patterns over Wikidata's vocabulary "
            "(<tt>wd:</tt>, <tt>wdt:</tt>, <tt>p:</tt>, <tt>ps:</tt>, …), property paths and "
            "UNION; nothing else (no SERVICE, FILTER, VALUES or other IRIs). It is checked "
            "before it is saved and before every query. Changing the pattern of a category "
            "drops the members fetched with the old one."
        )
        note.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Name", self.name_edit)
        form.addRow("Class", self.class_edit)
        form.addRow("Membership", self.property_combo)
        form.addRow("Pattern", self.pattern_edit)
        form.addRow("", reset)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(buttons)
        self._generated = ""
        if category is None:
            # Follow class and property with the default pattern until the user edits it.
            self._reset_pattern()
            self.class_edit.textChanged.connect(lambda _t: self._follow_default())
            self.property_combo.currentTextChanged.connect(lambda _t: self._follow_default())

    def values(self) -> tuple[str, str, str, str]:
        return (
            self.name_edit.text().strip(),
            self.class_edit.text().strip(),
            self.property_combo.currentText().strip(),
            self.pattern_edit.toPlainText().strip(),
        )

    def _reset_pattern(self) -> None:
        self._generated = default_pattern(
            self.class_edit.text().strip() or "Q…",
            self.property_combo.currentText().strip() or "P31",
        )
        self.pattern_edit.setPlainText(self._generated)

    def _follow_default(self) -> None:
        if self.pattern_edit.toPlainText() == self._generated:
            self._reset_pattern()
