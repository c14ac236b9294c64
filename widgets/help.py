"""Help ▸ Keyboard shortcuts and Help ▸ Getting started.

The shortcuts dialog is filled from the window's actions each time it opens
(``MainWindow.shortcut_rows``), so it lists whatever shortcuts exist. The guide is a
non-modal window of steps through the demo; each step can bring its panel forward.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)


class ShortcutsDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.setModal(False)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["Where", "What", "Keys"])
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setWordWrap(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(620, 520)

    def show_rows(self, rows: Sequence[tuple[str, str, str]]) -> None:
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(value))
        self.table.resizeColumnToContents(0)
        self.table.resizeColumnToContents(2)

    def texts(self) -> list[tuple[str, str, str]]:
        return [
            tuple(self.table.item(r, c).text() for c in range(3))  # type: ignore[misc]
            for r in range(self.table.rowCount())
        ]


# (title, panel to bring forward, what to do)
STEPS: tuple[tuple[str, str, str], ...] = (
    (
        "Fetch a category",
        "browser",
        "In the <b>Browser</b> (Ctrl+1), pick a category (e.g. <i>City</i>) and press "
        "<b>Fetch</b>. Entities arrive page by page; the histogram of statement counts "
        "builds up live. The job shows in the status bar, with a cancel button.",
    ),
    (
        "Drag the cut-offs",
        "browser",
        "Drag the <b>Pareto cut-off</b> and the <b>head–tail threshold</b> lines on the "
        "histogram. The tiers (head, torso, long tail) and their counts follow as you drag.",
    ),
    (
        "Build a unit",
        "units",
        "In <b>Units</b> (Ctrl+2), choose an entity and a shape (sibling, chain, mixed) and "
        "build a unit of 1–7 triples. The builder gives its reasons and flags claims that "
        "look wrong; edit the triples before you keep it.",
    ),
    (
        "Verbalise with templates",
        "verbalise",
        "In <b>Verbalise</b> (Ctrl+3), choose the <b>template</b> verbaliser (no model to "
        "download) and run it on your units. The prompt preview shows exactly what a model "
        "would be given.",
    ),
    (
        "Score",
        "scores",
        "In <b>Scores</b> (Ctrl+4), score the texts against the references: BLEU, chrF++ and "
        "the other metrics, per tier.",
    ),
    (
        "Report",
        "report",
        "In <b>Report</b> (Ctrl+6), compare head against long tail with the study's "
        "statistics, and export figures or an HTML report for a paper.",
    ),
)


class GettingStartedGuide(QDialog):
    """Non-modal: the window stays usable while the guide is open beside it."""

    panel_wanted = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Getting started")
        self.setModal(False)
        self.step = 0
        self.heading = QLabel()
        self.body = QTextBrowser()
        self.body.setOpenExternalLinks(False)
        self.back_button = QPushButton("◀ Back")
        self.back_button.clicked.connect(lambda: self.go(self.step - 1))
        self.show_button = QPushButton("Show me the panel")
        self.show_button.clicked.connect(lambda: self.panel_wanted.emit(STEPS[self.step][1]))
        self.next_button = QPushButton("Next ▶")
        self.next_button.clicked.connect(lambda: self.go(self.step + 1))
        row = QHBoxLayout()
        row.addWidget(self.back_button)
        row.addStretch(1)
        row.addWidget(self.show_button)
        row.addWidget(self.next_button)
        layout = QVBoxLayout(self)
        intro = QLabel(
            "A walk through the demo, from fetching a category to a report. "
            "Keep this window open beside the panels."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        layout.addWidget(self.heading)
        layout.addWidget(self.body, 1)
        layout.addLayout(row)
        self.resize(460, 260)
        self.setWindowFlag(Qt.WindowType.Tool, True)
        self.go(0)

    def go(self, step: int) -> None:
        self.step = max(0, min(step, len(STEPS) - 1))
        title, _panel, text = STEPS[self.step]
        self.heading.setText(f"<h3>Step {self.step + 1} of {len(STEPS)}: {title}</h3>")
        self.body.setHtml(text)
        self.back_button.setEnabled(self.step > 0)
        self.next_button.setEnabled(self.step < len(STEPS) - 1)
