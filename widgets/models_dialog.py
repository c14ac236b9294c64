"""The Models dialog: the models on this machine, and pulling one from the Hugging Face
hub (its size first, then progress with speed and time left, Cancel).

It renders a :class:`core.local_models.catalog_state.ModelsState` and emits requests; the controller
(``app/models.py``) runs the work as jobs. It never opens a socket or a file itself.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.local_models.catalog_state import IDLE, PULLING, ModelsState
from core.local_models.loader import human_size
from widgets.dialogs import FittedDialog

COLUMNS = ("Model", "Kind", "Size", "Languages", "Where")


class ModelsDialog(FittedDialog):
    check_requested = Signal()  # size of state.repo_id on the hub
    pull_requested = Signal()
    cancel_requested = Signal()
    remove_requested = Signal(str)  # a cached model's id, confirmed by the user
    refresh_requested = Signal()

    def __init__(self, state: ModelsState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models")
        self.state = state
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(
            len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch
        )
        self.remove_button = QPushButton("Remove…")
        self.refresh_button = QPushButton("Refresh")
        self.repo_edit = QLineEdit()
        self.repo_edit.setPlaceholderText("ORG/NAME, e.g. google/flan-t5-small")
        self.revision_edit = QLineEdit()
        self.revision_edit.setPlaceholderText("main")
        self.revision_edit.setMaximumWidth(120)
        self.check_button = QPushButton("Check size")
        self.pull_button = QPushButton("Pull")
        self.cancel_button = QPushButton("Cancel")
        self.progress_bar = QProgressBar()
        self.progress_label = QLabel()
        self.message_label = QLabel()
        self.message_label.setWordWrap(True)
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        listed = QHBoxLayout()
        listed.addStretch(1)
        listed.addWidget(self.refresh_button)
        listed.addWidget(self.remove_button)
        asked = QHBoxLayout()
        asked.addWidget(QLabel("Pull from the hub:"))
        asked.addWidget(self.repo_edit, 1)
        asked.addWidget(QLabel("revision"))
        asked.addWidget(self.revision_edit)
        asked.addWidget(self.check_button)
        asked.addWidget(self.pull_button)
        asked.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addLayout(listed)
        layout.addLayout(asked)
        layout.addWidget(self.progress_bar)
        layout.addWidget(self.progress_label)
        layout.addWidget(self.message_label)
        closing = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        closing.rejected.connect(self.reject)
        layout.addWidget(closing)

        self.repo_edit.textEdited.connect(self._asked)
        self.revision_edit.textEdited.connect(self._asked)
        self.repo_edit.returnPressed.connect(self.check_requested)
        self.check_button.clicked.connect(self.check_requested)
        self.pull_button.clicked.connect(self.pull_requested)
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.refresh_button.clicked.connect(self.refresh_requested)
        self.remove_button.clicked.connect(self._ask_remove)
        self.table.itemSelectionChanged.connect(self._render_buttons)
        state.watch(lambda _changes: self.render())
        self.render()
        self.resize(820, 420)

    def _asked(self, _text: str = "") -> None:
        self.state.ask(self.repo_edit.text(), self.revision_edit.text())

    def selected_model(self) -> Any:
        rows = {i.row() for i in self.table.selectedItems()}
        if len(rows) != 1:
            return None
        return self.state.models[rows.pop()]

    def _ask_remove(self) -> None:
        model = self.selected_model()
        if model is None or model.source != "hf-cache":
            return
        answer = QMessageBox.question(
            self,
            "Remove model",
            f"Delete {model.name} ({human_size(model.size_bytes)}) from the Hugging Face "
            "cache? Other tools that use it will download it again.",
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.remove_requested.emit(model.name)

    def render(self) -> None:
        state = self.state
        names = [self.table.item(r, 0).text() for r in range(self.table.rowCount())]
        if names != [m.name for m in state.models]:
            self.table.setRowCount(len(state.models))
            for row, model in enumerate(state.models):
                cells = (
                    model.name,
                    model.kind,
                    human_size(model.size_bytes),
                    ", ".join(model.languages) or "–",
                    str(model.path),
                )
                for column, text in enumerate(cells):
                    item = QTableWidgetItem(text)
                    item.setToolTip(text)
                    self.table.setItem(row, column, item)
            self.table.resizeColumnsToContents()
        if self.repo_edit.text().strip() != state.repo_id:
            self.repo_edit.setText(state.repo_id)
        if self.revision_edit.text().strip() != state.revision:
            self.revision_edit.setText(state.revision)
        progress = state.progress
        pulling = state.busy == PULLING
        self.progress_bar.setVisible(pulling or progress is not None)
        if progress is not None and progress[1]:
            self.progress_bar.setRange(0, 1000)
            self.progress_bar.setValue(int(1000 * progress[0] / progress[1]))
        elif pulling:
            self.progress_bar.setRange(0, 0)  # busy: the size is not known yet
        self.progress_label.setText(progress[2] if progress is not None else "")
        self.message_label.setText(state.message)
        self._render_buttons()

    def _render_buttons(self) -> None:
        state = self.state
        idle = state.busy == IDLE
        self.check_button.setEnabled(state.can_pull)
        self.pull_button.setEnabled(state.can_pull)
        self.cancel_button.setEnabled(state.busy == PULLING)
        self.repo_edit.setEnabled(idle)
        self.revision_edit.setEnabled(idle)
        selected = self.selected_model() if idle else None
        self.remove_button.setEnabled(selected is not None and selected.source == "hf-cache")
        self.refresh_button.setEnabled(idle)
