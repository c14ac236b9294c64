"""Plots follow the theme: dark background and light text in dark, and back (they were
white in the dark theme: pyqtgraph draws with its own options, not the palette)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from app.appearance import apply_theme
from widgets.distribution_plots import DistributionPlots
from widgets.likelihood import LikelihoodPanel
from widgets.report.plots import ReportPlots


def _lightness(colour: object) -> int:
    return QColor(colour).lightness()


def _panels(qtbot) -> tuple[DistributionPlots, ReportPlots, LikelihoodPanel]:
    panels = (DistributionPlots(), ReportPlots(), LikelihoodPanel())
    for widget in panels:
        qtbot.addWidget(widget)
    return panels


def test_plots_follow_light_and_dark(qtbot) -> None:
    app = QApplication.instance()
    distribution, report, likelihood = panels = _panels(qtbot)
    plots: list[pg.PlotWidget] = [*distribution.plot_widgets(), report.plot, likelihood.plot]
    assert len(panels) == 3
    try:
        apply_theme(app, "dark")
        QApplication.processEvents()
        for plot in plots:
            assert _lightness(plot.backgroundBrush().color()) < 100
            axis = plot.getPlotItem().getAxis("left")
            assert _lightness(axis.textPen().color()) > 150
        apply_theme(app, "light")
        QApplication.processEvents()
        for plot in plots:
            assert _lightness(plot.backgroundBrush().color()) > 200
            axis = plot.getPlotItem().getAxis("bottom")
            assert _lightness(axis.textPen().color()) < 100
    finally:
        apply_theme(app, "light")
