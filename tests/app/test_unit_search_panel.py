"""The Units panel's Search… dialog: the values it collects, a search run as a job on the
demo data with a tiny model, and bad input refused with a message and nothing stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDialog

from app.gui import build_window
from core.units.beam_search import SearchRequest
from core.units.builder.saved import list_units
from tests.fixtures.demo import demo_ready
from widgets.unit_search import UnitSearchDialog

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models


@pytest.fixture
def wired(qtbot, tmp_path: Path):
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    assert controller.new_session(tmp_path / "u.taillens")
    demo_ready(qtbot, controller.browser)
    yield window, controller
    controller.shutdown()


def test_the_dialog_collects_the_search_settings(qtbot) -> None:
    dialog = UnitSearchDialog(category="City", model="/m")
    qtbot.addWidget(dialog)
    assert dialog.request().category == "City" and dialog.request().class_qid is None
    dialog.root_kind.setCurrentIndex(1)
    dialog.root.setText("Q5")
    dialog.template.setText("?x P19 ?a")
    dialog.direction.setCurrentIndex(1)
    dialog.beam.setValue(50)
    assert dialog.request() == SearchRequest(
        template="?x P19 ?a",
        model="/m",
        class_qid="Q5",
        category=None,
        direction="tail",
        beam=50,
        keep=0.75,
        units=20,
        lang="en",
    )


def test_search_button_runs_a_search_and_lists_the_units(
    qtbot, wired, tiny_causal_lm, monkeypatch
) -> None:
    window, controller = wired
    units = controller.units
    shown: list[str] = []
    monkeypatch.setattr(
        window, "show_message", lambda title, message, details="": shown.append(details)
    )

    def accept(dialog: UnitSearchDialog) -> int:
        dialog.root_kind.setCurrentIndex(1)
        dialog.root.setText("Q4989906")  # Monument: 150 members
        dialog.model.setText(str(tiny_causal_lm))
        dialog.beam.setValue(20)
        dialog.units.setValue(3)
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(UnitSearchDialog, "exec", accept)
    with qtbot.waitSignal(controller.runner.job_finished, timeout=60_000):
        units.panel.search_button.click()
    qtbot.waitUntil(lambda: bool(shown), timeout=10_000)
    saved = list_units(controller.store)
    assert len(saved) == 6 and {u.origin for u in saved} == {"search"}
    qtbot.waitUntil(lambda: units.panel.units_model.rowCount() == 6, timeout=10_000)
    assert "δ (head − tail)" in shown[0]

    # The six units are one edit on the undo stack: one undo takes them all out.
    assert window.action_undo.text().startswith("&Undo 6 units found by the search")
    window.action_undo.trigger()
    qtbot.waitUntil(lambda: controller.writer.idle and not controller.undo.busy, timeout=10_000)
    assert list_units(controller.store) == []
    window.action_redo.trigger()
    qtbot.waitUntil(lambda: controller.writer.idle and not controller.undo.busy, timeout=10_000)
    assert list_units(controller.store) == saved


def test_a_bad_template_is_refused_with_a_message(qtbot, wired, monkeypatch) -> None:
    window, controller = wired
    errors: list[str] = []
    monkeypatch.setattr(
        window, "show_error", lambda title, message, details="": errors.append(message)
    )
    controller.units.search(
        SearchRequest(
            template="?x P17 ?a . ?b P36 ?c",
            model="stub",
            class_qid="Q515",
            category=None,
            direction="both",
            beam=20,
            keep=0.75,
            units=3,
            lang="en",
        )
    )
    assert errors and "pattern 2" in errors[0]
    assert list_units(controller.store) == []
