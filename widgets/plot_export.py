"""Exporting a panel's plot for a paper: the one export path every panel uses.

The live plot is pyqtgraph; the exported file is drawn by ``core.report.figures`` with matplotlib
from the same data (pyqtgraph's SVG export misplaces items and has no PDF). The user picks
the format (PNG, SVG, PDF), the figure's size and, for PNG, the resolution (300 dpi by
default) in :class:`ExportDialog`, then the file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QSpinBox,
    QWidget,
)

from core.errors import UserFacingError
from core.report.figures import DEFAULT_DPI, DEFAULT_SIZE_IN, check_format, save_figure
from widgets.dialogs import FittedDialog
from widgets.save_dialog import ask_save_path

FORMAT_NAMES = {".png": "PNG image", ".svg": "SVG drawing", ".pdf": "PDF document"}
CM_PER_INCH = 2.54
# What an export can fail with that the user should read as a message (bad name, no room).
EXPORT_ERRORS = (OSError, ValueError, UserFacingError)


@dataclass(frozen=True)
class ExportOptions:
    """What the user chose: the format (a suffix), the figure's size and the PNG's dpi."""

    suffix: str = ".png"
    size_in: tuple[float, float] = DEFAULT_SIZE_IN
    dpi: int = DEFAULT_DPI

    @property
    def pixels(self) -> tuple[int, int]:
        """A PNG's width and height in pixels."""
        return (round(self.size_in[0] * self.dpi), round(self.size_in[1] * self.dpi))


def export_figure(
    make_figure: Callable[[tuple[float, float]], Any],
    path: Path | str,
    title: str,
    options: ExportOptions | None = None,
) -> Path:
    """Draw the figure (``make_figure(size_in)``) and write it by ``path``'s suffix.

    An unknown suffix is a ``ValueError`` (the panels show it), raised before drawing or
    writing anything.
    """
    check_format(path)
    options = options or ExportOptions()
    figure = make_figure(options.size_in)
    return save_figure(figure, path, title=title, dpi=options.dpi, size_in=options.size_in)


class ExportDialog(FittedDialog):
    """Format, size (cm) and resolution of an exported figure."""

    def __init__(
        self,
        parent: QWidget | None = None,
        options: ExportOptions | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export figure")
        options = options or ExportOptions()
        self.format = QComboBox()
        for suffix, name in FORMAT_NAMES.items():
            self.format.addItem(f"{name} ({suffix})", suffix)
        self.format.setCurrentIndex(list(FORMAT_NAMES).index(options.suffix))
        self.width_cm = self._cm(
            options.size_in[0],
            "Figure width: 8.5 cm for one column, 17 cm for a page in most two-column papers",
        )
        self.height_cm = self._cm(options.size_in[1], "Figure height")
        self.dpi = QSpinBox()
        self.dpi.setRange(50, 1200)
        self.dpi.setSingleStep(50)
        self.dpi.setValue(options.dpi)
        self.dpi.setSuffix(" dpi")
        self.dpi.setToolTip("Resolution of a PNG: 300 dpi for print")
        self.pixels = QLabel()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("Format:", self.format)
        form.addRow("Width:", self.width_cm)
        form.addRow("Height:", self.height_cm)
        form.addRow("Resolution:", self.dpi)
        form.addRow("", self.pixels)
        form.addRow(buttons)
        for signal in (
            self.format.currentIndexChanged,
            self.width_cm.valueChanged,
            self.height_cm.valueChanged,
            self.dpi.valueChanged,
        ):
            signal.connect(self._update)
        self._update()

    @staticmethod
    def _cm(inches: float, tip: str) -> QDoubleSpinBox:
        spin = QDoubleSpinBox()
        spin.setRange(3.0, 60.0)
        spin.setDecimals(2)
        spin.setSingleStep(0.5)
        spin.setSuffix(" cm")
        spin.setValue(round(inches * CM_PER_INCH, 2))
        spin.setToolTip(tip)
        return spin

    def options(self) -> ExportOptions:
        return ExportOptions(
            self.format.currentData(),
            (self.width_cm.value() / CM_PER_INCH, self.height_cm.value() / CM_PER_INCH),
            self.dpi.value(),
        )

    def _update(self) -> None:
        options = self.options()
        png = options.suffix == ".png"
        self.dpi.setEnabled(png)
        width, height = options.pixels
        self.pixels.setText(
            f"{width} × {height} pixels"
            if png
            else "Vector: sharp at any size; text stays text-shaped"
        )


def ask_export(parent: QWidget, name: str) -> tuple[Path, ExportOptions] | None:
    """Ask for the export's options, then its file (``name`` without suffix suggested)."""
    dialog = ExportDialog(parent, getattr(parent, "_last_export_options", None))
    if dialog.exec() != QDialog.DialogCode.Accepted:
        return None
    options = dialog.options()
    parent._last_export_options = options  # the next export starts from these
    suffix = options.suffix
    path, _ = ask_save_path(
        parent, "Export figure", name + suffix, f"{FORMAT_NAMES[suffix]} (*{suffix})"
    )
    if not path:
        return None
    target = Path(path)
    if target.suffix.lower() != suffix:
        target = target.with_name(target.name + suffix)
    return target, options


def announce_written(widget: QWidget, path: Path, title: str = "Figure exported") -> None:
    """Confirm a written file the window's one way (its message with Open and Show in
    folder), as every export does: a figure written from a panel said nothing."""
    holder: QWidget | None = widget
    while holder is not None and not hasattr(holder, "show_written"):
        holder = holder.parentWidget()  # a floating dock's parent is still the window
    if holder is not None:
        path = Path(path)
        holder.show_written(title, f"{path.name} written to {path.parent}", path)  # type: ignore[attr-defined]


__all__ = [
    "EXPORT_ERRORS",
    "ExportDialog",
    "ExportOptions",
    "announce_written",
    "ask_export",
    "export_figure",
]
