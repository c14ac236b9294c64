"""The Verbalise panel's Units tab: which units a run verbalises, in which languages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from core.groups import order_key
from core.labels import tier_label
from core.vocab import LANGUAGE_NAMES, LANGUAGES
from widgets.theme import set_muted
from widgets.verbalise.common import SCOPES, combo, wrapping

_SCOPE_TEXTS = {
    "selected": "The selected unit",
    "tier": "A tier",
    "category": "A category",
    "all": "All units",
}


class ScopeForm(QWidget):
    """The run's scope (the selected unit, a tier, a category or all units: the controller
    resolves it in SQL when the run starts), its languages, and whether to resume."""

    changed = Signal()  # anything set here

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scope_buttons = QButtonGroup(self)
        self.scope_radios: dict[str, QRadioButton] = {}
        for index, scope in enumerate(SCOPES):
            radio = QRadioButton(_SCOPE_TEXTS[scope])
            self.scope_buttons.addButton(radio, index)
            self.scope_radios[scope] = radio
        self.scope_radios["all"].setChecked(True)
        self.scope_buttons.idToggled.connect(lambda _i, _on: self.changed.emit())
        self.tier_combo = combo()
        self.category_combo = combo()
        for box, scope in ((self.tier_combo, "tier"), (self.category_combo, "category")):
            box.activated.connect(lambda _i, s=scope: self.scope_radios[s].setChecked(True))
            box.currentIndexChanged.connect(lambda _i: self.changed.emit())
        self.lang_checks: dict[str, QCheckBox] = {}
        for lang in LANGUAGES:
            check = QCheckBox(f"{lang} ({LANGUAGE_NAMES[lang]})")
            check.setChecked(True)
            check.toggled.connect(lambda _on: self.changed.emit())
            self.lang_checks[lang] = check
        self.resume_check = QCheckBox("Resume the unfinished run with the same settings")
        self.resume_check.setChecked(True)
        self.resume_check.setToolTip(
            "Continue the newest cancelled or failed run made with "
            "the same model, parameters and prompts, skipping what "
            "it already holds; unticked, a new run starts"
        )
        self.resume_check.toggled.connect(lambda _on: self.changed.emit())
        self.selected_label = wrapping()
        set_muted(self.selected_label)

        layout = QVBoxLayout(self)
        which = QGroupBox("Which units")
        which_layout = QVBoxLayout(which)
        which_layout.addWidget(self.scope_radios["selected"])
        which_layout.addWidget(self.selected_label)
        for scope, box in (("tier", self.tier_combo), ("category", self.category_combo)):
            row = QHBoxLayout()
            row.addWidget(self.scope_radios[scope])
            row.addWidget(box, 1)
            which_layout.addLayout(row)
        which_layout.addWidget(self.scope_radios["all"])
        layout.addWidget(which)
        langs = QGroupBox("Languages")
        langs_layout = QVBoxLayout(langs)
        for check in self.lang_checks.values():
            langs_layout.addWidget(check)
        layout.addWidget(langs)
        layout.addWidget(self.resume_check)
        layout.addStretch(1)

    def show_groups(
        self,
        total: int,
        tiers: Sequence[tuple[str, int]],
        categories: Sequence[tuple[str, int]],
    ) -> None:
        """How many units the session holds, and the tiers and categories (name, unit
        count) a run may choose from; the chosen ones stay chosen while listed."""
        for box, rows in ((self.tier_combo, tiers), (self.category_combo, categories)):
            keep = box.currentData()
            box.blockSignals(True)
            box.clear()
            if box is self.tier_combo:  # the one vocabulary, head to tail
                rows = sorted(rows, key=lambda row: order_key("subtier", row[0]))
            for name, count in rows:
                words = tier_label(name) if box is self.tier_combo else name.replace("_", " ")
                box.addItem(f"{words} ({count:,})", name)
            if keep is not None and box.findData(keep) >= 0:
                box.setCurrentIndex(box.findData(keep))
            box.blockSignals(False)
        self.scope_radios["all"].setText(f"All units ({total:,})")
        self.scope_radios["tier"].setEnabled(bool(tiers))
        self.scope_radios["category"].setEnabled(bool(categories))

    def show_selected(self, label: str | None) -> None:
        """The unit the "selected unit" scope runs (None: none, and the scope is off)."""
        self.selected_label.setText(
            f"Now: {label or 'none'} (pick it in the Units panel or on the Prompt tab)"
        )
        self.scope_radios["selected"].setEnabled(label is not None)

    def values(self) -> dict[str, Any]:
        """This tab's part of the panel's settings."""
        return {
            "scope": next((s for s, r in self.scope_radios.items() if r.isChecked()), "all"),
            "tier": self.tier_combo.currentData(),
            "category": self.category_combo.currentData(),
            "langs": [lang for lang, check in self.lang_checks.items() if check.isChecked()],
            "resume": self.resume_check.isChecked(),
        }

    def apply(self, values: Mapping[str, Any]) -> None:
        """Show saved values; a scope that is off now (no tier, no unit) falls back to all."""
        for box, key in ((self.tier_combo, "tier"), (self.category_combo, "category")):
            if values[key] is not None and box.findData(values[key]) >= 0:
                box.setCurrentIndex(box.findData(values[key]))
        scope = values["scope"] if values["scope"] in SCOPES else "all"
        radio = self.scope_radios[scope]
        (radio if radio.isEnabled() else self.scope_radios["all"]).setChecked(True)
        for lang, check in self.lang_checks.items():
            check.setChecked(lang in values["langs"])
        self.resume_check.setChecked(bool(values["resume"]))
