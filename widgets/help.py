"""Help ▸ Keyboard shortcuts and Help ▸ Getting started.

The shortcuts dialog is filled from the window's actions each time it opens
(``MainWindow.shortcut_rows``), so it lists whatever shortcuts exist. The guide is a
non-modal window of steps through the demo; each step can bring its panel forward.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from widgets.dialogs import FittedDialog


class ShortcutsDialog(FittedDialog):
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


# (title, panel to bring forward, what to do). Every name in bold is a panel, a menu
# command or a button of the window (tests/widgets/test_getting_started.py holds that).
STEPS: tuple[tuple[str, str, str], ...] = (
    (
        "Fetch a category",
        "browser",
        "In the <b>Browser</b> (Ctrl+1), pick a source and a category (e.g. <i>City</i>) "
        "and press <b>Fetch</b>; or press <b>Start with the demo</b> on an empty session. "
        "Entities arrive page by page and the histogram of statement counts builds up live; "
        "the status bar shows the work, with a cancel button.",
    ),
    (
        "Set the head and the long tail",
        "browser",
        "Drag the lines on the histogram, or set the rule and its values beside it. The "
        "tiers (head, torso, long tail) and their counts follow as you drag.",
    ),
    (
        "Build units",
        "units",
        "In <b>Units</b> (Ctrl+2), press <b>Sample units…</b> to draw units from the "
        "category: there you choose their shape (sibling, chain, mixed), their size (1–7 "
        "triples) and the tier. Or start one by hand from the Browser (<b>Start a data "
        "unit</b>), tick claims, <b>Add to unit</b> and <b>Save unit</b>.",
    ),
    (
        "Verbalise",
        "verbalise",
        "In <b>Verbalise</b> (Ctrl+3), choose the template verbaliser (no model to "
        "download) or a model, pick which units, and press <b>Run</b>. The prompt preview "
        "shows exactly what a model is given.",
    ),
    (
        "Score",
        "scores",
        "In <b>Scores</b> (Ctrl+4), press <b>Score…</b> and choose the metrics: BLEU, chrF++ "
        "and the others, per tier, against the references.",
    ),
    (
        "Report",
        "report",
        "In <b>Report</b> (Ctrl+6), press <b>Build report</b> to compare the head with the "
        "long tail with the study's statistics, and export its tables, plots or an HTML "
        "report.",
    ),
)


class GettingStartedGuide(FittedDialog):
    """Non-modal: the window stays usable while the guide is open beside it. It opens at
    the window's bottom-right corner, over as little of the panels as it can."""

    panel_wanted = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Getting started")
        self.setModal(False)
        self.step = 0
        self.heading = QLabel()
        self.body = QTextBrowser()
        self.body.setOpenExternalLinks(False)
        self.buttons = QDialogButtonBox()
        self.back_button = self.buttons.addButton("◀ Back", QDialogButtonBox.ButtonRole.ActionRole)
        self.back_button.clicked.connect(lambda: self.go(self.step - 1))
        self.show_button = self.buttons.addButton(
            "Show me the panel", QDialogButtonBox.ButtonRole.ActionRole
        )
        self.show_button.clicked.connect(lambda: self.panel_wanted.emit(STEPS[self.step][1]))
        self.next_button = self.buttons.addButton("Next ▶", QDialogButtonBox.ButtonRole.ActionRole)
        self.next_button.clicked.connect(self._next)
        layout = QVBoxLayout(self)
        intro = QLabel(
            "A walk from fetching a category to a report. Keep this window open beside the panels."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        layout.addWidget(self.heading)
        layout.addWidget(self.body, 1)
        layout.addWidget(self.buttons)
        self.resize(460, 280)
        self.setWindowFlag(Qt.WindowType.Tool, True)
        self.go(0)

    def _next(self) -> None:
        if self.step >= len(STEPS) - 1:
            self.close()  # Finish
        else:
            self.go(self.step + 1)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        parent = self.parentWidget()
        if parent is not None and not event.spontaneous():
            # Beside the work, not over the middle of it: the window's bottom-right corner.
            window = parent.window().frameGeometry()
            area = self.screen().availableGeometry()
            x = min(window.right() - self.frameGeometry().width() - 16, area.right())
            y = min(window.bottom() - self.frameGeometry().height() - 40, area.bottom())
            self.move(max(area.left(), x), max(area.top(), y))

    def go(self, step: int) -> None:
        self.step = max(0, min(step, len(STEPS) - 1))
        title, _panel, text = STEPS[self.step]
        self.heading.setText(f"<h3>Step {self.step + 1} of {len(STEPS)}: {title}</h3>")
        self.body.setHtml(text)
        self.back_button.setEnabled(self.step > 0)
        last = self.step == len(STEPS) - 1
        self.next_button.setText("Finish" if last else "Next ▶")
