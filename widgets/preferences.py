"""File ▸ Preferences…: the user's defaults (``core.desktop.preferences.Preferences``, read and
stored by ``app.preferences``)."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.desktop.preferences import Preferences
from widgets.dialogs import FittedDialog


def _fraction(tip: str) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(0.01, 0.99)
    spin.setDecimals(2)
    spin.setSingleStep(0.05)
    spin.setToolTip(tip)
    return spin


class PreferencesDialog(FittedDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Preferences")
        self.split_combo = QComboBox()
        self.split_combo.addItem("Pareto cut-off", "pareto")
        self.split_combo.addItem("Head fraction", "head_tail")
        self.share_spin = _fraction("Share of all statements the head holds (METHODS: 0.80)")
        self.fraction_spin = _fraction("Share of entities that are head (METHODS: 0.20)")
        tiers = QGroupBox("Head and long tail (for categories without cut-offs of their own)")
        tiers_form = QFormLayout(tiers)
        tiers_form.addRow("Head line", self.split_combo)
        tiers_form.addRow("Pareto share", self.share_spin)
        tiers_form.addRow("Head fraction", self.fraction_spin)

        self.contact_edit = QLineEdit()
        self.contact_edit.setPlaceholderText("you@example.org or https://your.page")
        self.contact_edit.setToolTip(
            "Sent in the User-Agent to Wikidata and other endpoints, as their policies ask, "
            "so an operator can reach you about your queries. Nothing else is sent."
        )
        network = QGroupBox("Network")
        network_form = QFormLayout(network)
        network_form.addRow("Contact for the User-Agent", self.contact_edit)

        self.theme_combo = QComboBox()
        for value, text in (("system", "System"), ("light", "Light"), ("dark", "Dark")):
            self.theme_combo.addItem(text, value)
        self.theme_combo.setToolTip("System follows the desktop's light or dark mode")
        appearance = QGroupBox("Appearance")
        appearance_form = QFormLayout(appearance)
        appearance_form.addRow("Theme", self.theme_combo)

        self.folders_list = QListWidget()
        self.folders_list.setMaximumHeight(110)
        add = QPushButton("Add folder…")
        add.clicked.connect(self._add_folder)
        remove = QPushButton("Remove")
        remove.clicked.connect(lambda: self.folders_list.takeItem(self.folders_list.currentRow()))
        buttons_row = QHBoxLayout()
        buttons_row.addWidget(add)
        buttons_row.addWidget(remove)
        buttons_row.addStretch(1)
        models = QGroupBox("Model folders (besides the Hugging Face cache)")
        models_layout = QVBoxLayout(models)
        models_layout.addWidget(self.folders_list)
        models_layout.addLayout(buttons_row)

        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(appearance)
        layout.addWidget(tiers)
        layout.addWidget(network)
        layout.addWidget(models)
        layout.addWidget(buttons)

    def show_values(self, prefs: Preferences) -> None:
        self.split_combo.setCurrentIndex(max(0, self.split_combo.findData(prefs.split_by)))
        self.share_spin.setValue(prefs.share)
        self.fraction_spin.setValue(prefs.fraction)
        self.contact_edit.setText(prefs.contact)
        self.theme_combo.setCurrentIndex(max(0, self.theme_combo.findData(prefs.theme)))
        self.folders_list.clear()
        self.folders_list.addItems(list(prefs.model_folders))

    def values(self) -> Preferences:
        return Preferences(
            split_by=self.split_combo.currentData(),
            share=round(self.share_spin.value(), 4),
            fraction=round(self.fraction_spin.value(), 4),
            contact=self.contact_edit.text().strip(),
            theme=self.theme_combo.currentData(),
            model_folders=tuple(
                self.folders_list.item(i).text() for i in range(self.folders_list.count())
            ),
        )

    def _add_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "A folder of models")
        if folder:
            self.folders_list.addItem(folder)
