"""The References pipeline dialog (File ▸ References pipeline…): translate gold references
into silver ones, estimate their quality with xCOMET, post-edit them with an LLM — the
steps of ``taillens references translate|qe|postedit``.

It renders a :class:`core.references.dialog_state.ReferencesState` and emits requests;
the controller (``app/references_pipeline.py``) runs the steps in the background. It
never opens the session or a model itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.references.dialog_state import (
    POSTEDIT,
    QE,
    STEPS,
    TRANSLATE,
    ReferencesState,
    is_server,
    translation_languages,
)
from widgets.dialogs import FittedDialog
from widgets.theme import set_muted

_TEXTS = {
    "targets": "targets_edit",
    "translate_server_model": "translate_server_edit",
    "qe_model": "qe_edit",
    "qe_python": "qe_python_edit",
    "edit_server_model": "edit_server_edit",
}
_SPINS = {
    "translate_batch": "translate_batch_spin",
    "beams": "beams_spin",
    "max_new_tokens": "max_tokens_spin",
    "qe_batch": "qe_batch_spin",
    "edit_batch": "edit_batch_spin",
}
_COMBOS = {
    "source": "source_combo",
    "translate_model": "translate_model_combo",
    "edit_model": "edit_model_combo",
}


def _spin(low: int, high: int, tip: str) -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setToolTip(tip)
    return box


def _model_combo(tip: str) -> QComboBox:
    box = QComboBox()
    box.setEditable(True)
    box.setToolTip(tip)
    box.setMinimumContentsLength(24)
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    return box


def _status() -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    set_muted(label)
    return label


def _row(*widgets: QWidget | str) -> QHBoxLayout:
    row = QHBoxLayout()
    for widget in widgets:
        if isinstance(widget, str):
            row.addWidget(QLabel(widget))
        else:
            row.addWidget(widget)
    row.addStretch(1)
    return row


class ReferencesDialog(FittedDialog):
    run_requested = Signal(str)  # a step: translate, qe, postedit
    cancel_requested = Signal()

    def __init__(self, state: ReferencesState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.setWindowTitle("References pipeline")
        self.setMinimumWidth(620)
        intro = QLabel(
            "Make references in new languages: gold references are machine-translated "
            "into silver ones, scored by xCOMET where it is installed, then post-edited by "
            "an LLM. Each step skips what it already did, so a stopped run resumes."
        )
        intro.setWordWrap(True)
        translate_box, qe_box, edit_box = self._translate_box(), self._qe_box(), self._edit_box()
        self._step_widgets()
        buttons = self._buttons()
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(translate_box)
        layout.addWidget(qe_box)
        layout.addWidget(edit_box)
        layout.addWidget(self.progress)
        layout.addWidget(self.progress_label)
        layout.addWidget(buttons)

        self._bind()
        state.watch(lambda _changes: self.render())
        self.render()

    def _translate_box(self) -> QGroupBox:
        """1. Translate: languages, model (or server and its model), batch and beams."""
        self.source_combo = QComboBox()
        self.source_combo.addItems(list(translation_languages()))
        self.source_combo.setToolTip("The language of the gold references to translate")
        self.targets_edit = QLineEdit()
        self.targets_edit.setPlaceholderText("it, es")
        self.targets_edit.setToolTip("The languages to translate into, comma-separated")
        self.translate_model_combo = _model_combo(
            "A translation model (Marian/OPUS-MT, NLLB, M2M100, MADLAD or a causal LM): "
            "a folder, a cached hub id, or an OpenAI-compatible server URL"
        )
        self.translate_model_combo.lineEdit().setPlaceholderText(
            "a model folder, a hub id, or a server's http://… URL"
        )
        self.translate_server_edit = QLineEdit()
        self.translate_server_edit.setPlaceholderText("the server's model name")
        self.translate_batch_spin = _spin(1, 1024, "Texts per generate call")
        self.beams_spin = _spin(1, 32, "Beam search width")
        self.max_tokens_spin = _spin(1, 4096, "The longest translation, in tokens")
        self.translate_button = QPushButton("Run translation")
        self.translate_status = _status()
        translate_form = self.translate_form = QFormLayout()
        translate_form.addRow(
            "From",
            _row(
                self.source_combo,
                "to",
                self.targets_edit,
                "Batch",
                self.translate_batch_spin,
                "Beams",
                self.beams_spin,
            ),
        )
        model_row = QHBoxLayout()
        model_row.addWidget(self.translate_model_combo, 1)
        model_row.addWidget(QLabel("Max tokens"))
        model_row.addWidget(self.max_tokens_spin)
        translate_form.addRow("Model", model_row)
        translate_form.addRow("Server model", self.translate_server_edit)
        return self._step_box(
            "1. Translate", translate_form, self.translate_button, self.translate_status
        )

    def _qe_box(self) -> QGroupBox:
        """2. Estimate quality: the xCOMET checkpoint, its batch and its Python."""
        self.qe_edit = QLineEdit()
        self.qe_edit.setPlaceholderText("an xCOMET folder or .ckpt (never downloaded)")
        self.qe_browse = QPushButton("Browse…")
        self.qe_browse.clicked.connect(self._browse_qe)
        self.qe_batch_spin = _spin(1, 1024, "Translations scored per call")
        self.qe_note = _status()
        self.qe_button = QPushButton("Run quality estimation")
        self.qe_status = _status()
        qe_form = QFormLayout()
        qe_row = QHBoxLayout()
        qe_row.addWidget(self.qe_edit, 1)
        qe_row.addWidget(self.qe_browse)
        qe_row.addWidget(QLabel("Batch"))
        qe_row.addWidget(self.qe_batch_spin)
        qe_form.addRow("Checkpoint", qe_row)
        self.qe_python_edit = QLineEdit()
        self.qe_python_edit.setPlaceholderText(
            "optional: the Python of an environment with unbabel-comet"
        )
        self.qe_python_edit.setToolTip(
            "unbabel-comet needs transformers<5, so it usually lives in an environment of "
            "its own: name that environment's python here (empty: this one)"
        )
        qe_form.addRow("Python", self.qe_python_edit)
        qe_form.addRow(self.qe_note)
        return self._step_box("2. Estimate quality", qe_form, self.qe_button, self.qe_status)

    def _edit_box(self) -> QGroupBox:
        """3. Post-edit: the instruction LLM (or server and its model) and its batch."""
        self.edit_model_combo = _model_combo(
            "An instruction LLM (a causal LM folder or cached hub id), or an "
            "OpenAI-compatible server URL; it gets TailNLG's Appendix F.1 prompt"
        )
        self.edit_model_combo.lineEdit().setPlaceholderText(
            "an instruction LLM's folder, a hub id, or a server's http://… URL"
        )
        self.edit_server_edit = QLineEdit()
        self.edit_server_edit.setPlaceholderText("the server's model name")
        self.edit_batch_spin = _spin(1, 1024, "Prompts per generate call")
        self.postedit_button = QPushButton("Run post-editing")
        self.postedit_status = _status()
        edit_form = self.edit_form = QFormLayout()
        edit_row = QHBoxLayout()
        edit_row.addWidget(self.edit_model_combo, 1)
        edit_row.addWidget(QLabel("Batch"))
        edit_row.addWidget(self.edit_batch_spin)
        edit_form.addRow("Model", edit_row)
        edit_form.addRow("Server model", self.edit_server_edit)
        return self._step_box("3. Post-edit", edit_form, self.postedit_button, self.postedit_status)

    def _step_widgets(self) -> None:
        """Each step's Run button (it asks for the step) and status line, by step."""
        self.buttons_by_step = {
            TRANSLATE: self.translate_button,
            QE: self.qe_button,
            POSTEDIT: self.postedit_button,
        }
        self.status_by_step = {
            TRANSLATE: self.translate_status,
            QE: self.qe_status,
            POSTEDIT: self.postedit_status,
        }
        for step, button in self.buttons_by_step.items():
            button.clicked.connect(lambda _checked=False, step=step: self.run_requested.emit(step))

    def _buttons(self) -> QDialogButtonBox:
        """The progress of the step running, Stop and Close."""
        self.progress = QProgressBar()
        self.progress_label = QLabel()
        self.progress_label.setWordWrap(True)
        self.cancel_button = QPushButton("Stop")
        self.cancel_button.setToolTip("Stop the step running; what it finished is kept")
        self.cancel_button.clicked.connect(self.cancel_requested)
        close = QPushButton("Close")
        close.clicked.connect(self.hide)
        buttons = QDialogButtonBox()
        buttons.addButton(self.cancel_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(close, QDialogButtonBox.ButtonRole.RejectRole)
        return buttons

    @staticmethod
    def _step_box(title: str, form: QFormLayout, button: QPushButton, status: QLabel) -> QGroupBox:
        box = QGroupBox(title)
        column = QVBoxLayout(box)
        column.addLayout(form)
        row = QHBoxLayout()
        row.addWidget(status, 1)
        row.addWidget(button)
        column.addLayout(row)
        return box

    # -- edits into the state --------------------------------------------------------------
    def _bind(self) -> None:
        state = self.state
        for name, attr in _TEXTS.items():
            edit: QLineEdit = getattr(self, attr)
            edit.textChanged.connect(lambda text, name=name: setattr(state, name, text))
        for name, attr in _SPINS.items():
            box: QSpinBox = getattr(self, attr)
            box.valueChanged.connect(lambda value, name=name: setattr(state, name, int(value)))
        for name, attr in _COMBOS.items():
            combo: QComboBox = getattr(self, attr)
            combo.currentTextChanged.connect(lambda text, name=name: setattr(state, name, text))

    def _browse_qe(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "xCOMET checkpoint folder")
        if folder:
            self.qe_edit.setText(folder)

    def set_models(self, translators: Sequence[str], editors: Sequence[str]) -> None:
        """The models on this machine to offer (the user may type another, or a URL)."""
        for combo, specs, current in (
            (self.translate_model_combo, translators, self.state.translate_model),
            (self.edit_model_combo, editors, self.state.edit_model),
        ):
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(list(specs))
            combo.setEditText(current)
            combo.blockSignals(False)

    # -- the state on screen ---------------------------------------------------------------
    def render(self) -> None:
        state = self.state
        for name, attr in _TEXTS.items():
            self._set(getattr(self, attr), getattr(state, name), QLineEdit.setText, QLineEdit.text)
        for name, attr in _SPINS.items():
            self._set(getattr(self, attr), getattr(state, name), QSpinBox.setValue, QSpinBox.value)
        self._set(self.source_combo, state.source, QComboBox.setCurrentText, QComboBox.currentText)
        for name in ("translate_model", "edit_model"):
            combo = getattr(self, _COMBOS[name])
            self._set(combo, getattr(state, name), QComboBox.setEditText, QComboBox.currentText)
        running = bool(state.running)
        for step in STEPS:
            self.buttons_by_step[step].setEnabled(not running)
            self.status_by_step[step].setText(getattr(state, f"{step}_message"))
        # the server's model name is asked for only when the model is a server URL
        self.translate_form.setRowVisible(
            self.translate_server_edit, is_server(state.translate_model)
        )
        self.edit_form.setRowVisible(self.edit_server_edit, is_server(state.edit_model))
        note = state.qe_note()
        self.qe_note.setText(note[0].upper() + note[1:] if note else "")
        self.qe_note.setVisible(bool(note))
        self.cancel_button.setEnabled(running)
        if state.total:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * min(1.0, state.done / state.total)))
        else:
            self.progress.setRange(0, 0 if running else 1)
            self.progress.setValue(0)
        self.progress.setTextVisible(running)
        self.progress_label.setText(state.progress_line)

    @staticmethod
    def _set(widget: Any, value: Any, setter: Any, getter: Any) -> None:
        if getter(widget) != value:
            widget.blockSignals(True)
            setter(widget, value)
            widget.blockSignals(False)
