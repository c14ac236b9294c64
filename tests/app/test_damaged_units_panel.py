"""The Units panel with a damaged row in the session: it lists the other units and the
window says which row was skipped (the panel used to be empty)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from PySide6.QtCore import QModelIndex

from tests.fixtures.built_window import window_and_controller  # noqa: F401  (fixture)
from tests.fixtures.paged_units_session import UNITS, session_with_units


def test_the_units_panel_shows_the_other_units(
    qtbot,
    window_and_controller,  # noqa: F811
    tmp_path: Path,
) -> None:
    window, controller = window_and_controller
    path = tmp_path / "s.taillens"
    every = session_with_units(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE data_units SET attributes = '{oops' WHERE uid = ?", (every[2],))
        (damaged,) = conn.execute("SELECT id FROM data_units WHERE uid = ?", (every[2],)).fetchone()
    assert controller.open_session(path)
    panel = controller.units.panel
    model = panel.units_model
    # The list is read off the UI thread (the session rule): wait for its pages.
    qtbot.waitUntil(
        lambda: (
            panel.units_label.text() == f"{UNITS - 1:,} units in the session"
            and not model.canFetchMore(QModelIndex())
        ),
        timeout=20_000,
    )
    shown = [model.item(r, 0).text() for r in range(model.rowCount())]
    assert shown == [uid for uid in every if uid != every[2]]
    assert panel.units_label.text() == f"{UNITS - 1:,} units in the session"
    notice = f"data_units id {damaged}: attributes is not JSON: '{{oops'"
    qtbot.waitUntil(
        lambda: any(notice in e.message for e in window.error_log.model.entries), timeout=10_000
    )
    entry = next(e for e in window.error_log.model.entries if notice in e.message)
    assert entry.source == "Damaged rows skipped" and "skipped 1 damaged row" in entry.message
