"""The ESA synonym editor (Scores panel ▸ Synonyms…): the session's ``entity_synonyms``.

A table of rows (entity, synonym, language, source), fields to add one, and buttons to
remove the selected rows, import a file and add the bundled starter set. The dialog only
shows rows and asks: ``app.scores.synonyms`` does the work through
:mod:`core.metrics.esa.synonyms` and answers with :meth:`SynonymDialog.show_rows` and
:meth:`SynonymDialog.show_message` (a refused row is shown in red, with its reason).
CLI twin: ``taillens synonyms``.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from widgets.dialogs import FittedDialog
from widgets.theme import themed_style_sheet, tone

HEADERS = ("entity", "synonym", "language", "source")


class SynonymDialog(FittedDialog):
    add_requested = Signal(str, str, str)  # entity, synonym, lang ('' = every language)
    remove_requested = Signal(list)  # [(entity, synonym, lang), ...]
    import_requested = Signal(str)  # a file path
    seed_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("ESA synonyms")
        self.resize(640, 480)
        intro = QLabel(
            "ESA finds an entity by its label, its aliases and the synonyms below "
            "(Spain / Spanish, Texas / TX). Either side of a row finds the other. "
            "The table is stored in the session and used the next time ESA "
            "scores."
        )
        intro.setWordWrap(True)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setHorizontalHeaderLabels(list(HEADERS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.entity_edit = QLineEdit()
        self.entity_edit.setPlaceholderText("entity (as labels show it)")
        self.synonym_edit = QLineEdit()
        self.synonym_edit.setPlaceholderText("synonym")
        self.lang_edit = QLineEdit()
        self.lang_edit.setPlaceholderText("lang (empty: all)")
        self.lang_edit.setMaximumWidth(110)
        self.add_button = QPushButton("Add")
        self.add_button.clicked.connect(self._add)
        self.synonym_edit.returnPressed.connect(self._add)
        self.remove_button = QPushButton("Remove selected")
        self.remove_button.clicked.connect(self._remove)
        self.import_button = QPushButton("Import file…")
        self.import_button.setToolTip(
            "Tab-separated (.tsv, .txt) or comma-separated (.csv): "
            "entity, synonym, optional language; # comments"
        )
        self.import_button.clicked.connect(self._import)
        self.seed_button = QPushButton("Add starter set")
        self.seed_button.setToolTip(
            "Country / demonym, US state / abbreviation, United "
            "States / U.S. / American, language names, units"
        )
        self.seed_button.clicked.connect(self.seed_requested)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)

        add_row = QHBoxLayout()
        for widget in (self.entity_edit, self.synonym_edit, self.lang_edit, self.add_button):
            add_row.addWidget(widget)
        actions = QHBoxLayout()
        for widget in (self.remove_button, self.import_button, self.seed_button):
            actions.addWidget(widget)
        actions.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.table, 1)
        layout.addLayout(add_row)
        layout.addLayout(actions)
        layout.addWidget(self.message)
        layout.addWidget(buttons)

    # -- what the controller shows -------------------------------------------------------
    def show_rows(self, rows: Sequence[tuple[str, str, str, str]]) -> None:
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                shown = value or ("all" if c == 2 else "")
                self.table.setItem(r, c, QTableWidgetItem(shown))
                self.table.item(r, c).setData(Qt.ItemDataRole.UserRole, value)

    def show_message(self, text: str, *, error: bool = False) -> None:
        themed_style_sheet(
            self.message,
            lambda p: (
                f"color: {tone('error', p)};"
                if error
                else f"color: {p.color(QPalette.ColorRole.WindowText).name()};"
            ),
        )
        self.message.setText(text)

    def rows(self) -> list[tuple[str, str, str, str]]:
        return [
            tuple(
                self.table.item(r, c).data(Qt.ItemDataRole.UserRole)  # type: ignore[misc]
                for c in range(len(HEADERS))
            )
            for r in range(self.table.rowCount())
        ]

    # -- requests ------------------------------------------------------------------------
    def _add(self) -> None:
        self.add_requested.emit(
            self.entity_edit.text(), self.synonym_edit.text(), self.lang_edit.text()
        )

    def clear_fields(self) -> None:
        self.entity_edit.clear()
        self.synonym_edit.clear()

    def _remove(self) -> None:
        chosen = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        rows = self.rows()
        if chosen:
            self.remove_requested.emit([rows[r][:3] for r in chosen])
        else:
            self.show_message("Select the rows to remove first.", error=True)

    def _import(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Import synonyms", "", "Synonym tables (*.tsv *.txt *.csv);;All files (*)"
        )
        if path:
            self.import_requested.emit(path)
