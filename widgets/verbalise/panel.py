"""The Verbalise panel: the model picker over four tabs and a run bar, each part a small
widget of its own (see the package's docstring)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.labels import plural
from core.verbalise.panel_state import (
    MODEL_KEYS,
    SETTING_KEYS,
    TEMPLATE,
    Presets,
    VerbaliseState,
)
from core.vocab import LANGUAGES
from widgets.binding import bind
from widgets.theme import recoloured, themed_style_sheet, themed_text, tone
from widgets.verbalise.common import combo, scrolled, wrapping
from widgets.verbalise.model_form import ModelForm
from widgets.verbalise.prompt import PromptEditor, PromptPreview
from widgets.verbalise.results import ResultsView, RunBar
from widgets.verbalise.scope_form import ScopeForm
from widgets.verbalise.unit_picker import unit_label

if TYPE_CHECKING:
    from core.verbalise.runs import RunOverview, UnitOutput, UnitSummary

_TAB_MODEL, _TAB_PROMPT, _TAB_UNITS, _TAB_RESULTS = range(4)


class VerbalisePanel(QWidget):
    model_changed = Signal()  # the model, server, device or dtype changed
    add_folder_requested = Signal(str)  # a folder to look for models in
    rescan_requested = Signal()
    train_requested = Signal()  # the model form's "Train…" (app/train.py)
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
        self.state = VerbaliseState()
        self._quiet = 0  # showing what the controller gave: nothing is signalled
        self._build_picker()
        self._build_parts()
        self._expose_parts()
        self._lay_out()
        self.state.watch(self._on_state)

    def _build_picker(self) -> None:
        """The model picker and what is wrong with the choice (always visible)."""
        state = self.state
        self.model_combo = combo()
        self._model_binding = bind(
            state,
            "model",
            self.model_combo,
            to_widget=state.model_data,
            from_widget=lambda data: data["spec"] if isinstance(data, dict) else TEMPLATE,
        )
        state.subscribe(lambda *_change: self._render_models(), ["models"])
        state.subscribe(lambda *_change: self._render_model_tip(), ["model"])
        self._render_models()
        self.error_label = wrapping()
        themed_style_sheet(self.error_label, lambda p: f"color: {tone('error', p)}")
        self.error_label.hide()

    def _build_parts(self) -> None:
        """The parts, each wired to the panel's signals."""
        self.model_form = ModelForm(self.state)
        self.model_form.add_folder_requested.connect(self.add_folder_requested)
        self.model_form.rescan_requested.connect(self.rescan_requested)
        self.model_form.train_requested.connect(self.train_requested)
        self.prompt_editor = PromptEditor(self.state)
        self.prompt_editor.lang_changed.connect(self.preview_requested)
        self.prompt_preview = PromptPreview()
        self.unit_picker = self.prompt_preview.unit_picker
        self.unit_picker.unit_chosen.connect(self.unit_chosen)
        self.unit_picker.search_changed.connect(self.unit_search_changed)
        self.unit_picker.more_requested.connect(self.more_units_requested)
        self.scope_form = ScopeForm(self.state)
        self.results = ResultsView()
        self.results.run_selected.connect(self.run_selected)
        self.run_bar = RunBar()
        self.run_bar.run_requested.connect(self.run_requested)
        self.run_bar.cancel_requested.connect(self.cancel_requested)

    def _lay_out(self) -> None:
        prompt_splitter = QSplitter(Qt.Orientation.Vertical)
        prompt_splitter.addWidget(self.prompt_editor)
        prompt_splitter.addWidget(self.prompt_preview)
        prompt_splitter.setChildrenCollapsible(False)
        prompt_page = QWidget()
        QVBoxLayout(prompt_page).addWidget(prompt_splitter)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(scrolled(self.model_form), "Model")
        self.tabs.addTab(prompt_page, "Prompt")
        self.tabs.addTab(scrolled(self.scope_form), "Units")
        self.tabs.addTab(self.results, "Results")

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
        layout.addWidget(self.run_bar)

    def _expose_parts(self) -> None:
        """The parts' widgets under the panel's names, as the controller and tests use
        them (``panel.candidates``, ``panel.preview``, ``panel.runs_model``, ...)."""
        form, editor, preview = self.model_form, self.prompt_editor, self.prompt_preview
        scope, results, bar = self.scope_form, self.results, self.run_bar
        self.add_folder_button, self.model_info = form.add_folder_button, form.model_info
        self.server_url, self.server_model = form.server_url, form.server_model
        self.device, self.dtype = form.device, form.dtype
        self.candidates, self.temperature, self.top_p = (
            form.candidates,
            form.temperature,
            form.top_p,
        )
        self.max_new_tokens, self.num_beams = form.max_new_tokens, form.num_beams
        self.task_prefix, self.seed, self.batch_size = form.task_prefix, form.seed, form.batch_size
        self.server_box, self.local_box = form.server_box, form.local_box
        self.preset_combo, self.template_tabs = editor.preset_combo, editor.template_tabs
        self.template_edits, self.reset_button = editor.template_edits, editor.reset_button
        self.template_note = editor.template_note
        self.preview_unit = self.unit_picker.combo
        self.preview, self.preview_note = preview.preview, preview.preview_note
        self.scope_buttons, self.scope_radios = scope.scope_buttons, scope.scope_radios
        self.tier_combo, self.category_combo = scope.tier_combo, scope.category_combo
        self.lang_checks, self.resume_check = scope.lang_checks, scope.resume_check
        self.selected_label = scope.selected_label
        self.summary_label, self.runs_model = results.summary_label, results.runs_model
        self.runs_view, self.outputs_label = results.runs_view, results.outputs_label
        self.outputs_model, self.outputs_view = results.outputs_model, results.outputs_view
        self.raw_view = results.raw_view
        self.progress, self.progress_label = bar.progress, bar.progress_label
        self.run_button, self.cancel_button = bar.run_button, bar.cancel_button

    # -- what the controller shows -------------------------------------------------------
    def show_models(self, models: Sequence[tuple[str, str, str, str]]) -> None:
        """(label, spec, kind, tooltip) for each model found; the template verbaliser comes
        first and the server last. The current choice is kept when it is still listed."""
        with self._quietly():
            self.state.show_models(models)

    def set_presets(self, presets: Presets, current: str) -> None:
        """The prompt presets: name -> (label, bundled template per language); ``current``
        is shown and its templates fill the editors."""
        with self._quietly():
            self.state.set_presets(presets, current)

    def set_default_templates(self, templates: Mapping[str, str]) -> None:
        """The bundled templates ("Reset to default" goes back to them)."""
        with self._quietly():
            self.state.set_default_templates(templates)

    def show_model_info(self, text: str) -> None:
        self.model_form.show_model_info(text)

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
        count) a run may choose from; the chosen ones stay chosen while listed."""
        with self._quietly():
            self.state.show_groups(total, tiers, categories)

    def show_unit_page(
        self, units: Sequence[UnitSummary], matching: int, *, more: bool = False
    ) -> None:
        """A page of the units the picker's search matches (``matching`` of them in all):
        the first page replaces the list, a later one (``more``) extends it."""
        if more:
            self.unit_picker.add_page(units)
        else:
            self.unit_picker.show_page(units, matching)

    def show_selected_unit(self, unit: UnitSummary | None) -> None:
        """The unit previewed and run by the "selected unit" scope (None: none)."""
        self.unit_picker.show_unit(unit)
        with self._quietly():
            self.state.selected_unit = unit_label(unit) if unit is not None else None

    def show_preview(self, text: str, note: str = "", error: bool = False) -> None:
        self.prompt_preview.show_preview(text, note, error)

    def set_templates_editable(self, editable: bool, note: str = "") -> None:
        """Templates matter for causal models and servers; seq2seq and template verbalisers
        read no prompt template (the note says why)."""
        self.state.update(templates_editable=editable, template_note=note)

    def set_running(self, running: bool, title: str = "") -> None:
        self.run_bar.set_running(running, title)
        self.model_combo.setEnabled(not running)

    def show_progress(self, done: float, total: float | None, message: str) -> None:
        self.run_bar.show_progress(done, total, message)

    def show_finished(self, status: str, summary_html: str, line: str = "") -> None:
        self.run_bar.show_finished(status, line or summary_html)
        self.model_combo.setEnabled(True)
        themed_text(self.summary_label, lambda: recoloured(summary_html))
        self.tabs.setCurrentIndex(_TAB_RESULTS)

    def show_runs_note(self, count: int) -> None:
        """What the summary says until a run finishes in this window: how many runs the
        session holds (it said "No run yet in this session." above a list of runs)."""
        if count:
            held = plural(count, "run")
            text = f"No run in this window yet; the session holds {held}, newest first."
        else:
            text = "No run yet in this session."
        themed_text(self.summary_label, lambda: text)

    def show_runs(self, runs: Sequence[RunOverview], select: int | None) -> None:
        """The session's runs, newest first; ``select`` is the run to show."""
        self.results.show_runs(runs, select)

    def show_outputs(
        self, title: str, outputs: Sequence[UnitOutput], uids: Sequence[str] = ()
    ) -> None:
        """Outputs of one run, a unit's or the run's (an unparsable one in red, with the
        reason)."""
        self.results.show_outputs(title, outputs, uids)

    # -- what the controller reads ---------------------------------------------------------
    def model_spec(self) -> str:
        return self.state.model

    def model_kind(self) -> str:
        return self.state.model_kind

    def prompt_preset(self) -> str:
        return self.state.prompt_preset

    def preview_lang(self) -> str:
        return self.prompt_editor.preview_lang()

    def preview_unit_id(self) -> int | None:
        return self.unit_picker.unit_id()

    def unit_search(self) -> str:
        """The picker's search text (empty: every unit)."""
        return self.unit_picker.search_text()

    def templates(self) -> dict[str, str]:
        return dict(self.state.templates)

    def edited_templates(self) -> dict[str, str]:
        """Only the templates that differ from the bundled ones."""
        return self.state.edited_templates()

    def settings(self) -> dict[str, Any]:
        return self.state.settings()

    def apply_settings(self, settings: Mapping[str, Any]) -> None:
        """Show saved settings (unknown keys ignored, missing ones at their defaults),
        signalling nothing: restoring the panel is restoring its state."""
        with self._quietly():
            self.state.restore(settings)

    # -- internals ---------------------------------------------------------------------
    @contextmanager
    def _quietly(self) -> Iterator[None]:
        self._quiet += 1
        try:
            yield
        finally:
            self._quiet -= 1

    def _render_models(self) -> None:
        def fill() -> None:
            combo = self.model_combo
            combo.clear()
            for choice in self.state.models:
                combo.addItem(choice.label, {"spec": choice.spec, "kind": choice.kind})
                combo.setItemData(combo.count() - 1, choice.tooltip, Qt.ItemDataRole.ToolTipRole)

        self._model_binding.refill(fill)
        self._render_model_tip()

    def _render_model_tip(self) -> None:
        tip = next((m.tooltip for m in self.state.models if m.spec == self.state.model), "")
        self.model_combo.setToolTip(
            tip
            or "The template verbaliser (no weights), a model found in the Hugging Face "
            "cache or a configured folder, or an OpenAI-compatible server"
        )

    def _on_state(self, changes: Mapping[str, tuple[Any, Any]]) -> None:
        """The user changed a setting: say what it asks for, then that it is to be kept."""
        changed = changes.keys() & SETTING_KEYS
        if self._quiet or not changed:
            return
        if changed & MODEL_KEYS:
            self.model_changed.emit()
        if "seq2seq_prefix" in changed:
            self.preview_requested.emit()
        if changed & {"templates", "prompt_preset"}:
            old, new = changes.get("templates", ({}, {}))
            langs = [lang for lang in LANGUAGES if old.get(lang) != new.get(lang)]
            for lang in langs or [self.preview_lang()]:
                self.template_edited.emit(lang)
        self.settings_changed.emit()
