"""What the report compares and how: the dimension, reference and correction choices
and the small widgets of the options box.
"""

from __future__ import annotations

from html import escape

from PySide6.QtWidgets import (
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

# (key, short label for the list, what it compares: the item's tooltip). Short labels keep
# the option lists from scrolling sideways in a ~450 px dock.
DIMENSION_CHOICES = (
    ("tier", "Tier", "Head vs long tail"),
    ("subtier", "Sub-tier", "Head vs long tail · en only / · it only / · es only"),
    ("lang", "Language", "One language against another"),
    ("model", "Model", "One model against another"),
    ("quality", "References", "Gold vs silver references"),
    ("category", "Category", "One category against another"),
    ("dataset", "Dataset", "TailNLG vs WebNLG (and WDV, Wikidata)"),
    ("model_tail", "Model likelihood", "model_head vs model_tail (entity likelihood)"),
)
# The study table's references: (label, study_quality, study_references).
STUDY_REFS = (
    ("gold", "gold", "quality"),
    ("silver", "silver", "quality"),
    ("gold + silver pooled (TailNLG Table 2)", "gold", "pooled"),
    ("gold, silver split (Tables 7-10)", "gold", "split"),
)
CORRECTION_CHOICES = (("holm", "Holm"), ("bh", "Benjamini–Hochberg"), ("none", "none"))


def spin_box(low: int, high: int, value: int, tip: str) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    spin.setValue(value)
    spin.setToolTip(tip)
    spin.setGroupSeparatorShown(True)
    return spin


def titled(title: str, widget: QWidget) -> QWidget:
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    label = QLabel(f"<b>{escape(title)}</b>")
    layout.addWidget(label)
    layout.addWidget(widget)
    layout.addStretch(1)
    return box
