"""Annotate panel: rate and correct texts, keyboard first (METHODS §9).

Top: who is annotating (chosen once, always shown: "Annotating as NAME"). Tab *Rate*:
the queue filter, progress done/total, the current item (its unit's triples in the
annotation language and the text), fluency 0–5, adequacy Yes / No / Not sure (and what
is to blame for No / Not sure), the three TailNLG validation checks, the error taxonomy
for reference texts, and a correction editor with a word diff against the original that
can be promoted to a gold reference. Tab *Agreement*: per-item aggregates, Krippendorff's
alpha per category, per tier and overall, and accuracy on golden items.

Keys (a panel-wide filter, so they work whichever control has focus): 0–5 fluency,
y / n / s adequacy, b to the blame boxes, c to the correction, Enter saves and moves on,
Alt+→ skips, Alt+← goes back, Ctrl+Z undoes the last rating and puts it back in the form
for editing. In a text field (correction, blame free text, the filter's boxes) keys type
text; only Ctrl+Enter (save), Alt+←/→, Esc (leave the field) and, once the field has
nothing left to undo, Ctrl+Z reach the panel. The blame box keeps its place when it does
not apply (greyed), so choosing No never moves the correction field.

The panel holds no ratings: every save goes to ``app.annotate.AnnotateController``, which
commits it through ``core.annotation`` at once and hands back what the session holds.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QFont, QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QBoxLayout,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextBrowser,
    QTextEdit,
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
    NO,
    NOT_SURE,
    AnnotatorInfo,
    GoldenAccuracy,
    QueueFilter,
    QueueItem,
    QueueOptions,
    Rating,
    StoredRating,
)
from core.labels import plural, tier_label
from core.surface import surface_triple
from widgets.message_bar import ElidedLabel

if TYPE_CHECKING:  # loading them would load the session layer (SQLAlchemy)
    from core.annotation import GroupAggregate, ItemAggregate

NEW_ANNOTATOR = "New annotator…"
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
TARGETS = (  # (label, QueueFilter.target, qualities)
    ("model outputs", "verbalisations", ()),
    ("silver references", "references", ("silver",)),
    ("gold references", "references", ("gold",)),
    ("all references", "references", ()),
)
AGREEMENT_COLUMNS = (
    "group",
    "items",
    "ratings",
    "annotators",
    "fluency mean",
    "fluency median",
    "adequacy yes",
    "majority yes",
    "α fluency",
    "α adequacy",
)
ITEM_COLUMNS = (
    "item",
    "unit",
    "model",
    "lang",
    "tier",
    "category",
    "ratings",
    "fluency mean",
    "fluency median",
    "majority",
    "yes",
)
GOLDEN_COLUMNS = ("annotator", "golden items", "adequacy right", "fluency within ±1", "fluency MAE")
# Words and punctuation marks, each with the spaces after it (so a changed phrase is one
# marked run, not a word-space-word patchwork).
_TOKEN = re.compile(r"\w+\s*|[^\w\s]\s*|\s+")
_NUMERIC = re.compile(r"^(–|-?\d)")  # figures (and "–" for none) align right
_WIDE = 820  # px: from here on the item and the rating controls sit side by side


def diff_html(original: str, corrected: str) -> str:
    """A word diff of ``corrected`` against ``original`` as Qt rich text: deletions struck
    through on red, insertions underlined on green (difflib on words and punctuation)."""
    a, b = _TOKEN.findall(original), _TOKEN.findall(corrected)
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(html.escape("".join(a[i1:i2])))
            continue
        if op in ("delete", "replace"):
            out.append(
                "<span style='background:#f6c9c9;color:#8a1c1c;"
                "text-decoration:line-through'>"
                f"{html.escape(''.join(a[i1:i2]))}</span>"
            )
        if op in ("insert", "replace"):
            out.append(
                "<span style='background:#c9efc9;color:#145214;"
                "text-decoration:underline'>"
                f"{html.escape(''.join(b[j1:j2]))}</span>"
            )
    return "".join(out)


def _is_text_input(widget: QObject | None) -> bool:
    """Whether keys typed into ``widget`` are text (or a combo box's keyboard search)."""
    if isinstance(widget, QLineEdit | QAbstractSpinBox | QComboBox):
        return True
    if isinstance(widget, QPlainTextEdit | QTextEdit):
        return not widget.isReadOnly()
    return False


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f} %"


def _number(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


class AnnotatePanel(QWidget):
    annotator_chosen = Signal(int)
    annotator_added = Signal(str)
    queue_requested = Signal(object)  # a QueueFilter
    save_requested = Signal(int, object)  # queue index, a Rating
    item_requested = Signal(int)  # show this queue index (skip / back)
    undo_requested = Signal()
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
    )
    promote_requested = Signal(int, object)  # queue index, a Rating (saved first)
    agreement_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        # A chosen fluency or adequacy must read at a glance, in any style.
        # Checked and unchecked buttons have the same padding and border, so choosing one
        # never changes a row's height (and moves what is below under the pointer).
        self.setStyleSheet(
            "QPushButton:checked { background:#2f6fb3; color:white; "
            "font-weight:bold; border:1px solid #1f4f85; border-radius:3px; "
            "padding:4px } "
            "QPushButton:unchecked { background:palette(button); "
            "border:1px solid palette(mid); border-radius:3px; padding:4px } "
            "QPushButton:unchecked:disabled { color:palette(mid) }"
        )
        self.index: int | None = None  # queue index shown
        self.total = 0
        self._original = ""
        self._is_reference = False
        self._checks_touched = False
        self._loading = False

        # -- who ------------------------------------------------------------------------
        self.who_label = QLabel()
        self.who_label.setTextFormat(Qt.TextFormat.RichText)
        self.annotator_combo = QComboBox()
        self.annotator_combo.setToolTip("Who is rating: chosen once, kept for this session")
        self.annotator_combo.activated.connect(self._on_annotator_activated)

        # -- tabs -----------------------------------------------------------------------
        self.tabs = QTabWidget()
        self.tabs.addTab(self._build_rate_tab(), "Rate")
        self.tabs.addTab(self._build_agreement_tab(), "Agreement")
        self.tabs.currentChanged.connect(self._on_tab)

        top = QHBoxLayout()
        top.addWidget(self.who_label, 1)
        top.addWidget(self.annotator_combo)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.tabs, 1)

        self.show_annotators([], None)
        self.clear_item("Choose who you are, then build a queue.")
        for widget in [self, *self.findChildren(QWidget)]:
            widget.installEventFilter(self)

    # -- construction -------------------------------------------------------------------
    def _build_rate_tab(self) -> QWidget:
        # Queue filter, folded away once a queue is built (room for the item).
        self.filter_toggle = QToolButton()
        self.filter_toggle.setText("Queue filter")
        self.filter_toggle.setCheckable(True)
        self.filter_toggle.setChecked(True)
        self.filter_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.filter_toggle.setArrowType(Qt.ArrowType.DownArrow)
        self.filter_toggle.toggled.connect(self._fold_filter)
        self.filter_box = QWidget()
        form = QFormLayout(self.filter_box)
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.target_combo = QComboBox()
        for label, target, qualities in TARGETS:
            self.target_combo.addItem(label, (target, qualities))
        self.model_combo, self.lang_combo = QComboBox(), QComboBox()
        self.category_combo, self.tier_combo = QComboBox(), QComboBox()
        for combo in (self.model_combo, self.lang_combo, self.category_combo, self.tier_combo):
            combo.addItem(ANY, None)
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            combo.setMinimumContentsLength(8)
        self.unrated_check = QCheckBox("not yet rated by me")
        self.unrated_check.setChecked(True)
        self.disagreement_check = QCheckBox("disagreements first")
        self.disagreement_check.setToolTip(
            "Items on which other annotators disagree most come first"
        )
        self.golden_spin = QSpinBox()
        self.golden_spin.setRange(0, 50)
        self.golden_spin.setSuffix(" %")
        self.golden_spin.setToolTip(
            "Share of the queue made of golden items (known answers), "
            "mixed in unmarked to check the annotator"
        )
        self.build_button = QPushButton("Build queue")
        self.build_button.clicked.connect(self._emit_queue)
        form.addRow("Rate", self.target_combo)
        form.addRow("Model", self.model_combo)
        form.addRow("Language", self.lang_combo)
        form.addRow("Category", self.category_combo)
        form.addRow("Tier", self.tier_combo)
        checks_row = QHBoxLayout()
        checks_row.addWidget(self.unrated_check)
        checks_row.addWidget(self.disagreement_check)
        checks_row.addStretch(1)
        form.addRow(checks_row)
        golden_row = QHBoxLayout()
        golden_row.addWidget(self.golden_spin)
        golden_row.addStretch(1)
        golden_row.addWidget(self.build_button)
        form.addRow("Golden items", golden_row)

        self.progress_bar = QProgressBar()
        self.progress_bar.setTextVisible(False)
        self.progress_bar.setMaximumHeight(8)
        self.progress_label = QLabel()

        # -- the item -------------------------------------------------------------------
        self.meta_label = QLabel()
        self.meta_label.setWordWrap(True)
        self.meta_label.setStyleSheet("color:#555")
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
        self.text_label.setStyleSheet("background:palette(base)")

        # -- ratings --------------------------------------------------------------------
        self.fluency_group = QButtonGroup(self)
        self.fluency_group.setExclusive(False)  # so a second press clears it
        fluency_row = QHBoxLayout()
        fluency_row.setSpacing(2)
        self.fluency_buttons: list[QPushButton] = []
        for value in range(6):
            button = QPushButton(str(value))
            button.setCheckable(True)
            button.setMinimumWidth(32)
            button.setToolTip(f"{FLUENCY_ANCHORS[value]} (key {value})")
            self.fluency_group.addButton(button, value)
            fluency_row.addWidget(button)
            self.fluency_buttons.append(button)
        self.fluency_group.idClicked.connect(
            lambda v: self.set_fluency(v if self.fluency_buttons[v].isChecked() else None)
        )
        # One line that elides (whole text in the tooltip): neither a horizontal scroll bar
        # in a narrow dock nor a second line that would move what is below.
        self.fluency_hint = ElidedLabel(
            Qt.TextElideMode.ElideRight, policy=QSizePolicy.Policy.Ignored
        )
        self.fluency_hint.setStyleSheet("color:#555")

        self.adequacy_buttons: dict[int, QPushButton] = {}
        adequacy_row = QHBoxLayout()
        adequacy_row.setSpacing(2)
        keys = {code: key for key, code in ADEQUACY_KEYS.items()}
        for code, label in ADEQUACY_LABELS.items():
            button = QPushButton(f"{label} ({keys[code]})")
            button.setCheckable(True)
            button.setToolTip(
                f"Does the text say all and only what the triples say? {label} (key {keys[code]})"
            )
            button.clicked.connect(lambda on, c=code: self.set_adequacy(c if on else None))
            adequacy_row.addWidget(button)
            self.adequacy_buttons[code] = button

        self.blame_box = QGroupBox("What is to blame? (B)")
        blame_grid = QGridLayout(self.blame_box)
        self.blame_checks: dict[str, QCheckBox] = {}
        parts = [p for p in BLAME_PARTS if p != "other"] + [COMBINATION, "other"]
        for n, part in enumerate(parts):
            check = QCheckBox(part)
            if part == COMBINATION:
                check.setToolTip("Several parts; tick them, or this alone when unsure which")
            blame_grid.addWidget(check, n // 3, n % 3)
            self.blame_checks[part] = check
        self.blame_other = QLineEdit()
        self.blame_other.setPlaceholderText("other: say what is wrong")
        self.blame_other.setEnabled(False)
        self.blame_checks["other"].toggled.connect(self.blame_other.setEnabled)
        blame_grid.addWidget(self.blame_other, 2, 0, 1, 3)

        self.checks_box = QGroupBox("Validation checks (optional)")
        checks_layout = QVBoxLayout(self.checks_box)
        self.check_boxes: dict[str, QCheckBox] = {}
        for name in CHECKS:
            check = QCheckBox(CHECK_LABELS[name])
            check.clicked.connect(self._touch_checks)
            checks_layout.addWidget(check)
            self.check_boxes[name] = check

        self.taxonomy_box = QGroupBox("Errors of the reference (translated texts)")
        taxonomy_layout = QGridLayout(self.taxonomy_box)
        self.taxonomy_checks: dict[tuple[str, str], QCheckBox] = {}
        row = 0
        for family, errors in ERROR_TAXONOMY.items():
            taxonomy_layout.addWidget(QLabel(f"<b>{family}</b>"), row, 0, 1, 3)
            row += 1
            for n, error in enumerate(errors):
                check = QCheckBox(error)
                taxonomy_layout.addWidget(check, row + n // 3, n % 3)
                self.taxonomy_checks[(family, error)] = check
            row += (len(errors) + 2) // 3

        # -- correction -----------------------------------------------------------------
        self.correction_edit = QPlainTextEdit()
        self.correction_edit.setPlaceholderText("Correct the text here (optional)")
        self.correction_edit.setTabChangesFocus(True)
        self.correction_edit.setMaximumHeight(90)
        self.correction_edit.textChanged.connect(self._show_diff)
        self.diff_view = QTextBrowser()
        self.diff_view.setMaximumHeight(70)
        self.diff_view.setPlaceholderText("The diff against the original shows here")
        self.diff_view.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        reset = QPushButton("Reset")
        reset.setToolTip("Back to the original text")
        reset.clicked.connect(lambda: self.correction_edit.setPlainText(self._original))
        self.promote_button = QPushButton("Promote to gold reference")
        self.promote_button.setToolTip(
            "Save the rating with this correction and make the "
            "corrected text a gold reference of the unit (who, when "
            "and from which text are kept)"
        )
        self.promote_button.clicked.connect(self._emit_promote)
        correction_box = QGroupBox("Correction (C; Esc to leave)")
        correction_layout = QVBoxLayout(correction_box)
        correction_layout.addWidget(self.correction_edit)
        correction_layout.addWidget(self.diff_view)
        correction_buttons = QHBoxLayout()
        correction_buttons.addWidget(reset)
        correction_buttons.addStretch(1)
        correction_buttons.addWidget(self.promote_button)
        correction_layout.addLayout(correction_buttons)

        # -- actions (always in view, below the scrolled item) -------------------------
        self.message_label = QLabel()
        self.message_label.setWordWrap(True)
        self.undo_button = QPushButton("Undo")
        self.undo_button.setToolTip(
            "Undo the last rating and put it back in the form for editing (Ctrl+Z)"
        )
        self.undo_button.clicked.connect(self.undo_requested)
        self.back_button = QPushButton("◀ Back")
        self.back_button.setToolTip("Previous item (Alt+←)")
        self.back_button.clicked.connect(lambda: self._step(-1))
        self.skip_button = QPushButton("Skip ▶")
        self.skip_button.setToolTip("Next item, without saving (Alt+→)")
        self.skip_button.clicked.connect(lambda: self._step(+1))
        self.save_button = QPushButton("Save ▸ next")
        self.save_button.setToolTip(
            "Save the rating and go to the next unrated item (Enter; Ctrl+Enter from a text field)"
        )
        self.save_button.clicked.connect(self.save)
        self.save_button.setFont(_bold())

        # -- layout ---------------------------------------------------------------------
        item_column = QWidget()
        item_layout = QVBoxLayout(item_column)
        item_layout.setContentsMargins(0, 0, 0, 0)
        item_layout.addWidget(self.meta_label)
        item_layout.addWidget(self.triples_label)
        item_layout.addWidget(self.text_label)
        item_layout.addStretch(1)

        rating_column = QWidget()
        rating_layout = QVBoxLayout(rating_column)
        rating_layout.setContentsMargins(0, 0, 0, 0)
        fluency_title = QHBoxLayout()
        fluency_title.addWidget(QLabel("<b>Fluency</b> (0–5)"))
        fluency_title.addWidget(self.fluency_hint, 1)
        rating_layout.addLayout(fluency_title)
        rating_layout.addLayout(fluency_row)
        rating_layout.addWidget(QLabel("<b>Adequacy</b>"))
        rating_layout.addLayout(adequacy_row)
        rating_layout.addWidget(self.blame_box)
        rating_layout.addWidget(self.checks_box)
        rating_layout.addWidget(self.taxonomy_box)
        rating_layout.addWidget(correction_box)
        rating_layout.addStretch(1)

        self.item_area = QWidget()
        self.columns = QBoxLayout(QBoxLayout.Direction.TopToBottom, self.item_area)
        self.columns.setContentsMargins(0, 0, 0, 0)
        self.columns.addWidget(item_column)
        self.columns.addWidget(rating_column)
        self.columns.addStretch(1)  # narrow: spare height goes below the ratings
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.item_area)

        actions = QHBoxLayout()
        actions.addWidget(self.undo_button)
        actions.addWidget(self.back_button)
        actions.addStretch(1)
        actions.addWidget(self.skip_button)
        actions.addWidget(self.save_button)

        tab = QWidget()
        layout = QVBoxLayout(tab)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.filter_toggle)
        layout.addWidget(self.filter_box)
        progress_row = QHBoxLayout()
        progress_row.addWidget(self.progress_label)
        progress_row.addWidget(self.progress_bar, 1)
        layout.addLayout(progress_row)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.message_label)
        layout.addLayout(actions)
        return tab

    def _build_agreement_tab(self) -> QWidget:
        self.agreement_note = QLabel()
        self.agreement_note.setWordWrap(True)
        refresh = QPushButton("Refresh")
        refresh.clicked.connect(self.agreement_requested)
        self.weighted_check = QCheckBox("Weighted by sampling weight")
        self.weighted_check.setToolTip(
            "Group figures weight each item by its WDV record's sampling_weight (WDV's "
            "weighted per-theme figures; an item without one counts 1)"
        )
        self.weighted_check.toggled.connect(lambda _on: self.agreement_requested.emit())
        self.groups_table = _table(AGREEMENT_COLUMNS)
        self.golden_table = _table(GOLDEN_COLUMNS)
        self.items_table = _table(ITEM_COLUMNS)
        splitter = QSplitter(Qt.Orientation.Vertical)
        for title, table in (
            ("Agreement and aggregates (each item counts once)", self.groups_table),
            ("Accuracy on golden items", self.golden_table),
            ("Per item", self.items_table),
        ):
            box = QWidget()
            box_layout = QVBoxLayout(box)
            box_layout.setContentsMargins(0, 0, 0, 0)
            box_layout.addWidget(QLabel(f"<b>{title}</b>"))
            box_layout.addWidget(table)
            splitter.addWidget(box)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setStretchFactor(2, 3)
        tab = QWidget()
        layout = QVBoxLayout(tab)
        layout.setContentsMargins(4, 4, 4, 4)
        head = QHBoxLayout()
        head.addWidget(self.agreement_note, 1)
        head.addWidget(self.weighted_check)
        head.addWidget(refresh)
        layout.addLayout(head)
        layout.addWidget(splitter, 1)
        return tab

    # -- what the controller shows -----------------------------------------------------
    def show_annotators(self, annotators: Sequence[AnnotatorInfo], current: int | None) -> None:
        """Named ``AnnotatorInfo``s (anonymous crowd workers are not offered)."""
        self.annotator_combo.blockSignals(True)
        self.annotator_combo.clear()
        self.annotator_combo.addItem("Choose…", None)
        for info in annotators:
            if not info.is_anonymous:
                self.annotator_combo.addItem(info.name, info.id)
        self.annotator_combo.addItem(NEW_ANNOTATOR, "new")
        found = self.annotator_combo.findData(current) if current is not None else -1
        self.annotator_combo.setCurrentIndex(max(0, found))
        self.annotator_combo.blockSignals(False)
        if current is None or found < 0:
            self.who_label.setText(
                "<span style='color:#c23b22'><b>No annotator chosen</b></span> — choose who you are"
            )
        else:
            name = html.escape(self.annotator_combo.itemText(found))
            self.who_label.setText(f"Annotating as <b>{name}</b>")
        self.build_button.setEnabled(current is not None)

    def show_filter_options(self, options: QueueOptions) -> None:
        """Values offered by the filter: ``models``, ``langs``, ``categories``, ``tiers``."""
        for key, combo in (
            ("models", self.model_combo),
            ("langs", self.lang_combo),
            ("categories", self.category_combo),
            ("tiers", self.tier_combo),
        ):
            chosen = combo.currentData()
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(ANY, None)
            for value in getattr(options, key):
                combo.addItem(tier_label(value) if key == "tiers" else value, value)
            combo.setCurrentIndex(max(0, combo.findData(chosen)) if chosen else 0)
            combo.blockSignals(False)

    def queue_filter(self) -> QueueFilter:
        """The queue the filter asks for."""
        target, qualities = self.target_combo.currentData()

        def one(combo: QComboBox) -> tuple[str, ...]:
            value = combo.currentData()
            return (value,) if value else ()

        return QueueFilter(
            target=target,
            qualities=tuple(qualities),
            models=one(self.model_combo) if target == "verbalisations" else (),
            langs=one(self.lang_combo),
            categories=one(self.category_combo),
            tiers=one(self.tier_combo),
            unrated_only=self.unrated_check.isChecked(),
            disagreements_first=self.disagreement_check.isChecked(),
            golden_rate=self.golden_spin.value() / 100,
        )

    def set_queue_filter(self, spec: QueueFilter) -> None:
        """Put a saved filter back (values not offered any more fall back to "any")."""
        for i in range(self.target_combo.count()):
            if self.target_combo.itemData(i) == (spec.target, tuple(spec.qualities)):
                self.target_combo.setCurrentIndex(i)
        for chosen, combo in (
            (spec.models, self.model_combo),
            (spec.langs, self.lang_combo),
            (spec.categories, self.category_combo),
            (spec.tiers, self.tier_combo),
        ):
            combo.setCurrentIndex(max(0, combo.findData(chosen[0])) if chosen else 0)
        self.unrated_check.setChecked(spec.unrated_only)
        self.disagreement_check.setChecked(spec.disagreements_first)
        self.golden_spin.setValue(round(100 * spec.golden_rate))

    def show_progress(self, done: int, total: int) -> None:
        self.total = total
        self.progress_label.setText(f"<b>{done:,} / {total:,}</b> rated")
        self.progress_bar.setRange(0, max(total, 1))
        self.progress_bar.setValue(done)

    def show_item(self, index: int, item: QueueItem, rating: StoredRating | None) -> None:
        """Queue item ``index`` (its golden flag is never shown) and the annotator's stored
        rating of it (None: not rated yet)."""
        self.index = index
        self._is_reference = item.ref.kind == "reference"
        where = [
            f"item {index + 1} of {self.total:,}",
            f"unit {item.unit_uid}",
            item.model if item.model else f"{item.quality} reference",
            item.lang,
            tier_label(item.sub_tier),
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
        self.triples_label.setText(
            f"<table style='color:#2a4d69'>{rows}</table>{lang_note}"
            if rows
            else "<i>no triples</i>"
        )
        self.text_label.setText(item.text)
        self._original = item.text
        self._loading = True
        try:
            self._show_rating(rating)
        finally:
            self._loading = False
        self.taxonomy_box.setVisible(self._is_reference)
        self.item_area.setEnabled(True)
        for button in (self.save_button, self.skip_button, self.back_button):
            button.setEnabled(True)
        self.message_label.clear()

    def clear_item(self, message: str) -> None:
        """No item to show (no queue yet, or every item rated)."""
        self.index = None
        self.meta_label.clear()
        self.triples_label.clear()
        self.text_label.setText(message)
        self._original = ""
        self._loading = True
        try:
            self._show_rating(None)
            self.correction_edit.clear()
        finally:
            self._loading = False
        self.taxonomy_box.hide()
        self.item_area.setEnabled(False)
        self.text_label.setEnabled(True)
        for button in (self.save_button, self.skip_button, self.back_button):
            button.setEnabled(False)

    def show_message(self, text: str, error: bool = False) -> None:
        colour = "#c23b22" if error else "#2b7a2b"
        self.message_label.setText(f"<span style='color:{colour}'>{html.escape(text)}</span>")

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
        rows = [
            [
                g.label,
                g.items,
                g.ratings,
                g.annotators,
                _number(g.fluency_mean),
                _number(g.fluency_median, 1),
                _percent(g.adequacy_yes),
                _percent(g.majority_yes),
                _number(g.alpha_fluency, 3),
                _number(g.alpha_adequacy, 3),
            ]
            for g in [overall, *groups]
        ]
        _fill(self.groups_table, rows)
        for column in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9):
            self.groups_table.item(0, column).setFont(_bold())
        labels = {0: "Yes", 1: "No", 2: "Not sure"}
        _fill(
            self.items_table,
            [
                [
                    f"{i.item.kind[:4]}. {i.item.id}",
                    i.unit_id,
                    i.model,
                    i.lang,
                    tier_label(i.subtier),
                    i.category,
                    i.ratings,
                    _number(i.fluency_mean),
                    _number(i.fluency_median, 1),
                    labels.get(i.adequacy_majority, "–"),
                    _percent(i.adequacy_yes),
                ]
                for i in items
            ],
        )
        _fill(
            self.golden_table,
            [
                [
                    g.annotator,
                    g.items,
                    f"{g.adequacy_correct}/{g.adequacy_checked}",
                    f"{g.fluency_within}/{g.fluency_checked}",
                    _number(g.fluency_mae),
                ]
                for g in golden
            ],
        )
        alpha = overall.alpha_fluency
        self.agreement_note.setText(
            f"{plural(overall.items, 'item')}, {plural(overall.ratings, 'rating')} by "
            f"{plural(overall.annotators, 'annotator')} · overall α fluency (interval) "
            f"{_number(alpha, 3)}, "
            f"α adequacy (nominal) {_number(overall.alpha_adequacy, 3)}"
            + ("" if golden else " · no golden items rated")
        )

    def show_no_agreement(self, text: str) -> None:
        for table in (self.groups_table, self.items_table, self.golden_table):
            table.setRowCount(0)
        self.agreement_note.setText(text)

    # -- the form ----------------------------------------------------------------------
    def fluency(self) -> int | None:
        return next((v for v, b in enumerate(self.fluency_buttons) if b.isChecked()), None)

    def adequacy(self) -> int | None:
        return next((c for c, b in self.adequacy_buttons.items() if b.isChecked()), None)

    def set_fluency(self, value: int | None) -> None:
        for v, button in enumerate(self.fluency_buttons):
            button.setChecked(v == value)
        self.fluency_hint.setText(FLUENCY_ANCHORS[value] if value is not None else "")
        self.fluency_hint.setToolTip(self.fluency_hint.text())

    def set_adequacy(self, code: int | None) -> None:
        for c, button in self.adequacy_buttons.items():
            button.setChecked(c == code)
        # Greyed rather than hidden: showing it would push the correction field down,
        # under a pointer that was aiming at it.
        self.blame_box.setEnabled(code in (NO, NOT_SURE))

    def rating(self) -> Rating:
        """The form as a rating (blame only for No / Not sure; checks only once touched;
        the correction only when it differs from the original)."""
        adequacy = self.adequacy()
        blame: str | list[str] | None = None
        other = None
        if adequacy in (NO, NOT_SURE):
            parts = [p for p in BLAME_PARTS if self.blame_checks[p].isChecked()]
            if parts:
                blame = parts
            elif self.blame_checks[COMBINATION].isChecked():
                blame = COMBINATION
            if self.blame_checks["other"].isChecked():
                other = self.blame_other.text().strip() or None
        checks = (
            {name: box.isChecked() for name, box in self.check_boxes.items()}
            if self._checks_touched
            else None
        )
        taxonomy: dict[str, list[str]] = {}
        if self._is_reference:
            for (family, error), box in self.taxonomy_checks.items():
                if box.isChecked():
                    taxonomy.setdefault(family, []).append(error)
        corrected = self.correction_edit.toPlainText().strip()
        return Rating(
            fluency=self.fluency(),
            adequacy=adequacy,
            blame=blame,
            blame_other=other,
            checks=checks,
            error_taxonomy=taxonomy or None,
            corrected_text=corrected if corrected and corrected != self._original.strip() else None,
        )

    def save(self) -> None:
        if self.index is not None:
            self.save_requested.emit(self.index, self.rating())

    def _show_rating(self, rating: StoredRating | None) -> None:
        self.set_fluency(rating.fluency if rating else None)
        self.set_adequacy(rating.adequacy if rating else None)
        blame = set((rating.blame or "").split("+")) if rating else set()
        for part, box in self.blame_checks.items():
            box.setChecked(part in blame)
        self.blame_other.setText((rating.blame_other or "") if rating else "")
        checks = (rating.checks or {}) if rating else {}
        for name, box in self.check_boxes.items():
            box.setChecked(bool(checks.get(name, False)))
        self._checks_touched = bool(checks)
        taxonomy = (rating.error_taxonomy or {}) if rating else {}
        for (family, error), box in self.taxonomy_checks.items():
            box.setChecked(error in taxonomy.get(family, ()))
        corrected = rating.corrected_text if rating and rating.corrected_text else None
        self.correction_edit.setPlainText(corrected or self._original)
        self._show_diff()

    def _touch_checks(self) -> None:
        self._checks_touched = True

    def _show_diff(self) -> None:
        text = self.correction_edit.toPlainText()
        changed = bool(self._original) and text.strip() != self._original.strip()
        self.diff_view.setHtml(diff_html(self._original, text) if changed else "")
        self.promote_button.setEnabled(changed and bool(text.strip()))

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

    def focus_correction(self) -> None:
        self.correction_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.correction_edit.moveCursor(self.correction_edit.textCursor().MoveOperation.End)

    def focus_blame(self) -> None:
        if not self.blame_box.isEnabled():
            self.show_message("What is to blame applies to No or Not sure (keys n, s).", error=True)
            return
        first = next(iter(self.blame_checks.values()))
        first.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def restore_form(self, rating: StoredRating) -> None:
        """Put an undone rating back in the form (not saved) so it can be edited."""
        self._loading = True
        try:
            self._show_rating(rating)
        finally:
            self._loading = False

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

    def _emit_queue(self) -> None:
        self.queue_requested.emit(self.queue_filter())

    def fold_filter(self, folded: bool) -> None:
        self.filter_toggle.setChecked(not folded)

    def _fold_filter(self, shown: bool) -> None:
        self.filter_box.setVisible(shown)
        self.filter_toggle.setArrowType(
            Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        )

    def _step(self, step: int) -> None:
        if self.index is not None and self.total:
            self.item_requested.emit((self.index + step) % self.total)

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


def _has_undo(widget: QObject | None) -> bool:
    if isinstance(widget, QPlainTextEdit | QTextEdit):
        return widget.document().isUndoAvailable()
    if isinstance(widget, QLineEdit):
        return widget.isUndoAvailable()
    return False


def _bold() -> QFont:
    font = QFont()
    font.setBold(True)
    return font


def _table(columns: Sequence[str]) -> QTableWidget:
    table = QTableWidget(0, len(columns))
    table.setHorizontalHeaderLabels(list(columns))
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.verticalHeader().setVisible(False)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)
    return table


def _fill(table: QTableWidget, rows: Sequence[Sequence[Any]]) -> None:
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            cell = QTableWidgetItem(str(value))
            if isinstance(value, int | float) or _NUMERIC.match(str(value)):
                cell.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            table.setItem(r, c, cell)
