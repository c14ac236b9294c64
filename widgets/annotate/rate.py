"""The parts of the Annotate panel's *Rate* tab, each a small widget: the queue filter,
the item, the rating form and the navigation buttons (the correction editor is in
:mod:`widgets.annotate.correction`). The filter and the form render the panel's
:class:`core.annotation.panel_state.AnnotateState` and write the annotator's edits into
it; :class:`widgets.annotate.panel.AnnotatePanel` puts them together, holds the
keyboard, and talks to the controller."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.annotation import (
    ADEQUACY_KEYS,
    ADEQUACY_LABELS,
    BLAME_PARTS,
    CHECK_LABELS,
    CHECKS,
    COMBINATION,
    ERROR_TAXONOMY,
    QueueFilter,
    QueueItem,
    QueueOptions,
    Rating,
    StoredRating,
)
from core.annotation.panel_state import ANY as ANY_KEY
from core.annotation.panel_state import OFFERED, AnnotateState
from core.labels import tier_label
from core.surface import surface_triple
from widgets.binding import Binding, bind
from widgets.theme import set_muted, themed_style_sheet, themed_text, tone

ANY = "any"
# METHODS §9 anchors; the steps between them are the annotator's judgement.
FLUENCY_ANCHORS = {
    0: "0 — unreadable",
    1: "1 — hard to read; the meaning must be guessed",
    2: "2 — readable with effort; several errors",
    3: "3 — understandable, with small grammatical errors",
    4: "4 — good; a slip at most",
    5: "5 — perfectly natural",
}
TARGETS = (  # (label, the AnnotateState target key)
    ("model outputs", "verbalisations"),
    ("silver references", "references:silver"),
    ("gold references", "references:gold"),
    ("all references", "references"),
)


def bold() -> QFont:
    font = QFont()
    font.setBold(True)
    return font


class QueueFilterBar(QWidget):
    """Which texts to rate: the queue filter of an :class:`AnnotateState`, each control
    bound to its field; folded away once a queue is built (room for the item)."""

    requested = Signal(object)  # a QueueFilter

    def __init__(self, state: AnnotateState | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state if state is not None else AnnotateState()
        self.toggle = QToolButton()
        self.toggle.setText("Queue filter")
        self.toggle.setCheckable(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.target_combo = QComboBox()
        for label, key in TARGETS:
            self.target_combo.addItem(label, key)
        self.model_combo, self.lang_combo = QComboBox(), QComboBox()
        self.category_combo, self.tier_combo = QComboBox(), QComboBox()
        for combo in self._combos().values():
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            combo.setMinimumContentsLength(8)
        self.unrated_check = QCheckBox("not yet rated by me")
        self.disagreement_check = QCheckBox("disagreements first")
        self.disagreement_check.setToolTip(
            "Items on which other annotators disagree most come first"
        )
        self.blind_check = QCheckBox("blind")
        self.blind_check.setToolTip(
            "Hide which model wrote a text and the unit's tier, and shuffle the queue in "
            "an order of your own (the same each time you build it)"
        )
        self.golden_spin = QSpinBox()
        self.golden_spin.setRange(0, 50)
        self.golden_spin.setSuffix(" %")
        self.golden_spin.setToolTip(
            "Share of the queue made of golden items (known answers), "
            "mixed in unmarked to check the annotator"
        )
        self.build_button = QPushButton("Build queue")
        self.build_button.clicked.connect(lambda: self.requested.emit(self.queue_filter()))
        self._lay_out()
        self.bindings: dict[str, Binding] = {}
        self._bind()
        self.state.subscribe(lambda *_change: self._show_options(), ["options"])
        self.state.subscribe(lambda *_change: self._show_box(), ["filter_open"])
        self._show_options()
        self._show_box()

    def _lay_out(self) -> None:
        self.box = QWidget()
        form = QFormLayout(self.box)
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Rate", self.target_combo)
        form.addRow("Model", self.model_combo)
        form.addRow("Language", self.lang_combo)
        form.addRow("Category", self.category_combo)
        form.addRow("Tier", self.tier_combo)
        checks_row = QHBoxLayout()
        checks_row.addWidget(self.unrated_check)
        checks_row.addWidget(self.disagreement_check)
        checks_row.addWidget(self.blind_check)
        checks_row.addStretch(1)
        form.addRow(checks_row)
        golden_row = QHBoxLayout()
        golden_row.addWidget(self.golden_spin)
        golden_row.addStretch(1)
        golden_row.addWidget(self.build_button)
        form.addRow("Golden items", golden_row)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.toggle)
        layout.addWidget(self.box)

    def _bind(self) -> None:
        widgets: dict[str, QWidget] = {
            "filter_open": self.toggle,
            "target": self.target_combo,
            "unrated_only": self.unrated_check,
            "disagreements_first": self.disagreement_check,
            "blind": self.blind_check,
            "golden_percent": self.golden_spin,
        }
        for field, widget in widgets.items():
            self.bindings[field] = bind(self.state, field, widget)

    def _bind_choice(self, field: str, combo: QComboBox) -> Binding:
        """A drop-down whose first item, "any", has no data (the state holds ANY_KEY)."""
        return bind(
            self.state,
            field,
            combo,
            to_widget=lambda value: value or None,
            from_widget=lambda value: ANY_KEY if combo.currentData() is None else value,
        )

    def _combos(self) -> dict[str, QComboBox]:
        """The drop-downs by the :class:`QueueOptions` field they offer."""
        return {
            "models": self.model_combo,
            "langs": self.lang_combo,
            "categories": self.category_combo,
            "tiers": self.tier_combo,
        }

    def _show_options(self) -> None:
        """Offer the state's options: each drop-down's items are made again unbound (a
        combo being cleared says its choice changed), then bound again to show the
        state's choice."""
        options = self.state.options
        for field, offered in OFFERED.items():
            combo = self._combos()[offered]
            binding = self.bindings.pop(field, None)
            if binding is not None:
                binding.unbind()
            combo.clear()
            combo.addItem(ANY, None)
            for value in getattr(options, offered):
                combo.addItem(tier_label(value) if offered == "tiers" else value, value)
            self.bindings[field] = self._bind_choice(field, combo)

    def show_options(self, options: QueueOptions) -> None:
        self.state.offer(options)

    def queue_filter(self) -> QueueFilter:
        """The queue the filter asks for."""
        return self.state.queue_filter()

    def set_queue_filter(self, spec: QueueFilter) -> None:
        """Put a saved filter back (values not offered any more fall back to "any")."""
        self.state.set_filter(spec)

    def fold(self, folded: bool) -> None:
        self.state.filter_open = not folded

    def _show_box(self) -> None:
        shown = self.state.filter_open
        self.box.setVisible(shown)
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)


class ItemView(QWidget):
    """The item: where it is from, its unit's triples, and the text to rate."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.meta_label = QLabel()
        self.meta_label.setWordWrap(True)
        set_muted(self.meta_label)
        self.triples_label = QLabel()
        self.triples_label.setTextFormat(Qt.TextFormat.RichText)
        self.triples_label.setWordWrap(True)
        self.triples_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text_label = QLabel()
        self.text_label.setWordWrap(True)
        self.text_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text_label.setFrameShape(QFrame.Shape.StyledPanel)
        self.text_label.setMargin(8)
        font = QFont(self.text_label.font())
        font.setPointSizeF(font.pointSizeF() * 1.25)
        self.text_label.setFont(font)
        themed_style_sheet(
            self.text_label,
            lambda p: f"background:{p.color(QPalette.ColorRole.Base).name()}",
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.meta_label)
        layout.addWidget(self.triples_label)
        layout.addWidget(self.text_label)
        layout.addStretch(1)

    def show_item(self, index: int, total: int, item: QueueItem, *, blind: bool = False) -> None:
        """Queue item ``index`` of ``total`` (its golden flag is never shown); ``blind``
        leaves out which model wrote the text and the unit's tier."""
        where = [
            f"item {index + 1} of {total:,}",
            f"unit {item.unit_uid}",
            # (a reference's quality is what the rater chose to review: it stays)
            *([f"{item.quality} reference"] if not item.model else [] if blind else [item.model]),
            item.lang,
            *([] if blind else [tier_label(item.sub_tier)]),
            item.category,
        ]
        self.meta_label.setText(" · ".join(where))
        lang_note = (
            ""
            if item.triples_lang == item.lang
            else f"<br><i>no {html.escape(item.lang)} triples: shown in "
            f"{html.escape(item.triples_lang)}</i>"
        )
        rows = "".join(
            "<tr>"
            + "".join(
                f"<td style='padding:1px 6px 1px 0'>{html.escape(str(part))}</td>"
                for part in triple
            )
            + "</tr>"
            for triple in map(surface_triple, item.triples)
        )
        themed_text(
            self.triples_label,
            lambda: (
                f"<table style='color:{tone('accent')}'>{rows}</table>{lang_note}"
                if rows
                else "<i>no triples</i>"
            ),
        )
        self.text_label.setText(item.text)

    def clear(self, message: str) -> None:
        self.meta_label.clear()
        self.triples_label.clear()
        self.text_label.setText(message)


class RatingForm(QWidget):
    """Fluency 0–5, adequacy, what is to blame, the validation checks and (for reference
    texts) the error taxonomy."""

    def __init__(self, state: AnnotateState | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # The fluency and adequacy chosen are the state's; the buttons show them.
        self.state = state if state is not None else AnnotateState()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        fluency_title = QHBoxLayout()
        fluency_title.addWidget(QLabel("<b>Fluency</b> (0–5)"), 0, Qt.AlignmentFlag.AlignTop)
        # The anchor of the chosen value, whole: it wraps in a narrow dock, within a height
        # of two lines kept whatever it says, so choosing a value never moves what is below.
        self.fluency_hint = QLabel()
        self.fluency_hint.setWordWrap(True)
        self.fluency_hint.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.fluency_hint.setFixedHeight(2 * self.fluency_hint.fontMetrics().lineSpacing())
        self.fluency_hint.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        set_muted(self.fluency_hint)
        fluency_title.addWidget(self.fluency_hint, 1)
        layout.addLayout(fluency_title)
        layout.addLayout(self._fluency_row())
        layout.addWidget(QLabel("<b>Adequacy</b>"))
        layout.addLayout(self._adequacy_row())
        layout.addWidget(self._blame_box())
        layout.addWidget(self._checks_box())
        layout.addWidget(self._taxonomy_box())
        self._bind()
        self.state.subscribe(lambda *_change: self._show_fluency(), ["fluency"])
        self.state.subscribe(lambda *_change: self._show_adequacy(), ["adequacy"])
        self._show_fluency()
        self._show_adequacy()
        self._show_other()
        self._show_taxonomy()

    def _fluency_row(self) -> QHBoxLayout:
        self.fluency_group = QButtonGroup(self)
        self.fluency_group.setExclusive(False)  # so a second press clears it
        row = QHBoxLayout()
        row.setSpacing(2)
        self.fluency_buttons: list[QPushButton] = []
        for value in range(6):
            button = QPushButton(str(value))
            button.setCheckable(True)
            button.setMinimumWidth(32)
            button.setToolTip(f"{FLUENCY_ANCHORS[value]} (key {value})")
            self.fluency_group.addButton(button, value)
            row.addWidget(button)
            self.fluency_buttons.append(button)
        self.fluency_group.idClicked.connect(
            lambda v: self.set_fluency(v if self.fluency_buttons[v].isChecked() else None)
        )
        return row

    def _adequacy_row(self) -> QHBoxLayout:
        self.adequacy_buttons: dict[int, QPushButton] = {}
        row = QHBoxLayout()
        row.setSpacing(2)
        keys = {code: key for key, code in ADEQUACY_KEYS.items()}
        for code, label in ADEQUACY_LABELS.items():
            button = QPushButton(f"{label} ({keys[code]})")
            button.setCheckable(True)
            button.setToolTip(
                f"Does the text say all and only what the triples say? {label} (key {keys[code]})"
            )
            button.clicked.connect(lambda on, c=code: self.set_adequacy(c if on else None))
            row.addWidget(button)
            self.adequacy_buttons[code] = button
        return row

    def _blame_box(self) -> QGroupBox:
        self.blame_box = QGroupBox("What is to blame? (B)")
        grid = QGridLayout(self.blame_box)
        self.blame_checks: dict[str, QCheckBox] = {}
        parts = [p for p in BLAME_PARTS if p != "other"] + [COMBINATION, "other"]
        for n, part in enumerate(parts):
            check = QCheckBox(part)
            if part == COMBINATION:
                check.setToolTip("Several parts; tick them, or this alone when unsure which")
            grid.addWidget(check, n // 3, n % 3)
            self.blame_checks[part] = check
        self.blame_other = QLineEdit()
        self.blame_other.setPlaceholderText("other: say what is wrong")
        self.blame_other.setEnabled(False)
        grid.addWidget(self.blame_other, 2, 0, 1, 3)
        return self.blame_box

    def _checks_box(self) -> QGroupBox:
        self.checks_box = QGroupBox("Validation checks (optional)")
        layout = QVBoxLayout(self.checks_box)
        self.check_boxes: dict[str, QCheckBox] = {}
        for name in CHECKS:
            check = QCheckBox(CHECK_LABELS[name])
            layout.addWidget(check)
            self.check_boxes[name] = check
        return self.checks_box

    def _taxonomy_box(self) -> QGroupBox:
        self.taxonomy_box = QGroupBox("Errors of the reference (translated texts)")
        grid = QGridLayout(self.taxonomy_box)
        self.taxonomy_checks: dict[tuple[str, str], QCheckBox] = {}
        row = 0
        for family, errors in ERROR_TAXONOMY.items():
            grid.addWidget(QLabel(f"<b>{family}</b>"), row, 0, 1, 3)
            row += 1
            for n, error in enumerate(errors):
                check = QCheckBox(error)
                grid.addWidget(check, row + n // 3, n % 3)
                self.taxonomy_checks[(family, error)] = check
            row += (len(errors) + 2) // 3
        return self.taxonomy_box

    def fluency(self) -> int | None:
        return self.state.fluency

    def adequacy(self) -> int | None:
        return self.state.adequacy

    def set_fluency(self, value: int | None) -> None:
        self.state.fluency = value

    def set_adequacy(self, code: int | None) -> None:
        self.state.adequacy = code

    def _show_fluency(self) -> None:
        value = self.state.fluency
        for v, button in enumerate(self.fluency_buttons):
            button.setChecked(v == value)
        self.fluency_hint.setText(FLUENCY_ANCHORS[value] if value is not None else "")
        self.fluency_hint.setToolTip(self.fluency_hint.text())

    def _show_adequacy(self) -> None:
        for c, button in self.adequacy_buttons.items():
            button.setChecked(c == self.state.adequacy)
        # Greyed rather than hidden: showing it would push the correction field down,
        # under a pointer that was aiming at it.
        self.blame_box.setEnabled(self.state.blame_applies())

    def set_reference(self, is_reference: bool) -> None:
        """Reference texts (e.g. translated silver ones) also get the error taxonomy."""
        self.state.is_reference = is_reference

    def _bind(self) -> None:
        """Each box ticked when its key is in its field (a tuple of keys), and the
        words of "other", to the state."""
        self.bindings: list[Binding] = [bind(self.state, "blame_other", self.blame_other)]
        boxes: list[tuple[str, object, QCheckBox]] = [
            *(("blame", part, box) for part, box in self.blame_checks.items()),
            *(("checks", name, box) for name, box in self.check_boxes.items()),
            *(("taxonomy", key, box) for key, box in self.taxonomy_checks.items()),
        ]
        for field, key, box in boxes:
            self.bindings.append(self._bind_member(field, key, box))
        self.state.subscribe(lambda *_change: self._show_other(), ["blame"])
        self.state.subscribe(lambda *_change: self._show_taxonomy(), ["is_reference"])

    def _bind_member(self, field: str, key: object, box: QCheckBox) -> Binding:
        state = self.state

        def from_widget(on: bool) -> tuple:
            held = tuple(k for k in getattr(state, field) if k != key)
            return (*held, key) if on else held

        return bind(state, field, box, to_widget=lambda held: key in held, from_widget=from_widget)

    def _show_other(self) -> None:
        self.blame_other.setEnabled("other" in self.state.blame)

    def _show_taxonomy(self) -> None:
        self.taxonomy_box.setVisible(self.state.is_reference)

    def rating(self, corrected_text: str | None) -> Rating:
        """The form as a rating (blame only for No / Not sure; checks only once touched)."""
        # The words of "other" are written on leaving the field, and Enter saves
        # from the panel without leaving it.
        self.state.blame_other = self.bindings[0].widget_value()
        return self.state.rating(corrected_text)

    def show_rating(self, rating: StoredRating | None) -> None:
        self.state.show_rating(rating)

    def focus_blame(self) -> bool:
        """Focus the first blame box; False when blame does not apply (adequacy Yes)."""
        if not self.blame_box.isEnabled():
            return False
        next(iter(self.blame_checks.values())).setFocus(Qt.FocusReason.ShortcutFocusReason)
        return True


class NavigationBar(QWidget):
    """Undo, back, skip, and save-and-next: always in view, below the scrolled item."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.undo_button = QPushButton("Undo")
        self.undo_button.setToolTip(
            "Undo the last rating and put it back in the form for editing (Ctrl+Z)"
        )
        self.back_button = QPushButton("◀ Back")
        self.back_button.setToolTip("Previous item (Alt+←)")
        self.skip_button = QPushButton("Skip ▶")
        self.skip_button.setToolTip("Next item, without saving (Alt+→)")
        self.save_button = QPushButton("Save ▸ next")
        self.save_button.setToolTip(
            "Save the rating and go to the next unrated item (Enter; Ctrl+Enter from a text field)"
        )
        self.save_button.setFont(bold())
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.undo_button)
        layout.addWidget(self.back_button)
        layout.addStretch(1)
        layout.addWidget(self.skip_button)
        layout.addWidget(self.save_button)

    def set_item_shown(self, shown: bool) -> None:
        """Save, skip and back work only while an item is shown."""
        for button in (self.save_button, self.skip_button, self.back_button):
            button.setEnabled(shown)
