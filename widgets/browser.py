"""Browser panel: pick categories, watch their distributions, set cut-offs, inspect.

The panel shows what ``app`` hands it (entity columns loaded from the session, an
entity's details) and asks for the rest through signals (fetch a category, switch
source, inspect an entity). Tiering is pure maths from :mod:`core.tiers`, done here
on every line move because it is fast enough (see ``benchmarks/tiers.py``).
"""

from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.labels import plural, plural_word, tier_label
from core.tiers import (
    DEFAULT_HEAD_FRACTION,
    DEFAULT_PARETO_SHARE,
    Distribution,
    Tier,
    TierResult,
    TierSettings,
    TierSummary,
    settings_for_drag,
    tier_category,
)
from core.wikidata.categories import Category
from core.wikidata.records import CategoryTable, EntityDetails
from widgets.distribution_plots import DistributionPlots, Series
from widgets.entity_inspector import EntityInspector
from widgets.entity_table import SUB_TIER_FILTER, EntityTableModel
from widgets.plot_export import EXPORT_ERRORS, ask_export

SPLIT_BY_PARETO = "pareto"
SPLIT_BY_HEAD_TAIL = "head_tail"

# Source choices shown in the picker: (kind, label). "endpoint" asks for a URL.
SOURCE_CHOICES = (
    ("embedded", "Embedded demo snapshot (offline)"),
    ("live", "Wikidata Query Service (live)"),
    ("endpoint", "Other SPARQL endpoint…"),
    ("cache", "Session cache only (offline)"),
)
BADGE_STYLES = {
    "embedded": "background:#f2b134; color:#1f1f1f;",
    "live": "background:#2f8f4e; color:white;",
    "endpoint": "background:#2b7bb9; color:white;",
    "cache": "background:#777777; color:white;",
}


class BrowserPanel(QWidget):
    category_selected = Signal(str)  # show what the session holds for this category
    overlay_requested = Signal(str)  # load this category as an overlay
    fetch_requested = Signal(str, int)  # category name, limit
    category_save_requested = Signal(object)  # a Category the user added or edited
    source_requested = Signal(str, str)  # kind, endpoint URL ("" unless kind == "endpoint")
    entity_requested = Signal(str)  # QID to inspect
    start_unit_requested = Signal(str)  # QID
    tiers_changed = Signal(str, object)  # category, TierSummary
    category_shown = Signal(str)  # a category's entities are on screen
    compared_changed = Signal(str, list)  # category shown, the names ticked in Compare with

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.category: str | None = None
        self.incomplete: str | None = None  # why the last fetch stopped early
        self.distribution: Distribution | None = None
        self.overlays: dict[str, Distribution] = {}
        self.lines: dict[str, float | None] = {"pareto": None, "head_tail": None, "torso": None}
        self._share, self._fraction = DEFAULT_PARETO_SHARE, DEFAULT_HEAD_FRACTION
        self.result: TierResult | None = None
        self.summary: TierSummary | None = None

        # -- sources and categories --
        self.source_combo = QComboBox()
        self.source_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.source_combo.setMinimumContentsLength(12)
        for kind, label in SOURCE_CHOICES:
            self.source_combo.addItem(label, kind)
        self.endpoint_edit = QLineEdit()
        self.endpoint_edit.setPlaceholderText("https://example.org/sparql")
        self.endpoint_edit.setVisible(False)
        self.source_badge = QLabel()
        self.source_badge.setObjectName("sourceBadge")
        self.source_combo.currentIndexChanged.connect(self._on_source_picked)
        self.endpoint_edit.returnPressed.connect(self._on_source_picked)

        self.category_combo = QComboBox()
        self.category_combo.setMinimumContentsLength(10)
        self.category_combo.currentTextChanged.connect(self._on_category_picked)
        self.categories: dict[str, Category] = {}
        self.new_category_button = QPushButton("New…")
        self.new_category_button.setToolTip("Add a category of your own (class and pattern)")
        self.new_category_button.clicked.connect(lambda: self._edit_category(None))
        self.edit_category_button = QPushButton("Edit…")
        self.edit_category_button.setToolTip("Edit this category's SPARQL membership pattern")
        self.edit_category_button.clicked.connect(
            lambda: self._edit_category(self.categories.get(self.category_combo.currentText()))
        )
        self.compare_list = QListWidget()
        # Four rows (it scrolls): with six, the controls column did not fit above the table
        # in a 1366 x 768 screen's window under a title bar, and the tier summary scrolled.
        rows = self.compare_list.fontMetrics().height() + 2
        self.compare_list.setMaximumHeight(4 * rows + 2 * self.compare_list.frameWidth() + 2)
        self.compare_list.setToolTip("Tick categories to overlay them, normalised")
        self.compare_list.itemChanged.connect(self._on_compare_changed)
        self.limit_spin = QSpinBox()
        self.limit_spin.setRange(1, 1_000_000)
        self.limit_spin.setValue(20_000)
        self.limit_spin.setSingleStep(1000)
        self.limit_spin.setToolTip("Entities sampled per category (METHODS §2 default 20,000)")
        self.fetch_button = QPushButton("Fetch")
        self.fetch_button.setToolTip("Fetch members into the session; resumes where it stopped")
        self.fetch_button.clicked.connect(self._on_fetch)

        # -- cut-offs --
        self.split_combo = QComboBox()
        self.split_combo.addItem("Pareto cut-off", SPLIT_BY_PARETO)
        self.split_combo.addItem("Head–tail threshold", SPLIT_BY_HEAD_TAIL)
        self.split_combo.setToolTip("Which line splits head from long tail")
        self.share_spin = _fraction_spin(DEFAULT_PARETO_SHARE, "Pareto share of statements")
        self.fraction_spin = _fraction_spin(DEFAULT_HEAD_FRACTION, "Head fraction of entities")
        self.torso_check = QCheckBox("Torso line")
        self.torso_spin = QSpinBox()
        self.torso_spin.setRange(0, 10_000_000)
        self.torso_spin.setEnabled(False)
        self.summary_label = QLabel("No category loaded.")
        self.summary_label.setWordWrap(True)
        self.split_combo.currentIndexChanged.connect(lambda _i: self._retier())
        self.share_spin.valueChanged.connect(self._on_share_changed)
        self.fraction_spin.valueChanged.connect(self._on_fraction_changed)
        self.torso_check.toggled.connect(self._on_torso_toggled)
        self.torso_spin.valueChanged.connect(self._on_torso_value)

        # -- plots, table, inspector --
        self.plots = DistributionPlots()
        self.plots.line_moved.connect(self._on_line_dragged)
        self.export_button = QPushButton("Export plot…")
        self.export_button.clicked.connect(self._on_export)

        self.model = EntityTableModel()
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(2, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        metrics = header.fontMetrics()
        cells = self.table.fontMetrics()
        for column, sample in ((1, "Q9999999999"), (2, "99,999"), (3, "9,999"), (4, "en it es")):
            # never narrower than the title and the sort arrow ("Statements" was clipped),
            # nor than a typical cell; the Label column takes the rest
            title = str(self.model.headerData(column, Qt.Orientation.Horizontal) or "")
            width = max(cells.horizontalAdvance(sample) + 12, metrics.horizontalAdvance(title) + 28)
            self.table.setColumnWidth(column, width)
        # Labels whole (up to 240 px; the table scrolls sideways in a narrow dock rather
        # than cutting them to "Tall…"); the Tier column takes what is left.
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        header.setResizeContentsPrecision(200)
        header.setMinimumSectionSize(40)
        self.table.selectionModel().currentRowChanged.connect(self._on_row_selected)
        self.tier_filter = QComboBox()
        self.tier_filter.addItem("All tiers", None)
        for code, tier in enumerate(Tier):
            self.tier_filter.addItem(tier_label(tier.value), code)
        for sub, lang in enumerate(("en", "it", "es")):
            self.tier_filter.addItem(tier_label(f"long_tail_{lang}"), SUB_TIER_FILTER + sub)
        self.wiki_filter = QComboBox()
        self.wiki_filter.addItem("Any Wikipedia", None)
        for lang in ("en", "it", "es"):
            self.wiki_filter.addItem(f"has {lang} page", lang)
        self.search_edit = QLineEdit()
        self.search_edit.setPlaceholderText("Search label or QID")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.setMinimumWidth(100)  # its placeholder readable in a narrow dock
        for widget in (self.tier_filter, self.wiki_filter):
            widget.currentIndexChanged.connect(lambda _i: self._apply_filters())
        self.search_edit.textChanged.connect(lambda _t: self._apply_filters())
        self.count_label = QLabel()

        self.inspector = EntityInspector()
        self.inspector.start_unit_requested.connect(self.start_unit_requested)

        self._layout()
        self._on_source_picked()

    def _layout(self) -> None:
        source_row = QHBoxLayout()
        source_row.addWidget(QLabel("Source"))
        source_row.addWidget(self.source_combo, 1)
        badge_row = QHBoxLayout()
        badge_row.addWidget(self.source_badge)
        badge_row.addStretch(1)
        category_row = QHBoxLayout()
        category_row.addWidget(QLabel("Category"))
        category_row.addWidget(self.category_combo, 1)
        category_row.addWidget(self.edit_category_button)
        category_row.addWidget(self.new_category_button)
        fetch_row = QHBoxLayout()
        fetch_row.addWidget(QLabel("Sample up to"))
        fetch_row.addWidget(self.limit_spin, 1)
        fetch_row.addWidget(self.fetch_button)
        cutoffs = QFormLayout()
        cutoffs.addRow("Split by", self.split_combo)
        cutoffs.addRow("Pareto share", self.share_spin)
        cutoffs.addRow("Head fraction", self.fraction_spin)
        torso_row = QHBoxLayout()
        torso_row.addWidget(self.torso_check)
        torso_row.addWidget(self.torso_spin, 1)
        cutoffs.addRow(torso_row)
        cutoffs.addRow("Compare with", self.compare_list)

        controls = QVBoxLayout()
        controls.addLayout(source_row)
        controls.addLayout(badge_row)
        controls.addWidget(self.endpoint_edit)
        controls.addLayout(category_row)
        controls.addLayout(fetch_row)
        controls.addLayout(cutoffs)
        controls.addWidget(self.summary_label)
        controls.addStretch(1)
        # Buttons as wide as their words (the style's 80 px minimum made the control
        # column, and so the Browser and the window, wider than a 1024 px screen).
        for button in (self.edit_category_button, self.new_category_button, self.fetch_button):
            button.setMinimumWidth(button.fontMetrics().horizontalAdvance(button.text()) + 24)
        controls_box = QWidget()
        controls_box.setLayout(controls)
        # Scrollable, so the panel still fits a small screen or a short dock.
        controls_scroll = QScrollArea()
        controls_scroll.setWidget(controls_box)
        controls_scroll.setWidgetResizable(True)
        controls_scroll.setFrameShape(QFrame.Shape.NoFrame)
        controls_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # As wide as the controls need (no clipped combos or spin boxes), plus the
        # vertical scroll bar's room; extra width goes to the plots.
        controls_scroll.setMinimumWidth(
            controls_box.minimumSizeHint().width()
            + controls_scroll.verticalScrollBar().sizeHint().width()
        )

        plot_box = QWidget()
        plot_layout = QVBoxLayout(plot_box)
        plot_layout.setContentsMargins(0, 0, 0, 0)
        plot_layout.addWidget(self.plots, 1)
        export_row = QHBoxLayout()
        export_row.addStretch(1)
        export_row.addWidget(self.export_button)
        plot_layout.addLayout(export_row)

        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(controls_scroll)
        top.addWidget(plot_box)
        top.setStretchFactor(0, 0)
        top.setStretchFactor(1, 1)
        top.setCollapsible(0, False)
        self.plots.setMinimumHeight(220)
        # The plots' tab bar would otherwise set a ~540 px minimum: the tabs scroll instead,
        # so the controls keep their width next to a tall side panel (e.g. the Report).
        plot_box.setMinimumWidth(240)

        filters = QHBoxLayout()
        filters.addWidget(self.search_edit, 1)
        filters.addWidget(self.tier_filter)
        filters.addWidget(self.wiki_filter)
        table_box = QWidget()
        table_layout = QVBoxLayout(table_box)
        table_layout.setContentsMargins(0, 0, 0, 0)
        table_layout.addLayout(filters)
        table_layout.addWidget(self.table, 1)
        # Below the table, not in the filter row: that row sets the Browser's minimum width.
        table_layout.addWidget(self.count_label)
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(table_box)
        bottom.addWidget(self.inspector)
        bottom.setStretchFactor(0, 3)
        bottom.setStretchFactor(1, 2)
        bottom.setChildrenCollapsible(False)

        outer = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(top)
        outer.addWidget(bottom)
        self._outer, self._controls_box, self._split_done = outer, controls_box, False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(outer)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        # The first time the panel has a real height: the controls whole (no scrolling
        # to reach the tier summary) when that leaves the table and inspector 40 %.
        height = self._outer.height()
        if not self._split_done and height > 300:
            self._split_done = True
            top = min(self._controls_box.sizeHint().height() + 6, int(height * 0.6))
            self._outer.setSizes([top, height - top])

    # -- what app tells the panel ---------------------------------------------------------
    def set_categories(self, categories: list[Category]) -> None:
        self.categories = {c.name: c for c in categories}
        names = list(self.categories)
        current = self.category_combo.currentText()
        self.category_combo.blockSignals(True)
        self.category_combo.clear()
        self.category_combo.addItems(names)
        if current in names:
            self.category_combo.setCurrentText(current)
        self.category_combo.blockSignals(False)
        ticked = set(self.compared())
        self.compare_list.blockSignals(True)
        self.compare_list.clear()
        for name in names:
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if name in ticked else Qt.CheckState.Unchecked)
            self.compare_list.addItem(item)
        self.compare_list.blockSignals(False)
        for name in set(self.overlays) - set(names):
            self.overlays.pop(name)

    def compared(self) -> list[str]:
        """The categories ticked in Compare with."""
        items = (self.compare_list.item(i) for i in range(self.compare_list.count()))
        return [i.text() for i in items if i.checkState() == Qt.CheckState.Checked]

    def set_compared(self, names: list[str]) -> None:
        """Tick these categories in Compare with (those offered), untick the rest: as if
        the user did (overlays are asked for, or dropped)."""
        wanted = set(names)
        for i in range(self.compare_list.count()):
            item = self.compare_list.item(i)
            checked = item.text() in wanted
            state = Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked
            if item.checkState() != state:
                item.setCheckState(state)

    def set_source_badge(self, kind: str, text: str) -> None:
        """Show where data comes from: live, an endpoint URL, embedded demo, or cache."""
        self.source_badge.setText(f" {text} ")
        self.source_badge.setToolTip(text)
        self.source_badge.setStyleSheet(
            BADGE_STYLES.get(kind, "") + " border-radius:4px; padding:2px 6px;"
        )

    def show_category(self, name: str, columns: CategoryTable) -> None:
        """Show a category's entities (from the session); keeps the user's selection."""
        self.category = name
        if self.category_combo.currentText() != name:
            self.category_combo.blockSignals(True)
            self.category_combo.setCurrentText(name)
            self.category_combo.blockSignals(False)
        selected = self.selected_qid()
        self.incomplete = columns.incomplete
        self.distribution = Distribution(columns.statements) if len(columns) else None
        self.model.set_entities(columns)
        self.table.resizeColumnToContents(0)
        self.table.setColumnWidth(0, min(max(self.table.columnWidth(0), 90), 240))
        self._recompute_lines()
        self._update_plots()
        self._retier()
        if selected is not None:
            self.select_qid(selected)
        self.category_shown.emit(name)

    def show_overlay(self, name: str, columns: CategoryTable | None) -> None:
        if columns is None or not len(columns):
            self.overlays.pop(name, None)
        else:
            self.overlays[name] = Distribution(columns.statements)
        self._update_plots()

    def show_entity(self, details: EntityDetails | None) -> None:
        self.inspector.show_entity(details)

    def tier_settings(self) -> TierSettings:
        """The user's current choice, as saved with the category. Share and fraction are
        held exactly (the spin boxes show them rounded): a dragged line's share has as
        many decimals as it needs to map back to the same line (core.tiers)."""
        return TierSettings(
            split_by=self.split_combo.currentData(),
            share=self._share,
            fraction=self._fraction,
            torso_line=self.lines["torso"] if self.torso_check.isChecked() else None,
        )

    def apply_tier_settings(self, settings: TierSettings) -> None:
        """Restore saved settings (call before :meth:`show_category`); emits nothing."""
        widgets = (
            self.split_combo,
            self.share_spin,
            self.fraction_spin,
            self.torso_check,
            self.torso_spin,
        )
        for widget in widgets:
            widget.blockSignals(True)
        try:
            self.split_combo.setCurrentIndex(max(0, self.split_combo.findData(settings.split_by)))
            self._share, self._fraction = settings.share, settings.fraction
            self.share_spin.setValue(settings.share)
            self.fraction_spin.setValue(settings.fraction)
            has_torso = settings.torso_line is not None
            self.torso_check.setChecked(has_torso)
            self.torso_spin.setEnabled(has_torso)
            if has_torso:
                self.torso_spin.setValue(round(settings.torso_line))
            self.lines["torso"] = settings.torso_line
        finally:
            for widget in widgets:
                widget.blockSignals(False)

    # -- selection ---------------------------------------------------------------------------
    def selected_qid(self) -> str | None:
        index = self.table.currentIndex()
        return self.model.data(index, Qt.ItemDataRole.UserRole) if index.isValid() else None

    def select_qid(self, qid: str) -> bool:
        row = self.model.row_of(qid)
        if row is None:
            return False
        self.table.selectRow(row)
        return True

    # -- tiering -----------------------------------------------------------------------------
    def head_line(self) -> float | None:
        key = self.split_combo.currentData()
        return self.lines.get(key)

    def _recompute_lines(self) -> None:
        if self.distribution is None:
            self.lines.update(pareto=None, head_tail=None)
            return
        self.lines["pareto"] = float(self.distribution.pareto_cutoff(self._share))
        self.lines["head_tail"] = float(self.distribution.head_tail_threshold(self._fraction))

    def _retier(self) -> None:
        dist = self.distribution
        if dist is None or self.head_line() is None:
            self.summary = None
            self.result = None
            self.summary_label.setText(
                "No entities in this category yet: press <b>Fetch</b> to sample it from the "
                "selected source."
            )
            self.model.set_tiers(np.full(len(self.model.columns), -1, np.int8))
            self._update_count()
            return
        # The one rule the CLI and the saved tiers use too (core.tiers.tier_category).
        self.result = tier_category(dist, self.tier_settings())
        self.lines.update(
            pareto=float(self.result.pareto_line), head_tail=float(self.result.head_tail_line)
        )
        self.model.set_tiers(self.result.codes)
        self.summary = self.result.summary
        self.plots.set_lines(self.lines["pareto"], self.lines["head_tail"], self.result.torso_line)
        text = _summary_text(self.summary, self.lines)
        if self.incomplete:
            text += f"<br><b>Incomplete:</b> {html.escape(self.incomplete)}"
        self.summary_label.setText(text)
        self._update_count()
        if self.category is not None:
            self.tiers_changed.emit(self.category, self.summary)

    def _on_share_changed(self, value: float) -> None:
        self._share = round(value, 6)
        self._recompute_lines()
        self._retier()

    def _on_fraction_changed(self, value: float) -> None:
        self._fraction = round(value, 6)
        self._recompute_lines()
        self._retier()

    def _on_torso_toggled(self, on: bool) -> None:
        self.torso_spin.setEnabled(on)
        if on and self.lines["torso"] is None:
            head = self.head_line() or 1.0
            self.torso_spin.setValue(max(1, int(head // 2)))
        self.lines["torso"] = float(self.torso_spin.value()) if on else None
        self._retier()

    def _on_torso_value(self, value: int) -> None:
        if self.torso_check.isChecked():
            self.lines["torso"] = float(value)
            self._retier()

    def _on_line_dragged(self, kind: str, statements: float) -> None:
        """A dragged line becomes the settings that give exactly the line's tiers again
        (snapped to the statement count it stands for); the spin boxes show them."""
        dist = self.distribution
        if dist is None:
            return
        settings = settings_for_drag(dist, self.tier_settings(), kind, statements)
        self._share, self._fraction = settings.share, settings.fraction
        if kind == "pareto":
            self._set_quietly(self.share_spin, settings.share)
        elif kind == "head_tail":
            self._set_quietly(self.fraction_spin, settings.fraction)
        elif kind == "torso" and settings.torso_line is not None:
            self.torso_spin.blockSignals(True)
            self.torso_spin.setValue(round(settings.torso_line))
            self.torso_spin.blockSignals(False)
            self.lines["torso"] = settings.torso_line
            if not self.torso_check.isChecked():
                self.torso_check.blockSignals(True)
                self.torso_check.setChecked(True)
                self.torso_check.blockSignals(False)
                self.torso_spin.setEnabled(True)
        self._recompute_lines()
        self._retier()

    @staticmethod
    def _set_quietly(spin: QDoubleSpinBox, value: float) -> None:
        spin.blockSignals(True)
        spin.setValue(min(1.0, max(0.01, value)))
        spin.blockSignals(False)

    # -- the rest ------------------------------------------------------------------------------
    def _update_plots(self) -> None:
        series = []
        if self.distribution is not None and self.category is not None:
            series.append(Series(self.category, self.distribution))
        series.extend(
            Series(name, dist) for name, dist in self.overlays.items() if name != self.category
        )
        self.plots.set_series(series)

    def _apply_filters(self) -> None:
        self.model.set_filters(
            tier=self.tier_filter.currentData(),
            wiki=self.wiki_filter.currentData(),
            text=self.search_edit.text(),
        )
        self._update_count()

    def _update_count(self) -> None:
        self.count_label.setText(f"{self.model.rowCount():,} of {len(self.model.columns):,}")

    def _on_row_selected(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.entity_requested.emit(self.model.data(current, Qt.ItemDataRole.UserRole))

    def _on_category_picked(self, name: str) -> None:
        if name:
            self.category_selected.emit(name)

    def _on_fetch(self) -> None:
        name = self.category_combo.currentText()
        if name:
            self.fetch_requested.emit(name, self.limit_spin.value())

    def _on_compare_changed(self, item: QListWidgetItem) -> None:
        if item.checkState() == Qt.CheckState.Checked:
            self.overlay_requested.emit(item.text())
        else:
            self.show_overlay(item.text(), None)
        if self.category is not None:
            self.compared_changed.emit(self.category, self.compared())

    def _on_source_picked(self, *_args: object) -> None:
        kind = self.source_combo.currentData()
        self.endpoint_edit.setVisible(kind == "endpoint")
        url = self.endpoint_edit.text().strip() if kind == "endpoint" else ""
        if kind == "endpoint" and not url:
            self.endpoint_edit.setFocus()
            return
        self.source_requested.emit(kind, url)

    def _edit_category(self, category: Category | None) -> None:
        from widgets.category_dialog import CategoryDialog

        dialog = CategoryDialog(category, self)
        if dialog.exec() != CategoryDialog.DialogCode.Accepted:
            return
        try:
            edited = Category(*dialog.values())
        except ValueError as error:
            QMessageBox.warning(self, "Category not saved", str(error))
            return
        self.category_save_requested.emit(edited)

    def _on_export(self) -> None:
        which = self.plots.tabs.currentIndex()
        name = self.plots.tabs.tabText(which).lower().replace("–", "-").replace(" ", "-")
        chosen = ask_export(self, name)
        if chosen is not None:
            try:
                self.plots.export(chosen[0], which, chosen[1])
            except EXPORT_ERRORS as error:
                QMessageBox.warning(self, "Plot not exported", str(error))


def _fraction_spin(value: float, tip: str) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(0.01, 1.0)
    spin.setDecimals(4)
    spin.setSingleStep(0.05)
    spin.setValue(value)
    spin.setToolTip(tip)
    return spin


def _summary_text(summary: TierSummary, lines: dict[str, float | None]) -> str:
    parts = [
        f"<b>{summary.n:,}</b> {plural_word(summary.n, 'entity')}, "
        f"{plural(summary.total_statements, 'statement')}<br>"
        f"Pareto cut-off: {lines['pareto']:,.0f} · head–tail threshold: "
        f"{lines['head_tail']:,.0f}"
    ]
    for share in summary.tiers:
        if share.size or share.tier != Tier.TORSO:
            parts.append(
                f"{share.tier.value.replace('_', ' ')}: {plural(share.size, 'entity')} "
                f"({share.entity_share:.0%}), {share.statement_share:.0%} of statements"
            )
    return "<br>".join(parts)
