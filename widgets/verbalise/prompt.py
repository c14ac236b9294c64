"""The Verbalise panel's Prompt tab: the editable templates, and the exact prompt for a
unit."""

from __future__ import annotations

from collections.abc import Mapping

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

from core.vocab import LANGUAGE_NAMES, LANGUAGES
from widgets.theme import muted_colour, themed_style_sheet, tone
from widgets.verbalise.common import combo, wrapping
from widgets.verbalise.unit_picker import UnitPicker


def _fixed_editor() -> QPlainTextEdit:
    edit = QPlainTextEdit()
    edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    return edit


class PromptEditor(QWidget):
    """One editable template per language, the preset they start from, and "Reset to
    default". Templates still at a preset's text follow the preset; edited ones stay."""

    edited = Signal(str)  # a template was edited (or the preset changed): its language
    lang_changed = Signal()  # another language's tab is shown

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._presets: dict[str, dict[str, str]] = {}
        self._preset = "tailnlg"
        self._defaults: dict[str, str] = {}
        self._kind_note = ""
        self._restoring = False
        self.preset_combo = combo()
        self.preset_combo.setToolTip(
            "The bundled prompts the templates start from: the TailNLG study's Appendix H "
            "texts, verbatim (Draetta et al., 2026, CC BY 4.0), or TailLens's own wording. "
            "Templates you edited stay as they are."
        )
        self.preset_combo.currentIndexChanged.connect(self._on_preset_changed)
        self.template_tabs = QTabWidget()
        self.template_edits: dict[str, QPlainTextEdit] = {}
        for lang in LANGUAGES:
            edit = _fixed_editor()
            edit.setToolTip(
                f"The {LANGUAGE_NAMES[lang]} prompt; {{triples}} is replaced by "
                "the unit's triples, one [subject, predicate, object] per line"
            )
            edit.textChanged.connect(lambda lang=lang: self._on_template_edited(lang))
            self.template_edits[lang] = edit
            self.template_tabs.addTab(edit, lang)
        self.template_tabs.currentChanged.connect(lambda _i: self.lang_changed.emit())
        self.reset_button = QPushButton("Reset to default")
        self.reset_button.clicked.connect(self._reset_current_template)
        self.template_note = wrapping()

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
        self.update_note()

    def set_editable(self, editable: bool, note: str = "") -> None:
        for edit in self.template_edits.values():
            edit.setReadOnly(not editable)
        self.reset_button.setEnabled(editable)
        self._kind_note = note
        self.update_note()

    def preview_lang(self) -> str:
        return LANGUAGES[max(0, self.template_tabs.currentIndex())]

    def templates(self) -> dict[str, str]:
        return {lang: edit.toPlainText() for lang, edit in self.template_edits.items()}

    def edited_templates(self) -> dict[str, str]:
        """Only the templates that differ from the bundled ones."""
        return {
            lang: text
            for lang, text in self.templates().items()
            if text != self._defaults.get(lang)
        }

    def apply(self, preset: str, templates: Mapping[str, str]) -> None:
        """Show saved settings: the preset (when known) and the edited templates (the
        others at the preset's text); nothing is signalled."""
        self._restoring = True
        try:
            if preset in self._presets:
                self._preset = preset
                self._defaults = dict(self._presets[preset])
                self.preset_combo.setCurrentIndex(self.preset_combo.findData(preset))
            for lang, edit in self.template_edits.items():
                edit.blockSignals(True)
                edit.setPlainText(str(templates.get(lang, self._defaults.get(lang, ""))))
                edit.blockSignals(False)
        finally:
            self._restoring = False
        self.update_note()

    def update_note(self) -> None:
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
        self.update_note()
        self.edited.emit(self.preview_lang())

    def _on_template_edited(self, lang: str) -> None:
        self.update_note()
        self.edited.emit(lang)

    def _reset_current_template(self) -> None:
        lang = self.preview_lang()
        if lang in self._defaults:
            self.template_edits[lang].setPlainText(self._defaults[lang])


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
