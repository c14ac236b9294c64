"""The Annotate panel's *Agreement* tab: per-group aggregates with Krippendorff's alpha,
accuracy on golden items, and per-item aggregates (METHODS §9)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.annotation import ADEQUACY_LABELS, GoldenAccuracy
from core.labels import plural, tier_label
from widgets.annotate.rate import bold

if TYPE_CHECKING:  # loading them would load the session layer (SQLAlchemy)
    from core.annotation import GroupAggregate, ItemAggregate

AGREEMENT_COLUMNS = (
    "group",
    "items",
    "ratings",
    "annotators",
    "fluency mean",
    "fluency median",
    "adequacy yes",
    "majority yes",
    "α fluency",
    "α adequacy",
)
ITEM_COLUMNS = (
    "item",
    "unit",
    "model",
    "lang",
    "tier",
    "category",
    "ratings",
    "fluency mean",
    "fluency median",
    "majority",
    "yes",
)
GOLDEN_COLUMNS = ("annotator", "golden items", "adequacy right", "fluency within ±1", "fluency MAE")
_NUMERIC = re.compile(r"^(–|-?\d)")  # figures (and "–" for none) align right


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f} %"


def _number(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


class AgreementView(QWidget):
    """What the ratings say so far; ``requested`` asks the controller for fresh figures
    (Refresh, or the weighting changed)."""

    requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.agreement_note = QLabel()
        self.agreement_note.setWordWrap(True)
        refresh = QPushButton("Refresh")
        refresh.clicked.connect(self.requested)
        self.weighted_check = QCheckBox("Weighted by sampling weight")
        self.weighted_check.setToolTip(
            "Group figures weight each item by its WDV record's sampling_weight (WDV's "
            "weighted per-theme figures; an item without one counts 1)"
        )
        self.weighted_check.toggled.connect(lambda _on: self.requested.emit())
        self.groups_table = _table(AGREEMENT_COLUMNS)
        self.golden_table = _table(GOLDEN_COLUMNS)
        self.items_table = _table(ITEM_COLUMNS)
        splitter = QSplitter(Qt.Orientation.Vertical)
        for title, table in (
            ("Agreement and aggregates (each item counts once)", self.groups_table),
            ("Accuracy on golden items", self.golden_table),
            ("Per item", self.items_table),
        ):
            box = QWidget()
            box_layout = QVBoxLayout(box)
            box_layout.setContentsMargins(0, 0, 0, 0)
            box_layout.addWidget(QLabel(f"<b>{title}</b>"))
            box_layout.addWidget(table)
            splitter.addWidget(box)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setStretchFactor(2, 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        head = QHBoxLayout()
        head.addWidget(self.agreement_note, 1)
        head.addWidget(self.weighted_check)
        head.addWidget(refresh)
        layout.addLayout(head)
        layout.addWidget(splitter, 1)

    def show_agreement(
        self,
        overall: GroupAggregate,
        groups: Sequence[GroupAggregate],
        items: Sequence[ItemAggregate],
        golden: Sequence[GoldenAccuracy],
    ) -> None:
        """The overall figures, then per category and per tier; per item; golden items."""
        rows = [
            [
                g.label,
                g.items,
                g.ratings,
                g.annotators,
                _number(g.fluency_mean),
                _number(g.fluency_median, 1),
                _percent(g.adequacy_yes),
                _percent(g.majority_yes),
                _number(g.alpha_fluency, 3),
                _number(g.alpha_adequacy, 3),
            ]
            for g in [overall, *groups]
        ]
        _fill(self.groups_table, rows)
        for column in range(len(AGREEMENT_COLUMNS)):
            cell = self.groups_table.item(0, column)
            if cell is not None:
                cell.setFont(bold())
        _fill(
            self.items_table,
            [
                [
                    f"{i.item.kind[:4]}. {i.item.id}",
                    i.unit_id,
                    i.model,
                    i.lang,
                    tier_label(i.subtier),
                    i.category,
                    i.ratings,
                    _number(i.fluency_mean),
                    _number(i.fluency_median, 1),
                    "–"
                    if i.adequacy_majority is None
                    else ADEQUACY_LABELS.get(i.adequacy_majority, "–"),
                    _percent(i.adequacy_yes),
                ]
                for i in items
            ],
        )
        _fill(
            self.golden_table,
            [
                [
                    g.annotator,
                    g.items,
                    f"{g.adequacy_correct}/{g.adequacy_checked}",
                    f"{g.fluency_within}/{g.fluency_checked}",
                    _number(g.fluency_mae),
                ]
                for g in golden
            ],
        )
        self.agreement_note.setText(
            f"{plural(overall.items, 'item')}, {plural(overall.ratings, 'rating')} by "
            f"{plural(overall.annotators, 'annotator')} · overall α fluency (interval) "
            f"{_number(overall.alpha_fluency, 3)}, "
            f"α adequacy (nominal) {_number(overall.alpha_adequacy, 3)}"
            + ("" if golden else " · no golden items rated")
        )

    def show_none(self, text: str) -> None:
        for table in (self.groups_table, self.items_table, self.golden_table):
            table.setRowCount(0)
        self.agreement_note.setText(text)


def _table(columns: Sequence[str]) -> QTableWidget:
    table = QTableWidget(0, len(columns))
    # Headers of two or more words on two lines: the columns are then as wide as their
    # figures, and more of a table fits a docked panel before it scrolls sideways.
    table.setHorizontalHeaderLabels([c.replace(" ", "\n", 1) for c in columns])
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.verticalHeader().setVisible(False)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)
    return table


def _fill(table: QTableWidget, rows: Sequence[Sequence[Any]]) -> None:
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            cell = QTableWidgetItem(str(value))
            if isinstance(value, int | float) or _NUMERIC.match(str(value)):
                cell.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            table.setItem(r, c, cell)
