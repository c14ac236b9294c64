"""Sub-commands of the ``taillens`` CLI, one module each (see ``app.cli``), and the
options every command that writes a file shares."""

from __future__ import annotations

import argparse

FORCE_HELP = (
    "replace a file TailLens did not write, or a TailLens session (never the session "
    "being read, nor its -wal/-shm files); without it only TailLens's own earlier "
    "output is replaced"
)
RAW_CSV_HELP = (
    "CSV: write text cells as they are, for programs; by default a cell starting with "
    "= + - @ tab or CR gets a leading ' so a spreadsheet shows it as text, not a formula"
)


def add_output_arguments(parser: argparse.ArgumentParser, *, csv_option: bool = False) -> None:
    """``--force`` (and ``--raw-csv``) of every command that writes a file."""
    parser.add_argument("--force", action="store_true", help=FORCE_HELP)
    if csv_option:
        parser.add_argument("--raw-csv", action="store_true", help=RAW_CSV_HELP)


def csv_cells_line(raw: bool, neutralised: int | None = None) -> str:
    """What a command prints about the CSV it wrote: spreadsheet-safe or raw."""
    from core.formats.common import RAW_CELLS_NOTE, SAFE_CELLS_NOTE

    if raw:
        return f"CSV cells: {RAW_CELLS_NOTE}"
    changed = "" if neutralised is None else f" ({neutralised} cells prefixed)"
    return f"CSV cells: spreadsheet-safe{changed}; {SAFE_CELLS_NOTE}"
