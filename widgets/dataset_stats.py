"""Dataset statistics and checks (View ▸ Dataset statistics…): the figures of a paper's
data table and the units that look wrong, as ``core.report.dataset_stats`` computes them."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QComboBox,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.labels import plural
from widgets.dialogs import FittedDialog

if TYPE_CHECKING:
    from core.report.dataset_stats import Finding, Table


def tables_html(tables: Sequence[Table]) -> str:
    """Each ``Table`` (title, headers, rows) as an HTML table; figures right-aligned."""
    parts = []
    for table in tables:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in table.headers)
        rows = "".join(
            "<tr>"
            + "".join(
                f"<td>{html.escape(cell)}</td>"
                if i == 0
                else f"<td align='right'>{html.escape(cell)}</td>"
                for i, cell in enumerate(row)
            )
            + "</tr>"
            for row in table.rows
        )
        parts.append(
            f"<h3>{html.escape(table.title)}</h3>"
            f"<table cellspacing='0' cellpadding='3' border='1'>"
            f"<tr>{head}</tr>{rows}</table>"
        )
    return "".join(parts)


FILL_ROWS = 100  # findings laid out per turn of the event loop


class DatasetStatsDialog(FittedDialog):
    """Two tabs: Figures (tables) and Checks (one row per finding, filtered by check)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Dataset statistics and checks")
        self.setObjectName("DatasetStatsDialog")
        self.resize(760, 620)
        self.tabs = QTabWidget()
        self.figures = QTextBrowser()
        self.figures.setObjectName("datasetFigures")
        self.tabs.addTab(self.figures, "Figures")

        checks = QWidget()
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.check_filter = QComboBox()
        self.check_filter.setObjectName("checkFilter")
        self._findings: list[Finding] = []
        self._shown: list[Finding] = []
        self._filled = 0
        self._fill_round = 0  # each fill's number: a newer one stops the older
        self.check_filter.currentIndexChanged.connect(self._fill_findings)
        self.findings_table = QTableWidget(0, 3)
        self.findings_table.setObjectName("datasetFindings")
        self.findings_table.setHorizontalHeaderLabels(["Unit", "Check", "Reason"])
        self.findings_table.horizontalHeader().setSectionResizeMode(
            2, QHeaderView.ResizeMode.Stretch
        )
        self.findings_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.findings_table.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(QLabel("Show:"))
        top.addWidget(self.check_filter)
        layout = QVBoxLayout(checks)
        layout.addLayout(top)
        layout.addWidget(self.findings_table)
        self.tabs.addTab(checks, "Checks")

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        outer = QVBoxLayout(self)
        outer.addWidget(self.tabs)
        outer.addWidget(buttons)
        self._findings: list[Finding] = []

    def show_statistics(
        self,
        tables: Sequence[Table],
        findings: Sequence[Finding],
        checks: Sequence[str],
        units: int,
    ) -> None:
        """Show ``tables`` (core.report.dataset_stats.Table) and ``findings`` (Finding)."""
        self.figures.setHtml(tables_html(tables))
        self._findings = list(findings)
        flagged = len({f.uid for f in findings})
        counts = ", ".join(f"{c}: {sum(f.check == c for f in findings)}" for c in checks)
        self.summary.setText(
            f"{plural(len(findings), 'finding')} in {flagged} of {plural(units, 'unit')} "
            f"({counts})."
        )
        self.check_filter.blockSignals(True)
        self.check_filter.clear()
        self.check_filter.addItem("all checks", None)
        for check in checks:
            self.check_filter.addItem(check, check)
        self.check_filter.blockSignals(False)
        self.tabs.setTabText(1, f"Checks ({len(findings)})")
        self._fill_findings()

    def _fill_findings(self) -> None:
        wanted = self.check_filter.currentData()
        self._shown = [f for f in self._findings if wanted is None or f.check == wanted]
        self._filled = 0
        self._fill_round += 1
        self.findings_table.setRowCount(len(self._shown))
        self._fill_more(self._fill_round)

    def _fill_more(self, fill_round: int) -> None:
        """Fill the next FILL_ROWS rows, then yield to the event loop: laying out and
        sizing every word-wrapped row at once (229 findings on TailNLG as published)
        held the UI thread for 144 ms. A newer filter's fill makes an older one stop."""
        if fill_round != self._fill_round:
            return
        table = self.findings_table
        end = min(self._filled + FILL_ROWS, len(self._shown))
        for row in range(self._filled, end):
            finding = self._shown[row]
            for column, text in enumerate((finding.uid, finding.check, finding.reason)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                table.setItem(row, column, item)
            table.resizeRowToContents(row)
        self._filled = end
        if end < len(self._shown):
            QTimer.singleShot(0, self, lambda: self._fill_more(fill_round))

    def shown_findings(self) -> list[tuple[str, str, str]]:
        table = self.findings_table
        return [
            tuple(table.item(r, c).text() for c in range(3))  # type: ignore[misc]
            for r in range(table.rowCount())
        ]
