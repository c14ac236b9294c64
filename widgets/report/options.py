"""The Report panel's options box: what the report compares and how (dimensions, metrics,
runs, the Mann–Whitney protocol, the study table's references, the correction, the
humans' subset), rendered from a :class:`core.report.panel_state.ReportOptionsState`.

Every control is bound to a field of the state (``widgets.binding.bind``; the check
lists by :class:`CheckList`), so the state is what Build report reads and what the
window restores; the box only lays the controls out (three columns when wide).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFrame,
    QGridLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.report import metric_label
from core.report.panel_state import ReportOptionsState
from core.state import State
from widgets.binding import Binding, bind

# (key, short label for the list, what it compares: the item's tooltip). Short labels keep
# the option lists from scrolling sideways in a ~450 px dock.
DIMENSION_CHOICES = (
    ("tier", "Tier", "Head vs long tail"),
    ("subtier", "Sub-tier", "Head vs long tail · en only / · it only / · es only"),
    ("lang", "Language", "One language against another"),
    ("model", "Model", "One model against another"),
    ("quality", "References", "Gold vs silver references"),
    ("category", "Category", "One category against another"),
    ("dataset", "Dataset", "TailNLG vs WebNLG (and WDV, Wikidata)"),
    ("model_tail", "Model likelihood", "model_head vs model_tail (entity likelihood)"),
)
# The study table's references: (label, study_quality, study_references).
STUDY_REFS = (
    ("gold", "gold", "quality"),
    ("silver", "silver", "quality"),
    ("gold + silver pooled (TailNLG Table 2)", "gold", "pooled"),
    ("gold, silver split (Tables 7-10)", "gold", "split"),
)
CORRECTION_CHOICES = (("holm", "Holm"), ("bh", "Benjamini–Hochberg"), ("none", "none"))
USER = Qt.ItemDataRole.UserRole
# (key, text, tooltip) of one item of a check list.
Item = tuple[Any, str, str]


def spin_box(low: int, high: int, value: int, tip: str) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    spin.setValue(value)
    spin.setToolTip(tip)
    spin.setGroupSeparatorShown(True)
    return spin


def titled(title: str, widget: QWidget) -> QWidget:
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(2)
    label = QLabel(f"<b>{escape(title)}</b>")
    layout.addWidget(label)
    layout.addWidget(widget)
    layout.addStretch(1)
    return box


class CheckList(QListWidget):
    """Checkable items whose ticks are a state field holding a tuple of item keys: the
    keys ticked or, with ``unticked=True``, those not ticked (so an item offered later
    starts ticked). Ticking writes the field; a change of the field ticks the items."""

    def __init__(self, state: State, field: str, *, unticked: bool = False) -> None:
        super().__init__()
        self.state, self.field, self.unticked = state, field, unticked
        self._rendering = False
        self.itemChanged.connect(self._on_item_changed)
        state.subscribe(lambda *_change: self.render(), [field])

    def set_items(self, items: Sequence[Item]) -> None:
        """Offer ``items``; their ticks are the state's."""
        self._rendering = True
        try:
            self.clear()
            for key, text, tip in items:
                item = QListWidgetItem(text)
                item.setToolTip(tip)
                item.setData(USER, key)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Unchecked)
                self.addItem(item)
        finally:
            self._rendering = False
        self.render()

    def keys(self, state: Qt.CheckState | None = None) -> list[Any]:
        """The items' keys (those in ``state`` only, when given), in the list's order."""
        items = (self.item(i) for i in range(self.count()))
        return [i.data(USER) for i in items if state is None or i.checkState() == state]

    def render(self) -> None:
        held = set(getattr(self.state, self.field))
        self._rendering = True
        try:
            for i in range(self.count()):
                item = self.item(i)
                on = (item.data(USER) in held) != self.unticked
                item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
        finally:
            self._rendering = False

    def _on_item_changed(self, _item: QListWidgetItem) -> None:
        if self._rendering:
            return
        wanted = Qt.CheckState.Unchecked if self.unticked else Qt.CheckState.Checked
        shown = set(self.keys())
        # Keys held for items not offered now stay held (a metric of another build).
        others = [k for k in getattr(self.state, self.field) if k not in shown]
        setattr(self.state, self.field, tuple(others + self.keys(wanted)))


class ReportOptions(QFrame):
    """The options, bound to ``state``; see the module's docstring."""

    def __init__(self, state: ReportOptionsState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self._lists()
        self._protocol()
        self.bindings: dict[str, Binding] = {}
        self._bind()
        self.dimension_box = titled("Compare by", self.dimension_list)
        self.metric_box = titled("Metrics", self.metric_list)
        self.run_box = titled("Runs", self.run_list)
        self.settings_box = titled("Mann–Whitney protocol (METHODS §8)", self._settings())
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self._wide: bool | None = None
        self.arrange(wide=False)
        state.subscribe(lambda *_change: self._show_metrics(), ["metrics"])
        state.subscribe(lambda *_change: self._show_runs(), ["runs_offered"])

    # -- the controls -------------------------------------------------------------------------
    def _lists(self) -> None:
        self.dimension_list = CheckList(self.state, "by")
        self.dimension_list.set_items(DIMENSION_CHOICES)
        self.metric_list = CheckList(self.state, "unticked_metrics", unticked=True)
        self.run_list = CheckList(self.state, "runs")
        self.run_list.setToolTip(
            "Tick runs to compare only those. None ticked: for each model its latest output "
            "per unit, language and candidate. Overlapping runs of one model are never "
            "pooled: each item counts once, from the latest run."
        )
        for widget in (self.dimension_list, self.metric_list, self.run_list):
            widget.setMaximumHeight(128)
            widget.setMinimumHeight(48)

    def _protocol(self) -> None:
        self.repetitions_spin = spin_box(
            1, 1000, 1, "Mann–Whitney repetitions, p-values averaged (METHODS §8)"
        )
        self.sample_spin = spin_box(
            2, 1_000_000, 2, "Items sampled per group in each repetition (all when fewer)"
        )
        self.sample_spin.setSingleStep(100)
        self.alpha_spin = QDoubleSpinBox()
        self.alpha_spin.setDecimals(3)
        self.alpha_spin.setRange(0.001, 0.5)
        self.alpha_spin.setSingleStep(0.01)
        self.alpha_spin.setToolTip("A difference is marked when the averaged p is below this")
        self.seed_spin = spin_box(0, 2**31 - 1, 0, "Seed of the random samples")
        self.quality_combo = QComboBox()
        for label, quality, references in STUDY_REFS:
            self.quality_combo.addItem(label, f"{quality}:{references}")
        self.quality_combo.setToolTip(
            "References of the study table, the headlines and the plots. Pooled: the study "
            "table takes gold and silver references together (TailNLG's Table 2); split: a "
            "row per quality (its Tables 7-10); headlines and plots then use gold. "
            "Comparisons never mix gold and silver."
        )
        self.statistic_combo = QComboBox()
        self.statistic_combo.addItems(["mean", "median"])
        self.statistic_combo.setToolTip("Statistic of the study table's cells")
        self.correction_combo = QComboBox()
        for key, title in CORRECTION_CHOICES:
            self.correction_combo.addItem(title, key)
        self.correction_combo.setToolTip(
            "Multiple-testing correction across every test of the report (Holm: family-wise "
            "error; Benjamini–Hochberg: false discovery rate); the marks follow it"
        )
        self.bootstrap_spin = spin_box(
            0,
            100_000,
            0,
            "Bootstrap resamples for the 95 % intervals of the medians "
            "and their difference (seeded by Seed; 0: none)",
        )
        self.bootstrap_spin.setSingleStep(500)
        # The metrics-against-humans table over a subset of texts (correlate --where).
        self.where_edit = QLineEdit()
        self.where_edit.setPlaceholderText("all texts; e.g. esa.undetected>=1; tier=long_tail")
        self.where_edit.setToolTip(
            "Metrics vs humans over the texts where every condition holds: FIELD OP VALUE, "
            "separated by ';' (a score or its detail, e.g. esa.undetected>=1, bleu:gold<30; "
            "or tier, lang, system). Empty: every text."
        )

    def _bind(self) -> None:
        fields: dict[str, QWidget] = {
            "repetitions": self.repetitions_spin,
            "sample_size": self.sample_spin,
            "alpha": self.alpha_spin,
            "seed": self.seed_spin,
            "study_refs": self.quality_combo,
            "statistic": self.statistic_combo,
            "correction": self.correction_combo,
            "bootstrap": self.bootstrap_spin,
            "where": self.where_edit,
        }
        convert: dict[str, Callable[[Any], Any]] = {"alpha": lambda v: round(float(v), 6)}
        for name, widget in fields.items():
            self.bindings[name] = bind(
                self.state, name, widget, from_widget=convert.get(name, lambda v: v)
            )

    def commit(self) -> None:
        """Write what is typed in the conditions' field into the state: a line edit
        writes on leaving it, and Build can be pressed by key without leaving it."""
        self.state.where = self.bindings["where"].widget_value()

    def _settings(self) -> QWidget:
        # Label–field pairs in columns: three short rows, so the options stay low.
        settings = QGridLayout()
        settings.setContentsMargins(0, 0, 0, 0)
        settings.setHorizontalSpacing(6)
        settings.setVerticalSpacing(2)
        fields = (
            ("Repetitions", self.repetitions_spin),
            ("Sample size", self.sample_spin),
            ("Alpha", self.alpha_spin),
            ("Seed", self.seed_spin),
            ("Study refs", self.quality_combo),
            ("Cells", self.statistic_combo),
            ("Correction", self.correction_combo),
            ("Bootstrap", self.bootstrap_spin),
        )
        for i, (label, field) in enumerate(fields):
            row, column = divmod(i, 3)  # three pairs a row: the options stay low
            settings.addWidget(QLabel(label), row, 2 * column)
            settings.addWidget(field, row, 2 * column + 1)
            field.setMinimumWidth(56)
        # "mean" and "median" need more than the others' least width (Fusion's arrow).
        self.statistic_combo.setMinimumWidth(self.statistic_combo.minimumSizeHint().width())
        for column in (1, 3, 5):
            settings.setColumnStretch(column, 1)
        settings.addWidget(QLabel("Humans where"), 3, 0)
        settings.addWidget(self.where_edit, 3, 1, 1, 5)
        widget = QWidget()
        widget.setLayout(settings)
        return widget

    # -- what the session offers -------------------------------------------------------------
    def _show_metrics(self) -> None:
        self.metric_list.set_items(
            [(name, f"{metric_label(name)} ({count:,})", "") for name, count in self.state.metrics]
        )

    def _show_runs(self) -> None:
        items = []
        for run_id, model, status in self.state.runs_offered:
            # Short, so the list does not scroll sideways in a narrow dock; all in the tip.
            shown = f"{run_id} · {model}" + ("" if status == "finished" else f" ({status})")
            items.append((run_id, shown, f"run {run_id} · {model} ({status})"))
        self.run_list.set_items(items)

    # -- layout --------------------------------------------------------------------------------
    def arrange(self, wide: bool) -> None:
        """Three columns when wide; the two lists side by side over the settings when not."""
        if wide == self._wide:
            return
        self._wide = wide
        for box in (self.dimension_box, self.metric_box, self.run_box, self.settings_box):
            self.grid.removeWidget(box)
        self.grid.addWidget(self.dimension_box, 0, 0)
        self.grid.addWidget(self.metric_box, 0, 1)
        self.grid.addWidget(self.run_box, 0, 2)
        if wide:
            self.grid.addWidget(self.settings_box, 0, 3)
        else:
            self.grid.addWidget(self.settings_box, 1, 0, 1, 3)
