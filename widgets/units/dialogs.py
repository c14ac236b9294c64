"""The Units panel's dialogs: a person's words for one part of a triple (Override), and
how many units of which shape and size to sample (Sample units…)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from core.desktop.dialog_memory import DialogMemory
from core.labels import tier_label
from widgets.dialogs import FittedDialog
from widgets.units.table import TIERS

if TYPE_CHECKING:
    from core.units.builder.render import RenderedTriple
    from core.units.sampler import SampleRequest

PARTS = ("subject", "predicate", "object")


class OverrideDialog(FittedDialog):
    """A person's words for one part of a triple in one language; they name that entity
    wherever it appears in the unit, and may be kept for the session's new units."""

    def __init__(self, triple: RenderedTriple, lang: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Override ({lang})")
        self.setMinimumWidth(420)
        self.triple = triple
        self.part = QComboBox()
        self.part.addItems(list(PARTS))
        self.text = QLineEdit(triple.shown(PARTS[0]))
        self.text.setPlaceholderText("empty: back to the Wikidata label")
        self.part.currentTextChanged.connect(lambda part: self.text.setText(triple.shown(part)))
        self.keep = QCheckBox("Use these words for this entity in new units too")
        self.keep.setToolTip(
            "Kept for this session: units built from now on use them wherever the entity appears"
        )
        note = QLabel(
            "The words replace the label wherever this entity appears in the unit "
            "(as subject or object; a property: in every predicate), in "
            f"{lang} only. A date or number is only this cell."
        )
        note.setWordWrap(True)
        form = QFormLayout(self)
        form.addRow("Part", self.part)
        form.addRow("Words", self.text)
        form.addRow(note)
        form.addRow(self.keep)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def values(self) -> tuple[str, str | None, bool]:
        return self.part.currentText(), self.text.text().strip() or None, self.keep.isChecked()


class SampleDialog(FittedDialog):
    """How many units of which shape and size, from which tier, with which seed."""

    def __init__(self, parent: QWidget | None = None, memory: DialogMemory | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Sample units")
        self.shape = QComboBox()
        self.shape.addItems(["sibling", "chain", "mixed"])
        self.size_spin = _spin(1, 7, 2)
        self.per_entity = _spin(1, 20, 1)
        self.seed = _spin(0, 2**31 - 1, 0)
        self.tier = QComboBox()
        self.tier.addItem("all tiers", None)
        for tier in TIERS:
            self.tier.addItem(tier_label(tier), tier)
        self.limit = _spin(1, 1_000_000, 100)
        self.parallel = QCheckBox("Only parallel units (every label in en, it and es)")
        self.parallel.setToolTip(
            "As TailNLG's units are: a unit is kept only when every "
            "subject, predicate and object has a label in English, "
            "Italian and Spanish (METHODS §5)"
        )
        form = QFormLayout(self)
        form.addRow("Shape", self.shape)
        form.addRow("Size (triples)", self.size_spin)
        form.addRow("Units per entity", self.per_entity)
        form.addRow("Entities of tier", self.tier)
        form.addRow("At most entities", self.limit)
        form.addRow("Seed", self.seed)
        form.addRow(self.parallel)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        if memory is not None:
            self.restore(memory.load())
            self.accepted.connect(lambda: memory.save(self.remembered()))

    def remembered(self) -> dict[str, Any]:
        return {
            "shape": self.shape.currentText(),
            "size": self.size_spin.value(),
            "per_entity": self.per_entity.value(),
            "tier": self.tier.currentData(),
            "limit": self.limit.value(),
            "seed": self.seed.value(),
            "parallel": self.parallel.isChecked(),
        }

    def restore(self, values: dict[str, Any]) -> None:
        """Show ``values`` (:meth:`remembered`'s); what is missing keeps the default."""
        if isinstance(values.get("shape"), str) and self.shape.findText(values["shape"]) >= 0:
            self.shape.setCurrentText(values["shape"])
        for key, spin in (
            ("size", self.size_spin),
            ("per_entity", self.per_entity),
            ("limit", self.limit),
            ("seed", self.seed),
        ):
            if isinstance(values.get(key), int):
                spin.setValue(values[key])
        if "tier" in values and self.tier.findData(values["tier"]) >= 0:
            self.tier.setCurrentIndex(self.tier.findData(values["tier"]))
        if isinstance(values.get("parallel"), bool):
            self.parallel.setChecked(values["parallel"])

    def request(self) -> SampleRequest:
        """What the dialog asks for (the panel adds its claim filters)."""
        from core.units.sampler import SampleRequest

        tier = self.tier.currentData()
        return SampleRequest(
            shapes=(self.shape.currentText(),),
            sizes=(self.size_spin.value(),),
            per_entity=self.per_entity.value(),
            seed=self.seed.value(),
            tiers=(tier,) if tier else None,
            limit_entities=self.limit.value(),
            parallel=self.parallel.isChecked(),
        )


def _spin(low: int, high: int, value: int) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    spin.setValue(value)
    return spin
