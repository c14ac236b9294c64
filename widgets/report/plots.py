"""The Report panel's plots, drawn with pyqtgraph from ``core.report.PlotSpec`` s.

* ``box``: one Tukey box per group (whiskers at 1.5 IQR, outliers as rings), from
  ``core.report.figures.box_stats``, the statistics the exported figures and the HTML report use;
* ``distribution``: overlaid step histograms, each as the share of its group's items
  (head and long tail have different sizes, so counts would mislead);
* ``scatter``: entity perplexity against statement count, both axes log10.

Perplexities (``spec.log10``) are drawn on a log10 axis (METHODS §8): values are
transformed here and the axis labels show the original numbers. Each plot exports to PNG
(chosen size and dpi), SVG or PDF, drawn by ``core.report.figures`` with matplotlib from the same
``PlotSpec`` (``widgets.plot_export``, the helper the Browser's plots use).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from core.report import PlotSpec
from core.report.figures import (
    BINS,
    MAX_OUTLIERS,
    MAX_POINTS,
    PALETTE,
    BoxStats,
    box_stats,
    plot_values,
)
from widgets.plot_export import ExportOptions, export_figure
from widgets.plot_theme import follow_palette
from widgets.theme import set_muted

# Past this many groups a box plot lies on its side: one labelled row per group.
HORIZONTAL_GROUPS = 8


class _LogAxis(pg.AxisItem):
    """An axis over log10 values whose labels read as the original numbers."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.log_values = False

    def tickStrings(self, values, scale, spacing):  # pyqtgraph's name
        if not self.log_values:
            return super().tickStrings(values, scale, spacing)
        return [f"{10**v:.3g}" for v in values]


class ReportPlots(QWidget):
    """A picker of the report's plots, the chosen plot, and its export buttons."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        pg.setConfigOptions(antialias=True, background="w", foreground="k")
        self.specs: list[PlotSpec] = []
        self.boxes: list[BoxStats] = []  # of the plot shown, for tests and tooltips
        self.horizontal = False  # the boxes lie on their side (many groups)
        self.left_axis = _LogAxis("left")
        self.bottom_axis = _LogAxis("bottom")
        self.plot = pg.PlotWidget(axisItems={"left": self.left_axis, "bottom": self.bottom_axis})
        self.plot.setMinimumHeight(200)  # legible on a laptop screen: at least 200 px tall
        # A resize that changes which way the boxes fit redraws once it settles.
        self._redraw = QTimer(self)
        self._redraw.setSingleShot(True)
        self._redraw.setInterval(150)
        self._redraw.timeout.connect(self._draw_current)
        follow_palette(self.plot)
        for axis in (self.left_axis, self.bottom_axis):
            axis.enableAutoSIPrefix(False)  # "share (x0.001)" reads worse than 0.25
        self.picker = QComboBox()
        self.picker.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.picker.setMinimumContentsLength(8)
        self.picker.currentIndexChanged.connect(self._on_picked)
        self.export_button = QPushButton("Export…")
        self.export_button.setMinimumWidth(48)
        self.export_button.setMaximumWidth(80)
        self.export_button.setToolTip(
            "Export this plot for a paper: PNG (300 dpi by "
            "default), SVG or PDF, at a size you choose"
        )
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        set_muted(self.caption)
        row = QHBoxLayout()
        row.addWidget(self.picker, 1)
        row.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.caption)
        self.set_specs([])

    # -- data --------------------------------------------------------------------------------
    def set_specs(self, specs: Sequence[PlotSpec]) -> None:
        self.specs = list(specs)
        self.picker.blockSignals(True)
        self.picker.clear()
        for spec in self.specs:
            self.picker.addItem(spec.title)
        self.picker.blockSignals(False)
        for widget in (self.picker, self.export_button):
            widget.setEnabled(bool(self.specs))
        if self.specs:
            self.show_plot(0)
        else:
            self._clear()
            self.caption.setText("No plots: build the report first.")

    def show_plot(self, index: int) -> None:
        if self.picker.currentIndex() != index:
            self.picker.setCurrentIndex(index)  # draws through _on_picked
            return
        self.draw(self.specs[index])

    def current_spec(self) -> PlotSpec | None:
        index = self.picker.currentIndex()
        return self.specs[index] if 0 <= index < len(self.specs) else None

    def _draw_current(self) -> None:
        spec = self.current_spec()
        if spec is not None:
            self.draw(spec)

    def _on_picked(self, index: int) -> None:
        if 0 <= index < len(self.specs):
            self.draw(self.specs[index])

    # -- drawing -----------------------------------------------------------------------------
    def _lies_flat(self) -> bool:
        """Whether the boxes are drawn on their side: past ``HORIZONTAL_GROUPS`` groups,
        or where the upright labels would not fit their slots at the plot's width."""
        return len(self.boxes) > HORIZONTAL_GROUPS or not self._labels_fit()

    def _labels_fit(self) -> bool:
        """Whether every upright box's label ("model · tier" on two lines, n under it)
        fits the width of its slot; a plot not laid out yet is taken to fit."""
        if not self.boxes or not self.plot.isVisible():
            return True
        width = self.plot.width()
        metrics = self.fontMetrics()
        widest = max(
            metrics.horizontalAdvance(line)
            for b in self.boxes
            for line in (*_wrap(b.label).split("\n"), f"n={b.n:,}")
        )
        slot = (width - 70) / len(self.boxes)  # less the value axis and margins
        return widest + 8 <= slot

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 (Qt)
        super().resizeEvent(event)
        spec = self.current_spec()
        boxes = spec is not None and spec.kind == "box" and bool(self.boxes)
        if boxes and self.horizontal != self._lies_flat():  # the other way suits this width
            self._redraw.start()

    def _clear(self) -> pg.PlotItem:
        item = self.plot.getPlotItem()
        item.clear()
        if item.legend is not None:
            item.legend.scene().removeItem(item.legend)
            item.legend = None
        item.setLogMode(x=False, y=False)
        item.setTitle(None)
        item.setLabel("left", "")
        item.setLabel("bottom", "")
        self.left_axis.log_values = self.bottom_axis.log_values = False
        self.bottom_axis.setTicks(None)
        self.bottom_axis.setHeight(None)
        self.left_axis.setTicks(None)
        self.left_axis.setWidth(None)
        self.horizontal = False
        self.boxes = []
        return item

    def draw(self, spec: PlotSpec) -> None:
        item = self._clear()
        # No title inside the plot: the picker above names it, and pyqtgraph makes a
        # title's text width the plot's minimum, which widened a narrow dock's plot past
        # its edge (the exported figures keep their titles).
        self.plot.setToolTip(spec.title)
        item.showGrid(x=spec.kind != "box", y=True, alpha=0.2)
        if spec.kind == "box":
            self._draw_boxes(item, spec)
        elif spec.kind == "distribution":
            self._draw_distribution(item, spec)
        elif spec.kind == "scatter":
            self._draw_scatter(item, spec)
        item.enableAutoRange()

    def _draw_boxes(self, item: pg.PlotItem, spec: PlotSpec) -> None:
        """Vertical boxes side by side; past ``HORIZONTAL_GROUPS`` groups (16 WebNLG 2020
        systems overprinted into one line), or where the labels would not fit their slots
        at this width (8 "model · tier" groups at 1366 × 768 touched), horizontal boxes,
        one labelled row each."""
        self.boxes = [
            b
            for b in (box_stats(label, values, spec.log10) for label, values in spec.groups)
            if b is not None
        ]
        self.horizontal = horizontal = self._lies_flat()
        value_axis = self.bottom_axis if horizontal else self.left_axis
        value_axis.log_values = spec.log10
        item.setLabel(
            "bottom" if horizontal else "left",
            spec.ylabel + (" (log10 axis)" if spec.log10 else ""),
        )
        if not self.boxes:
            self.caption.setText("No values to plot.")
            return
        # The first group on top when horizontal (read down the list, as in the table).
        where = [
            float(len(self.boxes) - 1 - i) if horizontal else float(i)
            for i in range(len(self.boxes))
        ]
        pens = [pg.mkPen(PALETTE[i % len(PALETTE)], width=1.5) for i in range(len(where))]
        self._box_bars(item, where, pens)
        for i, box in enumerate(self.boxes):
            self._box_marks(item, box, where[i], PALETTE[i % len(PALETTE)], pens[i])
        self._label_boxes(item, where)
        self.caption.setText(
            "Boxes: quartiles; thick line: median; whiskers: last values within 1.5 IQR; "
            "rings: outliers." + (" Log10 axis." if spec.log10 else "")
        )

    def _xy(self, position: Sequence[float], values: Sequence[float]) -> tuple[list, list]:
        """(x, y) of points at ``position`` along the groups and ``values``."""
        if self.horizontal:
            return list(values), list(position)
        return list(position), list(values)

    def _box_bars(self, item: pg.PlotItem, where: list[float], pens: list) -> None:
        """The boxes themselves, q1 to q3, as one bar item."""
        q1 = np.array([b.q1 for b in self.boxes])
        q3 = np.array([b.q3 for b in self.boxes])
        span = np.maximum(q3 - q1, 1e-12)
        brushes = [pg.mkBrush(PALETTE[i % len(PALETTE)] + "44") for i in range(len(where))]
        if self.horizontal:
            self.box_item = pg.BarGraphItem(
                x0=q1, y=np.array(where), width=span, height=0.6, brushes=brushes, pens=pens
            )
        else:
            self.box_item = pg.BarGraphItem(
                x=np.array(where), y0=q1, height=span, width=0.6, brushes=brushes, pens=pens
            )
        item.addItem(self.box_item)

    def _box_marks(
        self, item: pg.PlotItem, box: BoxStats, at: float, colour: str, pen: Any
    ) -> None:
        """One box's whiskers and caps, its median and its outliers (thinned)."""
        # whiskers and caps, then the median, as line pairs
        position = [at, at, at, at, at - 0.15, at + 0.15, at - 0.15, at + 0.15]
        low, high = box.whisker_low, box.whisker_high
        values = [low, box.q1, box.q3, high, low, low, high, high]
        item.addItem(pg.PlotDataItem(*self._xy(position, values), connect="pairs", pen=pen))
        item.addItem(
            pg.PlotDataItem(
                *self._xy([at - 0.3, at + 0.3], [box.median, box.median]),
                pen=pg.mkPen(colour, width=3),
            )
        )
        if box.outliers.size:
            shown = box.outliers[:: max(1, box.outliers.size // MAX_OUTLIERS)]
            item.addItem(
                pg.ScatterPlotItem(
                    *self._xy([at] * shown.size, shown),
                    size=5,
                    symbol="o",
                    pen=pg.mkPen(colour),
                    brush=None,
                )
            )

    def _label_boxes(self, item: pg.PlotItem, where: list[float]) -> None:
        """Each group's label and count on the group axis, which is sized to them."""
        if self.horizontal:  # one line a row: "label (n=…)", the axis as wide as the longest
            ticks = [
                (where[i], f"{b.label.replace('_', ' ')} (n={b.n:,})")
                for i, b in enumerate(self.boxes)
            ]
            self.left_axis.setTicks([ticks, []])
            longest = max(self.fontMetrics().horizontalAdvance(t) for _, t in ticks)
            self.left_axis.setWidth(min(longest + 16, 320))
            item.setYRange(-0.6, len(self.boxes) - 0.4, padding=0)
        else:  # long labels ("model · tier") take two lines, with n under them
            ticks = [(where[i], f"{_wrap(b.label)}\nn={b.n:,}") for i, b in enumerate(self.boxes)]
            self.bottom_axis.setTicks([ticks, []])
            lines = max(t.count("\n") + 1 for _, t in ticks)
            self.bottom_axis.setHeight(12 + 14 * lines)
            item.setXRange(-0.6, len(self.boxes) - 0.4, padding=0)

    def _draw_distribution(self, item: pg.PlotItem, spec: PlotSpec) -> None:
        cleaned = [(label, plot_values(values, spec.log10)) for label, values in spec.groups]
        cleaned = [(label, v) for label, v in cleaned if v.size]
        self.bottom_axis.log_values = spec.log10
        item.setLabel("bottom", spec.xlabel + (" (log10 axis)" if spec.log10 else ""))
        item.setLabel("left", "share of the group's items")
        if not cleaned:
            self.caption.setText("No values to plot.")
            return
        everything = np.concatenate([v for _, v in cleaned])
        low, high = float(everything.min()), float(everything.max())
        if high <= low:
            low, high = low - 0.5, high + 0.5
        edges = np.linspace(low, high, BINS + 1)
        item.addLegend(offset=(-10, 10))
        for i, (label, values) in enumerate(cleaned):
            colour = PALETTE[i % len(PALETTE)]
            share = np.histogram(values, bins=edges)[0] / values.size
            item.addItem(
                pg.PlotDataItem(
                    edges,
                    share,
                    stepMode="center",
                    pen=pg.mkPen(colour, width=2),
                    fillLevel=0,
                    brush=pg.mkBrush(colour + "30"),
                    name=f"{label.replace('_', ' ')} (n={values.size:,})",
                )
            )
        self.caption.setText("Each line: the share of that group's items in each bin.")

    def _draw_scatter(self, item: pg.PlotItem, spec: PlotSpec) -> None:
        xs, ys = np.asarray(spec.x, dtype=float), np.asarray(spec.y, dtype=float)
        keep = np.isfinite(xs) & np.isfinite(ys)
        if spec.log_x:
            keep &= xs > 0
        if spec.log10:
            keep &= ys > 0
        xs, ys = xs[keep], ys[keep]
        step = max(1, xs.size // MAX_POINTS)
        xs, ys = xs[::step], ys[::step]
        item.setLabel("bottom", spec.xlabel + (" (log10 axis)" if spec.log_x else ""))
        item.setLabel("left", spec.ylabel + (" (log10 axis)" if spec.log10 else ""))
        self.bottom_axis.log_values, self.left_axis.log_values = spec.log_x, spec.log10
        if not xs.size:
            self.caption.setText("No values to plot.")
            return
        px = np.log10(xs) if spec.log_x else xs
        py = np.log10(ys) if spec.log10 else ys
        self.scatter_item = pg.ScatterPlotItem(
            px, py, size=5, pen=None, brush=pg.mkBrush(PALETTE[0] + "88")
        )
        item.addItem(self.scatter_item)
        self.caption.setText(
            f"{xs.size:,} verbalisations; each point: one text's entity "
            "perplexity and its root entity's statement count."
        )

    # -- export ------------------------------------------------------------------------------
    def export(self, path: Path, options: ExportOptions | None = None) -> Path:
        """Write the shown plot as PNG, SVG or PDF (by the file's suffix), drawn with
        matplotlib from the plot's data (``PlotSpec.figure``)."""
        spec = self.current_spec()
        if spec is None:
            raise ValueError("no plot to export: build the report first")
        return export_figure(spec.figure, Path(path), spec.title, options)

    def export_all(
        self,
        folder: Path,
        options: ExportOptions | None = None,
        suffixes: Sequence[str] = (".png", ".svg", ".pdf"),
    ) -> list[Path]:
        """Every plot in each format into ``folder`` (``NN-<kind>-<metric>.<suffix>``), in
        this thread (the panel runs ``export_all_job`` through the job runner instead)."""
        from core.jobs import JobSucceeded, run_job

        outcome = run_job(self.export_all_job(folder, options, suffixes))
        if not isinstance(outcome, JobSucceeded):
            raise getattr(outcome, "error", RuntimeError("export cancelled"))
        return outcome.result

    def export_all_job(
        self,
        folder: Path,
        options: ExportOptions | None = None,
        suffixes: Sequence[str] = (".png", ".svg", ".pdf"),
    ):
        """The core job writing every plot (``core.report.figures.export_figures_job``)."""
        from core.report.figures import export_figures_job

        options = options or ExportOptions()
        return export_figures_job(
            self.specs, folder, suffixes=suffixes, dpi=options.dpi, size_in=options.size_in
        )


def _wrap(label: str) -> str:
    """ "model · tier" on two lines; underscores read as spaces."""
    return label.replace(" · ", "\n").replace("_", " ")


__all__ = ["BoxStats", "ReportPlots", "box_stats", "plot_values"]
