"""The session's edit history (Edit ▸ Session history…): every edit made to the session,
oldest first, with who made it, when, from where (the window or which command), its kind,
what it did and whether it stands (applied, undone, redone).

Filters by kind, unit and annotator ask ``app.edits`` (``filters_changed``), which reads
the history off the UI thread and answers with :meth:`HistoryDialog.show_entries`. The
dialog holds no database. CLI twin: ``taillens history --session S``.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from widgets.dialogs import FittedDialog

HEADERS = ("id", "when", "who", "from", "kind", "status", "what")


class HistoryDialog(FittedDialog):
    # kind ('' = every kind), unit id (None = every unit), annotator ('' = everyone)
    filters_changed = Signal(str, object, str)

    def __init__(self, kinds: Sequence[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Session history")
        self.resize(820, 480)
        self.kind_combo = QComboBox()
        self.kind_combo.addItem("every kind", "")
        for kind in kinds:
            self.kind_combo.addItem(kind, kind)
        self.unit_edit = QLineEdit()
        self.unit_edit.setPlaceholderText("unit id")
        self.unit_edit.setMaximumWidth(100)
        self.annotator_edit = QLineEdit()
        self.annotator_edit.setPlaceholderText("annotator")
        self.annotator_edit.setMaximumWidth(160)
        self.count_label = QLabel()
        filters = QHBoxLayout()
        filters.addWidget(QLabel("Kind"))
        filters.addWidget(self.kind_combo)
        filters.addWidget(QLabel("Unit"))
        filters.addWidget(self.unit_edit)
        filters.addWidget(QLabel("Annotator"))
        filters.addWidget(self.annotator_edit)
        filters.addStretch(1)
        filters.addWidget(self.count_label)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setHorizontalHeaderLabels(list(HEADERS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.kind_combo.currentIndexChanged.connect(lambda _i: self.ask())
        self.unit_edit.editingFinished.connect(self.ask)
        self.annotator_edit.editingFinished.connect(self.ask)

    def filters(self) -> tuple[str, int | None, str]:
        """The filters as set: kind ('' any), unit id (None any), annotator ('' any). A
        unit that is not a number is shown in red and filters nothing."""
        text = self.unit_edit.text().strip()
        unit = int(text) if text.isdigit() else None
        self.unit_edit.setStyleSheet("" if not text or unit is not None else "color: #c62828;")
        return self.kind_combo.currentData() or "", unit, self.annotator_edit.text().strip()

    def ask(self) -> None:
        self.filters_changed.emit(*self.filters())

    def show_entries(self, rows: Sequence[Sequence[object]]) -> None:
        """One row per edit, in HEADERS' order."""
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem("" if value is None else str(value)))
        self.count_label.setText(f"{len(rows):,} edit{'s' if len(rows) != 1 else ''}")
