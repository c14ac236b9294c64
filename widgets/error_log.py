"""Non-modal error log: every failure a user should know about, with its details.

Failures land here instead of in a stack of modal dialogs, so a long job that fails
at 2 a.m. leaves a readable record and the window stays usable.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QHBoxLayout,
    QListView,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)


@dataclass(frozen=True)
class ErrorEntry:
    when: datetime
    source: str
    message: str
    details: str = ""

    def summary(self) -> str:
        return f"{self.when:%H:%M:%S}  {self.source}: {self.message}"


class ErrorLogModel(QAbstractListModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.entries: list[ErrorEntry] = []

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.entries)

    def data(
        self,
        index: QModelIndex | QPersistentModelIndex,
        role: int = Qt.ItemDataRole.DisplayRole,
    ) -> object:
        if not index.isValid():
            return None
        entry = self.entries[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return entry.summary()
        if role == Qt.ItemDataRole.ToolTipRole:
            return entry.message
        return None

    def append(self, entry: ErrorEntry) -> None:
        row = len(self.entries)
        self.beginInsertRows(QModelIndex(), row, row)
        self.entries.append(entry)
        self.endInsertRows()

    def clear(self) -> None:
        self.beginResetModel()
        self.entries.clear()
        self.endResetModel()


class ErrorLogPanel(QWidget):
    """List of errors on the left, the selected one's details (traceback) beside it: a low
    strip that fits the bottom of the window."""

    entry_added = Signal(object)

    def __init__(self, log_file: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ErrorLogModel(self)  # deleted with the panel
        self.list_view = QListView()
        self.list_view.setModel(self.model)
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.details.setPlaceholderText(
            "Select an error to see its details."
            + (f"\nEverything here is also written to {log_file}" if log_file else "")
        )
        clear = QPushButton("Clear")
        clear.clicked.connect(self._clear)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addStretch(1)
        buttons.addWidget(clear)
        list_column = QWidget()  # the list with its Clear button: no row of its own
        list_layout = QVBoxLayout(list_column)
        list_layout.setContentsMargins(0, 0, 0, 0)
        list_layout.addWidget(self.list_view, 1)
        list_layout.addLayout(buttons)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(list_column)
        splitter.addWidget(self.details)
        splitter.setStretchFactor(1, 2)
        for view in (self.list_view, self.details):
            view.setMinimumHeight(40)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addWidget(splitter, 1)
        self.list_view.selectionModel().currentChanged.connect(self._show_details)

    def add(self, source: str, message: str, details: str = "") -> ErrorEntry:
        entry = ErrorEntry(datetime.now(), source, message, details)
        self.model.append(entry)
        index = self.model.index(len(self.model.entries) - 1)
        self.list_view.setCurrentIndex(index)
        self.entry_added.emit(entry)
        return entry

    def _show_details(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid():
            self.details.clear()
            return
        entry = self.model.entries[current.row()]
        text = f"{entry.when:%Y-%m-%d %H:%M:%S}  {entry.source}\n\n{entry.message}"
        if entry.details:
            text += f"\n\n{entry.details}"
        self.details.setPlainText(text)

    def _clear(self) -> None:
        self.model.clear()
        self.details.clear()
