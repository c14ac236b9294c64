"""Browser panel: pick categories, watch their distributions, set cut-offs, inspect.

What the panel decides lives in a Qt-free :class:`core.wikidata.browser_state.BrowserState`
(the category shown, its tier settings and the tiers they give, the Compare-with ticks)
and its shared :class:`core.wikidata.browser_state.Selection` (source, category, entity): the
panel renders the state and writes the user's edits into it; ``app.browser`` loads
categories and entities into it and saves it. It asks for the rest through signals
(fetch a category, switch source). The state re-tiers on every edit because that is
fast enough (see ``benchmarks/tiers.py``).
"""

from __future__ import annotations

import html
from collections.abc import Mapping

import numpy as np
from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent, QShowEvent
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
from core.tiers.cutoffs import (
    DEFAULT_HEAD_FRACTION,
    DEFAULT_PARETO_SHARE,
    Distribution,
    Tier,
    TierResult,
    TierSettings,
    TierSummary,
)
from core.vocab import LANGUAGES
from core.wikidata.browser_state import BrowserState
from core.wikidata.categories import Category
from core.wikidata.records import CategoryTable, EntityDetails
from widgets.distribution_plots import DistributionPlots, Series
from widgets.entity_inspector import EntityInspector
from widgets.entity_table import COL_TIER, SUB_TIER_FILTER, EntityTableModel
from widgets.plot_export import EXPORT_ERRORS, announce_written, ask_export

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
    "cache": "background:#666666; color:white;",
}


class BrowserPanel(QWidget):
    # The category picked, the entity picked, the Compare-with ticks and every tier edit
    # go into ``state`` (and its ``selection``), which app.browser follows.
    fetch_requested = Signal(str, int)  # category name, limit
    category_save_requested = Signal(object)  # a Category the user added or edited
    source_requested = Signal(str, str)  # kind, endpoint URL ("" unless kind == "endpoint")
    start_unit_requested = Signal(str)  # QID
    demo_requested = Signal()  # "Start with the demo": demo data, a category, fetched
    category_shown = Signal(str)  # a category's entities are on screen (state.category)
    compared_changed = Signal(str, list)  # category shown, the names ticked in Compare with

    def __init__(self, parent: QWidget | None = None, state: BrowserState | None = None) -> None:
        super().__init__(parent)
        self.state = state if state is not None else BrowserState()
        self._movable: dict[str, bool] = {}  # the lines the user can drag, as drawn

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
        # Ticked categories the session holds no members of: said here, with a link that
        # fetches them (their curves are drawn once members arrive).
        self.compare_note = QLabel()
        self.compare_note.setWordWrap(True)
        self.compare_note.setVisible(False)
        self.compare_note.linkActivated.connect(self._on_compare_link)
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
        # An empty session shows one way in rather than empty axes.
        self.demo_button = QPushButton("Start with the demo")
        self.demo_button.setToolTip(
            "Use the demo data (offline) and fetch this category from it, then its other "
            "categories, so every panel has something to show"
        )
        self.demo_button.setVisible(False)
        self.demo_button.clicked.connect(self.demo_requested)
        state = self.state
        self.split_combo.currentIndexChanged.connect(
            lambda _i: state.set_split_by(self.split_combo.currentData())
        )
        self.share_spin.valueChanged.connect(state.set_share)
        self.fraction_spin.valueChanged.connect(state.set_fraction)
        self.torso_check.toggled.connect(lambda on: state.set_torso(on))
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
        # One line a row: a label too long for its column is cut at its end ("Fenareto
        # Internati…"), not wrapped to a first word and an ellipsis ("Fenareto …").
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        metrics = header.fontMetrics()
        cells = self.table.fontMetrics()
        for column, sample in ((1, "Q9999999999"), (2, "99,999"), (3, "9,999"), (4, "en it es")):
            # never narrower than the title and the sort arrow ("Statements" was clipped),
            # nor than a typical cell; the Label column takes the rest
            title = str(self.model.headerData(column, Qt.Orientation.Horizontal) or "")
            width = max(cells.horizontalAdvance(sample) + 12, metrics.horizontalAdvance(title) + 28)
            self.table.setColumnWidth(column, width)
        # Labels whole up to 240 px where the table has the room; where it has not (a
        # 1366 px window), the Label column gives way so the Tier column, the one this
        # panel is about, is whole on screen (it showed "Tie" and "hea" at the right
        # edge), down to 90 px; narrower still, the table scrolls sideways.
        # The Tier column takes what is left.
        tier_words = [tier_label(t.value) for t in Tier]
        tier_words += [tier_label(f"long_tail_{lang}") for lang in LANGUAGES]
        self._tier_width = max(
            max(cells.horizontalAdvance(words) for words in tier_words) + 16,
            metrics.horizontalAdvance(
                str(self.model.headerData(COL_TIER, Qt.Orientation.Horizontal))
            )
            + 28,
        )
        self._label_wanted = 90  # the Label column's content width, at most 240 px
        self.table.viewport().installEventFilter(self)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        header.setResizeContentsPrecision(200)
        header.setMinimumSectionSize(40)
        self.table.selectionModel().currentRowChanged.connect(self._on_row_selected)
        self.tier_filter = QComboBox()
        self.tier_filter.addItem("Any tier", None)
        for code, tier in enumerate(Tier):
            self.tier_filter.addItem(tier_label(tier.value), code)
        for sub, lang in enumerate(LANGUAGES):
            self.tier_filter.addItem(tier_label(f"long_tail_{lang}"), SUB_TIER_FILTER + sub)
        self.wiki_filter = QComboBox()
        self.wiki_filter.addItem("Any Wikipedia", None)
        for lang in LANGUAGES:
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
        state.watch(self._render)
        state.selection.subscribe(lambda *_change: self._render_selection(), ("entity",))
        self._render_settings()
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
        cutoffs.addRow(self.compare_note)

        # What the category holds (the way in on an empty session, then the tier summary)
        # right under Fetch, above the cut-offs and Compare with: below them, both were
        # under the fold of this column in a 1366 x 768 window, and a first start showed
        # neither the demo button nor the summary without scrolling.
        controls = QVBoxLayout()
        controls.addLayout(source_row)
        controls.addLayout(badge_row)
        controls.addWidget(self.endpoint_edit)
        controls.addLayout(category_row)
        controls.addLayout(fetch_row)
        controls.addWidget(self.demo_button, 0, Qt.AlignmentFlag.AlignLeft)
        controls.addWidget(self.summary_label)
        controls.addLayout(cutoffs)
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
        self._controls_scroll = controls_scroll
        # A narrower column wraps the summary onto more lines: the split follows.
        controls_scroll.viewport().installEventFilter(self)
        # A drag of the split is the user's: the panel stops sizing it itself.
        outer.splitterMoved.connect(lambda _pos, _index: setattr(self, "_split_done", True))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(outer)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        # At every size until the user drags the split (or a saved one is restored): the
        # controls whole (no scrolling) when that leaves the table and inspector 40 %.
        # Done only once, at the panel's first real size, the split was scaled with the
        # window afterwards: a first start that shrank the window to its screen kept half
        # of it for the controls, and the tier summary scrolled.
        self._fit_split()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        # Sizes set while hidden are lost when the splitter is first laid out: once shown.
        QTimer.singleShot(0, self, self._fit_split)

    def _fit_split(self) -> None:
        height = self._outer.height()
        # widgets.main_window.RESTORED_PROPERTY: the user's sizes, from the last quit.
        if self._outer.property("taillens_restored"):
            self._split_done = True
        if not self._split_done and height > 300 and self.isVisible():
            top = min(self._controls_height() + 6, int(height * 0.6))
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
        self.compare_list.blockSignals(True)
        self.compare_list.clear()
        for name in names:
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            self.compare_list.addItem(item)
        self.compare_list.blockSignals(False)
        state = self.state
        with state.batch():
            state.compared = tuple(n for n in state.compared if n in self.categories)
            state.overlays = {k: v for k, v in state.overlays.items() if k in self.categories}
        self._render_compared()

    def compared(self) -> list[str]:
        """The categories ticked in Compare with."""
        return list(self.state.compared)

    def set_compared(self, names: list[str]) -> None:
        """Tick these categories in Compare with (those offered), untick the rest: as if
        the user did (the state's ticks change; overlays are asked for, or dropped)."""
        wanted = set(names)
        self.state.compared = tuple(n for n in self.categories if n in wanted)

    def set_source_badge(self, kind: str, text: str) -> None:
        """Show where data comes from: live, an endpoint URL, embedded demo, or cache."""
        self.source_badge.setText(f" {text} ")
        self.source_badge.setToolTip(text)
        self.source_badge.setStyleSheet(
            BADGE_STYLES.get(kind, "") + " border-radius:4px; padding:2px 6px;"
        )

    def show_category(
        self, name: str, columns: CategoryTable, settings: TierSettings | None = None
    ) -> None:
        """Show a category's entities (from the session) with ``settings`` (the current
        ones when None): loads them into the state, which the panel renders."""
        with self.state.selection.batch(), self.state.batch():
            self.state.selection.category = name
            self.state.load(name, columns, settings)

    def show_overlay(self, name: str, columns: CategoryTable | None) -> None:
        """A Compare-with category as the session holds it (None or empty: no members)."""
        has = columns is not None and len(columns) > 0
        self.state.set_overlay(name, Distribution(columns.statements) if has else None)

    def show_entity(self, details: EntityDetails | None) -> None:
        self.inspector.show_entity(details)

    def tier_settings(self) -> TierSettings:
        """The user's current choice, as saved with the category (``state.settings``):
        share and fraction held exactly (the spin boxes show them rounded)."""
        return self.state.settings

    def apply_tier_settings(self, settings: TierSettings) -> None:
        """Use these settings (saved ones being restored)."""
        self.state.settings = settings

    # -- what the state holds (read-only views for callers and tests) --------------------
    @property
    def category(self) -> str | None:
        return self.state.category

    @property
    def distribution(self) -> Distribution | None:
        return self.state.distribution

    @property
    def incomplete(self) -> str | None:
        table = self.state.table
        return table.incomplete if table is not None else None

    @property
    def overlays(self) -> dict[str, Distribution]:
        return {k: v for k, v in self.state.overlays.items() if v is not None}

    @property
    def lines(self) -> dict[str, float | None]:
        return self.state.lines

    @property
    def result(self) -> TierResult | None:
        tiers = self.state.tiers
        return tiers.result if tiers is not None else None

    @property
    def summary(self) -> TierSummary | None:
        tiers = self.state.tiers
        return tiers.summary if tiers is not None else None

    # -- selection ---------------------------------------------------------------------------
    def selected_qid(self) -> str | None:
        return self.state.selection.entity

    def select_qid(self, qid: str) -> bool:
        """Pick ``qid`` (as a click on its row would) if it is a member shown."""
        if self.model.row_of(qid) is None:
            return False
        self.state.selection.entity = qid
        return True

    def head_line(self) -> float | None:
        return self.lines.get(self.state.settings.split_by)

    # -- rendering the state -----------------------------------------------------------------
    def _render(self, changes: Mapping[str, tuple[object, object]]) -> None:
        if changes.keys() & {"category", "table"}:
            self._render_table()
        if "settings" in changes:
            self._render_settings()
        if changes.keys() & {"category", "table", "compared", "overlays"}:
            self._render_compared()
        if changes.keys() & {"tiers", "table", "settings"}:
            self._render_tiers()
        category = self.state.category
        if category is not None:  # said once the panel shows it (window_state follows)
            if changes.keys() & {"category", "table"}:
                self.category_shown.emit(category)
            if "compared" in changes:
                self.compared_changed.emit(category, list(self.state.compared))

    def _render_table(self) -> None:
        state = self.state
        name = state.category
        if name is not None and self.category_combo.currentText() != name:
            self.category_combo.blockSignals(True)
            self.category_combo.setCurrentText(name)
            self.category_combo.blockSignals(False)
        table = state.table if state.table is not None else CategoryTable.empty(name or "")
        self.model.set_entities(table)
        self.table.resizeColumnToContents(0)
        self._label_wanted = min(max(self.table.columnWidth(0), 90), 240)
        self._fit_label_column()
        self._render_selection()

    def _fit_label_column(self) -> None:
        """The Label column as wide as its labels (up to 240 px) where that leaves the
        other columns and the Tier column's words on screen, else narrower (not under
        90 px)."""
        others = sum(self.table.columnWidth(c) for c in range(1, COL_TIER))
        room = self.table.viewport().width() - others - self._tier_width
        width = max(90, min(self._label_wanted, room))
        if self.table.columnWidth(0) != width:
            self.table.setColumnWidth(0, width)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            if watched is self.table.viewport():
                QTimer.singleShot(0, self, self._fit_label_column)
            elif watched is self._controls_scroll.viewport():
                self._refit_split()
        return super().eventFilter(watched, event)

    def _render_settings(self) -> None:
        settings = self.state.settings
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
            self.share_spin.setValue(min(1.0, max(0.01, settings.share)))
            self.fraction_spin.setValue(min(1.0, max(0.01, settings.fraction)))
            has_torso = settings.torso_line is not None
            self.torso_check.setChecked(has_torso)
            self.torso_spin.setEnabled(has_torso)
            if settings.torso_line is not None:
                self.torso_spin.setValue(round(settings.torso_line))
        finally:
            for widget in widgets:
                widget.blockSignals(False)

    def _render_tiers(self) -> None:
        tiers = self.state.tiers
        movable = {kind: self.state.is_movable(kind) for kind in ("pareto", "head_tail", "torso")}
        if movable != self._movable:  # restyled when the rule changes, not on every drag
            self._movable = movable
            self.plots.set_active(movable)
        self.demo_button.setVisible(tiers is None)
        if tiers is None:
            self.summary_label.setText(
                "No entities in this category yet: press <b>Fetch</b> to sample it from the "
                "selected source, or start with the demo data."
            )
            self.model.set_tiers(np.full(len(self.model.columns), -1, np.int8))
            self._update_count()
            self._refit_split()
            return
        lines = self.lines
        self.model.set_tiers(tiers.codes, tiers.sub_tiers)  # the state's, not computed again
        self.plots.set_lines(lines["pareto"], lines["head_tail"], lines["torso"])
        text = _summary_text(tiers.summary, lines, tiers.settings.split_by)
        if self.incomplete:
            text += f"<br><b>Incomplete:</b> {html.escape(self.incomplete)}"
        self.summary_label.setText(text)
        self._update_count()
        self._refit_split()

    def _controls_height(self) -> int:
        """The height the controls need at the width they have: their wrapped summary
        takes more lines in a narrow column than their size hint allows for."""
        box = self._controls_box
        box.layout().activate()
        needed = box.sizeHint().height()
        width = self._controls_scroll.viewport().width()
        if box.hasHeightForWidth() and width > 0:
            needed = max(needed, box.heightForWidth(width))
        return needed

    def _refit_split(self) -> None:
        """The summary's lines and the demo button change the controls' height: the
        split follows (once laid out) until the user has dragged it."""
        if not self._split_done:
            QTimer.singleShot(0, self, self._fit_split)

    def _render_compared(self) -> None:
        state = self.state
        ticked = set(state.compared)
        self.compare_list.blockSignals(True)
        for i in range(self.compare_list.count()):
            item = self.compare_list.item(i)
            on = item.text() in ticked
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
        self.compare_list.blockSignals(False)
        missing = [n for n in state.unfetched if n != state.category]
        self.compare_note.setVisible(bool(missing))
        if missing:
            links = ", ".join(
                f'{html.escape(n)} (<a href="fetch:{html.escape(n)}">fetch it</a>)' for n in missing
            )
            self.compare_note.setText(
                f"Not in this session yet: {links}. Its curve is drawn once it is fetched."
            )
        self._update_plots()

    def _render_selection(self) -> None:
        qid = self.state.selection.entity
        row = self.model.row_of(qid) if qid is not None else None
        # No loop: the row picked here writes the same entity back, which is no change.
        if row is None:
            self.table.clearSelection()
            self.table.setCurrentIndex(QModelIndex())
        else:
            self.table.selectRow(row)

    # -- the user's edits ----------------------------------------------------------------------
    def _on_torso_value(self, value: int) -> None:
        if self.torso_check.isChecked():
            self.state.set_torso(True, float(value))

    def _on_line_dragged(self, kind: str, statements: float) -> None:
        """A dragged line becomes the settings that give exactly the line's tiers again
        (snapped to the statement count it stands for); the spin boxes show them. A line
        the state does not move (the other rule's) goes back where it was."""
        if not self.state.drag_line(kind, statements):
            lines = self.lines
            self.plots.set_lines(lines["pareto"], lines["head_tail"], lines["torso"])

    # -- the rest ------------------------------------------------------------------------------
    def _update_plots(self) -> None:
        series = []
        state = self.state
        if state.distribution is not None and state.category is not None:
            series.append(Series(state.category, state.distribution))
        series.extend(
            Series(name, dist)
            for name, dist in state.overlays.items()
            if name != state.category and dist is not None and name in state.compared
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
            self.state.selection.entity = self.model.data(current, Qt.ItemDataRole.UserRole)

    def _on_category_picked(self, name: str) -> None:
        if name:
            self.state.selection.category = name

    def _on_fetch(self) -> None:
        name = self.category_combo.currentText()
        if name:
            self.fetch_requested.emit(name, self.limit_spin.value())

    def _on_compare_changed(self, _item: QListWidgetItem) -> None:
        items = (self.compare_list.item(i) for i in range(self.compare_list.count()))
        self.state.compared = tuple(
            i.text() for i in items if i.checkState() == Qt.CheckState.Checked
        )

    def _on_compare_link(self, link: str) -> None:
        name = link.removeprefix("fetch:")
        if name in self.categories:
            self.fetch_requested.emit(name, self.limit_spin.value())

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
                written = self.plots.export(chosen[0], which, chosen[1])
            except EXPORT_ERRORS as error:
                QMessageBox.warning(self, "Plot not exported", str(error))
            else:
                announce_written(self, written)


def _fraction_spin(value: float, tip: str) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(0.01, 1.0)
    spin.setDecimals(4)
    spin.setSingleStep(0.05)
    spin.setValue(value)
    spin.setToolTip(tip)
    return spin


def _summary_text(summary: TierSummary, lines: dict[str, float | None], split_by: str) -> str:
    pareto = f"Pareto cut-off: {lines['pareto']:,.0f}"
    head_tail = f"head–tail threshold: {lines['head_tail']:,.0f}"
    # The line that splits in bold; the other is there for reference.
    if split_by == "pareto":
        pareto = f"<b>{pareto}</b>"
    else:
        head_tail = f"<b>{head_tail}</b>"
    parts = [
        f"<b>{summary.n:,}</b> {plural_word(summary.n, 'entity')}, "
        f"{plural(summary.total_statements, 'statement')}<br>{pareto} · {head_tail}"
    ]
    for share in summary.tiers:
        if share.size or share.tier != Tier.TORSO:
            parts.append(
                f"{share.tier.value.replace('_', ' ')}: {plural(share.size, 'entity')} "
                f"({share.entity_share:.0%}), {share.statement_share:.0%} of statements"
            )
    return "<br>".join(parts)
