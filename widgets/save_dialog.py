"""The save dialog of every export: Qt's own, which asks before it names a file already
there, so a file the user confirmed may be replaced though TailLens did not write it
(``core.io.output_guard.approve_replacement``; sessions stay refused)."""

from __future__ import annotations

from PySide6.QtWidgets import QFileDialog, QWidget

from core.io.output_guard import approve_replacement


def ask_save_path(parent: QWidget | None, title: str, start: str, filters: str) -> tuple[str, str]:
    """``QFileDialog.getSaveFileName``'s answer (path, filter chosen); a path that exists
    was confirmed by the user in the dialog, and is approved as it is now. A name the
    caller changes afterwards (a suffix added) is a new path the user was not asked about."""
    path, chosen = QFileDialog.getSaveFileName(parent, title, start, filters)
    if path:
        approve_replacement(path)
    return path, chosen
