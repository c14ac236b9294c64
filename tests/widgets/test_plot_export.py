"""The one export helper and dialog behind the Browser's and the Report's plots."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from core.report.figures import box_figure
from widgets.plot_export import ExportDialog, ExportOptions, export_figure

GROUPS = [("head", [1.0, 2.0, 3.0, 4.0, 9.0]), ("long_tail", [0.5, 1.0, 1.5, 2.0])]


def _make(size_in: tuple[float, float]):
    return box_figure(
        GROUPS, title="Statements per entity", ylabel="BLEU", metric="bleu", size_in=size_in
    )


def test_png_has_the_chosen_size_and_dpi(tmp_path: Path) -> None:
    for dpi, size, pixels in ((300, (6.4, 3.6), (1920, 1080)), (100, (3.0, 2.0), (300, 200))):
        path = export_figure(_make, tmp_path / f"p{dpi}.PNG", "t", ExportOptions(".png", size, dpi))
        assert path == tmp_path / f"p{dpi}.PNG"  # suffix matched case-insensitively
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        image = QImage(str(path))
        assert (image.width(), image.height()) == pixels == ExportOptions(".png", size, dpi).pixels
    # Without options: 300 dpi, the default size; readable by others as a new file is.
    path = export_figure(_make, tmp_path / "d.png", "t")
    default = QImage(str(path))
    assert (default.width(), default.height()) == (1920, 1080)
    umask = os.umask(0o022)
    try:
        assert export_figure(_make, tmp_path / "s.svg", "t").stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(umask)


def test_svg_and_pdf_carry_the_title(tmp_path: Path) -> None:
    svg = export_figure(_make, tmp_path / "p.svg", "Statements per entity")
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    titles = [e.text for e in root.iter() if e.tag.endswith("title")]
    assert "Statements per entity" in titles
    pdf = export_figure(_make, tmp_path / "p.pdf", "Statements per entity")
    assert pdf.read_bytes()[:5] == b"%PDF-" and b"Statements per entity" in pdf.read_bytes()


def test_other_suffixes_are_refused_before_drawing(tmp_path: Path) -> None:
    drawn = []
    for name in ("p.eps", "p"):
        with pytest.raises(ValueError, match=r"\.png, \.svg or \.pdf, not"):
            export_figure(lambda size: drawn.append(size), tmp_path / name, "t")
    assert drawn == [] and list(tmp_path.iterdir()) == []


def test_a_folder_or_a_bad_size_is_a_message(tmp_path: Path) -> None:
    from core.errors import UserFacingError

    (tmp_path / "taken.png").mkdir()
    with pytest.raises(UserFacingError, match="is a folder"):
        export_figure(_make, tmp_path / "taken.png", "t")
    with pytest.raises(ValueError, match="positive"):
        export_figure(_make, tmp_path / "p.png", "t", ExportOptions(".png", (6.0, 4.0), 0))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken.png"]


def test_dialog_defaults_to_300_dpi_png_and_reads_back(qtbot) -> None:
    dialog = ExportDialog()
    qtbot.addWidget(dialog)
    options = dialog.options()
    assert options.suffix == ".png" and options.dpi == 300
    assert "1920 × 1080 pixels" in dialog.pixels.text()
    dialog.width_cm.setValue(8.5)  # one column
    dialog.height_cm.setValue(6.0)
    dialog.dpi.setValue(600)
    options = dialog.options()
    assert options.size_in == pytest.approx((8.5 / 2.54, 6.0 / 2.54))
    assert options.pixels == (round(8.5 / 2.54 * 600), round(6.0 / 2.54 * 600))
    dialog.format.setCurrentIndex(dialog.format.findData(".pdf"))
    assert dialog.options().suffix == ".pdf" and not dialog.dpi.isEnabled()
    # A dialog opened with earlier choices starts from them.
    again = ExportDialog(options=dialog.options())
    qtbot.addWidget(again)
    assert again.options().suffix == ".pdf" and again.dpi.value() == 600


def test_a_figure_written_from_a_panel_is_confirmed_with_open_and_show_in_folder(
    qtbot, tmp_path
) -> None:
    """A panel's figure export says where the file went, the window's one way (the same
    message as the CSV and HTML exports); a panel with no window says nothing."""
    from PySide6.QtWidgets import QWidget

    from widgets.plot_export import announce_written

    shown: list[tuple[str, str, object]] = []

    class Window(QWidget):
        def show_written(self, title: str, message: str, path, details: str = "") -> None:
            shown.append((title, message, path))

    window = Window()
    qtbot.addWidget(window)
    panel = QWidget(window)
    inner = QWidget(panel)
    target = tmp_path / "histogram.png"
    announce_written(inner, target)
    assert shown == [("Figure exported", f"histogram.png written to {tmp_path}", target)]
    alone = QWidget()
    qtbot.addWidget(alone)
    announce_written(alone, target)  # no window that shows messages: nothing, no error
    assert len(shown) == 1
