"""Entity inspector: terms in en/it/es and claims grouped by property.

Claims that METHODS §4 would drop are shown greyed, with the reason as tooltip and
in the last column; the "Start a data unit" action hands the entity to the Units
feature.
"""

from __future__ import annotations

import re
from collections import defaultdict
from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from core.units.claim_filters import drop_reasons
from core.units.shapes import render_quantity, render_time
from core.vocab import LANGUAGES
from core.wikidata.records import ClaimRecord, EntityDetails
from widgets.theme import TONES, muted_colour, themed_text

_GREY = QBrush(QColor(TONES["muted"][0]))  # drawn in the theme's variant
# Why a claim is dropped comes second, where a narrow dock shows it without scrolling.
CLAIM_COLUMNS = ("property / value", "dropped because", "rank", "value type", "statement")


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

        # Labels, descriptions and aliases per language as wrapped text: nothing is cut
        # to "Coroh…" in a narrow dock, and a long description scrolls.
        self.terms_view = QTextBrowser()
        self.terms_view.setOpenLinks(False)
        self.terms_view.setFrameShape(QFrame.Shape.StyledPanel)
        self.terms_view.setMinimumHeight(48)
        self.terms_view.setPlaceholderText("Labels and descriptions in en, it, es")

        self.claims_model = QStandardItemModel(0, len(CLAIM_COLUMNS))
        self.claims_model.setHorizontalHeaderLabels(list(CLAIM_COLUMNS))
        self.claims_view = QTreeView()
        self.claims_view.setModel(self.claims_model)
        self.claims_view.setUniformRowHeights(True)
        self.claims_view.setAlternatingRowColors(True)
        self.claims_view.setMinimumHeight(96)

        header = QHBoxLayout()
        header.addWidget(self.title, 1)
        header.addWidget(self.start_unit, 0, Qt.AlignmentFlag.AlignTop)
        # The user sets the split; the claims start with most of the height.
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.terms_view)
        self.splitter.addWidget(self.claims_view)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setSizes([90, 270])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(header)
        layout.addWidget(self.splitter, 1)

    def show_entity(self, details: EntityDetails | None) -> None:
        self.details = details
        self.claims_model.removeRows(0, self.claims_model.rowCount())
        self.start_unit.setEnabled(details is not None)
        if details is None:
            self.title.setText("Select an entity to inspect it.")
            themed_text(self.terms_view, str)
            return
        label = details.label(details.qid) or "(no English label)"
        self.title.setText(f"<b>{escape(label)}</b> ({details.qid})")
        themed_text(self.terms_view, lambda: terms_html(details))
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
                QStandardItem(""),
                QStandardItem(details.property_types.get(pid, "")),
                QStandardItem(pid),
            ]
            for i in indices:
                claim = details.claims[i]
                reason = reasons[i]
                cells = [
                    _item(shown_value(claim, details), missing=reason is not None),
                    _item(reason or "", missing=reason is not None),
                    _item(claim.rank, missing=reason is not None),
                    _item(claim.value_type, missing=reason is not None),
                    _item(claim.statement_id or "", missing=reason is not None),
                ]
                if claim.value and claim.value != cells[0].text():
                    cells[0].setToolTip(f"As Wikidata stores it: {claim.value}")
                if reason:
                    for cell in cells:
                        cell.setToolTip(f"Dropped from units: {reason}")
                parent.appendRow(cells)
            root.appendRow(row)
        self.claims_view.expandAll()
        for column in range(self.claims_model.columnCount()):
            self.claims_view.resizeColumnToContents(column)

    def _on_start_unit(self) -> None:
        if self.details is not None:
            self.start_unit_requested.emit(self.details.qid)


def shown_value(claim: ClaimRecord, details: EntityDetails) -> str:
    """A claim's value as a person reads it: an item's label with its QID, a date at its
    precision (not ``1080-01-01T00:00:00Z``), a quantity with its unit, coordinates in
    degrees (not ``Point(103.6627 -4.5244)``); anything else as stored."""
    if claim.snak_type != "value":
        return "no value" if claim.snak_type == "novalue" else "unknown value"
    value, extra = claim.value or "", claim.value_json or {}
    if claim.value_type == "wikibase-item" and value:
        return f"{details.label(value) or '(no label)'} ({value})"
    if claim.value_type == "time" and value:
        precision = extra.get("precision")
        try:
            return render_time(value, int(precision) if precision is not None else None, "en")
        except (ValueError, TypeError):
            return value
    if claim.value_type == "quantity" and value:
        unit = str(extra.get("unit") or "")
        unit_qid = unit.rsplit("/", 1)[-1]
        label = details.label(unit_qid) if unit_qid and unit_qid != "1" else None
        try:
            return render_quantity(value, label, "en")
        except (ValueError, TypeError):
            return value
    point = _POINT.fullmatch(value.strip()) if claim.value_type == "globe-coordinate" else None
    if point is not None:
        lon, lat = float(point.group(1)), float(point.group(2))
        north, east = "N" if lat >= 0 else "S", "E" if lon >= 0 else "W"
        return f"{abs(lat):.4f}° {north}, {abs(lon):.4f}° {east}"
    return value


_POINT = re.compile(r"Point\(\s*(-?[\d.]+)\s+(-?[\d.]+)\s*\)")


def terms_html(details: EntityDetails) -> str:
    """Label — description, then aliases, one paragraph per language (missing greyed)."""
    rows = []
    for lang in LANGUAGES:
        label = details.label(details.qid, lang)
        description = _first(details, details.qid, lang, "description")
        aliases = [
            t.text
            for t in sorted(details.terms, key=lambda t: t.ordinal)
            if t.item_id == details.qid and t.lang == lang and t.kind == "alias"
        ]
        text = (
            f"<b>{escape(label)}</b>"
            if label
            else f"<span style='color:{muted_colour()}'>— missing —</span>"
        )
        if description:
            text += f" — {escape(description)}"
        if aliases:
            also = escape("; ".join(aliases))
            text += f"<br><span style='color:{muted_colour()}'>also: {also}</span>"
        rows.append(
            f"<tr><td style='padding:1px 6px 3px 0; color:{muted_colour()}'>{lang}</td>"
            f"<td style='padding:1px 0 3px 0'>{text}</td></tr>"
        )
    return f"<table cellspacing='0'>{''.join(rows)}</table>"


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
