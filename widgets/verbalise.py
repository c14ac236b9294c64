"""Verbalise panel: choose a verbaliser, edit the prompts, run it over units, see the outputs.

Top: the model picker (the template verbaliser first, the default; then the models found
in the Hugging Face cache and the configured folders, with type and size; then an
OpenAI-compatible server), and a red line for what is wrong with the choice. Tabs, each
scrollable so the panel works in a narrow dock: *Model* (folders, server, device, dtype,
generation settings), *Prompt* (one editable template per language and the live preview
of the exact prompt for a unit), *Units* (which units, which languages, resume) and
*Results* (the last run's summary, the session's runs, a unit's outputs). Bottom: progress,
Run and Cancel.

The panel keeps no truth of its own: ``app.verbalise.VerbaliseController`` reads its
settings, builds the verbaliser and the job, and hands back models, previews, progress
and results to show.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFontDatabase, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.groups import LANGUAGE_NAMES, LANGUAGES
from core.labels import tier_label

if TYPE_CHECKING:
    from core.verbalise.runs import RunOverview, UnitOutput, UnitSummary

DEVICES = ("auto", "cpu", "cuda", "mps")
DTYPES = ("auto", "float32", "bfloat16", "float16")
SERVER = "server"  # the picker's entry for an OpenAI-compatible server
TEMPLATE = "template"
SCOPES = ("selected", "tier", "category", "all")
RUN_COLUMNS = ("run", "model", "kind", "status", "texts")
OUTPUT_COLUMNS = ("lang", "#", "text")
# METHODS §6 defaults (the same as core.verbalise.GenerationParams and the CLI).
DEFAULTS: dict[str, Any] = {
    "model": TEMPLATE,
    "server_url": "",
    "server_model": "",
    "device": "auto",
    "dtype": "auto",
    "candidates": 3,
    "temperature": 0.7,
    "top_p": 0.9,
    "max_new_tokens": 256,
    "num_beams": 3,
    "seed": 0,
    "batch_size": 8,
    "scope": "all",
    "tier": None,
    "category": None,
    "langs": list(LANGUAGES),
    "resume": True,
    "prompt_preset": "tailnlg",
    "seq2seq_prefix": "",
}
_RED = QBrush(QColor("#c23b22"))
_TAB_MODEL, _TAB_PROMPT, _TAB_UNITS, _TAB_RESULTS = range(4)


def _item(text: str, data: Any = None) -> QStandardItem:
    item = QStandardItem(text)
    item.setEditable(False)
    if data is not None:
        item.setData(data, Qt.ItemDataRole.UserRole)
    return item


def _table(model: QStandardItemModel) -> QTableView:
    view = QTableView()
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.verticalHeader().setVisible(False)
    view.horizontalHeader().setStretchLastSection(True)
    view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    view.setWordWrap(True)
    return view


def _combo(items: Sequence[str] = ()) -> QComboBox:
    combo = QComboBox()
    combo.addItems(list(items))
    # Long model names must not force the dock wider than the user made it.
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(8)
    return combo


def _spin(low: int, high: int, value: int) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    spin.setValue(value)
    return spin


def _double(low: float, high: float, value: float, step: float) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(low, high)
    spin.setDecimals(2)
    spin.setSingleStep(step)
    spin.setValue(value)
    return spin


def _scrolled(widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return area


def _form() -> QFormLayout:
    form = QFormLayout()
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
    return form


def _wrapping(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def unit_label(unit: UnitSummary) -> str:
    """How the picker names a unit: uid · category · tier · size."""
    tier = unit.sub_tier or unit.tier
    parts = [
        unit.uid,
        unit.category,
        tier_label(tier) if tier else "",
        f"{unit.size} triple{'s' if unit.size != 1 else ''}",
    ]
    return " · ".join(str(p) for p in parts if p)


class _PagedUnits(QStandardItemModel):
    """The units the picker's search matches, read a page at a time: the drop-down asks
    for more (``fetchMore``) as it scrolls, the picker asks its controller
    (``UnitPicker.more_requested``), which answers with :meth:`UnitPicker.add_page`."""

    def __init__(self, picker: UnitPicker) -> None:
        super().__init__(0, 1)
        self._picker = picker
        self.matching = 0  # units the search matches, whether read yet or not

    def canFetchMore(self, parent: QModelIndex = QModelIndex()) -> bool:  # noqa: B008
        return not parent.isValid() and self.rowCount() < self.matching

    def fetchMore(self, parent: QModelIndex = QModelIndex()) -> None:  # noqa: B008
        if self.canFetchMore(parent):
            self._picker.more_requested.emit(self._picker.search_text(), self.last_id())

    def last_id(self) -> int | None:
        rows = self.rowCount()
        return int(self.item(rows - 1).data(Qt.ItemDataRole.UserRole)) if rows else None


class UnitPicker(QWidget):
    """The unit whose prompt is previewed: a search line and a drop-down of the units it
    matches, one page at a time (the session is never read whole). A unit chosen
    elsewhere (the Units panel) is shown even when its page is not read yet."""

    search_changed = Signal(str)  # the search text, once typing pauses
    more_requested = Signal(str, object)  # the search text, the last unit id read
    unit_chosen = Signal(int)  # a unit picked in the drop-down

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find a unit: part of its id, category or tier")
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip(
            "Lists the units whose id, category, tier or sub-tier contains this text"
        )
        self._typing = QTimer(self)
        self._typing.setSingleShot(True)
        self._typing.setInterval(250)
        self._typing.timeout.connect(lambda: self.search_changed.emit(self.search_text()))
        self.search.textChanged.connect(lambda _text: self._typing.start())
        self.units = _PagedUnits(self)
        self.combo = _combo()
        self.combo.setModel(self.units)
        self.combo.setToolTip(
            "The unit whose prompt is previewed; follows the unit selected in the Units panel"
        )
        self.combo.activated.connect(self._on_activated)
        self.matches_label = QLabel()
        self.matches_label.setStyleSheet("color: palette(mid)")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("<b>Exact prompt</b> for"))
        row.addWidget(self.combo, 1)
        layout.addLayout(row)
        search_row = QHBoxLayout()
        search_row.addWidget(self.search, 1)
        search_row.addWidget(self.matches_label)
        layout.addLayout(search_row)
        self._shown: UnitSummary | None = None

    def search_text(self) -> str:
        return self.search.text().strip()

    def show_page(self, units: Sequence[UnitSummary], matching: int) -> None:
        """The first page of the units the search matches, and how many it matches."""
        self.combo.blockSignals(True)
        self.units.removeRows(0, self.units.rowCount())
        self.units.matching = matching
        self.combo.blockSignals(False)
        self.matches_label.setText(
            f"{matching:,} matching" if self.search_text() else f"{matching:,} units"
        )
        self.add_page(units)

    def add_page(self, units: Sequence[UnitSummary]) -> None:
        """The next page (the drop-down scrolled to its end)."""
        self.combo.blockSignals(True)
        for unit in units:
            item = QStandardItem(unit_label(unit))
            item.setData(unit.id, Qt.ItemDataRole.UserRole)
            self.units.appendRow(item)
        if not units:  # nothing more to read: the session shrank since the count
            self.units.matching = self.units.rowCount()
        self.combo.blockSignals(False)
        self.show_unit(self._shown)

    def show_unit(self, unit: UnitSummary | None) -> None:
        """The unit previewed, whether its page is read or not."""
        self._shown = unit
        index = self.combo.findData(unit.id) if unit is not None else -1
        self.combo.blockSignals(True)
        self.combo.setPlaceholderText(unit_label(unit) if unit is not None else "")
        self.combo.setCurrentIndex(index)
        self.combo.blockSignals(False)

    def unit_id(self) -> int | None:
        data = self.combo.currentData()
        if data is not None:
            return int(data)
        return self._shown.id if self._shown is not None else None

    def _on_activated(self, _index: int) -> None:
        data = self.combo.currentData()
        if data is not None:
            self.unit_chosen.emit(int(data))


class VerbalisePanel(QWidget):
    model_changed = Signal()  # the model, server, device or dtype changed
    add_folder_requested = Signal(str)  # a folder to look for models in
    rescan_requested = Signal()
    template_edited = Signal(str)  # lang
    preview_requested = Signal()  # the preview's unit or language changed
    settings_changed = Signal()  # anything the user set (to keep it)
    run_requested = Signal()
    cancel_requested = Signal()
    run_selected = Signal(int)  # a run in the runs table
    unit_chosen = Signal(int)  # the preview unit picked here
    unit_search_changed = Signal(str)  # the picker's search: its first page is wanted
    more_units_requested = Signal(str, object)  # the search, the last unit id read

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._defaults: dict[str, str] = {}
        self._restoring = False
        self._kind_note = ""
        fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

        # -- model picker (always visible) --
        self.model_combo = _combo()
        self.model_combo.setToolTip(
            "The template verbaliser (no weights), a model found in "
            "the Hugging Face cache or a configured folder, or an "
            "OpenAI-compatible server"
        )
        self.model_combo.currentIndexChanged.connect(self._on_model_changed)
        self.error_label = _wrapping()
        self.error_label.setStyleSheet("color: #c23b22")
        self.error_label.hide()

        # -- Model tab --
        self.add_folder_button = QPushButton("Add folder…")
        self.add_folder_button.setToolTip(
            "Look for models in a folder (a model folder, or a folder of model folders); remembered"
        )
        self.add_folder_button.clicked.connect(self._ask_folder)
        rescan = QPushButton("Rescan")
        rescan.setToolTip("Look again in the Hugging Face cache and the configured folders")
        rescan.clicked.connect(self.rescan_requested)
        self.model_info = _wrapping()
        self.model_info.setStyleSheet("color: palette(mid)")
        self.server_url = QLineEdit()
        self.server_url.setPlaceholderText("http://localhost:8000/v1")
        self.server_model = QLineEdit()
        self.server_model.setPlaceholderText("default: the first it serves")
        for edit in (self.server_url, self.server_model):
            edit.editingFinished.connect(self._on_model_changed)
        self.device = _combo(DEVICES)
        self.dtype = _combo(DTYPES)
        for combo in (self.device, self.dtype):
            combo.currentIndexChanged.connect(self._on_model_changed)
        self.candidates = _spin(1, 32, DEFAULTS["candidates"])
        self.temperature = _double(0.05, 5.0, DEFAULTS["temperature"], 0.05)
        self.top_p = _double(0.05, 1.0, DEFAULTS["top_p"], 0.05)
        self.max_new_tokens = _spin(1, 8192, DEFAULTS["max_new_tokens"])
        self.num_beams = _spin(1, 32, DEFAULTS["num_beams"])
        self.num_beams.setToolTip("Beam width of seq2seq models (at least the candidates)")
        self.task_prefix = QLineEdit()
        self.task_prefix.setToolTip(
            "What a seq2seq model reads before the <H> <R> <T> triples (empty: WDV's "
            "'translate from Graph to Text: '); {language} becomes the language's name. "
            "Recorded with the run."
        )
        self.task_prefix.textChanged.connect(self._on_prefix_changed)
        self.seed = _spin(0, 2_147_483_647, DEFAULTS["seed"])
        self.batch_size = _spin(1, 1024, DEFAULTS["batch_size"])
        self.batch_size.setToolTip("Units per generate call; halved on out-of-memory")
        for spin in (
            self.candidates,
            self.temperature,
            self.top_p,
            self.max_new_tokens,
            self.num_beams,
            self.seed,
            self.batch_size,
        ):
            spin.valueChanged.connect(self._changed)

        model_page = QWidget()
        model_layout = QVBoxLayout(model_page)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_folder_button)
        buttons.addWidget(rescan)
        buttons.addStretch(1)
        model_layout.addLayout(buttons)
        model_layout.addWidget(self.model_info)
        server_box = QGroupBox("OpenAI-compatible server")
        server_form = _form()
        server_form.addRow("URL", self.server_url)
        server_form.addRow("Model", self.server_model)
        server_box.setLayout(server_form)
        self.server_box = server_box
        model_layout.addWidget(server_box)
        local_box = QGroupBox("Local model")
        local_form = _form()
        local_form.addRow("Device", self.device)
        local_form.addRow("Dtype", self.dtype)
        local_box.setLayout(local_form)
        self.local_box = local_box
        model_layout.addWidget(local_box)
        generation = QGroupBox("Generation (METHODS §6)")
        gen_form = _form()
        gen_form.addRow("Candidates", self.candidates)
        gen_form.addRow("Temperature", self.temperature)
        gen_form.addRow("Top-p", self.top_p)
        gen_form.addRow("Max new tokens", self.max_new_tokens)
        gen_form.addRow("Beams (seq2seq)", self.num_beams)
        gen_form.addRow("Task prefix (seq2seq)", self.task_prefix)
        gen_form.addRow("Seed", self.seed)
        gen_form.addRow("Batch size", self.batch_size)
        generation.setLayout(gen_form)
        model_layout.addWidget(generation)
        model_layout.addStretch(1)

        # -- Prompt tab --
        self.unit_picker = UnitPicker()
        self.preview_unit = self.unit_picker.combo
        self.unit_picker.unit_chosen.connect(self.unit_chosen)
        self.unit_picker.search_changed.connect(self.unit_search_changed)
        self.unit_picker.more_requested.connect(self.more_units_requested)
        self.preset_combo = _combo()
        self.preset_combo.setToolTip(
            "The bundled prompts the templates start from: the TailNLG study's Appendix H "
            "texts, verbatim (Draetta et al., 2026, CC BY 4.0), or TailLens's own wording. "
            "Templates you edited stay as they are."
        )
        self.preset_combo.currentIndexChanged.connect(self._on_preset_changed)
        self._presets: dict[str, dict[str, str]] = {}
        self._preset = "tailnlg"
        self.template_tabs = QTabWidget()
        self.template_edits: dict[str, QPlainTextEdit] = {}
        for lang in LANGUAGES:
            edit = QPlainTextEdit()
            edit.setFont(fixed)
            edit.setToolTip(
                f"The {LANGUAGE_NAMES[lang]} prompt; {{triples}} is replaced by "
                "the unit's triples, one [subject, predicate, object] per line"
            )
            edit.textChanged.connect(lambda lang=lang: self._on_template_edited(lang))
            self.template_edits[lang] = edit
            self.template_tabs.addTab(edit, lang)
        self.template_tabs.currentChanged.connect(lambda _i: self.preview_requested.emit())
        self.reset_button = QPushButton("Reset to default")
        self.reset_button.clicked.connect(self._reset_current_template)
        self.template_note = _wrapping()
        self.preview = QPlainTextEdit()
        self.preview.setReadOnly(True)
        self.preview.setFont(fixed)
        self.preview.setPlaceholderText("The exact prompt for the unit appears here")
        self.preview_note = _wrapping()
        self.preview_note.setStyleSheet("color: palette(mid)")

        template_box = QWidget()
        template_layout = QVBoxLayout(template_box)
        template_layout.setContentsMargins(0, 0, 0, 0)
        template_layout.addWidget(QLabel("<b>Prompt template</b> (edited ones go into the run)"))
        preset_row = QHBoxLayout()
        preset_row.addWidget(QLabel("Preset"))
        preset_row.addWidget(self.preset_combo, 1)
        template_layout.addLayout(preset_row)
        template_layout.addWidget(self.template_tabs, 1)
        reset_row = QHBoxLayout()
        reset_row.addWidget(self.template_note, 1)
        reset_row.addWidget(self.reset_button, 0, Qt.AlignmentFlag.AlignTop)
        template_layout.addLayout(reset_row)
        preview_box = QWidget()
        preview_layout = QVBoxLayout(preview_box)
        preview_layout.setContentsMargins(0, 0, 0, 0)
        preview_layout.addWidget(self.unit_picker)
        preview_layout.addWidget(self.preview, 1)
        preview_layout.addWidget(self.preview_note)
        prompt_splitter = QSplitter(Qt.Orientation.Vertical)
        prompt_splitter.addWidget(template_box)
        prompt_splitter.addWidget(preview_box)
        prompt_splitter.setChildrenCollapsible(False)
        prompt_page = QWidget()
        prompt_layout = QVBoxLayout(prompt_page)
        prompt_layout.addWidget(prompt_splitter)

        # -- Units tab --
        self.scope_buttons = QButtonGroup(self)
        self.scope_radios: dict[str, QRadioButton] = {}
        for index, (scope, text) in enumerate(
            (
                ("selected", "The selected unit"),
                ("tier", "A tier"),
                ("category", "A category"),
                ("all", "All units"),
            )
        ):
            radio = QRadioButton(text)
            self.scope_buttons.addButton(radio, index)
            self.scope_radios[scope] = radio
        self.scope_radios["all"].setChecked(True)
        self.scope_buttons.idToggled.connect(lambda _i, _on: self._changed())
        self.tier_combo = _combo()
        self.category_combo = _combo()
        for combo, scope in ((self.tier_combo, "tier"), (self.category_combo, "category")):
            combo.activated.connect(lambda _i, s=scope: self.scope_radios[s].setChecked(True))
            combo.currentIndexChanged.connect(self._changed)
        self.lang_checks: dict[str, QCheckBox] = {}
        for lang in LANGUAGES:
            check = QCheckBox(f"{lang} ({LANGUAGE_NAMES[lang]})")
            check.setChecked(True)
            check.toggled.connect(self._changed)
            self.lang_checks[lang] = check
        self.resume_check = QCheckBox("Resume the unfinished run with the same settings")
        self.resume_check.setChecked(True)
        self.resume_check.setToolTip(
            "Continue the newest cancelled or failed run made with "
            "the same model, parameters and prompts, skipping what "
            "it already holds; unticked, a new run starts"
        )
        self.resume_check.toggled.connect(self._changed)

        units_page = QWidget()
        units_layout = QVBoxLayout(units_page)
        which = QGroupBox("Which units")
        which_layout = QVBoxLayout(which)
        self.selected_label = _wrapping()
        self.selected_label.setStyleSheet("color: palette(mid)")
        which_layout.addWidget(self.scope_radios["selected"])
        which_layout.addWidget(self.selected_label)
        for scope, combo in (("tier", self.tier_combo), ("category", self.category_combo)):
            row = QHBoxLayout()
            row.addWidget(self.scope_radios[scope])
            row.addWidget(combo, 1)
            which_layout.addLayout(row)
        which_layout.addWidget(self.scope_radios["all"])
        units_layout.addWidget(which)
        langs_box = QGroupBox("Languages")
        langs_layout = QVBoxLayout(langs_box)
        for check in self.lang_checks.values():
            langs_layout.addWidget(check)
        units_layout.addWidget(langs_box)
        units_layout.addWidget(self.resume_check)
        units_layout.addStretch(1)

        # -- Results tab --
        self.summary_label = _wrapping("No run yet in this session.")
        self.runs_model = QStandardItemModel(0, len(RUN_COLUMNS))
        self.runs_model.setHorizontalHeaderLabels(list(RUN_COLUMNS))
        self.runs_view = _table(self.runs_model)
        self.runs_view.selectionModel().currentRowChanged.connect(self._on_run_row)
        self.outputs_label = _wrapping()
        self.outputs_model = QStandardItemModel(0, len(OUTPUT_COLUMNS))
        self.outputs_model.setHorizontalHeaderLabels(list(OUTPUT_COLUMNS))
        self.outputs_view = _table(self.outputs_model)
        self.outputs_view.selectionModel().currentRowChanged.connect(self._on_output_row)
        self.raw_view = QPlainTextEdit()
        self.raw_view.setReadOnly(True)
        self.raw_view.setPlaceholderText("Select an output to see the model's raw reply")

        runs_box = QWidget()
        runs_layout = QVBoxLayout(runs_box)
        runs_layout.setContentsMargins(0, 0, 0, 0)
        runs_layout.addWidget(self.summary_label)
        runs_layout.addWidget(QLabel("<b>Runs in the session</b>"))
        runs_layout.addWidget(self.runs_view, 1)
        outputs_box = QWidget()
        outputs_layout = QVBoxLayout(outputs_box)
        outputs_layout.setContentsMargins(0, 0, 0, 0)
        outputs_layout.addWidget(self.outputs_label)
        outputs_layout.addWidget(self.outputs_view, 2)
        outputs_layout.addWidget(QLabel("Raw reply"))
        outputs_layout.addWidget(self.raw_view, 1)
        results_splitter = QSplitter(Qt.Orientation.Vertical)
        results_splitter.addWidget(runs_box)
        results_splitter.addWidget(outputs_box)
        results_splitter.setChildrenCollapsible(False)
        results_page = QWidget()
        results_layout = QVBoxLayout(results_page)
        results_layout.addWidget(results_splitter)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(_scrolled(model_page), "Model")
        self.tabs.addTab(prompt_page, "Prompt")
        self.tabs.addTab(_scrolled(units_page), "Units")
        self.tabs.addTab(results_page, "Results")

        # -- run bar (always visible) --
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("idle")
        self.progress_label = _wrapping()
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Verbalise the chosen units with the chosen model")
        self.run_button.clicked.connect(self.run_requested)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop after the batch in progress; what is done is kept")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel_requested)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        picker = QHBoxLayout()
        model_label = QLabel("Model")
        model_label.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Preferred)
        picker.addWidget(model_label)
        picker.addWidget(self.model_combo, 1)
        layout.addLayout(picker)
        layout.addWidget(self.error_label)
        layout.addWidget(self.tabs, 1)
        run_row = QHBoxLayout()
        run_row.addWidget(self.progress, 1)
        run_row.addWidget(self.run_button)
        run_row.addWidget(self.cancel_button)
        layout.addLayout(run_row)
        layout.addWidget(self.progress_label)
        self.show_models([])
        self._update_model_widgets()

    # -- what the controller shows -------------------------------------------------------
    def show_models(self, models: Sequence[tuple[str, str, str, str]]) -> None:
        """(label, spec, kind, tooltip) for each model found; the template verbaliser comes
        first and the server last. The current choice is kept when it is still listed."""
        current = self.model_spec()
        self.model_combo.blockSignals(True)
        self.model_combo.clear()
        self.model_combo.addItem(
            "Template verbaliser (no weights)", {"spec": TEMPLATE, "kind": "template"}
        )
        self.model_combo.setItemData(
            0,
            "Rule-based sentences in en/it/es; deterministic, one candidate",
            Qt.ItemDataRole.ToolTipRole,
        )
        for label, spec, kind, tooltip in models:
            self.model_combo.addItem(label, {"spec": spec, "kind": kind})
            self.model_combo.setItemData(
                self.model_combo.count() - 1, tooltip, Qt.ItemDataRole.ToolTipRole
            )
        self.model_combo.addItem("OpenAI-compatible server…", {"spec": SERVER, "kind": "openai"})
        self.model_combo.setCurrentIndex(max(0, self._model_index(current)))
        self.model_combo.blockSignals(False)
        self._update_model_widgets()

    def set_presets(
        self, presets: Mapping[str, tuple[str, Mapping[str, str]]], current: str
    ) -> None:
        """The prompt presets: name -> (label, bundled template per language); ``current``
        is shown and its templates fill the editors."""
        self._presets = {name: dict(texts) for name, (_label, texts) in presets.items()}
        self.preset_combo.blockSignals(True)
        self.preset_combo.clear()
        for name, (label, _texts) in presets.items():
            self.preset_combo.addItem(label, name)
        self.preset_combo.setCurrentIndex(max(0, self.preset_combo.findData(current)))
        self.preset_combo.blockSignals(False)
        self._preset = current
        self.set_default_templates(self._presets.get(current, {}))

    def prompt_preset(self) -> str:
        return self._preset

    def set_default_templates(self, templates: Mapping[str, str]) -> None:
        """The bundled templates ("Reset to default" goes back to them)."""
        self._defaults = dict(templates)
        for lang, edit in self.template_edits.items():
            if not edit.toPlainText():
                edit.blockSignals(True)
                edit.setPlainText(self._defaults.get(lang, ""))
                edit.blockSignals(False)
        self._update_template_note()

    def show_model_info(self, text: str) -> None:
        self.model_info.setText(text)
        self.model_info.setVisible(bool(text))

    def show_error(self, message: str | None) -> None:
        """What is wrong with the chosen model or settings (None clears it)."""
        self.error_label.setText(message or "")
        self.error_label.setVisible(bool(message))

    def show_unit_groups(
        self,
        total: int,
        tiers: Sequence[tuple[str, int]],
        categories: Sequence[tuple[str, int]],
    ) -> None:
        """How many units the session holds, and the tiers and categories (name, unit
        count) a run may choose from."""
        tier, category = self.tier_combo.currentData(), self.category_combo.currentData()
        for combo, rows, keep in (
            (self.tier_combo, tiers, tier),
            (self.category_combo, categories, category),
        ):
            combo.blockSignals(True)
            combo.clear()
            for name, count in rows:
                combo.addItem(f"{name.replace('_', ' ')} ({count:,})", name)
            if keep is not None and combo.findData(keep) >= 0:
                combo.setCurrentIndex(combo.findData(keep))
            combo.blockSignals(False)
        self.scope_radios["all"].setText(f"All units ({total:,})")
        self.scope_radios["tier"].setEnabled(bool(tiers))
        self.scope_radios["category"].setEnabled(bool(categories))

    def show_unit_page(
        self, units: Sequence[UnitSummary], matching: int, *, more: bool = False
    ) -> None:
        """A page of the units the picker's search matches (``matching`` of them in all):
        the first page replaces the list, a later one (``more``) extends it."""
        if more:
            self.unit_picker.add_page(units)
        else:
            self.unit_picker.show_page(units, matching)

    def unit_search(self) -> str:
        """The picker's search text (empty: every unit)."""
        return self.unit_picker.search_text()

    def show_selected_unit(self, unit: UnitSummary | None) -> None:
        """The unit previewed and run by the "selected unit" scope (None: none)."""
        self.unit_picker.show_unit(unit)
        label = unit_label(unit) if unit is not None else "none"
        self.selected_label.setText(
            f"Now: {label} (pick it in the Units panel or on the Prompt tab)"
        )
        self.scope_radios["selected"].setEnabled(unit is not None)

    def show_preview(self, text: str, note: str = "", error: bool = False) -> None:
        self.preview.setPlainText(text)
        self.preview_note.setText(note)
        self.preview_note.setStyleSheet("color: #c23b22" if error else "color: palette(mid)")

    def set_templates_editable(self, editable: bool, note: str = "") -> None:
        """Templates matter for causal models and servers; seq2seq and template verbalisers
        read no prompt template (the note says why)."""
        for edit in self.template_edits.values():
            edit.setReadOnly(not editable)
        self.reset_button.setEnabled(editable)
        self._kind_note = note
        self._update_template_note()

    def set_running(self, running: bool, title: str = "") -> None:
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.model_combo.setEnabled(not running)
        if running:
            self.progress.setRange(0, 1)
            self.progress.setValue(0)
            self.progress.setFormat("starting")
            self.progress_label.setText(title)

    def show_progress(self, done: float, total: float | None, message: str) -> None:
        if total:
            self.progress.setRange(0, int(total))
            self.progress.setValue(int(done))
            self.progress.setFormat(f"{int(done):,} / {int(total):,} unit-languages")
        else:
            self.progress.setRange(0, 1)
            self.progress.setValue(0)
            self.progress.setFormat(message or "working")
        self.progress_label.setText(message)

    def show_finished(self, status: str, summary_html: str, line: str = "") -> None:
        self.set_running(False)
        if self.progress.maximum() <= 1 and status != "finished":
            self.progress.setFormat(status)
        elif status == "finished":
            self.progress.setRange(0, 1)
            self.progress.setValue(1)
            self.progress.setFormat("finished")
        else:
            self.progress.setFormat(
                f"{status} at {self.progress.value():,} / {self.progress.maximum():,}"
            )
        self.summary_label.setText(summary_html)
        self.progress_label.setText(line or summary_html)
        self.tabs.setCurrentIndex(_TAB_RESULTS)

    def show_runs(self, runs: Sequence[RunOverview], select: int | None) -> None:
        """The session's runs, newest first; ``select`` is the run to show."""
        self.runs_view.selectionModel().blockSignals(True)
        self.runs_model.removeRows(0, self.runs_model.rowCount())
        for run in runs:
            status = _item(run.status)
            if run.status in ("failed", "cancelled"):
                status.setForeground(_RED)
            self.runs_model.appendRow(
                [
                    _item(str(run.id), run.id),
                    _item(run.model),
                    _item(run.kind),
                    status,
                    _item(f"{run.texts:,}"),
                ]
            )
        self.runs_view.selectionModel().blockSignals(False)
        for row in range(self.runs_model.rowCount()):
            if self.runs_model.item(row, 0).data(Qt.ItemDataRole.UserRole) == select:
                self.runs_view.selectRow(row)
                break

    def show_outputs(self, title: str, outputs: Sequence[UnitOutput]) -> None:
        """A unit's outputs in one run, each with its raw reply (an unparsable one in red,
        with the reason)."""
        self.outputs_label.setText(title)
        self.outputs_model.removeRows(0, self.outputs_model.rowCount())
        self.raw_view.clear()
        for output in outputs:
            reason = output.reason or "no answer marker in the reply"
            text = _item(output.text if output.parse_ok else f"unparsable: {reason}", output.raw)
            if not output.parse_ok:
                text.setForeground(_RED)
                text.setToolTip(f"Not parsed ({reason}); the raw reply is kept")
            self.outputs_model.appendRow([_item(output.lang), _item(str(output.index)), text])
        self.outputs_view.resizeRowsToContents()
        if self.outputs_model.rowCount():
            self.outputs_view.selectRow(0)

    # -- what the controller reads ---------------------------------------------------------
    def model_spec(self) -> str:
        data = self.model_combo.currentData()
        return data["spec"] if isinstance(data, dict) else TEMPLATE

    def model_kind(self) -> str:
        data = self.model_combo.currentData()
        return data["kind"] if isinstance(data, dict) else "template"

    def preview_lang(self) -> str:
        return LANGUAGES[max(0, self.template_tabs.currentIndex())]

    def preview_unit_id(self) -> int | None:
        return self.unit_picker.unit_id()

    def templates(self) -> dict[str, str]:
        return {lang: edit.toPlainText() for lang, edit in self.template_edits.items()}

    def edited_templates(self) -> dict[str, str]:
        """Only the templates that differ from the bundled ones."""
        return {
            lang: text
            for lang, text in self.templates().items()
            if text != self._defaults.get(lang)
        }

    def settings(self) -> dict[str, Any]:
        scope = next((s for s, r in self.scope_radios.items() if r.isChecked()), "all")
        return {
            "model": self.model_spec(),
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
            "scope": scope,
            "tier": self.tier_combo.currentData(),
            "category": self.category_combo.currentData(),
            "langs": [lang for lang, check in self.lang_checks.items() if check.isChecked()],
            "resume": self.resume_check.isChecked(),
            "templates": self.edited_templates(),
            "prompt_preset": self.prompt_preset(),
            "seq2seq_prefix": self.task_prefix.text(),
        }

    def apply_settings(self, settings: Mapping[str, Any]) -> None:
        """Show saved settings (unknown keys ignored, missing ones at their defaults)."""
        values = {**DEFAULTS, **{k: v for k, v in settings.items() if v is not None}}
        self._restoring = True
        try:
            index = self._model_index(str(values["model"]))
            self.model_combo.setCurrentIndex(max(0, index))
            self.server_url.setText(str(values["server_url"]))
            self.server_model.setText(str(values["server_model"]))
            for combo, key in ((self.device, "device"), (self.dtype, "dtype")):
                combo.setCurrentIndex(max(0, combo.findText(str(values[key]))))
            for spin, key in (
                (self.candidates, "candidates"),
                (self.max_new_tokens, "max_new_tokens"),
                (self.num_beams, "num_beams"),
                (self.seed, "seed"),
                (self.batch_size, "batch_size"),
            ):
                spin.setValue(int(values[key]))
            self.temperature.setValue(float(values["temperature"]))
            self.top_p.setValue(float(values["top_p"]))
            for combo, key in ((self.tier_combo, "tier"), (self.category_combo, "category")):
                if values[key] is not None and combo.findData(values[key]) >= 0:
                    combo.setCurrentIndex(combo.findData(values[key]))
            scope = values["scope"] if values["scope"] in SCOPES else "all"
            radio = self.scope_radios[scope]
            (radio if radio.isEnabled() else self.scope_radios["all"]).setChecked(True)
            for lang, check in self.lang_checks.items():
                check.setChecked(lang in values["langs"])
            self.resume_check.setChecked(bool(values["resume"]))
            self.task_prefix.setText(str(values["seq2seq_prefix"]))
            preset = str(values["prompt_preset"])
            if preset in self._presets:
                self._preset = preset
                self._defaults = dict(self._presets[preset])
                self.preset_combo.setCurrentIndex(self.preset_combo.findData(preset))
            templates = settings.get("templates") or {}
            for lang, edit in self.template_edits.items():
                edit.blockSignals(True)
                edit.setPlainText(str(templates.get(lang, self._defaults.get(lang, ""))))
                edit.blockSignals(False)
        finally:
            self._restoring = False
        self._update_model_widgets()
        self._update_template_note()

    # -- internals ---------------------------------------------------------------------
    def _model_index(self, spec: str) -> int:
        for index in range(self.model_combo.count()):
            data = self.model_combo.itemData(index)
            if isinstance(data, dict) and data["spec"] == spec:
                return index
        return -1

    def _update_model_widgets(self) -> None:
        kind = self.model_kind()
        self.server_box.setEnabled(kind == "openai")
        self.local_box.setEnabled(kind in ("causal", "seq2seq"))
        sampling = kind in ("causal", "openai")
        for spin in (self.temperature, self.top_p):
            spin.setEnabled(sampling)
        self.candidates.setEnabled(kind != "template")
        self.max_new_tokens.setEnabled(kind != "template")
        self.num_beams.setEnabled(kind == "seq2seq")
        self.task_prefix.setEnabled(kind == "seq2seq")
        self.model_combo.setToolTip(
            self.model_combo.itemData(self.model_combo.currentIndex(), Qt.ItemDataRole.ToolTipRole)
            or ""
        )

    def _on_model_changed(self, *_args: Any) -> None:
        self._update_model_widgets()
        if not self._restoring:
            self.model_changed.emit()
            self.settings_changed.emit()

    def _changed(self, *_args: Any) -> None:
        if not self._restoring:
            self.settings_changed.emit()

    def _on_prefix_changed(self, _text: str) -> None:
        if not self._restoring:
            self.preview_requested.emit()
            self.settings_changed.emit()

    def _on_preset_changed(self, _index: int) -> None:
        """Another preset: templates still at the old preset's text take the new one's;
        edited templates stay."""
        preset = self.preset_combo.currentData()
        if self._restoring or preset is None or preset == self._preset:
            return
        old, new = self._defaults, self._presets.get(preset, {})
        self._preset, self._defaults = preset, dict(new)
        for lang, edit in self.template_edits.items():
            if edit.toPlainText() == old.get(lang) and lang in new:
                edit.blockSignals(True)
                edit.setPlainText(new[lang])
                edit.blockSignals(False)
        self._update_template_note()
        self.template_edited.emit(self.preview_lang())
        self.settings_changed.emit()

    def _on_template_edited(self, lang: str) -> None:
        self._update_template_note()
        if not self._restoring:
            self.template_edited.emit(lang)
            self.settings_changed.emit()

    def _reset_current_template(self) -> None:
        lang = self.preview_lang()
        if lang in self._defaults:
            self.template_edits[lang].setPlainText(self._defaults[lang])

    def _update_template_note(self) -> None:
        edited = sorted(self.edited_templates())
        text = self._kind_note
        if edited and not text:
            text = "Edited: " + ", ".join(edited)
        elif not text:
            text = (
                "The bundled templates (resources/prompts; "
                f"{self.preset_combo.currentText() or self._preset})."
            )
        self.template_note.setText(text)
        for index, lang in enumerate(LANGUAGES):
            self.template_tabs.setTabText(index, f"{lang} *" if lang in edited else lang)

    def _on_run_row(self, current: Any, _previous: Any) -> None:
        if current.isValid():
            item = self.runs_model.item(current.row(), 0)
            self.run_selected.emit(int(item.data(Qt.ItemDataRole.UserRole)))

    def _on_output_row(self, current: Any, _previous: Any) -> None:
        if current.isValid():
            item = self.outputs_model.item(current.row(), 2)
            self.raw_view.setPlainText(str(item.data(Qt.ItemDataRole.UserRole) or ""))

    def _ask_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Folder with models")
        if folder:
            self.add_folder_requested.emit(folder)
