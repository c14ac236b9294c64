"""The Browser's "Likelihood" tab: two popularity signals side by side (LINK, METHODS §3).

A scatter of each member's mean log-likelihood per token under a model (y) against its
statement count or sitelinks (x, log axis; a count of 0 is drawn at 1), with Spearman's
rank correlation; a draggable horizontal cut-off line, like the Pareto line, below which
entities are ``model_tail``; the entities on which the two signals disagree (head by
counts but tail by likelihood, and the reverse) highlighted on the plot and listed.

The panel shows what ``app.likelihood`` hands it (a :class:`core.tiers.model_tail.LikelihoodView`)
and asks for the rest through signals; it never opens the session.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.tiers.likelihood import HEAD_BY_COUNTS, SIGNALS
from core.tiers.model_tail import (
    CutoffSettings,
    Disagreement,
    LikelihoodView,
    correlations,
    disagreements,
    matched_cutoff,
    model_tiers,
)
from core.vocab import LANGUAGES
from widgets.plot_export import ExportOptions, announce_written, ask_export, export_figure
from widgets.plot_theme import follow_palette

AXES = (("statements", "Statements"), ("sitelinks", "Sitelinks"))
COLOURS = {"agree": "#9a9a9a", HEAD_BY_COUNTS: "#c23b22", "tail_by_counts_head_by_model": "#2b7bb9"}
CUTOFF_COLOUR = "#3a9e5f"
KIND_WORDS = {
    HEAD_BY_COUNTS: "head by counts, tail by model",
    "tail_by_counts_head_by_model": "tail by counts, head by model",
}


class LikelihoodPanel(QWidget):
    score_requested = Signal(str, str)  # model folder, language
    view_requested = Signal(str, str)  # model, language to show (as stored)
    cutoff_changed = Signal(object)  # CutoffSettings to store (the drag ended)
    entity_requested = Signal(str)  # QID

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view: LikelihoodView | None = None
        self.cutoff: float | None = None
        self.found: list[Disagreement] = []
        self._x = np.zeros(0)
        self._finite = np.zeros(0, dtype=int)

        self.model_edit = QLineEdit()
        self.model_edit.setPlaceholderText("causal LM folder or cached HF id")
        self.browse_button = QPushButton("…")
        self.browse_button.setToolTip("Choose a model folder")
        self.browse_button.clicked.connect(self._browse)
        self.lang_combo = QComboBox()
        self.lang_combo.addItems(list(LANGUAGES))
        self.score_button = QPushButton("Score members")
        self.score_button.setToolTip(
            "Mean log-likelihood per token of each member's label and "
            "of a statement about it; members already scored are "
            "skipped"
        )
        self.score_button.clicked.connect(self._on_score)

        self.shown_combo = QComboBox()  # (model, lang) pairs scored in the session
        self.shown_combo.setToolTip("Scores to show: model and language")
        self.shown_combo.activated.connect(self._on_shown_picked)
        self.signal_combo = QComboBox()
        for signal in SIGNALS:
            self.signal_combo.addItem(f"{signal} likelihood", signal)
        self.signal_combo.currentIndexChanged.connect(lambda _i: self._redraw(reset=True))
        self.axis_combo = QComboBox()
        for key, title in AXES:
            self.axis_combo.addItem(title, key)
        self.axis_combo.currentIndexChanged.connect(lambda _i: self._redraw())

        self.correlation_label = QLabel("No likelihoods in this session for this category.")
        self.correlation_label.setWordWrap(True)
        self.plot = pg.PlotWidget()
        self.plot.setLogMode(x=True, y=False)
        self.plot.setLabel("left", "mean log-likelihood per token")
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        follow_palette(self.plot)
        self.scatter = pg.ScatterPlotItem(size=6, pen=None)
        self.scatter.sigClicked.connect(self._on_point_clicked)
        self.plot.addItem(self.scatter)
        self.line = pg.InfiniteLine(
            angle=0,
            movable=True,
            pen=pg.mkPen(CUTOFF_COLOUR, width=2),
            hoverPen=pg.mkPen(CUTOFF_COLOUR, width=4),
            label="model_tail cut-off",
            labelOpts={"position": 0.1, "color": CUTOFF_COLOUR},
        )
        self.line.setVisible(False)
        self.line.sigPositionChanged.connect(self._on_line_moving)
        self.line.sigPositionChangeFinished.connect(self._on_line_dropped)
        self.plot.addItem(self.line)
        self.export_button = QPushButton("Export plot…")
        self.export_button.clicked.connect(self._on_export)

        self.list = QTableWidget(0, 5)
        self.list.setHorizontalHeaderLabels(
            ["QID", "Label", "Disagreement", "Statements", "Log-lik."]
        )
        self.list.verticalHeader().setVisible(False)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.list.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.list.cellDoubleClicked.connect(
            lambda row, _col: self.entity_requested.emit(self.found[row].qid)
        )
        self.list_label = QLabel()
        self._layout()

    def _layout(self) -> None:
        score_row = QHBoxLayout()
        score_row.addWidget(QLabel("Model"))
        score_row.addWidget(self.model_edit, 1)
        score_row.addWidget(self.browse_button)
        score_row.addWidget(self.lang_combo)
        score_row.addWidget(self.score_button)
        view_row = QHBoxLayout()
        view_row.addWidget(QLabel("Show"))
        view_row.addWidget(self.shown_combo, 1)
        view_row.addWidget(self.signal_combo)
        view_row.addWidget(QLabel("against"))
        view_row.addWidget(self.axis_combo)
        view_row.addWidget(self.export_button)
        plot_box = QWidget()
        plot_layout = QVBoxLayout(plot_box)
        plot_layout.setContentsMargins(0, 0, 0, 0)
        plot_layout.addWidget(self.correlation_label)
        plot_layout.addWidget(self.plot, 1)
        list_box = QWidget()
        list_layout = QVBoxLayout(list_box)
        list_layout.setContentsMargins(0, 0, 0, 0)
        list_layout.addWidget(self.list_label)
        list_layout.addWidget(self.list, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(plot_box)
        split.addWidget(list_box)
        split.setSizes([600, 300])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(score_row)
        layout.addLayout(view_row)
        layout.addWidget(split, 1)

    # -- what app hands over -----------------------------------------------------------------
    @property
    def signal(self) -> str:
        return str(self.signal_combo.currentData())

    @property
    def axis(self) -> str:
        return str(self.axis_combo.currentData())

    def show_view(self, view: LikelihoodView | None) -> None:
        """Show a category's scores; the saved cut-off when it is for these scores, else the
        default (the model's tail as large as the Wikidata long tail)."""
        self.view = view
        self.shown_combo.blockSignals(True)
        self.shown_combo.clear()
        if view is not None:
            for model, lang, n in view.models:
                self.shown_combo.addItem(f"{Path(model).name} · {lang} · {n} scored", (model, lang))
                if (model, lang) == (view.table.model, view.table.lang):
                    self.shown_combo.setCurrentIndex(self.shown_combo.count() - 1)
        self.shown_combo.blockSignals(False)
        saved = view.saved if view is not None else None
        if (
            saved is not None
            and view is not None
            and saved.model == view.table.model
            and saved.lang == view.table.lang
        ):
            index = self.signal_combo.findData(saved.signal)
            self.signal_combo.blockSignals(True)
            self.signal_combo.setCurrentIndex(max(index, 0))
            self.signal_combo.blockSignals(False)
            self.cutoff = saved.cutoff
            self._redraw()
        else:
            self._redraw(reset=True)

    def settings(self) -> CutoffSettings | None:
        if self.view is None or self.cutoff is None:
            return None
        return CutoffSettings(
            self.view.table.model, self.view.table.lang, self.signal, float(self.cutoff)
        )

    def set_wikidata_tiers(self, tiers: list[str | None]) -> None:
        """The members' Wikidata tiers changed (the Browser's, aligned with the view's
        qids): the disagreements are found again; the cut-off stays where it is."""
        from dataclasses import replace

        view = self.view
        if view is None or len(tiers) != len(view.table.qids):
            return
        self.view = replace(view, table=replace(view.table, tiers=tiers))
        self._update_disagreements()

    # -- drawing -----------------------------------------------------------------------------
    def _redraw(self, reset: bool = False) -> None:
        view = self.view
        table = view.table if view is not None else None
        if table is None or table.scored == 0:
            self.scatter.clear()
            self.line.setVisible(False)
            self.cutoff = None
            self.found = []
            self.list.setRowCount(0)
            self.list_label.setText("")
            self.correlation_label.setText(
                "No likelihoods in this session for this category: choose a model and "
                "score the members."
            )
            return
        values = table.values(self.signal)
        if reset or self.cutoff is None:
            self.cutoff = matched_cutoff(table, self.signal)
        counts = table.statements if self.axis == "statements" else table.sitelinks
        self._x = np.maximum(counts.astype(float), 1.0)
        self.plot.setLabel("bottom", dict(AXES)[self.axis] + " (log)")
        rho = {c.against: c for c in correlations(table, self.signal)}
        parts = []
        for key, title in AXES:
            c = rho[key]
            parts.append(
                f"{title.lower()}: ρ = n/a"
                if c.rho is None
                else f"{title.lower()}: ρ = {c.rho:+.3f} (p = {c.p_value:.2g})"
            )
        self.correlation_label.setText(
            f"Spearman rank correlation of the {self.signal} likelihood with "
            + ", ".join(parts)
            + f"; n = {table.scored} of {len(table.qids)} members"
        )
        finite = np.isfinite(values)
        if self.cutoff is not None:
            self.line.setVisible(True)
            self.line.blockSignals(True)
            self.line.setValue(self.cutoff)
            self.line.blockSignals(False)
        self._finite = np.flatnonzero(finite)
        self._update_disagreements()

    def _update_disagreements(self) -> None:
        view = self.view
        if view is None or self.cutoff is None:
            return
        table = view.table
        self.found = disagreements(table, self.cutoff, self.signal)
        kinds = {d.qid: d.kind for d in self.found}
        values = table.values(self.signal)
        spots = []
        for i in self._finite:
            colour = COLOURS[kinds.get(table.qids[i], "agree")]
            spots.append(
                {
                    "pos": (float(np.log10(self._x[i])), float(values[i])),
                    "data": table.qids[i],
                    "brush": pg.mkBrush(colour),
                    "size": 8 if table.qids[i] in kinds else 5,
                }
            )
        self.scatter.setData(spots)
        self.list.setRowCount(len(self.found))
        for row, d in enumerate(self.found):
            cells = (d.qid, d.label, KIND_WORDS[d.kind], f"{d.statements:,}", f"{d.loglik:.3f}")
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setForeground(pg.mkColor(COLOURS[d.kind]))
                self.list.setItem(row, col, item)
        tiers = model_tiers(values, self.cutoff)
        head = sum(1 for d in self.found if d.kind == HEAD_BY_COUNTS)
        self.list_label.setText(
            f"Cut-off {self.cutoff:.3f}: {tiers.count('model_tail')} model_tail. "
            f"Disagreements: {head} head by counts but tail by model, "
            f"{len(self.found) - head} the reverse (double-click to inspect)"
        )

    # -- user actions ------------------------------------------------------------------------
    def _on_line_moving(self) -> None:
        self.cutoff = float(self.line.value())
        self._update_disagreements()

    def _on_line_dropped(self) -> None:
        self.cutoff = float(self.line.value())
        self._update_disagreements()
        settings = self.settings()
        if settings is not None:
            self.cutoff_changed.emit(settings)

    def _on_point_clicked(self, _item, points, *_args) -> None:
        if len(points):
            self.entity_requested.emit(str(points[0].data()))

    def _on_score(self) -> None:
        model = self.model_edit.text().strip()
        if model:
            self.score_requested.emit(model, self.lang_combo.currentText())

    def _on_shown_picked(self, index: int) -> None:
        data = self.shown_combo.itemData(index)
        if data:
            self.view_requested.emit(*data)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Model folder")
        if folder:
            self.model_edit.setText(folder)

    def export(self, path: Path, options: ExportOptions | None = None) -> Path:
        """The scatter as shown (same points, the cut-off line), drawn with matplotlib by
        ``core.report.figures.scatter_figure`` as PNG, SVG or PDF by the file's suffix."""
        from core.report.figures import scatter_figure

        table = self.view.table if self.view is not None else None
        values = table.values(self.signal) if table is not None else np.zeros(0)
        xs = self._x[self._finite] if table is not None else np.zeros(0)
        ys = values[self._finite] if table is not None else np.zeros(0)
        title = "Likelihood against popularity"

        def make(size_in: tuple[float, float]) -> object:
            figure = scatter_figure(
                xs,
                ys,
                title=title,
                xlabel=dict(AXES)[self.axis],
                ylabel="mean log-likelihood per token",
                log_x=True,
                size_in=size_in,
            )
            if self.cutoff is not None and figure.axes:
                figure.axes[0].axhline(self.cutoff, color="#d62728", linewidth=1)
            return figure

        return export_figure(make, Path(path), title, options)

    def _on_export(self) -> None:
        chosen = ask_export(self, "likelihood")
        if chosen is not None:
            announce_written(self, self.export(*chosen))
