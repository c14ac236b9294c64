"""Writing a pyqtgraph plot to a PNG or SVG file: the one export path every panel uses.

PNG goes through pyqtgraph's ``ImageExporter`` (at least ``min_png_width`` pixels wide, so a
plot in a narrow dock still exports legibly). SVG goes through Qt's own ``QSvgGenerator``:
pyqtgraph's SVGExporter cannot parse the paths Qt 6.8+ writes (pyqtgraph issue #3485), and
rendering the scene with Qt's generator keeps the file faithful to what the panel shows.
"""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QRectF, QSize

# A widget not yet laid out (hidden tab, offscreen test) has no useful scene rect.
_UNLAID_RECT = (0, 0, 800, 500)


def export_plot(widget: pg.PlotWidget, path: Path, title: str, *,
                min_png_width: int = 800) -> Path:
    """Write ``widget``'s plot to ``path`` as PNG or SVG, chosen by the suffix.

    ``title`` becomes the SVG's ``<title>``. Any other suffix is a ``ValueError`` (the
    panels turn it into a message), raised before a file is created.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".png":
        import pyqtgraph.exporters as exporters

        exporter = exporters.ImageExporter(widget.getPlotItem())
        exporter.parameters()["width"] = max(min_png_width, widget.width())
        exporter.export(str(path))
    elif suffix == ".svg":
        from PySide6.QtGui import QPainter
        from PySide6.QtSvg import QSvgGenerator

        rect = widget.sceneRect() if widget.width() > 10 else QRectF(*_UNLAID_RECT)
        generator = QSvgGenerator()
        generator.setFileName(str(path))
        generator.setSize(QSize(int(rect.width()), int(rect.height())))
        generator.setViewBox(QRectF(0, 0, rect.width(), rect.height()))
        generator.setTitle(title)
        painter = QPainter(generator)
        try:
            widget.scene().render(painter, QRectF(0, 0, rect.width(), rect.height()), rect)
        finally:
            painter.end()
    else:
        raise ValueError(f"plots export to .png or .svg, not {suffix or 'no suffix'}")
    return path


__all__ = ["export_plot"]
