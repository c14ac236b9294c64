"""The import dialog's language field: the language of WebNLG texts that carry none.

WebNLG 2017 files have no ``lang`` on their ``lex`` elements and WebNLG 2020 files an
empty one; the import then takes the language given here, else the language in the
file name (``…-en.xml``, ``_ru_``), else English."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from widgets.dialogs import FittedDialog


class ImportLanguageDialog(FittedDialog):
    def __init__(self, target: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Import: language of unmarked texts")
        note = QLabel(
            f"Importing <b>{target}</b>.<br>Texts with no language (WebNLG 2017) or an empty "
            "one (WebNLG 2020) take the language below; leave it empty to use the language "
            "in the file name (…-en.xml, _ru_), else English. The import report says which "
            "rule decided."
        )
        note.setWordWrap(True)
        self.lang_edit = QLineEdit()
        self.lang_edit.setObjectName("importLanguage")
        self.lang_edit.setPlaceholderText("from the file name, else en")
        self.lang_edit.setMaxLength(2)
        form = QFormLayout()
        form.addRow("Language (ISO 639-1):", self.lang_edit)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(note)
        layout.addLayout(form)
        layout.addWidget(buttons)

    def language(self) -> str:
        return self.lang_edit.text().strip().lower()


def ask_import_language(target: str, parent: QWidget | None = None) -> str | None:
    """The language typed ("" for the file-name rule), or None if the user cancelled."""
    dialog = ImportLanguageDialog(target, parent)
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return None
    return dialog.language()
