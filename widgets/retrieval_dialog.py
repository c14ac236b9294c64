"""The Scores panel's Retrieval dialog (METHODS §7, EREDAT): the graphs closest to the
selected text, and the outputs that match their own graph worst.

Plain widgets: the dialog emits requests and shows what the controller (app/retrieval.py)
hands back; it never opens the session.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from widgets.dialogs import FittedDialog

if TYPE_CHECKING:
    from core.metrics.retrieval.job import RetrievalSummary
    from core.metrics.retrieval.ranking import GraphHit


@dataclass(frozen=True)
class RetrievalRow:
    """One line of either list: a cosine, a rank (None for a graph hit), the unit, the
    language and what to show (a linearised graph or a text)."""

    similarity: float
    rank: int | None
    unit_id: int
    lang: str
    shown: str
    key: Any = None  # a verbalisation id for an output


@dataclass(frozen=True)
class RetrievalOptions:
    """What either button asks for: the sentence encoder (None: the packaged default) and
    how many lines to list."""

    encoder: str | None = None
    top: int = 10


class RetrievalDialog(FittedDialog):
    find_requested = Signal(object)  # RetrievalOptions
    worst_requested = Signal(object)  # RetrievalOptions
    cancel_requested = Signal()
    output_chosen = Signal(int)  # a verbalisation id of the worst list

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Graph ↔ text retrieval")
        self.encoder_edit = QLineEdit()
        self.encoder_edit.setPlaceholderText("packaged all-MiniLM-L6-v2")
        self.encoder_edit.setToolTip(
            "A sentence encoder folder (e.g. one made by "
            "taillens train-encoder) or a cached Hugging Face id"
        )
        self.top_spin = QSpinBox()
        self.top_spin.setRange(1, 1000)
        self.top_spin.setValue(10)
        self.top_spin.setToolTip("How many lines to list")
        self.find_button = QPushButton("Find the graph behind this text")
        self.find_button.setToolTip(
            "Rank every unit's graph (in the text's language) by cosine with the selected text"
        )
        self.worst_button = QPushButton("Outputs that match their graph worst")
        self.worst_button.setToolTip(
            "Retrieval over the current run's outputs: top-1, "
            "top-5, MRR both ways, and the outputs with the lowest "
            "cosine to their own graph"
        )
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.find_button.clicked.connect(lambda: self.find_requested.emit(self.options()))
        self.worst_button.clicked.connect(lambda: self.worst_requested.emit(self.options()))
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.status_label = QLabel("Encodings are cached in the session per encoder.")
        self.status_label.setWordWrap(True)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["cosine", "rank", "unit · lang", "graph / text"])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.cellDoubleClicked.connect(self._chosen)
        self.rows: list[RetrievalRow] = []

        options = QHBoxLayout()
        options.addWidget(QLabel("Encoder:"))
        options.addWidget(self.encoder_edit, 1)
        options.addWidget(QLabel("List:"))
        options.addWidget(self.top_spin)
        buttons = QHBoxLayout()
        buttons.addWidget(self.find_button)
        buttons.addWidget(self.worst_button)
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.addLayout(options)
        layout.addLayout(buttons)
        layout.addWidget(self.status_label)
        layout.addWidget(self.table, 1)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.close)
        layout.addWidget(close)
        self.resize(760, 420)

    def options(self) -> RetrievalOptions:
        return RetrievalOptions(self.encoder_edit.text().strip() or None, self.top_spin.value())

    def set_text_available(self, available: bool) -> None:
        self.find_button.setEnabled(available)

    def job_started(self, message: str) -> None:
        self.status_label.setText(message)
        self.cancel_button.setEnabled(True)

    def job_progress(self, done: float, total: float | None, message: str) -> None:
        count = f"{done:,.0f}" + (f"/{total:,.0f}" if total else "")
        self.status_label.setText(f"{message} {count}")

    def job_finished(self, message: str) -> None:
        self.status_label.setText(message)
        self.cancel_button.setEnabled(False)

    def show_graphs(self, hits: Sequence[GraphHit], own_unit: int, text_id: int) -> None:
        """The graphs closest to text ``text_id`` (of unit ``own_unit``), closest first."""
        rows = [RetrievalRow(h.similarity, None, h.unit_id, h.lang, h.linearised) for h in hits]
        place = next((i + 1 for i, r in enumerate(rows) if r.unit_id == own_unit), None)
        found = (
            f"its own graph (unit {own_unit}) is number {place}"
            if place
            else f"its own graph (unit {own_unit}) is not in the first {len(rows)}"
        )
        self.show_rows(rows, f"Graphs closest to text {text_id}: {found}.")

    def show_worst(self, summary: RetrievalSummary, run_id: int, top: int) -> None:
        """Retrieval over run ``run_id``'s outputs: its figures, and the ``top`` outputs
        that match their own graph worst, lowest cosine first."""
        result = summary.result
        rows = [
            RetrievalRow(
                m.similarity, m.rank, m.pair.unit_id, m.pair.lang, m.pair.text, m.pair.text_id
            )
            for m in result.worst(top)
        ]
        t2g, g2t = result.text_to_graph, result.graph_to_text
        self.show_rows(
            rows,
            (
                f"Run {run_id}, {result.pairs:,} outputs: text → graph top-1 {t2g.top1:.1%}, "
                f"top-5 {t2g.top5:.1%}, MRR {t2g.mrr:.3f}; graph → text top-1 "
                f"{g2t.top1:.1%}, MRR {g2t.mrr:.3f}. Lowest cosine first; double-click an "
                "output to select it."
            ),
        )

    def show_rows(self, rows: Sequence[RetrievalRow], message: str) -> None:
        self.rows = list(rows)
        self.table.setRowCount(len(self.rows))
        for index, row in enumerate(self.rows):
            cells = [
                f"{row.similarity:.4f}",
                "" if row.rank is None else str(row.rank),
                f"{row.unit_id} · {row.lang}",
                row.shown,
            ]
            for column, value in enumerate(cells):
                item = QTableWidgetItem(value)
                if column < 2:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                item.setToolTip(row.shown)
                self.table.setItem(index, column, item)
        self.table.resizeColumnsToContents()
        self.job_finished(message)

    def _chosen(self, row: int, _column: int) -> None:
        if 0 <= row < len(self.rows) and isinstance(self.rows[row].key, int):
            self.output_chosen.emit(self.rows[row].key)
