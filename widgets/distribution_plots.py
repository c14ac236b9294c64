"""The three views of a statement-count distribution, with draggable cut-off lines.

* histogram of statement counts on log-spaced bins (x: statements, log axis);
* rank–frequency on log–log axes (x: rank, y: statements);
* the cumulative share (Lorenz) curve (x: share of entities, y: share of statements).

Cut-offs are statement counts. They are drawn as vertical lines on the histogram,
horizontal lines on the rank–frequency plot and, on the Lorenz curve, as vertical
lines at the share of entities they put in the head. Dragging any of them emits
``line_moved(kind, statements)``; the panel re-tiers and calls :meth:`set_lines`,
which moves the same line on the other plots. Only the lines :meth:`set_active` names
can be dragged; the others (the head line of the rule not splitting) are drawn faint
and dashed, for reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGraphicsItem, QTabWidget, QVBoxLayout, QWidget

from core.report.figures import TIER_PLOTS, tier_figure
from core.tiers.cutoffs import Distribution
from widgets.plot_export import ExportOptions, export_figure
from widgets.plot_theme import follow_palette
from widgets.theme import on_palette_change, tone

# Each line's colour is a tone (widgets.theme.TONES), in the theme's variant: the light
# theme's dark red was 1.9:1 on the dark theme's plot background.
LINE_STYLES = {
    "pareto": ("head", "Pareto cut-off"),
    "head_tail": ("error", "Head–tail threshold"),
    "torso": ("torso", "Torso line"),
}
# Labels at different heights, so close lines keep readable labels.
LABEL_POSITIONS = {"pareto": 0.93, "head_tail": 0.78, "torso": 0.63}
# On horizontal lines the labels end at these fractions of the width (right-aligned, so the
# last one never runs past the plot's right edge: "Pareto cut-o" at 1366×768), a label's
# width apart.
H_LABEL_POSITIONS = {"pareto": 0.99, "head_tail": 0.64, "torso": 0.29}
H_LABEL_ANCHORS = [(1, 0), (1, 1)]  # right edge on the line: above it, or below it
INACTIVE_ALPHA = "70"  # of 255: a line shown for reference only
SERIES_COLOURS = ("#2b7bb9", "#3a9e5f", "#b9472b", "#8a6fb3", "#b99b2b", "#555555")


@dataclass(frozen=True)
class Series:
    name: str
    distribution: Distribution


class _CutoffLines:
    """One set of lines on one plot, mapping statement counts to plot coordinates."""

    def __init__(self, plot: pg.PlotItem, orientation: str, to_plot, from_plot) -> None:
        self.plot = plot
        self.to_plot = to_plot
        self.from_plot = from_plot
        self.lines: dict[str, pg.InfiniteLine] = {}
        self.active: dict[str, bool] = {}
        angle = 90 if orientation == "vertical" else 0
        for kind, (name, title) in LINE_STYLES.items():
            colour = tone(name)
            line = pg.InfiniteLine(
                angle=angle,
                movable=True,
                pen=active_pen(colour),
                hoverPen=pg.mkPen(colour, width=4),
                label=title,
                labelOpts=(
                    {"position": LABEL_POSITIONS[kind], "color": colour, "movable": True}
                    if angle == 90
                    else {
                        "position": H_LABEL_POSITIONS[kind],
                        "anchors": H_LABEL_ANCHORS,
                        "color": colour,
                        "movable": True,
                    }
                ),
            )
            line.setZValue(10)
            line.setVisible(False)
            plot.addItem(line, ignoreBounds=True)
            self.lines[kind] = line

    def set_active(self, kind: str, active: bool) -> None:
        """A line the user can drag (solid), or one shown for reference only (faint,
        dashed, not movable, not highlighted under the mouse)."""
        line = self.lines[kind]
        self.active[kind] = active
        colour = tone(LINE_STYLES[kind][0])
        line.setMovable(active)
        line.setPen(active_pen(colour) if active else inactive_pen(colour))
        line.setHoverPen(pg.mkPen(colour, width=4) if active else inactive_pen(colour))
        line.setZValue(10 if active else 5)
        line.label.setColor(pg.mkColor(colour if active else colour + INACTIVE_ALPHA))

    def recolour(self) -> None:
        """The lines again in the theme's colours (after a switch of theme)."""
        for kind in self.lines:
            self.set_active(kind, self.active.get(kind, True))


def active_pen(colour: str):  # -> QPen
    return pg.mkPen(colour, width=2)


def inactive_pen(colour: str):  # -> QPen
    return pg.mkPen(colour + INACTIVE_ALPHA, width=1, style=Qt.PenStyle.DashLine)


class _LogAxis(pg.AxisItem):
    """A log10 axis labelled 1, 2, 5, 10, 20, 50 …: the other minor ticks keep their
    grid lines but no label (pyqtgraph's "3·10¹4·10¹5·10¹" ran together on a wide plot)."""

    def logTickStrings(self, values, scale, spacing):  # pyqtgraph's name
        strings = []
        for value in values:
            number = 10 ** float(value) * scale
            mantissa = round(number / 10 ** math.floor(math.log10(number)), 6) if number > 0 else 0
            if mantissa not in (1, 2, 5):
                strings.append("")
            elif number >= 1:
                strings.append(f"{number:,.0f}")
            else:
                strings.append(f"{number:g}")
        return strings


class DistributionPlots(QWidget):
    line_moved = Signal(str, float)  # kind ("pareto" | "head_tail" | "torso"), statements

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        pg.setConfigOptions(antialias=True, background="w", foreground="k")
        self.series: list[Series] = []
        self._values: dict[str, float | None] = {k: None for k in LINE_STYLES}
        self._syncing = False

        self.histogram = pg.PlotWidget(axisItems={"bottom": _LogAxis("bottom")})
        self.rank_frequency = pg.PlotWidget(
            axisItems={"bottom": _LogAxis("bottom"), "left": _LogAxis("left")}
        )
        self.lorenz = pg.PlotWidget()
        hist, rank, lorenz = (w.getPlotItem() for w in self.plot_widgets())
        hist.setLogMode(x=True, y=False)
        hist.setLabel("bottom", "statements per entity (log scale)")
        hist.setLabel("left", "share of entities")
        rank.setLogMode(x=True, y=True)
        rank.setLabel("bottom", "rank (log)")
        rank.setLabel("left", "statements (log)")
        lorenz.setLabel("bottom", "share of entities, most statements first")
        lorenz.setLabel("left", "cumulative share of statements")
        lorenz.setXRange(0, 1)
        lorenz.setYRange(0, 1)
        for item in (hist, rank, lorenz):
            item.showGrid(x=True, y=True, alpha=0.2)
            item.addLegend(offset=(-10, 10))
            item.getAxis("left").enableAutoSIPrefix(False)
            for name in ("left", "bottom", "top", "right"):
                # Axes (text and grid) are slow to draw; as cached pixmaps a dragged line
                # repaints without redrawing them (25 ms -> a few ms per move).
                item.getAxis(name).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

        follow_palette(*self.plot_widgets())
        self._line_sets = [
            _CutoffLines(hist, "vertical", _log10, _pow10),
            _CutoffLines(rank, "horizontal", _log10, _pow10),
            _CutoffLines(lorenz, "vertical", self._count_to_share, self._share_to_count),
        ]
        on_palette_change(self, lambda: [lines.recolour() for lines in self._line_sets])
        for line_set in self._line_sets:
            for kind, line in line_set.lines.items():
                line.sigPositionChanged.connect(
                    lambda _line, k=kind, s=line_set: self._on_dragged(k, s)
                )

        self.tabs = QTabWidget()
        self.tabs.addTab(self.histogram, "Histogram")
        self.tabs.addTab(self.rank_frequency, "Rank–frequency")
        self.tabs.addTab(self.lorenz, "Cumulative share")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

    def plot_widgets(self) -> tuple[pg.PlotWidget, pg.PlotWidget, pg.PlotWidget]:
        return self.histogram, self.rank_frequency, self.lorenz

    # -- data --------------------------------------------------------------------------------
    def set_series(self, series: list[Series]) -> None:
        """Show one or more categories; with several, each is normalised to compare tails."""
        self.series = series
        hist, rank, lorenz = (w.getPlotItem() for w in self.plot_widgets())
        for item in (hist, rank, lorenz):
            for data_item in list(item.listDataItems()):
                item.removeItem(data_item)
        normalise_rank = len(series) > 1
        rank.setLabel("bottom", "rank / n (log)" if normalise_rank else "rank (log)")
        for i, entry in enumerate(series):
            dist = entry.distribution
            if dist.n == 0:
                continue
            colour = SERIES_COLOURS[i % len(SERIES_COLOURS)]
            pen = pg.mkPen(colour, width=2)
            histogram = dist.integer_log_histogram()
            if len(histogram.counts):
                brush = pg.mkBrush(colour + ("60" if len(series) > 1 else "90"))
                hist.addItem(
                    pg.PlotDataItem(
                        histogram.edges,
                        histogram.counts / dist.n,
                        stepMode="center",
                        fillLevel=0,
                        brush=brush,
                        pen=pen,
                        name=entry.name,
                    )
                )
            ranks, values = dist.rank_frequency()
            positive = values > 0
            x = ranks[positive] / (dist.n if normalise_rank else 1)
            rank.addItem(pg.PlotDataItem(x, values[positive], pen=pen, name=entry.name))
            xs, ys = dist.lorenz_curve()
            lorenz.addItem(pg.PlotDataItem(xs, ys, pen=pen, name=entry.name))
        if series:
            diagonal = pg.mkPen("#999999", style=Qt.PenStyle.DashLine)
            lorenz.addItem(pg.PlotDataItem([0, 1], [0, 1], pen=diagonal))
        self._place_lines()

    def set_lines(
        self, pareto: float | None, head_tail: float | None, torso: float | None = None
    ) -> None:
        """Put the cut-off lines at these statement counts (None hides a line)."""
        self._values = {"pareto": pareto, "head_tail": head_tail, "torso": torso}
        self._place_lines()

    def set_active(self, movable: dict[str, bool]) -> None:
        """Which lines the user can drag (kind -> bool); the others are drawn faint."""
        for line_set in self._line_sets:
            for kind, active in movable.items():
                line_set.set_active(kind, active)

    def is_active(self, kind: str) -> bool:
        return bool(self._line_sets[0].lines[kind].movable)

    def export(
        self, path: Path, which: int | None = None, options: ExportOptions | None = None
    ) -> Path:
        """Write the shown plot (or plot ``which``) as PNG, SVG or PDF, by the file's
        suffix: drawn by ``core.report.figures.tier_figure`` with matplotlib from the same series
        and cut-off lines as the panel."""
        current = self.tabs.currentWidget()
        if which is None and current not in self.plot_widgets() and hasattr(current, "export"):
            return current.export(path, options)  # a tab another module added (Likelihood)
        index = self.tabs.currentIndex() if which is None else which
        series = [(entry.name, entry.distribution) for entry in self.series]
        lines = dict(self._values)
        return export_figure(
            lambda size_in: tier_figure(TIER_PLOTS[index], series, lines, size_in=size_in),
            path,
            self.tabs.tabText(index),
            options,
        )

    # -- lines -------------------------------------------------------------------------------
    def _place_lines(self) -> None:
        self._syncing = True
        try:
            for line_set in self._line_sets:
                for kind, line in line_set.lines.items():
                    value = self._values.get(kind)
                    visible = value is not None and bool(self.series)
                    line.setVisible(visible)
                    if visible:
                        line.setValue(line_set.to_plot(max(float(value), 1.0)))
        finally:
            self._syncing = False

    def _on_dragged(self, kind: str, line_set: _CutoffLines) -> None:
        if self._syncing:
            return
        statements = float(line_set.from_plot(line_set.lines[kind].value()))
        self._values[kind] = statements
        self._place_lines()
        self.line_moved.emit(kind, statements)

    def _primary(self) -> Distribution | None:
        return self.series[0].distribution if self.series else None

    def _count_to_share(self, statements: float) -> float:
        dist = self._primary()
        return dist.entity_share_at_or_above(statements) if dist is not None else 0.0

    def _share_to_count(self, share: float) -> float:
        dist = self._primary()
        return dist.count_at_entity_share(share) if dist is not None else 1.0


def _log10(value: float) -> float:
    return float(np.log10(max(value, 1e-9)))


def _pow10(value: float) -> float:
    return float(10.0**value)
