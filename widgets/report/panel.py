"""The Report panel: options, headlines, tables and plots in one splitter."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from PySide6.QtCore import (
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.jobs import Progress
from core.report import (
    BiasReport,
    Comparison,
    PlotSpec,
    ReportRequest,
    Settings,
    metric_label,
)
from core.report.statistics import (
    DEFAULT_ALPHA,
    DEFAULT_REPETITIONS,
    DEFAULT_RESAMPLES,
    DEFAULT_SAMPLE_SIZE,
    DEFAULT_SEED,
)
from core.report.tables import (
    SIGNIFICANT_MARK,
    bootstrap_note,
    correction_note,
    report_tables,
)
from core.text_filters import FilterError, check_conditions
from widgets.note_chips import NoteChips, notes_of
from widgets.plot_export import EXPORT_ERRORS, announce_written, ask_export
from widgets.report.headlines import headline_html, opening_plot
from widgets.report.options import (
    CORRECTION_CHOICES,
    DIMENSION_CHOICES,
    STUDY_REFS,
    spin_box,
    titled,
)
from widgets.report.plots import ReportPlots
from widgets.report.table import (
    MARK_BACKGROUND,
    MARK_FOREGROUND,
    TablePage,
    plain_title,
    tab_title,
)
from widgets.save_dialog import ask_save_path
from widgets.theme import muted_colour, on_palette_change, themed_style_sheet, tone

NOT_BUILT_MESSAGE = "Press <b>Build report</b> to compare head and long tail on {metrics}."
NO_SESSION_MESSAGE = "Open a session to build a bias report."
NO_SCORES_MESSAGE = (
    "<h3>Nothing to compare yet</h3>This session holds no per-item scores and no human "
    "ratings.<br><br>Verbalise units (<b>Verbalise</b> panel), score the verbalisations "
    "(<b>Scores</b> panel) or rate them (<b>Annotate</b> panel); the report then compares "
    "head and long tail on every metric."
)


class ReportPanel(QWidget):
    build_requested = Signal(object)  # core.report.ReportRequest
    cancel_requested = Signal()
    csv_requested = Signal(str)  # folder
    html_requested = Signal(str)  # file
    figures_requested = Signal(object)  # a core Job writing every plot (All…)

    WIDE = 900  # from this width on, tables and plots sit side by side
    WIDE_HEADLINES = 940  # from this width on, the headlines are aligned columns

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.report: BiasReport | None = None
        self.headlines: list[Comparison] = []
        self.pages: dict[str, TablePage] = {}
        self._metrics: list[tuple[str, int]] = []
        self._build_widgets()
        self._layout()
        self.show_message(NO_SESSION_MESSAGE)
        # The headlines' colours (better, worse, muted) are the theme's: drawn again on a
        # switch between light and dark.
        on_palette_change(self, self._recolour)

    # -- widgets -----------------------------------------------------------------------------
    def _build_widgets(self) -> None:
        self.options_button = QToolButton()
        self.options_button.setText("Options")
        self.options_button.setCheckable(True)
        self.options_button.setChecked(True)
        self.options_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.options_button.setArrowType(Qt.ArrowType.DownArrow)
        self.options_button.toggled.connect(self._on_options_toggled)
        self.build_button = QPushButton("Build report")
        self.build_button.setDefault(True)
        self.build_button.setToolTip(
            "Compare the chosen groups on the chosen metrics (runs in the background; "
            "Cancel stops it)"
        )
        self.build_button.clicked.connect(self._on_build)
        self._busy = False  # a build is running
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.progress = QProgressBar()
        self.csv_button = QPushButton("CSV…")
        self.csv_button.setToolTip("Export every table as CSV into a folder")
        self.csv_button.clicked.connect(self._on_csv)
        self.html_button = QPushButton("HTML…")
        self.html_button.setToolTip(
            "Export a self-contained HTML report (tables, plots, the "
            "runs' settings, metric signatures)"
        )
        self.html_button.clicked.connect(self._on_html)
        for button in (self.csv_button, self.html_button):
            button.setEnabled(False)
            button.setMinimumWidth(56)
            button.setMaximumWidth(80)

        self.dimension_list = QListWidget()
        for key, title, tip in DIMENSION_CHOICES:
            item = QListWidgetItem(title)
            item.setToolTip(tip)
            item.setData(Qt.ItemDataRole.UserRole, key)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if key == "tier" else Qt.CheckState.Unchecked)
            self.dimension_list.addItem(item)
        self.metric_list = QListWidget()
        self.run_list = QListWidget()
        for widget in (self.dimension_list, self.metric_list, self.run_list):
            widget.setMaximumHeight(128)
            widget.setMinimumHeight(48)

        self.repetitions_spin = spin_box(
            1, 1000, DEFAULT_REPETITIONS, "Mann–Whitney repetitions, p-values averaged (METHODS §8)"
        )
        self.sample_spin = spin_box(
            2,
            1_000_000,
            DEFAULT_SAMPLE_SIZE,
            "Items sampled per group in each repetition (all when fewer)",
        )
        self.sample_spin.setSingleStep(100)
        self.alpha_spin = QDoubleSpinBox()
        self.alpha_spin.setDecimals(3)
        self.alpha_spin.setRange(0.001, 0.5)
        self.alpha_spin.setSingleStep(0.01)
        self.alpha_spin.setValue(DEFAULT_ALPHA)
        self.alpha_spin.setToolTip("A difference is marked when the averaged p is below this")
        self.seed_spin = spin_box(0, 2**31 - 1, DEFAULT_SEED, "Seed of the random samples")
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
            DEFAULT_RESAMPLES,
            "Bootstrap resamples for the 95 % intervals of the medians "
            "and their difference (seeded by Seed; 0: none)",
        )
        self.bootstrap_spin.setSingleStep(500)
        self.run_list.setToolTip(
            "Tick runs to compare only those. None ticked: for each model its latest output "
            "per unit, language and candidate. Overlapping runs of one model are never "
            "pooled: each item counts once, from the latest run."
        )

        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.RichText)
        self.message.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.message.setMargin(12)

        self.headline_title = QLabel()
        self.headline_title.setWordWrap(True)
        self.headline = QLabel()
        self.headline.setWordWrap(True)
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.headline.font()
        font.setPointSizeF(font.pointSizeF() * 1.2)
        self.headline.setFont(font)
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.notes = NoteChips()  # the report's notes (silver references, metrics missing)
        self.stale_label = QLabel(
            "Scores changed since this report was built: press Build report again."
        )
        themed_style_sheet(self.stale_label, lambda p: f"color:{tone('error', p)};")
        self.stale_label.setVisible(False)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.setUsesScrollButtons(True)
        self.plots = ReportPlots()
        self.plots.export_button.clicked.connect(self._on_export_plot)
        self.all_plots_button = QPushButton("All…")
        self.all_plots_button.setMinimumWidth(40)
        self.all_plots_button.setMaximumWidth(60)
        self.all_plots_button.setToolTip("Export every plot as PNG, SVG and PDF into a folder")
        self.all_plots_button.clicked.connect(self._on_export_all_plots)
        self.plots.layout().itemAt(0).layout().addWidget(self.all_plots_button)

    def _layout(self) -> None:
        # Compact enough for a ~350 px dock: Build and the exports on one row; progress
        # and Cancel on a second row that shows only while a report is being built.
        top = QHBoxLayout()
        top.addWidget(self.options_button)
        top.addWidget(self.build_button)
        top.addStretch(1)
        top.addWidget(self.csv_button)
        top.addWidget(self.html_button)
        self.busy_row = QWidget()
        busy = QHBoxLayout(self.busy_row)
        busy.setContentsMargins(0, 0, 0, 0)
        busy.addWidget(self.progress, 1)
        busy.addWidget(self.cancel_button)
        self.busy_row.setVisible(False)

        self.dimension_box = titled("Compare by", self.dimension_list)
        self.metric_box = titled("Metrics", self.metric_list)
        self.run_box = titled("Runs", self.run_list)
        # Label–field pairs in two columns: three short rows, so the options stay low.
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
        # The metrics-against-humans table over a subset of texts (correlate --where).
        self.where_edit = QLineEdit()
        self.where_edit.setPlaceholderText("all texts; e.g. esa.undetected>=1; tier=long_tail")
        self.where_edit.setToolTip(
            "Metrics vs humans over the texts where every condition holds: FIELD OP VALUE, "
            "separated by ';' (a score or its detail, e.g. esa.undetected>=1, bleu:gold<30; "
            "or tier, lang, system). Empty: every text."
        )
        settings.addWidget(QLabel("Humans where"), 3, 0)
        settings.addWidget(self.where_edit, 3, 1, 1, 5)
        settings_widget = QWidget()
        settings_widget.setLayout(settings)
        self.settings_box = titled("Mann–Whitney protocol (METHODS §8)", settings_widget)
        self.options = QFrame()
        self.options_grid = QGridLayout(self.options)
        self.options_grid.setContentsMargins(0, 0, 0, 0)
        self._wide_options: bool | None = None
        self._wide_headlines: bool | None = None
        self._splitter_shared = False
        self._arrange_options(wide=False)
        # The options scroll (vertically) in a short dock rather than setting the panel's
        # minimum height: with the Report docked above the Browser, the two minimums add up.
        self.options_scroll = QScrollArea()
        self.options_scroll.setWidget(self.options)
        self.options_scroll.setWidgetResizable(True)
        self.options_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.options_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.options_scroll.setMinimumHeight(60)

        headline_box = QFrame()
        headline_box.setFrameShape(QFrame.Shape.StyledPanel)
        # The palette's own colours: readable in a dark theme (it was light on light).
        themed_style_sheet(
            headline_box,
            lambda p: f"QFrame{{background:{p.color(QPalette.ColorRole.AlternateBase).name()};}}",
        )
        headline_layout = QVBoxLayout(headline_box)
        headline_layout.setContentsMargins(8, 6, 8, 6)
        headline_layout.addWidget(self.headline_title)
        headline_layout.addWidget(self.headline)
        headline_layout.addWidget(self.legend)
        headline_layout.addWidget(self.notes)
        headline_layout.addWidget(self.stale_label)
        headline_layout.addStretch(1)
        self.headline_box = headline_box
        headline_scroll = QScrollArea()
        headline_scroll.setWidget(headline_box)
        headline_scroll.setWidgetResizable(True)
        headline_scroll.setFrameShape(QFrame.Shape.NoFrame)
        headline_scroll.setMinimumHeight(40)

        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.tabs)
        self.splitter.addWidget(self.plots)
        self.splitter.setChildrenCollapsible(False)
        self.outer = QSplitter(Qt.Orientation.Vertical)
        self.outer.addWidget(headline_scroll)
        self.outer.addWidget(self.splitter)
        self.outer.setStretchFactor(1, 4)
        self.outer.setChildrenCollapsible(False)

        self.stack = QStackedWidget()
        self.stack.addWidget(self.message)
        self.stack.addWidget(self.outer)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.busy_row)
        layout.addWidget(self.options_scroll)
        layout.addWidget(self.stack, 1)

    def _arrange_options(self, wide: bool) -> None:
        """Three columns when wide; the two lists side by side over the settings when not."""
        if wide == self._wide_options:
            return
        self._wide_options = wide
        for box in (self.dimension_box, self.metric_box, self.run_box, self.settings_box):
            self.options_grid.removeWidget(box)
        if wide:
            self.options_grid.addWidget(self.dimension_box, 0, 0)
            self.options_grid.addWidget(self.metric_box, 0, 1)
            self.options_grid.addWidget(self.run_box, 0, 2)
            self.options_grid.addWidget(self.settings_box, 0, 3)
        else:
            self.options_grid.addWidget(self.dimension_box, 0, 0)
            self.options_grid.addWidget(self.metric_box, 0, 1)
            self.options_grid.addWidget(self.run_box, 0, 2)
            self.options_grid.addWidget(self.settings_box, 1, 0, 1, 3)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        width = event.size().width()
        self._arrange_options(wide=width >= 760)
        wide = width >= self.WIDE
        orientation = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.splitter.orientation() != orientation:
            self.splitter.setOrientation(orientation)
            self._share_splitter()
        if self.report is not None and (width >= self.WIDE_HEADLINES) != self._wide_headlines:
            self._show_headlines(self.report, self.headlines)
            QTimer.singleShot(0, self._fit_headline)

    # -- what app tells the panel ------------------------------------------------------------
    def set_available(self, metrics: Sequence[tuple[str, int]], *, session: bool = True) -> None:
        """The metrics the session holds (name, per-item values), all checked."""
        self._metrics = list(metrics)
        previous = {
            self.metric_list.item(i).data(Qt.ItemDataRole.UserRole): self.metric_list.item(
                i
            ).checkState()
            for i in range(self.metric_list.count())
        }
        self.metric_list.clear()
        for name, count in metrics:
            item = QListWidgetItem(f"{metric_label(name)} ({count:,})")
            item.setData(Qt.ItemDataRole.UserRole, name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(previous.get(name, Qt.CheckState.Checked))
            self.metric_list.addItem(item)
        # Not while a build runs: the Build button stays off until it has finished.
        self.build_button.setEnabled(session and not self._busy)
        if self.report is None:
            if not session:
                self.show_message(NO_SESSION_MESSAGE)
            elif not metrics:
                self.show_message(NO_SCORES_MESSAGE)
            else:
                names = ", ".join(metric_label(m) for m, _ in metrics)
                self.show_message(NOT_BUILT_MESSAGE.format(metrics=escape(names)))

    def set_runs(self, runs: Sequence[tuple[int, str, str]]) -> None:
        """The session's runs (id, model, status); ticks kept for runs still there."""
        ticked = set(self.picked_runs() or ())
        self.run_list.clear()
        for run_id, model, status in runs:
            # Short, so the list does not scroll sideways in a narrow dock; all in the tip.
            shown = f"{run_id} · {model}" + ("" if status == "finished" else f" ({status})")
            item = QListWidgetItem(shown)
            item.setToolTip(f"run {run_id} · {model} ({status})")
            item.setData(Qt.ItemDataRole.UserRole, run_id)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(
                Qt.CheckState.Checked if run_id in ticked else Qt.CheckState.Unchecked
            )
            self.run_list.addItem(item)

    def picked_runs(self) -> list[int] | None:
        """The ticked runs; None when none is ticked (each model's latest output)."""
        ticked = [
            self.run_list.item(i).data(Qt.ItemDataRole.UserRole)
            for i in range(self.run_list.count())
            if self.run_list.item(i).checkState() == Qt.CheckState.Checked
        ]
        return ticked or None

    def show_message(self, html: str) -> None:
        """Show a message instead of the results (no session, no scores, not built)."""
        self.message.setText(html)
        self.stack.setCurrentWidget(self.message)

    def clear(self) -> None:
        """Forget the shown report (another session was opened)."""
        self.report, self.headlines = None, []
        self.tabs.clear()
        for page in self.pages.values():
            page.deleteLater()  # removing a tab does not delete its page
        self.pages.clear()
        self.plots.set_specs([])
        self.stale_label.setVisible(False)
        for button in (self.csv_button, self.html_button):
            button.setEnabled(False)

    def set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.build_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)
        self.busy_row.setVisible(busy)
        if busy:
            self.progress.setRange(0, 0)

    def show_progress(self, progress: Progress) -> None:
        if progress.total:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * min(progress.done / progress.total, 1.0)))
        self.progress.setFormat(progress.message or "%p%")
        self.progress.setToolTip(progress.message)

    def _recolour(self) -> None:
        if self.report is not None:
            self._show_headlines(self.report, self.headlines)

    def mark_stale(self) -> None:
        if self.report is not None:
            self.stale_label.setVisible(True)

    def show_report(
        self, report: BiasReport, specs: Sequence[PlotSpec], headlines: Sequence[Comparison]
    ) -> None:
        self.report, self.headlines = report, list(headlines)
        self.stale_label.setVisible(False)
        self._show_headlines(report, self.headlines)
        s = report.settings
        protocol = (
            f"two-sided Mann–Whitney U, {s.repetitions} × samples of {s.sample_size}, "
            f"p averaged, seed {s.seed}"
        )
        self.legend.setText(
            f"<span style='background:{MARK_BACKGROUND.name()}; color:"
            f"{MARK_FOREGROUND.name()}; font-weight:bold'>&nbsp;highlighted {SIGNIFICANT_MARK}"
            f"&nbsp;</span> = significant: "
            f"{escape(correction_note(report).removeprefix(SIGNIFICANT_MARK + ' '))} "
            f"({escape(protocol)}). {escape(bootstrap_note(report))}. "
            "Effect r: rank-biserial correlation, + when head (a) is higher."
        )
        self.notes.set_notes(notes_of(report.notes))
        current = (
            plain_title(self.tabs.tabText(self.tabs.currentIndex())) if self.tabs.count() else ""
        )
        mark_tip = (
            f"{correction_note(report).removeprefix(SIGNIFICANT_MARK + ' ')}: "
            f"significant ({protocol})"
        )
        # A table the option change left as it was keeps its page (its sorting and
        # column widths too); only the others are laid out again.
        self.tabs.clear()
        old_pages, self.pages = self.pages, {}
        for table in report_tables(report):
            page = old_pages.get(table.name)
            if page is None or page.shows != TablePage.showing(table, mark_tip):
                page = TablePage(table, mark_tip)
            self.pages[table.name] = page
            self.tabs.addTab(page, tab_title(table))
        for page in old_pages.values():
            if page not in self.pages.values():
                page.deleteLater()  # removing a tab does not delete its page
        titles = [plain_title(self.tabs.tabText(i)) for i in range(self.tabs.count())]
        # Keep the tab the user was reading; first time, the first dimension compared that
        # has rows (a session without tiers opened on an empty "By tier"), else the study
        # table.
        with_rows = [
            f"By {d}"
            for d in report.by
            if f"compare_{d}" in self.pages and self.pages[f"compare_{d}"].model.rowCount()
        ]
        for wanted in (current, *with_rows[:1], "Study table"):
            if wanted and wanted in titles:
                self.tabs.setCurrentIndex(titles.index(wanted))
                break
        shown = self.plots.current_spec()
        if list(specs) != self.plots.specs:  # the same plots: the one shown stays drawn
            self.plots.set_specs(specs)
            self.plots.show_plot(
                opening_plot(specs, headlines, shown.title if shown is not None else None)
            )
        for button in (self.csv_button, self.html_button):
            button.setEnabled(True)
        self.stack.setCurrentWidget(self.outer)
        if (self.width() < 760 or self.height() < 900) and self.options_button.isChecked():
            # A narrow or short panel needs the room for the results (Options brings
            # them back): at 1366 × 768 the headlines, 8 table rows and the plot at once.
            self.options_button.setChecked(False)
        QTimer.singleShot(0, self._fit_headline)

    def _share_splitter(self) -> None:
        """Tables and plot: half each side by side; stacked, the plot gets its minimum
        (200 px of plot) or 55 %, whichever is more, and the tables the rest."""
        if self.splitter.orientation() == Qt.Orientation.Horizontal:
            half = max(self.splitter.width(), 2) // 2
            self.splitter.setSizes([half, half])
            return
        total = max(self.splitter.height(), 2)
        plots = max(self.plots.minimumSizeHint().height(), int(total * 0.55))
        self.splitter.setSizes([max(total - plots, 1), plots])

    def _fit_headline(self) -> None:
        """Give the headline the height it needs (at most 30 % of the results), then
        share the rest between the tables and the plot."""
        sizes = self.outer.sizes()
        total = sum(sizes)
        if total <= 0:
            return
        box = self.headline_box
        width = max(self.outer.width() - 4, 100)
        wanted = box.heightForWidth(width) if box.hasHeightForWidth() else -1
        wanted = (wanted if wanted > 0 else box.sizeHint().height()) + 6
        top = min(wanted, int(total * 0.3))
        self.outer.setSizes([top, total - top])
        if not self._splitter_shared:  # the first report; later the user's split stays
            self._splitter_shared = True
            self._share_splitter()

    def _show_headlines(self, report: BiasReport, headlines: Sequence[Comparison]) -> None:
        quality = report.settings.study_quality
        models = {c.stratum_value("model") for c in headlines}
        self.headline_title.setText(
            f"<b>Head vs long tail</b> <span style='color:{muted_colour()}'>(medians; all "
            f"languages pooled, per model; reference-based metrics against {escape(quality)} "
            "references)</span>"
        )
        if not headlines:
            self.headline.setText(
                "<i>No head/long-tail comparison: the session's scored units are not split "
                "into head and long tail (see the Browser's tiers, or compare by another "
                "dimension).</i>"
            )
            return
        show_model = len(models) > 1
        self._wide_headlines = wide = self.width() >= self.WIDE_HEADLINES
        if wide:  # aligned columns
            rows = "".join(
                headline_html(c, show_model=show_model, correction=report.settings.correction)
                for c in headlines
            )
            self.headline.setText(f"<table cellspacing='0'>{rows}</table>")
        else:  # a narrow dock: one wrapped paragraph per metric
            correction = report.settings.correction
            self.headline.setText(
                "".join(
                    "<p style='margin:0 0 4px 0'>"
                    + headline_html(c, show_model=show_model, table=False, correction=correction)
                    + "</p>"
                    for c in headlines
                )
            )

    # -- what the panel asks ---------------------------------------------------------------
    def request(self) -> ReportRequest:
        """What the options ask for (metrics None: all of them are ticked)."""
        by = [
            self.dimension_list.item(i).data(Qt.ItemDataRole.UserRole)
            for i in range(self.dimension_list.count())
            if self.dimension_list.item(i).checkState() == Qt.CheckState.Checked
        ]
        checked = [
            self.metric_list.item(i).data(Qt.ItemDataRole.UserRole)
            for i in range(self.metric_list.count())
            if self.metric_list.item(i).checkState() == Qt.CheckState.Checked
        ]
        everything = len(checked) == self.metric_list.count()
        quality, references = str(self.quality_combo.currentData() or "gold:quality").split(":")
        runs = self.picked_runs()
        return ReportRequest(
            by=tuple(by or ["tier"]),
            metrics=None if everything else tuple(checked),
            settings=Settings(
                repetitions=self.repetitions_spin.value(),
                sample_size=self.sample_spin.value(),
                alpha=round(self.alpha_spin.value(), 6),
                seed=self.seed_spin.value(),
                study_quality=quality,
                study_references=references,
                statistic=self.statistic_combo.currentText(),
                correction=str(self.correction_combo.currentData()),
                bootstrap_resamples=self.bootstrap_spin.value(),
            ),
            runs=None if runs is None else tuple(runs),
            where=tuple(c.strip() for c in self.where_edit.text().split(";") if c.strip()),
        )

    def set_dimensions(self, keys: Sequence[str]) -> None:
        for i in range(self.dimension_list.count()):
            item = self.dimension_list.item(i)
            on = item.data(Qt.ItemDataRole.UserRole) in keys
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    def _on_build(self) -> None:
        request = self.request()
        if request.metrics == ():
            QMessageBox.information(self, "No metric chosen", "Tick at least one metric.")
            return
        try:
            check_conditions(request.where)
        except FilterError as error:
            QMessageBox.information(self, "Cannot read the condition", str(error))
            return
        self.build_requested.emit(request)

    def _on_options_toggled(self, on: bool) -> None:
        self.options_scroll.setVisible(on)
        self.options_button.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)

    def _on_csv(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export the report's tables as CSV")
        if folder:
            self.csv_requested.emit(folder)

    def _on_html(self) -> None:
        path, _ = ask_save_path(
            self, "Export the HTML report", "report.html", "HTML report (*.html)"
        )
        if path:
            target = Path(path)
            self.html_requested.emit(str(target if target.suffix else target.with_suffix(".html")))

    def _on_export_plot(self) -> None:
        spec = self.plots.current_spec()
        if spec is None:
            return
        chosen = ask_export(self, f"{spec.kind}-{spec.metric}".replace("+", "plus"))
        if chosen is not None:
            try:
                written = self.plots.export(*chosen)
            except EXPORT_ERRORS as error:
                QMessageBox.warning(self, "Plot not exported", str(error))
            else:
                announce_written(self, written)

    def _on_export_all_plots(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export every plot (PNG, SVG, PDF)")
        if folder:
            self.figures_requested.emit(
                self.plots.export_all_job(Path(folder), getattr(self, "_last_export_options", None))
            )
