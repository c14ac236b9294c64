"""Exported figures render as the PNG of the same figure: each SVG (Qt's QSvgRenderer, and
librsvg's rsvg-convert where installed) and PDF (pdftoppm where installed) is rasterised
and compared with the PNG, cell by cell and by the bounding box of what is drawn. A plot
drawn in the wrong place (pyqtgraph's SVG bug) fails the comparison; the
comparison itself is shown to fail on such a file."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

from core.report.figures import (
    box_figure,
    box_stats,
    distribution_figure,
    save_figure,
    scatter_figure,
    tier_figure,
)
from core.tiers.cutoffs import Distribution

DPI = 100  # 6.4 × 3.6 in -> 640 × 360 px
WIDTH, HEIGHT = 640, 360
SIZE = (6.4, 3.6)
rng = np.random.default_rng(7)
BLEU = [
    ("model-a · head", list(rng.uniform(20, 90, 60))),
    ("model-a · long_tail", list(rng.uniform(0, 60, 60)) + [99.0]),
]
PPL = [
    ("model-a · head", list(10 ** rng.normal(1.2, 0.3, 80))),
    ("model-a · long_tail", list(10 ** rng.normal(1.8, 0.4, 80)) + [5e4]),
]
COUNTS = list(rng.zipf(1.8, 400) % 3000 + 1)

FIGURES = {
    "box-bleu": lambda: box_figure(
        BLEU, title="BLEU by tier", ylabel="BLEU", metric="bleu", size_in=SIZE
    ),
    "box-ppl": lambda: box_figure(
        PPL, title="PPL by tier", ylabel="PPL", log10=True, metric="ppl", size_in=SIZE
    ),
    "distribution": lambda: distribution_figure(
        BLEU, title="BLEU", xlabel="BLEU", metric="bleu", size_in=SIZE
    ),
    "scatter": lambda: scatter_figure(
        COUNTS[:161],
        [v for _, g in PPL for v in g],
        title="ppl",
        xlabel="statements",
        ylabel="PPL",
        log_x=True,
        log_y=True,
        metric="entity_ppl",
        size_in=SIZE,
    ),
    "histogram": lambda: tier_figure(
        "histogram", [("City", Distribution(COUNTS))], {"pareto": 40, "head_tail": 12}, size_in=SIZE
    ),
    "rank_frequency": lambda: tier_figure(
        "rank_frequency", [("City", Distribution(COUNTS))], {"pareto": 40}, size_in=SIZE
    ),
    "lorenz": lambda: tier_figure(
        "lorenz",
        [("City", Distribution(COUNTS)), ("River", Distribution(COUNTS[::2]))],
        {"head_tail": 12},
        size_in=SIZE,
    ),
}


def _gray(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_Grayscale8)
    width, height = image.width(), image.height()
    raw = np.frombuffer(image.constBits(), dtype=np.uint8)
    return raw.reshape(height, image.bytesPerLine())[:, :width].astype(float) / 255


def _svg_raster(svg: bytes, width: int, height: int) -> np.ndarray:
    renderer = QSvgRenderer(svg)
    assert renderer.isValid()
    image = QImage(width, height, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    renderer.render(painter, QRectF(0, 0, width, height))
    painter.end()
    return _gray(image)


def _cells(gray: np.ndarray, cells: int = 16) -> np.ndarray:
    """Mean ink per ``cells``-pixel square: the renderers' different anti-aliasing of the
    same glyph outlines averages out (measured: at most 0.008 apart for these figures with
    Qt, librsvg and poppler; boxes moved by 20 pt: 0.018)."""
    h, w = (gray.shape[0] // cells) * cells, (gray.shape[1] // cells) * cells
    return gray[:h, :w].reshape(h // cells, cells, w // cells, cells).mean(axis=(1, 3))


def _ink_box(gray: np.ndarray) -> tuple[int, int, int, int]:
    rows, cols = np.nonzero(gray < 0.85)
    return int(rows.min()), int(rows.max()), int(cols.min()), int(cols.max())


def differences(reference: np.ndarray, other: np.ndarray) -> tuple[float, int]:
    """Mean absolute difference of the cells, and the largest bounding-box offset (px)."""
    assert reference.shape == other.shape
    mean = float(np.abs(_cells(reference) - _cells(other)).mean())
    offset = max(abs(a - b) for a, b in zip(_ink_box(reference), _ink_box(other), strict=True))
    return mean, offset


def assert_same_picture(reference: np.ndarray, other: np.ndarray, what: str) -> None:
    mean, offset = differences(reference, other)
    assert mean < 0.012 and offset <= 3, f"{what}: mean difference {mean:.4f}, box {offset}px"


def _png(tmp_path: Path, name: str) -> np.ndarray:
    path = save_figure(FIGURES[name](), tmp_path / f"{name}.png", dpi=DPI)
    image = QImage(str(path))
    assert (image.width(), image.height()) == (WIDTH, HEIGHT)
    return _gray(image)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_svg_renders_as_the_png(name: str, tmp_path: Path) -> None:
    reference = _png(tmp_path, name)
    svg = save_figure(FIGURES[name](), tmp_path / f"{name}.svg", title=name)
    assert f"<dc:title>{name}</dc:title>" in svg.read_text(encoding="utf-8")
    assert_same_picture(reference, _svg_raster(svg.read_bytes(), WIDTH, HEIGHT), f"{name}.svg (Qt)")
    if shutil.which("rsvg-convert"):
        out = tmp_path / f"{name}-rsvg.png"
        subprocess.run(
            [
                "rsvg-convert",
                "-w",
                str(WIDTH),
                "-h",
                str(HEIGHT),
                "-b",
                "white",
                "-o",
                str(out),
                str(svg),
            ],
            check=True,
        )
        assert_same_picture(reference, _gray(QImage(str(out))), f"{name}.svg (librsvg)")


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_pdf_renders_as_the_png(name: str, tmp_path: Path) -> None:
    if not shutil.which("pdftoppm"):
        pytest.skip("pdftoppm (poppler-utils) is not installed")
    reference = _png(tmp_path, name)
    pdf = save_figure(FIGURES[name](), tmp_path / f"{name}.pdf", title=name)
    assert pdf.read_bytes()[:5] == b"%PDF-"
    subprocess.run(
        [
            "pdftoppm",
            "-r",
            str(DPI),
            "-png",
            "-singlefile",
            str(pdf),
            str(tmp_path / f"{name}-pdf"),
        ],
        check=True,
    )
    assert_same_picture(reference, _gray(QImage(str(tmp_path / f"{name}-pdf.png"))), f"{name}.pdf")


def test_the_comparison_fails_on_a_misplaced_plot(tmp_path: Path) -> None:
    """The boxes drawn 20 pt lower than their axis (as pyqtgraph's SVG did) are caught."""
    reference = _png(tmp_path, "box-bleu")
    svg = save_figure(FIGURES["box-bleu"](), tmp_path / "box.svg").read_text(encoding="utf-8")
    # The boxes and their medians/whiskers: every patch and line group inside the axes,
    # but not the figure's and axes' backgrounds (patch_1, patch_2) or the frame.
    moved, count = re.subn(
        r'<g id="(patch_[3-4]|line2d_(?:[2-9]|1\d))">',
        r'<g id="\1" transform="translate(0 20)">',
        svg,
    )
    assert count >= 4
    mean, offset = differences(reference, _svg_raster(moved.encode(), WIDTH, HEIGHT))
    assert mean >= 0.012 or offset > 3


def test_png_has_the_chosen_size_and_keeps_the_y_label(tmp_path: Path) -> None:
    figure = box_figure(BLEU, title="t", ylabel="BLEU with a long label", metric="bleu")
    path = save_figure(figure, tmp_path / "p.png", dpi=300, size_in=(3.35, 2.5))
    image = QImage(str(path))
    assert (image.width(), image.height()) == (1005, 750)
    renderer = figure.canvas.get_renderer()
    label = figure.axes[0].yaxis.label.get_window_extent(renderer)
    assert label.x0 >= 0 and label.y0 >= 0 and label.y1 <= figure.bbox.height
    # The label's left edge holds ink in the picture (the label is drawn, not cut).
    gray = _gray(image)
    assert gray[:, : max(int(label.x1), 1) + 1].min() < 0.5


def test_axes_follow_the_data_within_the_metric_range() -> None:
    bleu = box_figure(BLEU, title="t", metric="bleu").axes[0].get_ylim()
    assert bleu[0] >= 0 and bleu[1] <= 100  # not -25 as the old HTML report's axis
    low, high = box_figure([("a", [40.0, 50.0, 60.0])], title="t", metric="bleu").axes[0].get_ylim()
    assert 35 < low < 40 and 60 < high < 65
    ppl = box_figure(PPL, title="t", log10=True, metric="ppl").axes[0]
    assert ppl.get_ylim()[0] >= 1 and ppl.get_yscale() == "log"  # perplexities are >= 1
    ppl.figure.canvas.draw()
    labels = [t.get_text() for t in ppl.get_yticklabels() if t.get_text()]
    assert "10" in labels or "100" in labels  # labelled in perplexities, not their logs


def test_figure_boxes_use_the_core_box_statistics() -> None:
    from widgets.report.plots import box_stats as panel_box_stats

    assert panel_box_stats is box_stats  # one definition for the panel and the export
    figure = box_figure(BLEU, title="t", metric="bleu")
    medians = [line for line in figure.axes[0].lines if line.get_linewidth() == 3]
    for line, (label, values) in zip(medians, BLEU, strict=True):
        assert line.get_ydata()[0] == pytest.approx(box_stats(label, values).median)
    # On a log axis: the statistics of the logs (as the panel draws), at their place.
    figure = box_figure(PPL, title="t", log10=True, metric="ppl")
    medians = [line for line in figure.axes[0].lines if line.get_linewidth() == 3]
    for line, (label, values) in zip(medians, PPL, strict=True):
        assert line.get_ydata()[0] == pytest.approx(10 ** box_stats(label, values, True).median)


def test_other_suffixes_are_refused_before_writing(tmp_path: Path) -> None:
    for name in ("p.eps", "p"):
        with pytest.raises(ValueError, match=r"\.png, \.svg or \.pdf"):
            save_figure(box_figure(BLEU, title="t"), tmp_path / name)
    assert list(tmp_path.iterdir()) == []


def test_export_job_writes_every_figure_and_stops_on_cancel(tmp_path: Path) -> None:
    from core.jobs import CancelToken, JobSucceeded, JobWasCancelled, run_job
    from core.report import PlotSpec

    specs = [
        PlotSpec(
            "box",
            "BLEU by tier",
            "bleu",
            groups=tuple((label, tuple(values)) for label, values in BLEU),
            ylabel="BLEU",
        ),
        PlotSpec("distribution", "chrF++", "chrf++", groups=(("head", (1.0, 2.0)),)),
    ]
    seen = []
    outcome = run_job(export_figures_job_for(specs, tmp_path / "out"), None, seen.append)
    assert isinstance(outcome, JobSucceeded)
    assert [p.name for p in outcome.result] == [
        "01-box-bleu.png",
        "01-box-bleu.pdf",
        "02-distribution-chrf__.png",
        "02-distribution-chrf__.pdf",
    ]
    assert QImage(str(outcome.result[0])).width() == 256  # 6.4 in at 40 dpi
    assert seen and seen[-1].done == seen[-1].total == 4
    token = CancelToken()
    job = export_figures_job_for(specs, tmp_path / "cancelled")
    calls = []

    def cancel_after_first(progress) -> None:
        calls.append(progress)
        if progress.done >= 1:
            token.cancel()

    outcome = run_job(job, token, cancel_after_first)
    assert isinstance(outcome, JobWasCancelled)
    assert [p.name for p in outcome.partial] == ["01-box-bleu.png"]
    with pytest.raises(ValueError, match=r"\.png, \.svg or \.pdf"):
        export_figures_job_for(specs, tmp_path / "x", suffixes=(".eps",))


def export_figures_job_for(specs, folder: Path, suffixes=(".png", ".pdf")):
    from core.report.figures import export_figures_job

    return export_figures_job(specs, folder, suffixes=suffixes, dpi=40)


def test_png_pixels_are_the_ones_the_export_dialog_announces(tmp_path: Path) -> None:
    """The dialog's size in centimetres (two decimals) gives fractional pixels: the PNG
    has the rounded count the dialog shows (9.14 cm at 300 dpi: 1080, not 1079)."""
    from widgets.plot_export import CM_PER_INCH, ExportOptions

    size_in = (16.26 / CM_PER_INCH, 9.14 / CM_PER_INCH)
    options = ExportOptions(".png", size_in, 300)
    figure = box_figure(BLEU, title="t", ylabel="BLEU", metric="bleu")
    path = save_figure(figure, tmp_path / "p.png", dpi=300, size_in=size_in)
    image = QImage(str(path))
    assert (image.width(), image.height()) == options.pixels == (1920, 1080)
