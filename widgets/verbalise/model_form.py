"""The Verbalise panel's Model tab: where models are found, the server, the device and the
generation settings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from widgets.theme import set_muted
from widgets.verbalise.common import DEFAULTS, DEVICES, DTYPES, combo, double, form, spin, wrapping


class ModelForm(QWidget):
    """Model folders (add, rescan), the OpenAI-compatible server, the local device and
    dtype, and the generation settings (METHODS §6), each enabled for the model kinds
    it applies to (:meth:`update_for`)."""

    add_folder_requested = Signal(str)  # a folder to look for models in
    rescan_requested = Signal()
    train_requested = Signal()  # "Train…": app/train.py opens the Train dialog
    model_changed = Signal()  # the server, device or dtype changed
    value_changed = Signal()  # a generation setting changed
    prefix_changed = Signal()  # the seq2seq task prefix changed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.add_folder_button = QPushButton("Add folder…")
        self.add_folder_button.setToolTip(
            "Look for models in a folder (a model folder, or a folder of model folders); remembered"
        )
        self.add_folder_button.clicked.connect(self._ask_folder)
        self.rescan_button = QPushButton("Rescan")
        self.rescan_button.setToolTip(
            "Look again in the Hugging Face cache and the configured folders"
        )
        self.rescan_button.clicked.connect(self.rescan_requested)
        self.train_button = QPushButton("Train…")
        self.train_button.setToolTip(
            "Fine-tune a graph-to-text model on this session's references "
            "(taillens train-verbaliser); the result joins this list"
        )
        self.train_button.clicked.connect(self.train_requested)
        self.model_info = wrapping()
        set_muted(self.model_info)

        self.server_url = QLineEdit()
        self.server_url.setPlaceholderText("http://localhost:8000/v1")
        self.server_model = QLineEdit()
        self.server_model.setPlaceholderText("default: the first it serves")
        for edit in (self.server_url, self.server_model):
            edit.editingFinished.connect(self.model_changed)
        self.device = combo(DEVICES)
        self.dtype = combo(DTYPES)
        for box in (self.device, self.dtype):
            box.currentIndexChanged.connect(lambda _i: self.model_changed.emit())

        self.candidates = spin(1, 32, DEFAULTS["candidates"])
        self.temperature = double(0.05, 5.0, DEFAULTS["temperature"], 0.05)
        self.top_p = double(0.05, 1.0, DEFAULTS["top_p"], 0.05)
        self.max_new_tokens = spin(1, 8192, DEFAULTS["max_new_tokens"])
        self.num_beams = spin(1, 32, DEFAULTS["num_beams"])
        self.num_beams.setToolTip("Beam width of seq2seq models (at least the candidates)")
        self.task_prefix = QLineEdit()
        self.task_prefix.setToolTip(
            "What a seq2seq model reads before the <H> <R> <T> triples (empty: WDV's "
            "'translate from Graph to Text: '); {language} becomes the language's name. "
            "Recorded with the run."
        )
        self.task_prefix.textChanged.connect(lambda _text: self.prefix_changed.emit())
        self.seed = spin(0, 2_147_483_647, DEFAULTS["seed"])
        self.batch_size = spin(1, 1024, DEFAULTS["batch_size"])
        self.batch_size.setToolTip("Units per generate call; halved on out-of-memory")
        for box in self._spins():
            box.valueChanged.connect(lambda _v: self.value_changed.emit())

        layout = QVBoxLayout(self)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_folder_button)
        buttons.addWidget(self.rescan_button)
        buttons.addWidget(self.train_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        layout.addWidget(self.model_info)
        self.server_box = self._box(
            "OpenAI-compatible server", [("URL", self.server_url), ("Model", self.server_model)]
        )
        self.local_box = self._box("Local model", [("Device", self.device), ("Dtype", self.dtype)])
        generation = self._box(
            "Generation (METHODS §6)",
            [
                ("Candidates", self.candidates),
                ("Temperature", self.temperature),
                ("Top-p", self.top_p),
                ("Max new tokens", self.max_new_tokens),
                ("Beams (seq2seq)", self.num_beams),
                ("Task prefix (seq2seq)", self.task_prefix),
                ("Seed", self.seed),
                ("Batch size", self.batch_size),
            ],
        )
        for group in (self.server_box, self.local_box, generation):
            layout.addWidget(group)
        layout.addStretch(1)

    def update_for(self, kind: str) -> None:
        """Enable what applies to a ``kind`` of model (template, causal, seq2seq, openai)."""
        self.server_box.setEnabled(kind == "openai")
        self.local_box.setEnabled(kind in ("causal", "seq2seq"))
        for box in (self.temperature, self.top_p):
            box.setEnabled(kind in ("causal", "openai"))  # sampling
        self.candidates.setEnabled(kind != "template")
        self.max_new_tokens.setEnabled(kind != "template")
        self.num_beams.setEnabled(kind == "seq2seq")
        self.task_prefix.setEnabled(kind == "seq2seq")

    def show_model_info(self, text: str) -> None:
        self.model_info.setText(text)
        self.model_info.setVisible(bool(text))

    def values(self) -> dict[str, Any]:
        """This tab's part of the panel's settings."""
        return {
            "server_url": self.server_url.text().strip(),
            "server_model": self.server_model.text().strip(),
            "device": self.device.currentText(),
            "dtype": self.dtype.currentText(),
            "candidates": self.candidates.value(),
            "temperature": self.temperature.value(),
            "top_p": self.top_p.value(),
            "max_new_tokens": self.max_new_tokens.value(),
            "num_beams": self.num_beams.value(),
            "seed": self.seed.value(),
            "batch_size": self.batch_size.value(),
            "seq2seq_prefix": self.task_prefix.text(),
        }

    def apply(self, values: Mapping[str, Any]) -> None:
        """Show saved values (every key of ``DEFAULTS`` this tab holds)."""
        self.server_url.setText(str(values["server_url"]))
        self.server_model.setText(str(values["server_model"]))
        for box, key in ((self.device, "device"), (self.dtype, "dtype")):
            box.setCurrentIndex(max(0, box.findText(str(values[key]))))
        for number, key in (
            (self.candidates, "candidates"),
            (self.max_new_tokens, "max_new_tokens"),
            (self.num_beams, "num_beams"),
            (self.seed, "seed"),
            (self.batch_size, "batch_size"),
        ):
            number.setValue(int(values[key]))
        self.temperature.setValue(float(values["temperature"]))
        self.top_p.setValue(float(values["top_p"]))
        self.task_prefix.setText(str(values["seq2seq_prefix"]))

    def _spins(self) -> tuple[Any, ...]:
        return (
            self.candidates,
            self.temperature,
            self.top_p,
            self.max_new_tokens,
            self.num_beams,
            self.seed,
            self.batch_size,
        )

    @staticmethod
    def _box(title: str, rows: list[tuple[str, QWidget]]) -> QGroupBox:
        box = QGroupBox(title)
        layout = form()
        for label, field in rows:
            layout.addRow(label, field)
        box.setLayout(layout)
        return box

    def _ask_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Folder with models")
        if folder:
            self.add_folder_requested.emit(folder)
