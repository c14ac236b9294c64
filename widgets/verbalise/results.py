"""The Verbalise panel's Results tab (the last run's summary, the session's runs, a unit's
outputs) and its run bar (progress, Run, Cancel)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from widgets.theme import recoloured, themed_text
from widgets.verbalise.common import OUTPUT_COLUMNS, RED, RUN_COLUMNS, item, table, wrapping

if TYPE_CHECKING:
    from core.verbalise.runs import RunOverview, UnitOutput


class ResultsView(QWidget):
    """The last run's summary, the session's runs (newest first) and, for the selected
    run, the unit's outputs with the raw reply of the selected one."""

    run_selected = Signal(int)  # a run in the runs table
    scope_changed = Signal()  # the selected unit's texts, or every text of the run

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary_label = wrapping("No run yet in this session.")
        self.runs_model = QStandardItemModel(0, len(RUN_COLUMNS))
        self.runs_model.setHorizontalHeaderLabels(list(RUN_COLUMNS))
        self.runs_view = table(self.runs_model)
        # Each column as wide as its words, none stretched: a "texts" column across the
        # whole table read as the one that mattered, beside squeezed model and status.
        self.runs_view.horizontalHeader().setStretchLastSection(False)
        self.runs_view.selectionModel().currentRowChanged.connect(self._on_run_row)
        self.outputs_label = wrapping()
        self.scope_combo = QComboBox()
        self.scope_combo.addItem("The selected unit's texts (else the run's)", "unit")
        self.scope_combo.addItem("Every text of the run", "run")
        self.scope_combo.setToolTip(
            "Browse what the selected run wrote: for the unit selected in the Units panel, "
            "or every text of the run"
        )
        self.scope_combo.currentIndexChanged.connect(lambda _i: self.scope_changed.emit())
        self.outputs_model = QStandardItemModel(0, len(OUTPUT_COLUMNS))
        self.outputs_model.setHorizontalHeaderLabels(list(OUTPUT_COLUMNS))
        self.outputs_view = table(self.outputs_model)
        # The unit first on screen (the model keeps lang, #, text, unit).
        self.outputs_view.horizontalHeader().moveSection(len(OUTPUT_COLUMNS) - 1, 0)
        self.outputs_view.selectionModel().currentRowChanged.connect(self._on_output_row)
        # Rows as tall as their wrapped text at the column's width now: sized while the
        # tab was hidden (its columns a few pixels wide), a row stayed hundreds of pixels
        # tall and showed as a blank band with its text far below.
        self._rows_timer = QTimer(self)
        self._rows_timer.setSingleShot(True)
        self._rows_timer.setInterval(0)
        self._rows_timer.timeout.connect(self.outputs_view.resizeRowsToContents)
        self.outputs_view.horizontalHeader().sectionResized.connect(
            lambda *_: self._rows_timer.start()
        )
        self.raw_view = QPlainTextEdit()
        self.raw_view.setReadOnly(True)
        self.raw_view.setPlaceholderText("Select an output to see the model's raw reply")

        runs_box = QWidget()
        runs_layout = QVBoxLayout(runs_box)
        runs_layout.setContentsMargins(0, 0, 0, 0)
        runs_layout.addWidget(self.summary_label)
        runs_layout.addWidget(QLabel("<b>Runs in the session</b>"))
        runs_layout.addWidget(self.runs_view, 1)
        outputs_box = QWidget()
        outputs_layout = QVBoxLayout(outputs_box)
        outputs_layout.setContentsMargins(0, 0, 0, 0)
        outputs_layout.addWidget(self.scope_combo)
        outputs_layout.addWidget(self.outputs_label)
        outputs_layout.addWidget(self.outputs_view, 2)
        outputs_layout.addWidget(QLabel("Raw reply"))
        outputs_layout.addWidget(self.raw_view, 1)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(runs_box)
        splitter.addWidget(outputs_box)
        splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)

    def show_runs(self, runs: Sequence[RunOverview], select: int | None) -> None:
        """The session's runs, newest first; ``select`` is the run to show."""
        self.runs_view.selectionModel().blockSignals(True)
        self.runs_model.removeRows(0, self.runs_model.rowCount())
        for run in runs:
            # A cancelled, failed or wholly unparsable run says so in every run list.
            marks = run.marks
            extra = marks.removeprefix(run.status).lstrip(", ")
            status = item(run.status + (f" · {extra}" if extra else ""))
            if run.status in ("failed", "cancelled") or "all unparsable" in marks:
                status.setForeground(RED)
                status.setToolTip(
                    "Left out of the report by default: " + (marks if marks else run.status)
                )
            self.runs_model.appendRow(
                [
                    item(str(run.id), run.id),
                    item(run.model),
                    item(run.kind),
                    status,
                    item(f"{run.texts:,}"),
                ]
            )
        self.runs_view.selectionModel().blockSignals(False)
        for row in range(self.runs_model.rowCount()):
            if self.runs_model.item(row, 0).data(Qt.ItemDataRole.UserRole) == select:
                self.runs_view.selectRow(row)
                break

    def scope(self) -> str:
        return str(self.scope_combo.currentData())

    def show_outputs(
        self, title: str, outputs: Sequence[UnitOutput], uids: Sequence[str] = ()
    ) -> None:
        """Outputs of one run (a unit's, or the run's: ``uids`` names each one's unit),
        each with its raw reply (an unparsable one in red, with the reason)."""
        themed_text(self.outputs_label, lambda: recoloured(title))
        self.outputs_model.removeRows(0, self.outputs_model.rowCount())
        self.raw_view.clear()
        units = list(uids) or [""] * len(outputs)
        for output, uid in zip(outputs, units, strict=True):
            reason = output.reason or "no answer marker in the reply"
            text = item(output.text if output.parse_ok else f"unparsable: {reason}", output.raw)
            if not output.parse_ok:
                text.setForeground(RED)
                text.setToolTip(f"Not parsed ({reason}); the raw reply is kept")
            self.outputs_model.appendRow(
                [item(output.lang), item(str(output.index)), text, item(uid)]
            )
        self.outputs_view.resizeRowsToContents()
        if self.outputs_model.rowCount():
            self.outputs_view.selectRow(0)

    def _on_run_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            cell = self.runs_model.item(current.row(), 0)
            self.run_selected.emit(int(cell.data(Qt.ItemDataRole.UserRole)))

    def _on_output_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            cell = self.outputs_model.item(current.row(), 2)
            self.raw_view.setPlainText(str(cell.data(Qt.ItemDataRole.UserRole) or ""))


class RunBar(QWidget):
    """Progress of the run in progress, its last message, Run and Cancel."""

    run_requested = Signal()
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("idle")
        self.progress_label = wrapping()
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Verbalise the chosen units with the chosen model")
        self.run_button.clicked.connect(self.run_requested)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop after the batch in progress; what is done is kept")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel_requested)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(self.progress, 1)
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        layout.addLayout(row)
        layout.addWidget(self.progress_label)

    def set_running(self, running: bool, title: str = "") -> None:
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        if running:
            self.progress.setRange(0, 1)
            self.progress.setValue(0)
            self.progress.setFormat("starting")
            self.progress_label.setText(title)

    def show_progress(self, done: float, total: float | None, message: str) -> None:
        if total:
            self.progress.setRange(0, int(total))
            self.progress.setValue(int(done))
            self.progress.setFormat(f"{int(done):,} / {int(total):,} unit-languages")
        else:
            self.progress.setRange(0, 1)
            self.progress.setValue(0)
            self.progress.setFormat(message or "working")
        self.progress_label.setText(message)

    def show_finished(self, status: str, line: str) -> None:
        self.set_running(False)
        if self.progress.maximum() <= 1 and status != "finished":
            self.progress.setFormat(status)
        elif status == "finished":
            self.progress.setRange(0, 1)
            self.progress.setValue(1)
            self.progress.setFormat("finished")
        else:
            self.progress.setFormat(
                f"{status} at {self.progress.value():,} / {self.progress.maximum():,}"
            )
        self.progress_label.setText(line)
