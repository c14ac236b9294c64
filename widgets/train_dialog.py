"""The Train dialog (``train-verbaliser`` in the GUI): a view of
:class:`core.verbalise.training_state.TrainState`.

The dialog writes the user's edits into the state and renders the state; Start and Cancel
are requests the controller (app/train.py) acts on. It never opens the session or a model.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.verbalise.training_state import TrainState
from widgets.binding import bind
from widgets.dialogs import FittedDialog
from widgets.theme import set_muted

_METRICS = (("chrF++", "chrf"), ("BLEU", "bleu"), ("dev loss", "loss"))
_SAMPLINGS = (
    ("one per entry, at random (WDV)", "wdv"),
    ("every reference", "all"),
)
_DEVICES = ("auto", "cpu", "cuda", "mps")
_INTS = (
    "epochs",
    "batch_size",
    "max_steps",
    "eval_every",
    "patience",
    "eval_limit",
    "num_beams",
    "max_new_tokens",
)


def _spin(low: int, high: int, tip: str) -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setToolTip(tip)
    return box


class TrainDialog(FittedDialog):
    start_requested = Signal()
    cancel_requested = Signal()

    def __init__(self, state: TrainState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.setWindowTitle("Train a verbaliser")
        self._build_inputs()
        self._build_outcome()
        self._lay_out()
        self._bind()
        state.watch(lambda _changes: self.render())
        self.render()

    def _build_inputs(self) -> None:
        self.base_combo = QComboBox()
        self.base_combo.setEditable(True)
        self.base_combo.setToolTip("A model folder or a cached Hugging Face id")
        self.out_edit = QLineEdit()
        self.out_edit.setPlaceholderText("a new folder for the trained model")
        self.browse_button = QPushButton("Browse…")
        self.browse_button.clicked.connect(self._browse)
        self.epochs = _spin(1, 1000, "Passes over the training texts")
        self.batch_size = _spin(1, 1024, "Texts per step")
        self.learning_rate = QDoubleSpinBox()
        self.learning_rate.setDecimals(6)
        self.learning_rate.setRange(1e-6, 1.0)
        self.learning_rate.setSingleStep(1e-5)
        self.max_steps = _spin(0, 10_000_000, "Stop after this many steps (0: the epochs decide)")
        self.eval_every = _spin(0, 1_000_000, "Steps between evaluations on dev (0: at the end)")
        self.patience = _spin(
            0, 1000, "Evaluations without a better figure before stopping (0: never)"
        )
        self.eval_limit = _spin(0, 1_000_000, "Dev graphs verbalised at each evaluation (0: all)")
        self.num_beams = _spin(1, 32, "Beams when verbalising the dev graphs (seq2seq)")
        self.max_new_tokens = _spin(1, 8192, "Longest text verbalised for the dev graphs")
        self.stop_metric = QComboBox()
        for label, key in _METRICS:
            self.stop_metric.addItem(label, key)
        self.sampling = QComboBox()
        for label, key in _SAMPLINGS:
            self.sampling.addItem(label, key)
        self.sampling.setToolTip(
            "What each epoch trains on: one example per entry, a reference at random (WebNLG's "
            "good ones where marked) with its triples shuffled, as WDV did; or every "
            "reference with the triples in their stored order"
        )
        self.dev_share = QDoubleSpinBox()
        self.dev_share.setRange(0.01, 0.9)
        self.dev_share.setSingleStep(0.05)
        self.dev_share.setToolTip("Share of the entries held out for dev")
        self.device = QComboBox()
        self.device.addItems(_DEVICES)

    def _build_outcome(self) -> None:
        self.progress = QProgressBar()
        self.status_label = QLabel()
        self.status_label.setWordWrap(True)
        self.problem_label = QLabel()
        set_muted(self.problem_label)
        self.start_button = QPushButton("Start")
        self.start_button.clicked.connect(self.start_requested)
        self.cancel_button = QPushButton("Cancel training")
        self.cancel_button.clicked.connect(self.cancel_requested)

    def _lay_out(self) -> None:
        intro = QLabel(
            "Fine-tune a graph-to-text model on this session's references: a seq2seq model "
            "(T5, BART, mT5) with WDV's input ('translate from Graph to Text: ' then "
            "<H> s <R> p <T> o), or a causal LM with LoRA adapters (needs peft) on the chat "
            "prompt. Train and dev are split by entry. The folder becomes a model in "
            "Verbalise's list; a cancelled training resumes with the same settings."
        )
        intro.setWordWrap(True)
        out_row = QHBoxLayout()
        out_row.addWidget(self.out_edit, 1)
        out_row.addWidget(self.browse_button)
        form = QFormLayout()
        form.addRow("Start from", self.base_combo)
        form.addRow("Save to", out_row)
        for label, widget in (
            ("Epochs", self.epochs),
            ("Batch size", self.batch_size),
            ("Learning rate", self.learning_rate),
            ("Max steps", self.max_steps),
            ("Evaluate every", self.eval_every),
            ("Patience", self.patience),
            ("Dev graphs", self.eval_limit),
            ("Beams (dev)", self.num_beams),
            ("Max new tokens (dev)", self.max_new_tokens),
            ("Stop on", self.stop_metric),
            ("Examples per epoch", self.sampling),
            ("Dev share", self.dev_share),
            ("Device", self.device),
        ):
            form.addRow(label, widget)
        close = QPushButton("Close")
        close.clicked.connect(self.hide)
        buttons = QDialogButtonBox()
        buttons.addButton(self.start_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.cancel_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(close, QDialogButtonBox.ButtonRole.RejectRole)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.progress)
        layout.addWidget(self.status_label)
        layout.addWidget(self.problem_label)
        layout.addWidget(buttons)

    # -- edits into the state --------------------------------------------------------------
    def _bind(self) -> None:
        state = self.state
        # A typed model or folder is the state's at each key (the problem line follows it),
        # not only when an item is picked or the field is left.
        self._base_binding = bind(
            state, "base", self.base_combo, signal=self.base_combo.currentTextChanged
        )
        bind(state, "out", self.out_edit, signal=self.out_edit.textChanged)
        for name in (*_INTS, "learning_rate", "dev_share", "stop_metric", "sampling", "device"):
            bind(state, name, getattr(self, name))

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Folder for the trained model")
        if folder:
            self.out_edit.setText(folder)

    def set_models(self, specs: Sequence[str]) -> None:
        """The models to offer as a start (the user may type another)."""

        def fill() -> None:
            self.base_combo.clear()
            self.base_combo.addItems(list(specs))

        self._base_binding.refill(fill)

    # -- the state on screen ---------------------------------------------------------------
    def render(self) -> None:
        """What the bindings do not show: what may be edited now, the progress and the
        lines."""
        state = self.state
        running = state.running
        for widget in (self.base_combo, self.out_edit, self.browse_button, self.epochs,
                       self.batch_size, self.learning_rate, self.max_steps, self.eval_every,
                       self.patience, self.eval_limit, self.num_beams, self.max_new_tokens,
                       self.stop_metric, self.sampling, self.dev_share,
                       self.device):  # fmt: skip
            widget.setEnabled(not running)
        self.start_button.setEnabled(not state.problem)
        self.cancel_button.setEnabled(state.phase == "running")
        self.problem_label.setText(state.problem)
        if state.total:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * min(1.0, state.done / state.total)))
        else:
            self.progress.setRange(0, 0 if running else 1)
        self.status_label.setText(state.message)
