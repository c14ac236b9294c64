"""The Scores panel's Retrieval dialog: find the graph behind a text, worst matches."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from app.gui import build_window
from tests.fixtures.scoring_session import TEXTS, build_session

# Loads models, sentence-transformers or bert-score among them: in a parallel run its tests
# go to workers kept for them, and start on one that has not loaded torch yet
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models("encoders")


@pytest.fixture(scope="module")
def encoder(tiny_encoder: Path) -> str:
    return str(tiny_encoder)


@pytest.fixture
def wired(qtbot, tmp_path: Path):
    path = tmp_path / "s.taillens"
    ids = build_session(path)
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    assert controller.open_session(path)
    panel = controller.scores.panel
    qtbot.waitUntil(lambda: panel.table_model.rowCount() == len(TEXTS), timeout=10_000)
    yield controller, panel, ids
    controller.shutdown()


def _finished(qtbot, retrieval) -> None:
    qtbot.waitUntil(lambda: retrieval.handle is not None and retrieval.handle.done, timeout=60_000)
    qtbot.waitUntil(lambda: not retrieval.dialog.cancel_button.isEnabled(), timeout=10_000)


def test_find_the_graph_behind_the_selected_text(qtbot, wired, encoder: str) -> None:
    controller, panel, ids = wired
    retrieval = controller.scores.retrieval
    verbalisation = ids.verbalisations[(1, 2, "en")]
    assert panel.select_text(verbalisation)
    panel.retrieval_button.click()
    dialog = retrieval.dialog
    assert dialog is not None and dialog.isVisible() and dialog.find_button.isEnabled()
    dialog.encoder_edit.setText(encoder)
    dialog.find_button.click()
    _finished(qtbot, retrieval)
    # Two English graphs in the session, both listed, closest first.
    assert dialog.table.rowCount() == 2
    values = [float(dialog.table.item(r, 0).text()) for r in range(2)]
    assert values == sorted(values, reverse=True)
    assert "own graph (unit" in dialog.status_label.text()


def test_worst_matches_of_a_run_and_a_bad_encoder(
    qtbot, wired, encoder: str, tmp_path: Path, monkeypatch
) -> None:
    controller, panel, ids = wired
    retrieval = controller.scores.retrieval
    assert panel.select_text(ids.verbalisations[(1, 1, "en")])
    dialog = retrieval.open_dialog()
    errors = []
    monkeypatch.setattr(
        controller.window, "show_error", lambda title, message, details="": errors.append(message)
    )
    (tmp_path / "junk").mkdir()
    dialog.encoder_edit.setText(str(tmp_path / "junk"))
    dialog.worst_button.click()
    assert errors and "not a model folder" in errors[0] and retrieval.handle is None
    dialog.encoder_edit.setText(encoder)
    dialog.top_spin.setValue(3)
    dialog.worst_button.click()
    _finished(qtbot, retrieval)
    run_texts = sum(1 for (run, _u, _l) in TEXTS if run == 1)
    assert dialog.table.rowCount() == min(3, run_texts)
    values = [float(dialog.table.item(r, 0).text()) for r in range(dialog.table.rowCount())]
    assert values == sorted(values)
    assert "top-1" in dialog.status_label.text()
    dialog.table.cellDoubleClicked.emit(0, 0)
    assert panel.selected_key() == dialog.rows[0].key
