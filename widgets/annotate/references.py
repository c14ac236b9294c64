"""The Annotate panel's reference modes (METHODS §11): "Write references" (an annotator
writes a unit's verbalisation in their language, units with no reference in it first)
and "Review translations" (Appendix F.2 flags and a corrected translation for a sample
of machine translations below Good). Views only: they show what the controller
(``app.references_annotate``) reads and emit what the annotator asks for.

Keys, as in the Rate tab: Ctrl+Enter saves, Alt+Left/Right goes back/skips, Esc leaves a
text field. Review: 1–5 toggle the Accuracy flags, 6–9 and 0 the Fluency flags, C
goes to the corrected translation.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.vocab import LANGUAGES, language_name

# The F.2 taxonomy (core.annotation.types.ERROR_TAXONOMY), repeated here as words for
# the view: widgets import no core logic that opens anything, and this is a plain table.
FLAGS: tuple[tuple[str, str], ...] = (
    ("accuracy", "terminology"),
    ("accuracy", "mistranslation"),
    ("accuracy", "omission"),
    ("accuracy", "addition"),
    ("accuracy", "untranslated"),
    ("fluency", "grammar"),
    ("fluency", "style"),
    ("fluency", "spelling"),
    ("fluency", "typography"),
    ("fluency", "unintelligible"),
)
FLAG_KEYS = "1234567890"
LANGS = tuple((code, language_name(code)) for code in LANGUAGES)
SEVERITY_COLOURS = {"minor": "#f2d16b", "major": "#f0a050", "critical": "#e06060"}


def _keys(
    event: QKeyEvent,
) -> tuple[bool, bool, int]:
    mods = event.modifiers()
    return (
        bool(mods & Qt.KeyboardModifier.ControlModifier),
        bool(mods & Qt.KeyboardModifier.AltModifier),
        event.key(),
    )


def _is_enter(key: int) -> bool:
    return key in (Qt.Key.Key_Return, Qt.Key.Key_Enter)


class WriteReferencesView(QWidget):
    queue_requested = Signal(str)  # language
    save_requested = Signal(int, str, str)  # unit id, language, text
    step_requested = Signal(int)  # -1 back, +1 skip

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.unit_id: int | None = None
        self.lang_combo = QComboBox()
        for code, name in LANGS:
            self.lang_combo.addItem(f"{name} ({code})", code)
        self.load_button = QPushButton("Units to write")
        self.load_button.clicked.connect(self._request)
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.triples = QLabel()
        self.triples.setWordWrap(True)
        self.triples.setTextFormat(Qt.TextFormat.RichText)
        self.editor = QPlainTextEdit()
        self.editor.setPlaceholderText(
            "Write the verbalisation of these triples (Ctrl+Enter saves)"
        )
        self.save_button = QPushButton("Save as gold")
        self.save_button.clicked.connect(self.save)
        self.skip_button = QPushButton("Skip")
        self.skip_button.clicked.connect(lambda: self.step_requested.emit(+1))
        self.message = QLabel()
        self.message.setWordWrap(True)

        top = QHBoxLayout()
        top.addWidget(QLabel("Writing in"))
        top.addWidget(self.lang_combo, 1)
        top.addWidget(self.load_button)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.skip_button)
        buttons.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.header)
        layout.addWidget(self.triples)
        layout.addWidget(self.editor, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.message)
        self.editor.installEventFilter(self)
        self.show_unit(None, 0, 0)

    @property
    def lang(self) -> str:
        return str(self.lang_combo.currentData())

    def _request(self) -> None:
        self.queue_requested.emit(self.lang)

    def show_unit(self, unit: Any | None, position: int, total: int) -> None:
        """``unit``: a ``core.references.review.UnitToWrite`` (None: nothing to show)."""
        self.unit_id = None if unit is None else int(unit.unit_id)
        self.save_button.setEnabled(unit is not None)
        self.skip_button.setEnabled(unit is not None)
        self.editor.setEnabled(unit is not None)
        self.editor.clear()
        if unit is None:
            self.header.setText("Choose a language and press Units to write.")
            self.triples.clear()
            return
        has = "no reference yet" if not unit.references else f"{unit.references} already"
        self.header.setText(f"Unit {unit.uid} ({position + 1} of {total}; {has} in {self.lang})")
        self.triples.setText(
            "<br>".join(
                f"<b>{html.escape(s)}</b> · {html.escape(p)} · {html.escape(o)}"
                for s, p, o in unit.triples
            )
            or "<i>no triples</i>"
        )
        self.editor.setFocus(Qt.FocusReason.OtherFocusReason)

    def show_message(self, text: str) -> None:
        self.message.setText(text)

    def save(self) -> None:
        text = self.editor.toPlainText().strip()
        if self.unit_id is None:
            return
        if not text:
            self.show_message("Write the verbalisation first.")
            return
        self.save_requested.emit(self.unit_id, self.lang, text)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            ctrl, alt, key = _keys(event)
            if ctrl and _is_enter(key):
                self.save()
                return True
            if alt and key in (Qt.Key.Key_Left, Qt.Key.Key_Right):
                self.step_requested.emit(-1 if key == Qt.Key.Key_Left else +1)
                return True
        return False


class ReviewTranslationsView(QWidget):
    sample_requested = Signal(int)  # per pair
    save_requested = Signal(int, object, object)  # reference id, flags, corrected or None
    step_requested = Signal(int)
    report_requested = Signal()

    def __init__(self, default_sample: int = 50, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.reference_id: int | None = None
        self.sample_spin = QSpinBox()
        self.sample_spin.setRange(1, 10_000)
        self.sample_spin.setValue(default_sample)
        self.sample_spin.setSuffix(" per pair")
        self.sample_button = QPushButton("Sample below Good")
        self.sample_button.clicked.connect(
            lambda: self.sample_requested.emit(self.sample_spin.value())
        )
        self.report_button = QPushButton("Summary")
        self.report_button.clicked.connect(self.report_requested)
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.source = QLabel()
        self.source.setWordWrap(True)
        self.translation = QLabel()
        self.translation.setWordWrap(True)
        self.translation.setTextFormat(Qt.TextFormat.RichText)
        self.checks: dict[tuple[str, str], QCheckBox] = {}
        grid = QGridLayout()
        grid.addWidget(QLabel("<b>Accuracy</b>"), 0, 0)
        grid.addWidget(QLabel("<b>Fluency</b>"), 0, 1)
        for n, (family, name) in enumerate(FLAGS):
            box = QCheckBox(f"{FLAG_KEYS[n]}  {name}")
            self.checks[(family, name)] = box
            grid.addWidget(box, 1 + n % 5, 0 if family == "accuracy" else 1)
        self.corrected = QPlainTextEdit()
        self.corrected.setPlaceholderText("Corrected translation (C; becomes a gold reference)")
        self.corrected.setMaximumHeight(90)
        self.save_button = QPushButton("Save review")
        self.save_button.clicked.connect(self.save)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)

        top = QHBoxLayout()
        top.addWidget(self.sample_spin)
        top.addWidget(self.sample_button)
        top.addWidget(self.report_button)
        bottom = QHBoxLayout()
        bottom.addStretch(1)
        bottom.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.header)
        layout.addWidget(self.source)
        layout.addWidget(self.translation)
        layout.addLayout(grid)
        layout.addWidget(self.corrected)
        layout.addLayout(bottom)
        layout.addWidget(self.message)
        layout.addWidget(self.summary)
        layout.addStretch(1)
        for widget in [self, *self.findChildren(QWidget)]:
            widget.installEventFilter(self)
        self.show_item(None, 0, 0)

    def show_item(self, item: Any | None, position: int, total: int) -> None:
        """``item``: a ``core.references.review.ReviewItem`` (None: nothing to show)."""
        self.reference_id = None if item is None else int(item.reference_id)
        for box in self.checks.values():
            box.setChecked(False)
            box.setEnabled(item is not None)
        self.corrected.clear()
        self.corrected.setEnabled(item is not None)
        self.save_button.setEnabled(item is not None)
        if item is None:
            self.header.setText("Press Sample below Good to draw the translations to review.")
            self.source.clear()
            self.translation.clear()
            return
        score = "" if item.score is None else f", xCOMET {item.score:.2f}"
        self.header.setText(
            f"{item.pair}: {position + 1} of {total} (band {item.band or 'not estimated'}{score})"
        )
        self.source.setText(f"Source: {item.source}")
        self.translation.setText(
            highlighted(item.translation, item.spans if item.translation == item.mt_text else ())
        )
        self.setFocus(Qt.FocusReason.OtherFocusReason)

    def show_message(self, text: str) -> None:
        self.message.setText(text)

    def show_summary(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Table 1's figures per pair (and agreement) as a small table."""
        if not rows:
            self.summary.setText("<i>No reviews yet.</i>")
            return

        def pm(mean: Any, sd: Any) -> str:
            return "—" if mean is None else f"{mean:.2f} ± {sd or 0:.2f}"

        def num(value: Any) -> str:
            return "—" if value is None else f"{value:+.2f}"

        lines = "".join(
            f"<tr><td>{html.escape(r['pair'])}</td><td>{r['reviews']}</td>"
            f"<td>{pm(r['accuracy_mean'], r['accuracy_sd'])}</td>"
            f"<td>{pm(r['fluency_mean'], r['fluency_sd'])}</td>"
            f"<td>{num(r['spearman'])}</td><td>{num(r['pearson'])}</td></tr>"
            for r in rows
        )
        self.summary.setText(
            "<table cellspacing=4><tr><th>pair</th><th>reviews</th><th>Accuracy</th>"
            f"<th>Fluency</th><th>ρ</th><th>r</th></tr>{lines}</table>"
        )

    def flags(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {"accuracy": [], "fluency": []}
        for (family, name), box in self.checks.items():
            if box.isChecked():
                out[family].append(name)
        return out

    def save(self) -> None:
        if self.reference_id is None:
            return
        text = self.corrected.toPlainText().strip() or None
        self.save_requested.emit(self.reference_id, self.flags(), text)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if not (event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent)):
            return False
        ctrl, alt, key = _keys(event)
        if ctrl and _is_enter(key):
            self.save()
            return True
        if alt and key in (Qt.Key.Key_Left, Qt.Key.Key_Right):
            self.step_requested.emit(-1 if key == Qt.Key.Key_Left else +1)
            return True
        typing = self.corrected.hasFocus() or isinstance(obj, QSpinBox)
        if typing:
            if key == Qt.Key.Key_Escape:
                self.setFocus(Qt.FocusReason.OtherFocusReason)
                return True
            return False
        if ctrl or alt or self.reference_id is None:
            return False
        text = event.text().lower()
        if text and text in FLAG_KEYS:
            box = self.checks[FLAGS[FLAG_KEYS.index(text)]]
            box.setChecked(not box.isChecked())
            return True
        if text == "c":
            self.corrected.setFocus(Qt.FocusReason.OtherFocusReason)
            return True
        return False


def highlighted(translation: str, spans: Sequence[Mapping[str, Any]]) -> str:
    """The translation as rich text, xCOMET's error spans marked by severity."""
    out, last = [], 0
    for span in sorted(spans, key=lambda s: int(s.get("start", 0))):
        start = max(int(span.get("start", 0)), last)
        end = min(int(span.get("end", 0)), len(translation))
        if start >= end:
            continue
        colour = SEVERITY_COLOURS.get(str(span.get("severity")), "#f2d16b")
        out.append(html.escape(translation[last:start]))
        out.append(
            f'<span style="background:{colour}; color:black" title="{span.get("severity")}">'
            f"{html.escape(translation[start:end])}</span>"
        )
        last = end
    out.append(html.escape(translation[last:]))
    return "Translation: " + "".join(out)
