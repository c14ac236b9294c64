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
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
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
    metric_label,
)
from core.report.panel_state import ReportState
from core.report.render import (
    SIGNIFICANT_MARK,
    bootstrap_note,
    correction_note,
    report_tables,
)
from core.text_filters import FilterError, check_conditions
from widgets.note_chips import NoteChips, notes_of
from widgets.plot_export import EXPORT_ERRORS, announce_written, ask_export
from widgets.report.headlines import headline_html, opening_plot
from widgets.report.options import DIMENSION_CHOICES, ReportOptions
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

    def __init__(self, parent: QWidget | None = None, state: ReportState | None = None) -> None:
        super().__init__(parent)
        self.report: BiasReport | None = None
        self.headlines: list[Comparison] = []
        self.pages: dict[str, TablePage] = {}
        # What the options offer and what the user chose (restored by app.window_state).
        self.state = state if state is not None else ReportState()
        self._build_widgets()
        self._layout()
        self.show_message(NO_SESSION_MESSAGE)
        self.state.subscribe(lambda *_change: self._show_busy(), ["session", "busy"])
        self.state.subscribe(lambda *_change: self._show_progress(), ["busy", "progress"])
        self.state.subscribe(
            lambda *_change: self.stale_label.setVisible(self.state.stale), ["stale"]
        )
        self._show_busy()
        # The headlines' colours (better, worse, muted) are the theme's: drawn again on a
        # switch between light and dark.
        on_palette_change(self, self._recolour)

    # -- widgets -----------------------------------------------------------------------------
    def _build_widgets(self) -> None:
        self._build_toolbar()
        self.options = ReportOptions(self.state)
        options = self.options  # its controls as the panel's own (controller, tests)
        self.dimension_list, self.metric_list = options.dimension_list, options.metric_list
        self.run_list, self.where_edit = options.run_list, options.where_edit
        self.repetitions_spin, self.sample_spin = options.repetitions_spin, options.sample_spin
        self.alpha_spin, self.seed_spin = options.alpha_spin, options.seed_spin
        self.quality_combo, self.statistic_combo = options.quality_combo, options.statistic_combo
        self.correction_combo, self.bootstrap_spin = (
            options.correction_combo,
            options.bootstrap_spin,
        )
        self._build_results()

    def _build_toolbar(self) -> None:
        """Options, Build report, the exports; progress and Cancel while a build runs."""
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

    def _build_results(self) -> None:
        """The message shown instead of a report, the headlines, tables and plots."""
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
        self._wide_headlines: bool | None = None
        self._splitter_shared = False
        # The options scroll (vertically) in a short dock rather than setting the panel's
        # minimum height: with the Report docked above the Browser, the two minimums add up.
        self.options_scroll = QScrollArea()
        self.options_scroll.setWidget(self.options)
        self.options_scroll.setWidgetResizable(True)
        self.options_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.options_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.options_scroll.setMinimumHeight(60)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.message)
        self.stack.addWidget(self._results_splitter())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.busy_row)
        layout.addWidget(self.options_scroll)
        layout.addWidget(self.stack, 1)

    def _results_splitter(self) -> QSplitter:
        """The headlines over the tables and the plot (side by side when wide)."""
        headline_box = QFrame()
        headline_box.setFrameShape(QFrame.Shape.StyledPanel)
        # The palette's own colours: readable in a dark theme (it was light on light).
        themed_style_sheet(
            headline_box,
            lambda p: f"QFrame{{background:{p.color(QPalette.ColorRole.AlternateBase).name()};}}",
        )
        headline_layout = QVBoxLayout(headline_box)
        headline_layout.setContentsMargins(8, 6, 8, 6)
        for widget in (self.headline_title, self.headline, self.legend, self.notes):
            headline_layout.addWidget(widget)
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
        return self.outer

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        width = event.size().width()
        self.options.arrange(wide=width >= 760)
        wide = width >= self.WIDE
        orientation = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.splitter.orientation() != orientation:
            self.splitter.setOrientation(orientation)
            self._share_splitter()
        if self.report is not None and (width >= self.WIDE_HEADLINES) != self._wide_headlines:
            self._show_headlines(self.report, self.headlines)
            QTimer.singleShot(0, self, self._fit_headline)

    # -- what app tells the panel ------------------------------------------------------------
    def set_available(self, metrics: Sequence[tuple[str, int]], *, session: bool = True) -> None:
        """The metrics the session holds (name, per-item values); a metric unticked
        stays unticked, a new one is ticked."""
        self.state.metrics = tuple((name, int(count)) for name, count in metrics)
        # Not while a build runs: the Build button stays off until it has finished.
        self.state.session = session
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
        self.state.offer_runs(tuple(runs))

    def picked_runs(self) -> list[int] | None:
        """The ticked runs; None when none is ticked (each model's latest output)."""
        return list(self.state.runs) or None

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
        self.state.stale = False
        for button in (self.csv_button, self.html_button):
            button.setEnabled(False)

    def set_busy(self, busy: bool) -> None:
        if busy:
            self.state.started()
        else:
            self.state.busy = False

    def show_progress(self, progress: Progress) -> None:
        self.state.progress = (progress.done, progress.total, progress.message or "")

    def _show_busy(self) -> None:
        state = self.state
        # Not while a build runs: the Build button stays off until it has finished.
        self.build_button.setEnabled(state.can_build())
        self.cancel_button.setEnabled(state.busy)
        self.busy_row.setVisible(state.busy)

    def _show_progress(self) -> None:
        if self.state.progress is None:
            self.progress.setRange(0, 0)  # busy, nothing counted yet
            return
        done, total, words = self.state.progress
        if total:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * min(done / total, 1.0)))
        self.progress.setFormat(words or "%p%")
        self.progress.setToolTip(words)

    def _recolour(self) -> None:
        if self.report is not None:
            self._show_headlines(self.report, self.headlines)

    def mark_stale(self) -> None:
        if self.report is not None:
            self.state.stale = True

    def show_report(
        self, report: BiasReport, specs: Sequence[PlotSpec], headlines: Sequence[Comparison]
    ) -> None:
        self.report, self.headlines = report, list(headlines)
        self.state.stale = False
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
        QTimer.singleShot(0, self, self._fit_headline)

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
        self.options.commit()
        return self.state.request()

    def set_dimensions(self, keys: Sequence[str]) -> None:
        self.state.by = tuple(key for key, _title, _tip in DIMENSION_CHOICES if key in keys)

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
