"""The one PNG/SVG export helper behind the Browser's and the Report's plots."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QImage

from widgets.plot_export import export_plot


@pytest.fixture
def widget(qtbot) -> pg.PlotWidget:
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.resize(400, 300)
    plot.plot([1, 2, 3, 4], [1, 4, 9, 16])
    return plot


def test_png_is_at_least_the_minimum_width(widget: pg.PlotWidget, tmp_path: Path) -> None:
    for minimum in (800, 900):
        path = export_plot(widget, tmp_path / f"p{minimum}.PNG", "t", min_png_width=minimum)
        assert path == tmp_path / f"p{minimum}.PNG"  # suffix matched case-insensitively
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        # The widget is 400 px wide: the minimum decides.
        assert QImage(str(path)).width() == minimum


def test_svg_carries_the_title(widget: pg.PlotWidget, tmp_path: Path) -> None:
    path = export_plot(widget, tmp_path / "p.svg", "Statements per entity")
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    titles = [e.text for e in root.iter() if e.tag.endswith("title")]
    assert titles == ["Statements per entity"]


def test_other_suffixes_are_refused_before_writing(widget: pg.PlotWidget,
                                                  tmp_path: Path) -> None:
    for name in ("p.pdf", "p"):
        with pytest.raises(ValueError, match=r"\.png or \.svg, not"):
            export_plot(widget, tmp_path / name, "t")
    assert list(tmp_path.iterdir()) == []
