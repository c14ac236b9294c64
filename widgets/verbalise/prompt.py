"""The Verbalise panel's Prompt tab: the editable templates, and the exact prompt for a
unit."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QPalette
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.verbalise.panel_state import VerbaliseState
from core.vocab import LANGUAGE_NAMES, LANGUAGES
from widgets.binding import bind
from widgets.theme import muted_colour, themed_style_sheet, tone
from widgets.verbalise.common import combo, wrapping
from widgets.verbalise.unit_picker import UnitPicker


def _fixed_editor() -> QPlainTextEdit:
    edit = QPlainTextEdit()
    edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    return edit


class PromptEditor(QWidget):
    """One editable template per language, the preset they start from, and "Reset to
    default", bound to the panel's :class:`VerbaliseState` (templates still at a preset's
    text follow the preset there; edited ones stay)."""

    lang_changed = Signal()  # another language's tab is shown

    def __init__(self, state: VerbaliseState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self._build()
        self._lay_out()
        self._preset_binding = bind(state, "prompt_preset", self.preset_combo)
        for lang, edit in self.template_edits.items():
            bind(
                state,
                "templates",
                edit,
                to_widget=lambda templates, lang=lang: templates.get(lang, ""),
                from_widget=lambda text, lang=lang: state.with_template(lang, text),
            )
        state.subscribe(lambda *_change: self._render_presets(), ["presets"])
        state.watch(
            lambda _changes: self.update_note(),
            ["templates", "defaults", "prompt_preset", "templates_editable", "template_note"],
        )
        self._render_presets()
        self.update_note()

    def _build(self) -> None:
        self.preset_combo = combo()
        self.preset_combo.setToolTip(
            "The bundled prompts the templates start from: the TailNLG study's Appendix H "
            "texts, verbatim (Draetta et al., 2026, CC BY 4.0), or TailLens's own wording. "
            "Templates you edited stay as they are."
        )
        self.template_tabs = QTabWidget()
        self.template_edits: dict[str, QPlainTextEdit] = {}
        for lang in LANGUAGES:
            edit = _fixed_editor()
            edit.setToolTip(
                f"The {LANGUAGE_NAMES[lang]} prompt; {{triples}} is replaced by "
                "the unit's triples, one [subject, predicate, object] per line"
            )
            self.template_edits[lang] = edit
            self.template_tabs.addTab(edit, lang)
        self.template_tabs.currentChanged.connect(lambda _i: self.lang_changed.emit())
        self.reset_button = QPushButton("Reset to default")
        self.reset_button.clicked.connect(self._reset_current_template)
        self.template_note = wrapping()

    def _lay_out(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("<b>Prompt template</b> (edited ones go into the run)"))
        preset_row = QHBoxLayout()
        preset_row.addWidget(QLabel("Preset"))
        preset_row.addWidget(self.preset_combo, 1)
        layout.addLayout(preset_row)
        layout.addWidget(self.template_tabs, 1)
        reset_row = QHBoxLayout()
        reset_row.addWidget(self.template_note, 1)
        reset_row.addWidget(self.reset_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(reset_row)

    def _render_presets(self) -> None:
        def fill() -> None:
            self.preset_combo.clear()
            for name, (label, _texts) in self.state.presets.items():
                self.preset_combo.addItem(label, name)

        self._preset_binding.refill(fill)

    def preview_lang(self) -> str:
        return LANGUAGES[max(0, self.template_tabs.currentIndex())]

    def update_note(self) -> None:
        state = self.state
        for edit in self.template_edits.values():
            edit.setReadOnly(not state.templates_editable)
        self.reset_button.setEnabled(state.templates_editable)
        edited = sorted(state.edited_templates())
        text = state.template_note
        if edited and not text:
            text = "Edited: " + ", ".join(edited)
        elif not text:
            label = state.presets.get(state.prompt_preset, (state.prompt_preset, {}))[0]
            text = f"The bundled templates (resources/prompts; {label})."
        self.template_note.setText(text)
        for index, lang in enumerate(LANGUAGES):
            self.template_tabs.setTabText(index, f"{lang} *" if lang in edited else lang)

    def _reset_current_template(self) -> None:
        lang, defaults = self.preview_lang(), self.state.defaults
        if lang in defaults:
            self.state.templates = self.state.with_template(lang, defaults[lang])


class PromptPreview(QWidget):
    """The exact input the chosen verbaliser gives the model for the picked unit."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.unit_picker = UnitPicker()
        self.preview = _fixed_editor()
        self.preview.setReadOnly(True)
        self.preview.setPlaceholderText("The exact prompt for the unit appears here")
        self.preview_note = wrapping()
        self._note_error = False
        themed_style_sheet(self.preview_note, self._note_style)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.unit_picker)
        layout.addWidget(self.preview, 1)
        layout.addWidget(self.preview_note)

    def _note_style(self, palette: QPalette | None) -> str:
        return f"color: {tone('error', palette) if self._note_error else muted_colour(palette)}"

    def show_preview(self, text: str, note: str = "", error: bool = False) -> None:
        self.preview.setPlainText(text)
        self.preview_note.setText(note)
        self._note_error = error
        self.preview_note.setStyleSheet(self._note_style(None))
