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


def test_muted_rich_text_reads_on_light_and_dark() -> None:
    """Secondary text in HTML (which cannot say palette(mid)) is a grey between the text
    and window colours: dark on light, light on dark (#555 vanished on #2b2b2b)."""
    from PySide6.QtGui import QPalette

    from widgets.theme import dark_palette, muted_colour

    light = QPalette(QColor("#efefef"))
    light.setColor(QPalette.ColorRole.WindowText, QColor("#000000"))
    assert 80 <= _lightness(muted_colour(light)) <= 140
    dark = dark_palette()
    window = _lightness(dark.color(QPalette.ColorRole.Window))
    assert _lightness(muted_colour(dark)) - window > 80
