"""Annotate panel: rate and correct texts, keyboard first (METHODS §9).

Top: who is annotating (chosen once, always shown: "Annotating as NAME"). Tab *Rate*:
the queue filter, progress done/total (of all the filter's texts, those rated before
the queue was built included), the current item (its unit's triples in the
annotation language and the text), fluency 0–5, adequacy Yes / No / Not sure (and what
is to blame for No / Not sure), the three TailNLG validation checks, the error taxonomy
for reference texts, and a correction editor with a word diff against the original that
can be promoted to a gold reference. Tab *Agreement*: per-item aggregates, Krippendorff's
alpha per category, per tier and overall, and accuracy on golden items. Each part is a
small widget (:mod:`widgets.annotate.rate`, :mod:`widgets.annotate.correction`,
:mod:`widgets.annotate.agreement`); the panel puts them together and keeps their
controls as its own attributes.

Keys (a panel-wide filter, so they work whichever control has focus): 0–5 fluency,
y / n / s adequacy, b to the blame boxes, c to the correction, Enter saves and moves on,
Alt+→ skips, Alt+← goes back (both stop at the queue's ends), Ctrl+Z undoes the last
rating (the session's undo: ``app.edits``) and puts it back in the form for editing,
Ctrl+Shift+Z or Ctrl+Y redoes it. After a save the keyboard is on the
next item's form, wherever it was. In a text field (correction, blame free text, the
filter's boxes) keys type text; only Ctrl+Enter (save), Alt+←/→, Esc (leave the field)
and, once the field has nothing left to undo, Ctrl+Z reach the panel. The blame box
keeps its place when it does not apply (greyed), so choosing No never moves the
correction field.

What the panel shows and the annotator chose (who annotates, the queue filter, the
rating in the form) is a ``core.annotation.panel_state.AnnotateState``: the parts render
it and write edits into it (``widgets.binding``); tests drive it without a window.
The panel holds no ratings: every save goes to ``app.annotate.AnnotateController``, which
commits it through ``core.annotation`` at once and hands back what the session holds.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent, QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QBoxLayout,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from core.annotation import (
    ADEQUACY_KEYS,
    AnnotatorInfo,
    GoldenAccuracy,
    QueueFilter,
    QueueItem,
    QueueOptions,
    Rating,
    StoredRating,
)
from core.annotation.panel_state import AnnotateState
from widgets.annotate.agreement import AgreementView
from widgets.annotate.correction import CorrectionEditor
from widgets.annotate.rate import (
    ItemView,
    NavigationBar,
    QueueFilterBar,
    RatingForm,
)
from widgets.theme import muted_colour, themed_style_sheet, themed_text, tone

if TYPE_CHECKING:  # loading them would load the session layer (SQLAlchemy)
    from core.annotation import GroupAggregate, ItemAggregate

NEW_ANNOTATOR = "New annotator…"
_WIDE = 820  # px: from here on the item and the rating controls sit side by side


def _is_text_input(widget: QObject | None) -> bool:
    """Whether keys typed into ``widget`` are text (or a combo box's keyboard search)."""
    if isinstance(widget, QLineEdit | QAbstractSpinBox | QComboBox):
        return True
    if isinstance(widget, QPlainTextEdit | QTextEdit):
        return not widget.isReadOnly()
    return False


def _has_undo(widget: QObject | None) -> bool:
    if isinstance(widget, QPlainTextEdit | QTextEdit):
        return widget.document().isUndoAvailable()
    if isinstance(widget, QLineEdit):
        return widget.isUndoAvailable()
    return False


class AnnotatePanel(QWidget):
    annotator_chosen = Signal(int)
    annotator_added = Signal(str)
    queue_requested = Signal(object)  # a QueueFilter
    save_requested = Signal(int, object)  # queue index, a Rating
    item_requested = Signal(int)  # show this queue index (skip / back)
    undo_requested = Signal()
    redo_requested = Signal()  # Ctrl+Shift+Z or Ctrl+Y
    # (keys, what) for Help ▸ Keyboard shortcuts: the keys this panel handles itself.
    KEYS: tuple[tuple[str, str], ...] = (
        ("0 – 5", "fluency"),
        ("Y / N / S", "adequacy Yes / No / Not sure"),
        ("B", "to the blame boxes (No / Not sure)"),
        ("C", "to the correction (Esc leaves it)"),
        ("Enter (Ctrl+Enter in a text field)", "save and go to the next item"),
        ("Alt+→", "skip to the next item without saving"),
        ("Alt+←", "back to the previous item"),
        ("Ctrl+Z", "undo the last rating (back in the form for editing)"),
        ("Ctrl+Shift+Z, Ctrl+Y", "redo what was undone (a correction comes back too)"),
    )
    promote_requested = Signal(int, object)  # queue index, a Rating (saved first)
    # queue index, (fluency, adequacy) as the text's known answer or None: remove it
    golden_requested = Signal(int, object)
    agreement_requested = Signal()

    def __init__(self, parent: QWidget | None = None, state: AnnotateState | None = None) -> None:
        super().__init__(parent)
        # Who annotates, the queue filter and the rating's fluency and adequacy: the
        # widgets below render it and write the annotator's edits into it.
        self.state = state if state is not None else AnnotateState()
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        # A chosen fluency or adequacy must read at a glance, in any style.
        # Checked and unchecked buttons have the same padding and border, so choosing one
        # never changes a row's height (and moves what is below under the pointer).
        # The palette's colours are written into the sheet, which is made again on a theme
        # switch ("palette(button)" in a sheet keeps the colour it had when first read).
        themed_style_sheet(
            self,
            lambda p: (
                "QPushButton:checked { background:#2f6fb3; color:white; "
                "font-weight:bold; border:1px solid #1f4f85; border-radius:3px; "
                "padding:4px } "
                f"QPushButton:unchecked {{ background:{p.color(QPalette.ColorRole.Button).name()}; "
                f"color:{p.color(QPalette.ColorRole.ButtonText).name()}; "
                f"border:1px solid {muted_colour(p)}; border-radius:3px; padding:4px }} "
                f"QPushButton:unchecked:disabled {{ color:{muted_colour(p)} }}"
            ),
        )
        self.index: int | None = None  # queue index shown
        self.count = 0  # items in the queue

        self.who_label = QLabel()
        self.who_label.setTextFormat(Qt.TextFormat.RichText)
        # Wraps rather than widening the panel: "No annotator chosen — choose who you
        # are" beside the combo set the whole right dock area's minimum width.
        self.who_label.setWordWrap(True)
        self.annotator_combo = QComboBox()
        self.annotator_combo.setToolTip("Who is rating: chosen once, kept for this session")
        self.annotator_combo.activated.connect(self._on_annotator_activated)
        self.agreement = AgreementView()
        self.agreement.requested.connect(self.agreement_requested)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._rate_tab(), "Rate")
        self.tabs.addTab(self.agreement, "Agreement")
        self.tabs.currentChanged.connect(self._on_tab)

        top = QHBoxLayout()
        top.addWidget(self.who_label, 1)
        top.addWidget(self.annotator_combo)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.tabs, 1)
        self._keep_parts()

        self.state.subscribe(lambda *_change: self._show_annotators(), ["annotators", "annotator"])
        self._show_annotators()
        self.clear_item("Choose who you are, then build a queue.")
        for widget in [self, *self.findChildren(QWidget)]:
            widget.installEventFilter(self)

    def _rate_tab(self) -> QWidget:
        self.filter_bar = QueueFilterBar(self.state)
        self.filter_bar.requested.connect(self.queue_requested)
        self.progress_bar = QProgressBar()
        self.progress_bar.setTextVisible(False)
        self.progress_bar.setMaximumHeight(8)
        self.progress_label = QLabel()
        self.item_view = ItemView()
        self.form = RatingForm(self.state)
        self.correction = CorrectionEditor()
        self.correction.promote_requested.connect(self._emit_promote)
        self.message_label = QLabel()
        self.message_label.setWordWrap(True)
        self.navigation = NavigationBar()
        self.navigation.undo_button.clicked.connect(self.undo_requested)
        self.navigation.back_button.clicked.connect(lambda: self._step(-1))
        self.navigation.skip_button.clicked.connect(lambda: self._step(+1))
        self.navigation.save_button.clicked.connect(self.save)

        rating_column = QWidget()
        rating_layout = QVBoxLayout(rating_column)
        rating_layout.setContentsMargins(0, 0, 0, 0)
        rating_layout.addWidget(self.form)
        rating_layout.addWidget(self.correction)
        # Below the form, in the scrolled area (the navigation row is full at a docked
        # width): an expert's action, not a rater's every-item one.
        self.golden_button = QPushButton("Known answer…")
        self.golden_button.setToolTip(
            "Give this text a known answer (a golden item other annotators are checked "
            "against), or remove it"
        )
        self.golden_button.clicked.connect(self.ask_golden)
        golden_row = QHBoxLayout()
        golden_row.addStretch(1)
        golden_row.addWidget(self.golden_button)
        rating_layout.addLayout(golden_row)
        rating_layout.addStretch(1)
        self.item_area = QWidget()
        self.columns = QBoxLayout(QBoxLayout.Direction.TopToBottom, self.item_area)
        self.columns.setContentsMargins(0, 0, 0, 0)
        self.columns.addWidget(self.item_view)
        self.columns.addWidget(rating_column)
        self.columns.addStretch(1)  # narrow: spare height goes below the ratings
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.item_area)

        tab = QWidget()
        layout = QVBoxLayout(tab)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.filter_bar)
        progress_row = QHBoxLayout()
        progress_row.addWidget(self.progress_label)
        progress_row.addWidget(self.progress_bar, 1)
        layout.addLayout(progress_row)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.message_label)
        layout.addWidget(self.navigation)
        return tab

    def _keep_parts(self) -> None:
        """The parts' controls as the panel's own attributes (controller, tests)."""
        bar, view, form, nav = self.filter_bar, self.item_view, self.form, self.navigation
        self.filter_toggle, self.filter_box = bar.toggle, bar.box
        self.target_combo, self.model_combo = bar.target_combo, bar.model_combo
        self.lang_combo, self.category_combo = bar.lang_combo, bar.category_combo
        self.tier_combo, self.build_button = bar.tier_combo, bar.build_button
        self.unrated_check, self.disagreement_check = bar.unrated_check, bar.disagreement_check
        self.blind_check = bar.blind_check
        self.golden_spin = bar.golden_spin
        self.meta_label, self.triples_label = view.meta_label, view.triples_label
        self.text_label = view.text_label
        self.fluency_buttons, self.fluency_hint = form.fluency_buttons, form.fluency_hint
        self.adequacy_buttons = form.adequacy_buttons
        self.blame_box, self.blame_checks = form.blame_box, form.blame_checks
        self.blame_other = form.blame_other
        self.checks_box, self.check_boxes = form.checks_box, form.check_boxes
        self.taxonomy_box, self.taxonomy_checks = form.taxonomy_box, form.taxonomy_checks
        self.correction_edit = self.correction.edit
        self.diff_view = self.correction.diff_view
        self.promote_button = self.correction.promote_button
        self.undo_button, self.back_button = nav.undo_button, nav.back_button
        self.skip_button, self.save_button = nav.skip_button, nav.save_button
        self.agreement_note = self.agreement.agreement_note
        self.weighted_check = self.agreement.weighted_check
        self.groups_table, self.golden_table = (
            self.agreement.groups_table,
            self.agreement.golden_table,
        )
        self.items_table = self.agreement.items_table

    # -- what the controller shows -----------------------------------------------------
    def show_annotators(self, annotators: Sequence[AnnotatorInfo], current: int | None) -> None:
        """Named annotators (anonymous crowd workers are not offered)."""
        named = tuple((info.id, info.name) for info in annotators if not info.is_anonymous)
        self.state.update(annotators=named, annotator=current)

    def _show_annotators(self) -> None:
        # The combo says what the user picks by ``activated``, which the items made
        # again here never emit: nothing is written back.
        combo, state = self.annotator_combo, self.state
        combo.clear()
        combo.addItem("Choose…", None)
        for annotator_id, name in state.annotators:
            combo.addItem(name, annotator_id)
        combo.addItem(NEW_ANNOTATOR, "new")
        name = state.annotator_name()
        combo.setCurrentIndex(max(0, combo.findData(state.annotator)) if name is not None else 0)
        if name is None:
            themed_text(
                self.who_label,
                lambda: (
                    f"<span style='color:{tone('error')}'><b>No annotator chosen</b></span>"
                    " — choose who you are"
                ),
            )
        else:
            shown = html.escape(name)
            themed_text(self.who_label, lambda: f"Annotating as <b>{shown}</b>")
        self.build_button.setEnabled(state.annotator is not None)

    def show_filter_options(self, options: QueueOptions) -> None:
        """Values offered by the filter: ``models``, ``langs``, ``categories``, ``tiers``."""
        self.filter_bar.show_options(options)

    def queue_filter(self) -> QueueFilter:
        """The queue the filter asks for."""
        return self.filter_bar.queue_filter()

    def set_queue_filter(self, spec: QueueFilter) -> None:
        """Put a saved filter back (values not offered any more fall back to "any")."""
        self.filter_bar.set_queue_filter(spec)

    def fold_filter(self, folded: bool) -> None:
        self.filter_bar.fold(folded)

    def show_progress(self, done: int, total: int) -> None:
        """``done`` of the filter's ``total`` texts rated (those rated before the queue
        was built included)."""
        self.progress_label.setText(f"<b>{done:,} / {total:,}</b> rated")
        self.progress_bar.setRange(0, max(total, 1))
        self.progress_bar.setValue(done)

    def show_item(
        self,
        index: int,
        item: QueueItem,
        rating: StoredRating | None,
        count: int,
        *,
        blind: bool = False,
    ) -> None:
        """Queue item ``index`` of ``count`` (its golden flag is never shown) and the
        annotator's stored rating of it (None: not rated yet). The keyboard comes back
        to the rating form from a text field (the correction saved with Ctrl+Enter), so
        the next key rates the new item rather than typing into its correction."""
        focus = QApplication.focusWidget()
        if focus is not None and self.isAncestorOf(focus) and _is_text_input(focus):
            self.setFocus(Qt.FocusReason.OtherFocusReason)
        self.index, self.count = index, count
        self.item_view.show_item(index, count, item, blind=blind)
        self.form.set_reference(item.ref.kind == "reference")
        self.form.show_rating(rating)
        self.correction.show_text(item.text, rating.corrected_text if rating else None)
        self.item_area.setEnabled(True)
        self.navigation.set_item_shown(True)
        self.message_label.clear()

    def clear_item(self, message: str) -> None:
        """No item to show (no queue yet, or every item rated)."""
        self.index = None
        self.item_view.clear(message)
        self.form.show_rating(None)
        self.correction.show_text("", None)
        self.form.set_reference(False)
        self.item_area.setEnabled(False)
        self.text_label.setEnabled(True)
        self.navigation.set_item_shown(False)

    def show_message(self, text: str, error: bool = False) -> None:
        themed_text(
            self.message_label,
            lambda: (
                f"<span style='color:{tone('error' if error else 'better')}'>"
                f"{html.escape(text)}</span>"
            ),
        )

    def set_can_undo(self, can: bool) -> None:
        self.undo_button.setEnabled(can)

    def show_agreement(
        self,
        overall: GroupAggregate,
        groups: Sequence[GroupAggregate],
        items: Sequence[ItemAggregate],
        golden: Sequence[GoldenAccuracy],
    ) -> None:
        """The overall figures, then per category and per tier; per item; golden items."""
        self.agreement.show_agreement(overall, groups, items, golden)

    def show_no_agreement(self, text: str) -> None:
        self.agreement.show_none(text)

    # -- the form ----------------------------------------------------------------------
    def fluency(self) -> int | None:
        return self.form.fluency()

    def adequacy(self) -> int | None:
        return self.form.adequacy()

    def set_fluency(self, value: int | None) -> None:
        self.form.set_fluency(value)

    def set_adequacy(self, code: int | None) -> None:
        self.form.set_adequacy(code)

    def rating(self) -> Rating:
        """The form as a rating (blame only for No / Not sure; checks only once touched;
        the correction only when it differs from the original)."""
        return self.form.rating(self.correction.corrected_text())

    def save(self) -> None:
        if self.index is not None:
            self.save_requested.emit(self.index, self.rating())

    def ask_golden(self) -> None:
        """Known answer…: the text shown as a golden item, its answer filled in from the
        form (what the expert rated it), or its known answer removed."""
        from widgets.annotate.golden import GoldenAnswerDialog

        if self.index is None:
            return
        index = self.index
        who = self.state.annotator_name() or ""
        dialog = GoldenAnswerDialog(self.fluency(), self.adequacy(), self, who=who)
        if dialog.exec() == GoldenAnswerDialog.DialogCode.Accepted and self.index == index:
            self.golden_requested.emit(index, dialog.answer())

    def restore_form(self, rating: StoredRating) -> None:
        """Put an undone rating back in the form (not saved) so it can be edited."""
        self.form.show_rating(rating)
        self.correction.show_text(self.correction.original, rating.corrected_text)

    def focus_correction(self) -> None:
        self.correction.focus()

    def focus_blame(self) -> None:
        if not self.form.focus_blame():
            self.show_message("What is to blame applies to No or Not sure (keys n, s).", error=True)

    # -- keys ----------------------------------------------------------------------------
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            return self.handle_key(obj, event)
        return False

    def handle_key(self, obj: QObject, event: QKeyEvent) -> bool:
        """The panel's keyboard; True when the key was a rating key and was used."""
        if self.tabs.currentIndex() != 0 or self.index is None:
            return False
        key, mods = event.key(), event.modifiers()
        ctrl = bool(mods & Qt.KeyboardModifier.ControlModifier)
        enter = key in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        focus = QApplication.focusWidget()
        typing = _is_text_input(obj) or (
            focus is not None and self.isAncestorOf(focus) and _is_text_input(focus)
        )
        alt = bool(mods & Qt.KeyboardModifier.AltModifier)
        if ctrl and enter:
            self.save()
            return True
        if alt and key in (Qt.Key.Key_Left, Qt.Key.Key_Right):
            self._step(-1 if key == Qt.Key.Key_Left else +1)
            return True
        if typing and key == Qt.Key.Key_Escape:
            self.setFocus(Qt.FocusReason.OtherFocusReason)  # rating keys work again
            return True
        shift = bool(mods & Qt.KeyboardModifier.ShiftModifier)
        if ctrl and (key == Qt.Key.Key_Y or (key == Qt.Key.Key_Z and shift)):
            # Redo, never another undo: Ctrl+Shift+Z once undid a second rating.
            if typing:
                return False  # the field's own redo
            self.redo_requested.emit()
            return True
        if ctrl and key == Qt.Key.Key_Z:
            editor = obj if isinstance(obj, QPlainTextEdit | QLineEdit) else focus
            if typing and _has_undo(editor):
                return False  # the field's own undo first
            self.undo_requested.emit()
            return True
        if typing or mods & (
            Qt.KeyboardModifier.ControlModifier
            | Qt.KeyboardModifier.AltModifier
            | Qt.KeyboardModifier.MetaModifier
        ):
            return False
        if enter:
            self.save()
            return True
        if Qt.Key.Key_0 <= key <= Qt.Key.Key_5:
            self.set_fluency(key - Qt.Key.Key_0)
            return True
        letter = event.text().lower()
        if letter == "c":
            self.focus_correction()
            return True
        if letter == "b":
            self.focus_blame()
            return True
        if letter in ADEQUACY_KEYS:
            self.set_adequacy(ADEQUACY_KEYS[letter])
            return True
        return False

    # -- internals -----------------------------------------------------------------------
    def _on_annotator_activated(self, index: int) -> None:
        data = self.annotator_combo.itemData(index)
        if data == "new":
            name, ok = QInputDialog.getText(
                self, "New annotator", "Your name (as it will be kept with your ratings):"
            )
            if ok and name.strip():
                self.annotator_added.emit(name.strip())
            else:  # back to whoever was chosen
                self.annotator_chosen.emit(-1)
        elif data is not None:
            self.annotator_chosen.emit(int(data))

    def _step(self, step: int) -> None:
        """Back or skip; the first and the last item are ends, not a ring."""
        if self.index is None or not self.count:
            return
        target = self.index + step
        if target < 0:
            self.show_message("This is the first item of the queue.")
        elif target >= self.count:
            self.show_message("This is the last item of the queue.")
        else:
            self.item_requested.emit(target)

    def _emit_promote(self) -> None:
        if self.index is not None:
            self.promote_requested.emit(self.index, self.rating())

    def _on_tab(self, index: int) -> None:
        if index == 1:
            self.agreement_requested.emit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        # Docked (narrow): one column; floated or widened: the item beside the ratings.
        wide = event.size().width() >= _WIDE
        self.columns.setDirection(
            QBoxLayout.Direction.LeftToRight if wide else QBoxLayout.Direction.TopToBottom
        )
        for position, stretch in enumerate((1, 1, 0) if wide else (0, 0, 1)):
            self.columns.setStretch(position, stretch)
        super().resizeEvent(event)
