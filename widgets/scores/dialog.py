"""The Score… dialog: which metrics, models, runs and languages to score."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import (
    Qt,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.desktop.dialog_memory import DialogMemory
from core.metrics import ALL_METRICS, MetricOptions
from core.metrics.info import metric_info
from core.metrics.scoring import ScoringRequest
from widgets.dialogs import FittedDialog
from widgets.message_bar import ElidedLabel
from widgets.scores.rows import ModelChoice, ScoreChoices
from widgets.theme import set_muted, themed_style_sheet, tone

# -- the Score… dialog -----------------------------------------------------------------


class ScoreDialog(FittedDialog):
    """Which metrics, models, runs and languages to score."""

    def __init__(
        self,
        choices: ScoreChoices,
        parent: QWidget | None = None,
        memory: DialogMemory | None = None,
    ) -> None:
        super().__init__(parent)
        self.memory = memory
        self.setWindowTitle("Score verbalisations")
        layout = QVBoxLayout(self)
        layout.addWidget(self._metrics_box(choices))
        layout.addWidget(self._models_box(choices))
        layout.addWidget(self._texts_box(choices))
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Score")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        if memory is not None:
            self.restore(memory.load())
            self.accepted.connect(lambda: memory.save(self.remembered()))
        self._update_notes()

    def _metrics_box(self, choices: ScoreChoices) -> QGroupBox:
        """A check per metric with its description (or why it is not ticked here), and
        the WordNet folder METEOR needs."""
        metrics_box = QGroupBox("Metrics")
        grid = QGridLayout(metrics_box)
        self.metric_checks: dict[str, QCheckBox] = {}
        self.metric_notes: dict[str, QLabel] = {}
        for i, name in enumerate(ALL_METRICS):
            check = QCheckBox(name)
            check.setChecked(name in choices.checked)
            description = metric_info(name).description
            if metric_info(name).needs_model:
                description += " — needs a causal model (the run's own, or the one below)"
            check.setToolTip(description)
            # One line each: word-wrapped labels in a grid get one line's height and overlap;
            # elided where the dialog is narrow (the whole text in the tooltip), so a long
            # description never makes the dialog wider than a small screen.
            label = ElidedLabel(Qt.TextElideMode.ElideRight)
            shown = description
            if name in choices.unticked:  # why this machine's default leaves it out
                shown = f"{choices.unticked[name]} — {description}"
            label.setText(shown)
            set_muted(label)
            label.setToolTip(shown)
            grid.addWidget(check, i, 0)
            grid.addWidget(label, i, 1)
            self.metric_checks[name] = check
            self.metric_notes[name] = label
        grid.setColumnStretch(1, 1)
        # METEOR needs a WordNet folder on this machine: say where it is, or why not.
        self.wordnet_edit = QLineEdit()
        self.wordnet_edit.setPlaceholderText("WordNet folder (empty: look for one)")
        self.wordnet_edit.setToolTip(
            "A WordNet 3.0 database folder (index.noun, data.noun, …) "
            "for METEOR; empty: $TAILLENS_WORDNET, nltk's data "
            "folders, /usr/share/wordnet (Debian's wordnet-base)"
        )
        self.wordnet_note = QLabel(choices.wordnet_note)
        self.wordnet_note.setWordWrap(True)
        if not choices.wordnet_found:
            themed_style_sheet(self.wordnet_note, lambda p: f"color: {tone('error', p)};")
        row = len(ALL_METRICS)
        grid.addWidget(QLabel("WordNet"), row, 0)
        grid.addWidget(self.wordnet_edit, row, 1)
        grid.addWidget(self.wordnet_note, row + 1, 0, 1, 2)
        return metrics_box

    def _models_box(self, choices: ScoreChoices) -> QGroupBox:
        """The models the metrics use, ESA's distance and rules, and the device."""
        models_box = QGroupBox("Models")
        form = QFormLayout(models_box)
        self.bertscore_combo = self._model_combo(choices.bertscore_models)
        self.bertscore_note = QLabel()
        self.bertscore_note.setWordWrap(True)
        self.bertscore_combo.currentIndexChanged.connect(self._update_notes)
        self.bertscore_combo.editTextChanged.connect(self._update_notes)
        self.encoder_combo = self._model_combo(choices.encoders)
        self.encoder_note = QLabel()
        self.encoder_note.setWordWrap(True)
        self.encoder_combo.currentIndexChanged.connect(self._update_notes)
        self.encoder_combo.editTextChanged.connect(self._update_notes)
        self.ppl_combo = self._model_combo(choices.ppl_models)
        self.device_combo = QComboBox()
        self.device_combo.addItems(["auto", "cpu", "cuda", "mps"])
        self.esa_distance = QDoubleSpinBox()
        self.esa_distance.setRange(0.0, 0.95)
        self.esa_distance.setSingleStep(0.05)
        self.esa_distance.setValue(0.4)
        self.esa_distance.setToolTip(
            "Normalised Levenshtein distance under which a span of the "
            "text counts as a mention of an entity (METHODS §7)"
        )
        form.addRow("BERTScore model", self.bertscore_combo)
        form.addRow("", self.bertscore_note)
        form.addRow("Similarity encoder", self.encoder_combo)
        form.addRow("", self.encoder_note)
        form.addRow("Perplexity model", self.ppl_combo)
        form.addRow("ESA distance", self.esa_distance)
        self.esa_config_combo = QComboBox()
        self.esa_config_combo.addItem("ESA paper's rules", "paper")
        self.esa_config_combo.addItem("TailLens detection", "taillens")
        self.esa_config_combo.setToolTip(
            "Which detection rules ESA uses: the ESA paper's rules (default), or TailLens's "
            "(second chance, group heads; dates and numbers by value only). The score's "
            "signature names it (docs/esa.md)"
        )
        form.addRow("ESA rules", self.esa_config_combo)
        form.addRow("Device", self.device_combo)
        return models_box

    def _texts_box(self, choices: ScoreChoices) -> QGroupBox:
        """Which runs and languages, the references, and what to do with blank outputs."""
        texts_box = QGroupBox("Texts")
        texts = QVBoxLayout(texts_box)
        self.runs_list = QListWidget()
        self.runs_list.setMaximumHeight(110)
        for run_id, label in choices.runs:
            item = QListWidgetItem(label)
            item.setData(Qt.ItemDataRole.UserRole, run_id)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.runs_list.addItem(item)
        texts.addWidget(QLabel("Runs"))
        texts.addWidget(self.runs_list)
        langs_row = QHBoxLayout()
        langs_row.addWidget(QLabel("Languages"))
        self.lang_checks: dict[str, QCheckBox] = {}
        for lang in choices.langs:
            check = QCheckBox(lang)
            check.setChecked(True)
            langs_row.addWidget(check)
            self.lang_checks[lang] = check
        langs_row.addStretch(1)
        texts.addLayout(langs_row)
        self.references_check = QCheckBox("Also score the references (reference-free metrics)")
        texts.addWidget(self.references_check)
        # Every output counts by default, as in the WebNLG challenge's scripts.
        self.exclude_empty_check = QCheckBox(
            "Leave out empty outputs and unparsed replies (default: scored as empty texts)"
        )
        self.exclude_empty_check.setToolTip(
            "By default an empty output, and a reply no answer could be parsed from, is "
            "scored as an empty text, so it lowers the corpus score as it does in the WebNLG "
            "challenge's official scripts. Checked: they are left out (the summary counts "
            "them)."
        )
        self.exclude_unparsed_check = QCheckBox(
            "Leave out only the replies no answer could be parsed from"
        )
        texts.addWidget(self.exclude_empty_check)
        texts.addWidget(self.exclude_unparsed_check)
        return texts_box

    def remembered(self) -> dict[str, Any]:
        """The choices to offer again next time (runs and languages left unticked are
        kept by id and code, so a new run or language comes ticked)."""
        runs = [self.runs_list.item(i) for i in range(self.runs_list.count())]
        return {
            "metrics": [n for n, c in self.metric_checks.items() if c.isChecked()],
            "unticked_runs": [
                int(r.data(Qt.ItemDataRole.UserRole))
                for r in runs
                if r.checkState() != Qt.CheckState.Checked
            ],
            "unticked_langs": [k for k, c in self.lang_checks.items() if not c.isChecked()],
            "bertscore": self.bertscore_combo.currentText(),
            "encoder": self.encoder_combo.currentText(),
            "ppl": self.ppl_combo.currentText(),
            "device": self.device_combo.currentText(),
            "esa_distance": self.esa_distance.value(),
            "esa_config": self.esa_config_combo.currentData(),
            "wordnet": self.wordnet_edit.text(),
            "references": self.references_check.isChecked(),
            "exclude_empty": self.exclude_empty_check.isChecked(),
            "exclude_unparsed": self.exclude_unparsed_check.isChecked(),
        }

    def restore(self, values: dict[str, Any]) -> None:
        """Show ``values`` (:meth:`remembered`'s); what is missing or no longer offered
        keeps this dialog's default."""
        metrics = values.get("metrics")
        if isinstance(metrics, list):
            for name, check in self.metric_checks.items():
                check.setChecked(name in metrics)
        unticked = values.get("unticked_runs")
        if isinstance(unticked, list):
            for i in range(self.runs_list.count()):
                item = self.runs_list.item(i)
                if item.data(Qt.ItemDataRole.UserRole) in unticked:
                    item.setCheckState(Qt.CheckState.Unchecked)
        langs = values.get("unticked_langs")
        if isinstance(langs, list):
            for lang, check in self.lang_checks.items():
                check.setChecked(lang not in langs)
        for key, combo in (
            ("bertscore", self.bertscore_combo),
            ("encoder", self.encoder_combo),
            ("ppl", self.ppl_combo),
            ("device", self.device_combo),
        ):
            text = values.get(key)
            if isinstance(text, str) and text:
                index = combo.findText(text)
                if index >= 0:
                    combo.setCurrentIndex(index)
                elif combo.isEditable():
                    combo.setEditText(text)
        if isinstance(values.get("esa_distance"), (int, float)):
            self.esa_distance.setValue(float(values["esa_distance"]))
        if isinstance(values.get("esa_config"), str):
            at = self.esa_config_combo.findData(values["esa_config"])
            if at >= 0:
                self.esa_config_combo.setCurrentIndex(at)
        if isinstance(values.get("wordnet"), str):
            self.wordnet_edit.setText(values["wordnet"])
        for key, check in (
            ("references", self.references_check),
            ("exclude_empty", self.exclude_empty_check),
            ("exclude_unparsed", self.exclude_unparsed_check),
        ):
            if isinstance(values.get(key), bool):
                check.setChecked(values[key])

    @staticmethod
    def _model_combo(choices: Sequence[ModelChoice]) -> QComboBox:
        combo = QComboBox()
        combo.setEditable(True)
        combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        combo.setToolTip("Pick one, or type a model folder or a cached Hugging Face id")
        for choice in choices:
            combo.addItem(choice.label, (choice.value, choice.note))
        return combo

    @staticmethod
    def _combo_value(combo: QComboBox) -> tuple[str | None, str]:
        index = combo.currentIndex()
        text = combo.currentText().strip()
        if index >= 0 and combo.itemText(index) == text:
            value, note = combo.itemData(index)
            return value, note
        return (text or None), ""

    def _update_notes(self, *_args: Any) -> None:
        value, note = self._combo_value(self.bertscore_combo)
        self.bertscore_note.setText(
            note
            or (
                f"{value}: rescaled only where bert_score ships a baseline for this model and "
                "language; otherwise the raw F1 is stored and marked not rescaled."
                if value
                else ""
            )
        )
        value, note = self._combo_value(self.encoder_combo)
        self.encoder_note.setText(
            note or (f"{value} (a sentence-transformers model)" if value else "")
        )

    def request(self) -> ScoringRequest:
        """What is chosen, as core's request (the controller checks and runs it). Every
        run or language ticked is None (everything, also what comes later); none ticked is
        an empty tuple, which the controller refuses with a message."""
        runs = [self.runs_list.item(i) for i in range(self.runs_list.count())]
        chosen_runs = tuple(
            int(r.data(Qt.ItemDataRole.UserRole))
            for r in runs
            if r.checkState() == Qt.CheckState.Checked
        )
        langs = tuple(lang for lang, check in self.lang_checks.items() if check.isChecked())
        return ScoringRequest(
            metrics=tuple(n for n, c in self.metric_checks.items() if c.isChecked()),
            run_ids=None if len(chosen_runs) == len(runs) else chosen_runs,
            langs=None if len(langs) == len(self.lang_checks) else langs,
            references=self.references_check.isChecked(),
            options=MetricOptions(
                bertscore_model=self._combo_value(self.bertscore_combo)[0],
                encoder=self._combo_value(self.encoder_combo)[0],
                ppl_model=self._combo_value(self.ppl_combo)[0],
                device=self.device_combo.currentText() or "auto",
                esa_distance=round(self.esa_distance.value(), 4),
                esa_config=str(self.esa_config_combo.currentData() or "paper"),
                wordnet=self.wordnet_edit.text().strip() or None,
            ),
            exclude_empty=self.exclude_empty_check.isChecked(),
            exclude_unparsed=self.exclude_unparsed_check.isChecked(),
        )
