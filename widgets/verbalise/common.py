"""What the Verbalise panel's parts share: the results' columns and small widget
builders (the setting names and defaults are ``core.verbalise.panel_state``'s)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSpinBox,
    QTableView,
    QWidget,
)

from widgets.theme import TONES

RUN_COLUMNS = ("run", "model", "kind", "status", "texts")
OUTPUT_COLUMNS = ("lang", "#", "text", "unit")
RED = QBrush(QColor(TONES["error"][0]))  # drawn in the theme's variant


def item(text: str, data: Any = None) -> QStandardItem:
    cell = QStandardItem(text)
    cell.setEditable(False)
    if data is not None:
        cell.setData(data, Qt.ItemDataRole.UserRole)
    return cell


def table(model: QStandardItemModel) -> QTableView:
    view = QTableView()
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.verticalHeader().setVisible(False)
    view.horizontalHeader().setStretchLastSection(True)
    view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    view.setWordWrap(True)
    return view


def combo(items: Sequence[str] = ()) -> QComboBox:
    box = QComboBox()
    box.addItems(list(items))
    # Long model names must not force the dock wider than the user made it.
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(8)
    return box


def spin(low: int, high: int, value: int) -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    return box


def double(low: float, high: float, value: float, step: float) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(low, high)
    box.setDecimals(2)
    box.setSingleStep(step)
    box.setValue(value)
    return box


def scrolled(widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return area


def form() -> QFormLayout:
    layout = QFormLayout()
    layout.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    layout.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
    return layout


def wrapping(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label
