"""The Units panel reads the session's units a page at a time: the label counts them all,
the list holds one page, and scrolling fetches the next (``fetchMore``)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QModelIndex

from core.store import SessionStore
from core.units.builder.saved import list_units
from tests.fixtures.built_window import window_and_controller  # noqa: F401  (fixture)
from tests.fixtures.paged_units_session import UNITS, session_with_units


def test_units_panel_counts_all_and_fetches_more_on_scroll(
    qtbot,
    window_and_controller,  # noqa: F811
    tmp_path: Path,
) -> None:
    _window, controller = window_and_controller
    every = session_with_units(tmp_path / "s.taillens")
    assert len(every) == UNITS
    controller.units.page_size = 2
    panel = controller.units.panel
    first_pages: list[int] = []  # the list is a view read: its first page, as shown
    show_units = panel.show_units
    panel.show_units = lambda units, *a, **k: (
        first_pages.append(len(units)),
        show_units(units, *a, **k),
    )
    assert controller.open_session(tmp_path / "s.taillens")
    model = panel.units_model
    qtbot.waitUntil(lambda: bool(first_pages), timeout=10_000)
    assert first_pages == [2] and model.total == UNITS
    assert panel.units_label.text() == f"{UNITS:,} units in the session"
    view = panel.units_view
    view.resize(400, 120)
    view.show()
    for _ in range(UNITS):  # each scroll to the bottom asks for the next page
        view.scrollToBottom()
        qtbot.wait(10)
    qtbot.waitUntil(lambda: model.rowCount() == UNITS, timeout=10_000)
    assert not model.canFetchMore(QModelIndex())
    assert [model.item(r, 0).text() for r in range(UNITS)] == every
    # A row of a later page selects that unit.
    view.selectRow(UNITS - 1)
    qtbot.waitUntil(lambda: every[-1] in panel.title.text(), timeout=10_000)  # a view read


def test_keyset_pages_cover_the_session_once(tmp_path: Path) -> None:
    from core.units.builder.saved import count_units

    every = session_with_units(tmp_path / "s.taillens")
    with SessionStore.open(tmp_path / "s.taillens") as store:
        assert count_units(store) == UNITS
        seen: list[str] = []
        after = None
        while page := list_units(store, after_id=after, limit=3):
            assert len(page) <= 3
            seen += [u.uid for u in page]
            after = page[-1].id
    assert seen == every


def test_a_filter_reads_the_remaining_pages_off_the_ui_thread(
    qtbot,
    window_and_controller,  # noqa: F811
    tmp_path: Path,
    monkeypatch,
) -> None:
    """A filter needs every unit: the pages after the first are read by the view reads'
    workers, never on the UI thread (12,915 units froze the window while they loaded)."""
    import threading

    from core.units.builder import saved

    _window, controller = window_and_controller
    session_with_units(tmp_path / "s.taillens")
    controller.units.page_size = 2
    panel = controller.units.panel
    threads: list[str] = []
    original = saved.list_units

    def recording(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return original(*args, **kwargs)

    monkeypatch.setattr(saved, "list_units", recording)
    assert controller.open_session(tmp_path / "s.taillens")
    qtbot.waitUntil(lambda: panel.units_model.total == UNITS, timeout=10_000)
    combo = panel.unit_filters["size"]
    combo.setCurrentIndex(combo.findData("1"))
    qtbot.waitUntil(lambda: panel.units_model.rowCount() == UNITS, timeout=10_000)
    assert panel.units_proxy.rowCount() == UNITS
    assert len(threads) >= UNITS // 2 + 1
    assert threading.main_thread().name not in threads, threads
