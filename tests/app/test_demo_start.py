"""'Start with the demo' on an empty session: the Browser offers it where
it would show empty axes; pressed, with another source chosen, it switches to the demo
data and fetches the shown category from it, so the panels have something to show;
then every other category the demo holds."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from app.gui import build_window
from tests.fixtures.jobs import is_fetch


def test_start_with_the_demo_fetches_the_category_from_the_demo_data(qtbot, tmp_path: Path) -> None:
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    window.show()
    assert controller.new_session(tmp_path / "d.taillens")
    browser = controller.browser
    panel = browser.panel
    try:
        # The user had picked the session cache (offline, empty): nothing to show.
        panel.source_combo.setCurrentIndex(panel.source_combo.findData("cache"))
        qtbot.waitUntil(lambda: browser.source_kind == "cache", timeout=30_000)
        panel.category_combo.setCurrentText("Monument")
        panel.limit_spin.setValue(200)
        qtbot.waitUntil(lambda: panel.demo_button.isVisible(), timeout=10_000)
        with qtbot.waitSignal(
            controller.runner.job_finished, timeout=60_000, check_params_cb=is_fetch
        ):
            window.command_actions["browser:demo"].trigger()
        assert browser.source_kind == "embedded"
        assert panel.source_combo.currentData() == "embedded"
        qtbot.waitUntil(lambda: len(panel.model.columns) == 200, timeout=10_000)
        assert not panel.demo_button.isVisible()  # there is data now
    finally:
        controller.shutdown()


@pytest.mark.slow
def test_after_the_demo_every_category_shows_its_members(qtbot, tmp_path: Path) -> None:
    """The demo holds members of every default category: once it is in, picking another
    category shows its distribution and tier summary, not "No entities… press Fetch"."""
    from core.wikidata.cache import fetched_count
    from core.wikidata.categories import default_categories

    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    window.show()
    assert controller.new_session(tmp_path / "d.taillens")
    browser = controller.browser
    panel = browser.panel
    try:
        panel.category_combo.setCurrentText("Airport")
        panel.limit_spin.setValue(300)
        qtbot.waitUntil(lambda: panel.demo_button.isVisible(), timeout=30_000)
        with qtbot.waitSignal(
            controller.runner.job_finished,
            timeout=180_000,
            check_params_cb=lambda handle: handle.job.kind == "wikidata.fetch_many",
        ):
            window.command_actions["browser:demo"].trigger()
        # Said once it is done, where to find them (not hidden by the "done in" line).
        assert "categories are in the session" in window.statusBar().currentMessage()
        store = controller.store
        held = {c.name: fetched_count(store, c.name) for c in default_categories()}
        assert all(0 < count <= 300 for count in held.values()), held
        for name in ("River", "Politician"):
            panel.category_combo.setCurrentText(name)
            qtbot.waitUntil(lambda name=name: panel.category == name, timeout=30_000)
            qtbot.waitUntil(lambda: panel.summary is not None, timeout=30_000)
            assert len(panel.model.columns) == held[name]
            assert panel.summary.n == held[name]
            assert "press <b>Fetch</b>" not in panel.summary_label.text()
            assert f"<b>{held[name]:,}</b>" in panel.summary_label.text()
            assert not panel.demo_button.isVisible()
    finally:
        controller.shutdown()
