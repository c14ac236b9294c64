"""Entity inspector: terms in en/it/es and claims grouped by property.

Claims that METHODS §4 would drop are shown greyed, with the reason as tooltip and
in the last column; the "Start a data unit" action hands the entity to the Units
feature.
"""

from __future__ import annotations

from collections import defaultdict

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from core.claim_filters import drop_reasons
from core.wikidata.records import LANGUAGES, EntityDetails

_GREY = QBrush(QColor("#9a9a9a"))


class EntityInspector(QWidget):
    start_unit_requested = Signal(str)  # QID

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.details: EntityDetails | None = None
        self.title = QLabel("Select an entity to inspect it.")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.start_unit = QPushButton("Start a data unit")
        self.start_unit.setEnabled(False)
        self.start_unit.clicked.connect(self._on_start_unit)

        self.terms_model = QStandardItemModel(3, len(LANGUAGES))
        self.terms_model.setHorizontalHeaderLabels(list(LANGUAGES))
        self.terms_model.setVerticalHeaderLabels(["label", "description", "aliases"])
        self.terms_view = QTableView()
        self.terms_view.setModel(self.terms_model)
        self.terms_view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.terms_view.setWordWrap(True)
        self.terms_view.setToolTip("Double-click a cell, or widen the panel, to read it whole")
        # Three rows of terms; the claims below get the rest of the height.
        self.terms_view.setMaximumHeight(
            self.terms_view.horizontalHeader().sizeHint().height() + 3 * 34 + 4
        )
        self.terms_view.verticalHeader().setDefaultSectionSize(34)

        self.claims_model = QStandardItemModel(0, 5)
        self.claims_model.setHorizontalHeaderLabels(
            ["property / value", "rank", "value type", "id", "dropped because"]
        )
        self.claims_view = QTreeView()
        self.claims_view.setModel(self.claims_model)
        self.claims_view.setUniformRowHeights(True)
        self.claims_view.setAlternatingRowColors(True)

        header = QHBoxLayout()
        header.addWidget(self.title, 1)
        header.addWidget(self.start_unit)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(header)
        layout.addWidget(self.terms_view)
        layout.addWidget(self.claims_view, 1)

    def show_entity(self, details: EntityDetails | None) -> None:
        self.details = details
        self.claims_model.removeRows(0, self.claims_model.rowCount())
        for row in range(3):
            for col in range(len(LANGUAGES)):
                self.terms_model.setItem(row, col, QStandardItem(""))
        self.start_unit.setEnabled(details is not None)
        if details is None:
            self.title.setText("Select an entity to inspect it.")
            return
        label = details.label(details.qid) or "(no English label)"
        description = _first(details, details.qid, "en", "description") or ""
        self.title.setText(f"<b>{label}</b> ({details.qid})<br>{description}")
        for col, lang in enumerate(LANGUAGES):
            label_text = details.label(details.qid, lang)
            shown = _item(label_text or "— missing —", missing=not label_text)
            self.terms_model.setItem(0, col, shown)
            self.terms_model.setItem(
                1, col, QStandardItem(_first(details, details.qid, lang, "description") or "")
            )
            aliases = [
                t.text
                for t in sorted(details.terms, key=lambda t: t.ordinal)
                if t.item_id == details.qid and t.lang == lang and t.kind == "alias"
            ]
            self.terms_model.setItem(2, col, QStandardItem("; ".join(aliases)))
        self._fill_claims(details)

    def _fill_claims(self, details: EntityDetails) -> None:
        reasons = drop_reasons(details.claims)
        by_property: dict[str, list[int]] = defaultdict(list)
        for i, claim in enumerate(details.claims):
            by_property[claim.property_pid].append(i)
        root = self.claims_model.invisibleRootItem()
        for pid in sorted(by_property, key=lambda p: int(p[1:]) if p[1:].isdigit() else 0):
            indices = by_property[pid]
            prop_label = details.label(pid) or pid
            all_dropped = all(reasons[i] is not None for i in indices)
            parent = _item(f"{prop_label} ({pid})", missing=all_dropped)
            row = [
                parent,
                QStandardItem(""),
                QStandardItem(details.property_types.get(pid, "")),
                QStandardItem(pid),
                QStandardItem(""),
            ]
            for i in indices:
                claim = details.claims[i]
                reason = reasons[i]
                if claim.snak_type != "value":
                    shown = "no value" if claim.snak_type == "novalue" else "unknown value"
                elif claim.value_type == "wikibase-item" and claim.value:
                    shown = f"{details.label(claim.value) or '(no label)'} ({claim.value})"
                else:
                    shown = claim.value or ""
                cells = [
                    _item(shown, missing=reason is not None),
                    _item(claim.rank, missing=reason is not None),
                    _item(claim.value_type, missing=reason is not None),
                    _item(claim.statement_id or "", missing=reason is not None),
                    _item(reason or "", missing=reason is not None),
                ]
                if reason:
                    for cell in cells:
                        cell.setToolTip(f"Dropped from units: {reason}")
                parent.appendRow(cells)
            root.appendRow(row)
        self.claims_view.expandAll()
        self.claims_view.resizeColumnToContents(0)

    def _on_start_unit(self) -> None:
        if self.details is not None:
            self.start_unit_requested.emit(self.details.qid)


def _first(details: EntityDetails, item_id: str, lang: str, kind: str) -> str | None:
    for term in details.terms:
        if term.item_id == item_id and term.lang == lang and term.kind == kind:
            return term.text
    return None


def _item(text: str, *, missing: bool = False) -> QStandardItem:
    item = QStandardItem(text)
    item.setEditable(False)
    if missing:
        item.setForeground(_GREY)
    return item
