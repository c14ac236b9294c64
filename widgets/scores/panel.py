"""The Scores panel: the buttons, filters, texts table beside the detail, and summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from PySide6.QtCore import (
    QModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.desktop.dialog_memory import DialogMemory
from core.labels import plural, plural_word, tier_label
from core.metrics.score_pages import ScoresFilter
from core.metrics.scoring.panel_state import FILTER_KEYS, JOB_KEYS, ScoresState
from widgets.binding import Binding, bind
from widgets.note_chips import INFO, WARNING, Note, NoteChips, notes_of
from widgets.save_dialog import ask_save_path
from widgets.scores.dialog import ScoreDialog
from widgets.scores.ranking import SortSpec, qt_order, scored_count
from widgets.scores.rows import (
    SUMMARY_KEYS,
    TEXT_KEYS,
    TEXT_TAIL,
    ScoreChoices,
    ScoreTableRow,
    TextDetail,
)
from widgets.scores.table import ScoreTableModel, table_view
from widgets.scores.text_html import detail_text_html, detail_unit_html
from widgets.synonyms import SynonymDialog
from widgets.theme import muted_colour, themed_text

WIDE_PX = 1000  # at least this wide: table and detail side by side
COMBO_CHARS = 5  # the filters' least width, in characters (their popups show every name)
SEARCH_DELAY_MS = 300  # the search asks for rows this long after the last key
TEXT_TABLE_FILTERS = "CSV (*.csv);;JSON Lines (*.jsonl);;Parquet (*.parquet)"


def _fill_filter(combo: QComboBox, everything: str, items: Sequence[tuple[str, object]]) -> None:
    combo.clear()
    combo.addItem(everything, None)
    for label, data in items:
        combo.addItem(label, data)
    # Never narrower than its name, what it shows when nothing is chosen ("Run",
    # "Language", "Tier": together as many characters as three of COMBO_CHARS, so the
    # panel still fits a laptop's side dock).
    combo.setMinimumContentsLength(len(everything))


# -- the panel ---------------------------------------------------------------------------


class ScoresPanel(QWidget):
    score_dialog_requested = Signal()  # "Score…": the controller answers open_score_dialog
    synonyms_requested = Signal()  # "Synonyms…": the controller answers open_synonym_dialog
    score_requested = Signal(object)  # ScoringRequest: what the Score… dialog asks to score
    cancel_requested = Signal()
    filters_changed = Signal(object)  # ScoresFilter: the run, language, tier and search chosen
    sort_changed = Signal(object)  # ScoreSort: a header click on a table still paging
    more_requested = Signal(int)  # the offset of the next page: the table scrolled to its end
    text_selected = Signal(int)  # a verbalisation id
    retrieval_requested = Signal()  # "Retrieval…": app/retrieval.py opens the dialog
    export_texts_requested = Signal(str)  # "Export texts…": the file (.csv, .jsonl, .parquet)

    # Where the Score… dialog keeps its choices (set by app.gui; None: not kept).
    dialog_memory: DialogMemory | None = None

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = ScoresState()
        self._choosing = False  # the choices are being filled: no filter is the user's
        self._build_buttons()
        self._build_filters()
        self._build_progress()
        self._build_texts()
        self._build_summary()
        self._lay_out()
        self._dialog: ScoreDialog | None = None
        self._split_set = False  # the splitter's first sizes, once shown
        self._sized = False  # column widths follow the first rows, then stay as the user sets
        self._scored = 0  # texts with a score, of those that pass the filters
        self._total = 0  # texts in the session
        self.state.watch(self._on_filters, FILTER_KEYS)
        self.state.watch(lambda _changes: self._render_job(), JOB_KEYS)
        self._render_job()

    def _build_buttons(self) -> None:
        self.score_button = QPushButton("Score…")
        self.score_button.setToolTip(
            "Score the session's verbalisations (BLEU, chrF++, ROUGE, "
            "BERTScore, ESA, hallucination candidates, similarity, "
            "perplexity)"
        )
        self.score_button.clicked.connect(self.score_dialog_requested)
        self.synonyms_button = QPushButton("Synonyms…")
        self.synonyms_button.setToolTip(
            "Edit the synonym table ESA uses (Spain / Spanish, Texas / TX), stored in the session"
        )
        self.synonyms_button.clicked.connect(self.synonyms_requested)
        self.retrieval_button = QPushButton("Retrieval…")
        self.retrieval_button.setToolTip(
            "Graph ↔ text retrieval: find the graph behind the "
            "selected text; the outputs that match their own "
            "graph worst"
        )
        self.retrieval_button.clicked.connect(self.retrieval_requested)
        self.export_texts_button = QPushButton("Export texts…")
        self.export_texts_button.setToolTip(
            "Write the per-text table of the session (every text with its unit, run, model, "
            "tiers, scores, ESA's undetected entities and ratings) as CSV, JSON Lines or "
            "Parquet, for pandas, R or a spreadsheet"
        )
        self.export_texts_button.clicked.connect(self._on_export_texts)

    def _build_filters(self) -> None:
        """The run, language and tier combos and the search, each bound to its field of
        :attr:`state`; the combos' items follow what the state offers."""
        self.run_combo = QComboBox()
        self.lang_combo = QComboBox()
        self.tier_combo = QComboBox()
        self._filter_bindings: list[Binding] = []
        for combo, name, tip in (
            (self.run_combo, "run_id", "Only this run (model)"),
            (self.lang_combo, "lang", "Only this language"),
            (self.tier_combo, "tier", "Only units of this tier"),
        ):
            combo.setToolTip(tip)
            # As wide as the dock allows, never wider than a few characters at least: a long
            # run name must not push the window past a laptop's screen (the popup shows all).
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            combo.setMinimumContentsLength(COMBO_CHARS)
            # The first item, "all", holds no data: it gives None, not its text.
            self._filter_bindings.append(
                bind(
                    self.state,
                    name,
                    combo,
                    from_widget=lambda value, c=combo: value if c.currentIndex() > 0 else None,
                )
            )
        self.state.subscribe(lambda *_change: self._render_choices(), ["runs", "langs", "tiers"])
        self._render_choices()
        # Words in the text or the unit's id, asked for a moment after the last key (and at
        # once on Return or leaving the field: the binding writes it then).
        self.search_edit = QLineEdit()
        self.search_edit.setPlaceholderText("Search texts")
        self.search_edit.setClearButtonEnabled(True)
        self.search_edit.setToolTip("Only texts (or unit ids) containing these characters")
        self.search_edit.setMinimumWidth(90)
        bind(self.state, "search", self.search_edit, from_widget=str.strip)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(
            lambda: setattr(self.state, "search", self.search_edit.text().strip())
        )
        self.search_edit.textChanged.connect(lambda _text: self._search_timer.start())

    def _build_progress(self) -> None:
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.progress.setMaximumHeight(16)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.progress_label = QLabel()
        self.progress_label.setWordWrap(True)
        self.progress_box = QWidget()
        progress_row = QHBoxLayout(self.progress_box)
        progress_row.setContentsMargins(0, 0, 0, 0)
        progress_row.addWidget(self.progress, 1)
        progress_row.addWidget(self.cancel_button)
        self.progress_box.setVisible(False)
        self.count_label = QLabel()
        self.count_label.setWordWrap(True)  # wraps in a narrow dock rather than widening it
        # Which models scored (BERTScore, similarity) and the last job's notes: chips.
        self.notes = NoteChips()
        self._model_note: Note | None = None

    def _build_texts(self) -> None:
        """The texts table beside (or above) the selected text's detail."""
        self.table_model = ScoreTableModel(TEXT_KEYS, self, tail_headers=TEXT_TAIL)
        self.table_model.fetch_requested.connect(self.more_requested)
        self.table_model.sort_requested.connect(self.sort_changed)
        self.table = table_view(self.table_model)
        self.table_model.fetch_wanted = self.table.isVisible
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        self.text_view = QTextBrowser()
        self.text_view.setOpenLinks(False)
        self.unit_view = QTextBrowser()
        self.unit_view.setOpenLinks(False)
        self.detail = QSplitter(Qt.Orientation.Vertical)
        self.detail.addWidget(self.text_view)
        self.detail.addWidget(self.unit_view)
        self.detail.setChildrenCollapsible(False)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.detail)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.shown_detail: TextDetail | None = None
        self.show_detail(None)

    def _build_summary(self) -> None:
        self.summary_model = ScoreTableModel(SUMMARY_KEYS, self)
        self.summary_table = table_view(self.summary_model)
        self.summary_note = QLabel(
            "Means of per-text scores by model × language × tier "
            "(TailNLG's top_head counts as head). Hover a cell for "
            "its median and count; corpus BLEU/chrF++ are in "
            "<i>taillens score</i> and the report."
        )
        self.summary_note.setWordWrap(True)
        self.summary_box = QWidget()
        summary_layout = QVBoxLayout(self.summary_box)
        summary_layout.setContentsMargins(0, 0, 0, 0)
        summary_layout.addWidget(self.summary_note)
        summary_layout.addWidget(self.summary_table, 1)

    def _lay_out(self) -> None:
        self.tabs = QTabWidget()
        self.tabs.addTab(self.splitter, "Texts")
        self.tabs.addTab(self.summary_box, "Summary")
        top = QHBoxLayout()
        top.addWidget(self.score_button)
        top.addWidget(self.synonyms_button)
        top.addWidget(self.retrieval_button)
        top.addStretch(1)
        top.addWidget(self.export_texts_button)
        filters = QHBoxLayout()
        for combo, stretch in ((self.run_combo, 2), (self.lang_combo, 3), (self.tier_combo, 2)):
            filters.addWidget(combo, stretch)
        filters.addWidget(self.search_edit, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.count_label)  # its own line: it wraps in a narrow dock
        layout.addLayout(filters)
        layout.addWidget(self.progress_box)
        layout.addWidget(self.progress_label)
        layout.addWidget(self.notes)
        layout.addWidget(self.tabs, 1)
        self.progress_label.setVisible(False)

    # -- what the controller shows -------------------------------------------------------
    def set_filter_choices(
        self, runs: Sequence[tuple[int, str]], langs: Sequence[str], tiers: Sequence[str]
    ) -> None:
        """Fill the filters, keeping what is chosen where it still exists. A choice gone
        goes back to all without a ``filters_changed``: the rows being shown were read
        that way already (the controller's read falls back alike)."""
        self._choosing = True
        try:
            self.state.set_choices(runs, langs, tiers)
        finally:
            self._choosing = False

    def _render_choices(self) -> None:
        state = self.state
        for binding, everything, items in zip(
            self._filter_bindings,
            ("Run", "Language", "Tier"),
            (
                [(label, run_id) for run_id, label in state.runs],
                [(lang, lang) for lang in state.langs],
                [(tier_label(tier), tier) for tier in state.tiers],
            ),
            strict=True,
        ):
            combo = binding.widget
            assert isinstance(combo, QComboBox)
            binding.refill(lambda c=combo, e=everything, i=items: _fill_filter(c, e, i))

    def filters(self) -> ScoresFilter:
        return self.state.filter()

    def sort_spec(self) -> SortSpec | None:
        """The texts table's current sort, by column name (what a refresh job sorts by)."""
        header = self.table.horizontalHeader()
        name = self.table_model.column_name(header.sortIndicatorSection())
        if name is None:
            return None
        return SortSpec(name, header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder)

    def show_rows(
        self,
        rows: Sequence[ScoreTableRow],
        columns: Sequence[str],
        tips: Mapping[str, str],
        total: int,
        *,
        ranges: Mapping[str, tuple[float, float]] | None = None,
        scored: int | None = None,
        sort_keys: Mapping[str, np.ndarray] | None = None,
        sorted_by: SortSpec | None = None,
        matching: int | None = None,
    ) -> None:
        """The texts table; the selection and the sort order survive a refresh.
        ``total``: the session's texts; ``matching``: those that pass the filters when
        ``rows`` is only their first page (None: ``rows`` are all of them; the rest come
        through :meth:`append_rows` as the table is scrolled).
        ``ranges`` (:func:`column_ranges`), ``scored`` (:func:`scored_count`) and
        ``sort_keys`` (:func:`table_sort_keys`) may come precomputed off the UI thread;
        rows already sorted there (in SQL, or :func:`presort_rows`) say so in
        ``sorted_by``, and when that is the table's sort they are shown as they are, with
        no sort here (a table with pages still to come asks for its sort instead)."""
        selected = self.selected_key()
        wanted = self.sort_spec()  # by name: the column may have moved or gone
        same_columns = list(columns) == self.table_model.metric_columns
        self.table_model.set_rows(rows, columns, tips, ranges, sort_keys=sort_keys, total=matching)
        section = self.table_model.section_of(wanted.column) if wanted is not None else None
        header = self.table.horizontalHeader()
        if section is not None and wanted is not None and wanted != sorted_by:
            self.table_model.sort(section, qt_order(wanted))  # sorted for another order
        if wanted is not None and (
            section != header.sortIndicatorSection()
            or qt_order(wanted) != header.sortIndicatorOrder()
        ):
            # Point the indicator at the column's new place (or nowhere, the column gone)
            # without the view sorting again.
            blocked = header.blockSignals(True)
            header.setSortIndicator(-1 if section is None else section, qt_order(wanted))
            header.blockSignals(blocked)
        if not same_columns or not self._sized:
            self._size_columns(self.table, len(TEXT_KEYS), text_column=True)
            self._sized = bool(rows)
        self._scored = scored_count(rows) if scored is None else scored
        self._total = total
        self._show_count()
        QTimer.singleShot(0, self, self._fill_view)
        row = self.table_model.row_of_key(selected) if selected is not None else None
        if row is not None:
            self.table.selectRow(row)
        elif selected is not None:
            self.show_detail(None)

    def append_rows(self, rows: Sequence[ScoreTableRow]) -> None:
        """The next page of the texts table (what ``more_requested`` asked for)."""
        self.table_model.append_rows(rows)
        self._show_count()
        QTimer.singleShot(0, self, self._fill_view)  # still room below: the page after

    def _fill_view(self) -> None:
        """Ask for the next page when the table shows its last row with room below (a
        tall panel, a short page): Qt's views ask only when scrolled to the end."""
        model = self.table_model
        if not self.table.isVisible() or not model.canFetchMore(QModelIndex()):
            return
        last = self.table.visualRect(model.index(model.rowCount() - 1, 0))
        if model.rowCount() == 0 or self.table.viewport().rect().intersects(last):
            model.fetchMore(QModelIndex())

    def _show_count(self) -> None:
        model = self.table_model
        matching, loaded = model.total, model.rowCount()
        shown = f"{matching:,}" if matching == self._total else f"{matching:,} of {self._total:,}"
        more = f" ({loaded:,} loaded; scroll for more)" if loaded < matching else ""
        self.count_label.setText(
            f"{shown} {plural_word(self._total, 'text')}{more} · {self._scored:,} scored · "
            f"{plural(len(model.metric_columns), 'score column')}"
        )

    def show_summary(
        self, rows: Sequence[ScoreTableRow], columns: Sequence[str], tips: Mapping[str, str]
    ) -> None:
        self.summary_model.set_rows(rows, columns, tips)
        self._size_columns(self.summary_table, len(SUMMARY_KEYS), text_column=False)

    def show_notes(self, text: str, tooltip: str = "") -> None:
        """Which BERTScore model and similarity encoder the scores come from (a chip;
        "": neither was scored)."""
        raw = "NOT rescaled" in text or "raw" in text
        self._model_note = (
            Note(tooltip or text, WARNING if raw else INFO, label=text) if text else None
        )
        self._show_chips()

    def _show_chips(self) -> None:
        model = [self._model_note] if self._model_note is not None else []
        self.notes.set_notes(model + notes_of(self.state.job_notes, WARNING))

    def selected_key(self) -> int | None:
        """The verbalisation id of the selected text (None: none selected)."""
        index = self.table.currentIndex()
        return int(self.table_model.row_at(index.row()).key) if index.isValid() else None

    def select_text(self, verbalisation_id: int) -> bool:
        row = self.table_model.row_of_key(verbalisation_id)
        if row is None:
            return False
        self.table.selectRow(row)
        self.table.scrollTo(self.table_model.index(row, 0))
        return True

    def show_detail(self, detail: TextDetail | None) -> None:
        self.shown_detail = detail
        if detail is None:
            themed_text(
                self.text_view,
                lambda: (
                    f"<p style='color:{muted_colour()}'>Select a text in the table to see "
                    "its entity mentions, missing entities and hallucination "
                    "candidates beside its unit and references.</p>"
                ),
            )
            themed_text(self.unit_view, str)
            return
        themed_text(self.text_view, lambda: detail_text_html(detail))
        themed_text(self.unit_view, lambda: detail_unit_html(detail))

    def open_score_dialog(self, choices: ScoreChoices) -> ScoreDialog:
        """The Score… dialog (window-modal, not blocking); accepted, it asks to score."""
        dialog = ScoreDialog(choices, self, self.dialog_memory)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self.score_requested.emit(dialog.request()))
        dialog.open()
        self._dialog = dialog
        return dialog

    def open_synonym_dialog(self) -> SynonymDialog:
        """The ESA synonym editor (window-modal, not blocking)."""
        dialog = SynonymDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        self.synonym_dialog = dialog
        return dialog

    def job_started(self, title: str) -> None:
        self.state.job_started(title)

    def job_progress(self, done: float, total: float | None, message: str) -> None:
        self.state.job_progressed(done, total, message)

    def job_finished(self, message: str, notes: Sequence[str] = ()) -> None:
        """The job's one-line outcome, and its notes (texts without a reference, a metric
        left out) as chips."""
        self.state.job_finished(message, notes)

    def _render_job(self) -> None:
        state = self.state
        self.score_button.setEnabled(not state.busy)
        self.progress_box.setVisible(state.busy)
        self.cancel_button.setEnabled(state.busy)
        self.progress.setFormat(state.job_title)
        done, total, words = state.progress or (0.0, None, "")
        if state.busy and total:
            self.progress.setRange(0, 1000)
            self.progress.setValue(round(1000 * min(1.0, done / total)))
            self.progress.setFormat(f"%p% {words}" if words else "%p%")
        else:
            self.progress.setRange(0, 0)
        self.progress.setToolTip(words)
        self.progress_label.setText(state.outcome)
        self.progress_label.setVisible(not state.busy and bool(state.outcome))
        self._show_chips()

    # -- internals ---------------------------------------------------------------------
    def _on_export_texts(self) -> None:
        path, chosen = ask_save_path(
            self, "Export the per-text table", "texts.csv", TEXT_TABLE_FILTERS
        )
        if path:
            target = Path(path)
            if target.suffix.lower() not in (".csv", ".jsonl", ".parquet"):
                # The filter picked names the format when the name has no suffix of its own.
                suffix = chosen[chosen.rfind("*") + 1 : chosen.rfind(")")] or ".csv"
                target = target.with_name(target.name + suffix)
            self.export_texts_requested.emit(str(target))

    def _on_filters(self, _changes: Mapping[str, tuple[object, object]]) -> None:
        if self._choosing:
            return
        self._search_timer.stop()  # the search, if typed, is in the state already
        self.filters_changed.emit(self.filters())

    def _on_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.text_selected.emit(int(self.table_model.row_at(current.row()).key))

    def _size_columns(self, view: QTableView, keys: int, *, text_column: bool) -> None:
        view.resizeColumnsToContents()
        model = view.model()
        header = view.horizontalHeader()
        for column in range(model.columnCount()):
            if column < keys:
                header.resizeSection(column, min(header.sectionSize(column), 120))
            else:
                header.resizeSection(column, max(48, min(header.sectionSize(column), 90)))
        if text_column and model.tail_headers:
            # The text, last: whole in its tooltip and in the detail.
            header.resizeSection(model.columnCount() - 1, 320)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        QTimer.singleShot(0, self, self._fill_view)  # no page was asked for while hidden

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Side by side when there is room (a widened or floating dock), stacked when narrow."""
        super().resizeEvent(event)
        QTimer.singleShot(0, self, self._fill_view)
        wide = event.size().width() >= WIDE_PX
        wanted = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.splitter.orientation() != wanted or not self._split_set:
            self.splitter.setOrientation(wanted)
            total = max(1, self.splitter.width() if wide else self.splitter.height())
            self.splitter.setSizes([total * 3 // 5, total * 2 // 5])
            self._split_set = self.isVisible()
