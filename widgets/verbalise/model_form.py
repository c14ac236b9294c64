"""The Verbalise panel's Model tab: where models are found, the server, the device and the
generation settings."""

from __future__ import annotations

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

from core.verbalise.panel_state import DEVICES, DTYPES, VerbaliseState
from widgets.binding import bind
from widgets.theme import set_muted
from widgets.verbalise.common import combo, double, form, spin, wrapping


class ModelForm(QWidget):
    """Model folders (add, rescan), the OpenAI-compatible server, the local device and
    dtype, and the generation settings (METHODS §6), each bound to its field of the
    panel's :class:`VerbaliseState` and enabled for the model kinds it applies to."""

    add_folder_requested = Signal(str)  # a folder to look for models in
    rescan_requested = Signal()
    train_requested = Signal()  # "Train…": app/train.py opens the Train dialog

    def __init__(self, state: VerbaliseState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self._build_buttons()
        self._build_inputs()
        self._lay_out()
        self._bind()
        state.subscribe(lambda *_change: self.update_for(state.model_kind), ["model", "models"])
        self.update_for(state.model_kind)

    def _build_buttons(self) -> None:
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

    def _build_inputs(self) -> None:
        self.server_url = QLineEdit()
        self.server_url.setPlaceholderText("http://localhost:8000/v1")
        self.server_model = QLineEdit()
        self.server_model.setPlaceholderText("default: the first it serves")
        self.device = combo(DEVICES)
        self.dtype = combo(DTYPES)
        state = self.state
        self.candidates = spin(1, 32, state.candidates)
        self.temperature = double(0.05, 5.0, state.temperature, 0.05)
        self.top_p = double(0.05, 1.0, state.top_p, 0.05)
        self.max_new_tokens = spin(1, 8192, state.max_new_tokens)
        self.num_beams = spin(1, 32, state.num_beams)
        self.num_beams.setToolTip("Beam width of seq2seq models (at least the candidates)")
        self.task_prefix = QLineEdit()
        self.task_prefix.setToolTip(
            "What a seq2seq model reads before the <H> <R> <T> triples (empty: WDV's "
            "'translate from Graph to Text: '); {language} becomes the language's name. "
            "Recorded with the run."
        )
        self.seed = spin(0, 2_147_483_647, state.seed)
        self.batch_size = spin(1, 1024, state.batch_size)
        self.batch_size.setToolTip("Units per generate call; halved on out-of-memory")

    def _lay_out(self) -> None:
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

    def _bind(self) -> None:
        state = self.state
        for name in ("server_url", "server_model"):
            bind(state, name, getattr(self, name), from_widget=str.strip)
        for name in ("device", "dtype", "candidates", "temperature", "top_p"):
            bind(state, name, getattr(self, name))
        for name in ("max_new_tokens", "num_beams", "seed", "batch_size"):
            bind(state, name, getattr(self, name))
        # The preview follows the prefix as it is typed, not only when the field is left.
        bind(state, "seq2seq_prefix", self.task_prefix, signal=self.task_prefix.textChanged)

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
