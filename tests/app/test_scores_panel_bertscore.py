"""BERTScore scored from the Scores panel with the packaged all-MiniLM-L6-v2 encoder, on a
machine without bert-base-multilingual-cased: the chip, the note, the column's tooltip and
the detail all say which model scored and that it is not rescaled. Apart from the other
tests of the panel (test_scores_panel.py), which load no model."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from core.metrics import MetricOptions
from core.metrics.scoring import ScoringRequest

# Loads models, sentence-transformers or bert-score among them: in a parallel run its tests
# go to workers kept for them, and start on one that has not loaded torch yet
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models("encoders")


def test_bertscore_with_minilm_is_marked_not_rescaled(qtbot, scores_window) -> None:
    """Loads the packaged encoder (the one slow test here, a few seconds on CPU)."""
    _window, controller, panel, ids = scores_window
    panel.score_requested.emit(
        ScoringRequest(
            metrics=("bertscore",),
            run_ids=(ids.runs[1],),
            langs=("en",),
            options=MetricOptions(bertscore_model=None, device="cpu"),
        )
    )
    qtbot.waitUntil(lambda: panel.score_button.isEnabled(), timeout=120_000)
    assert "Scored 2 texts" in panel.progress_label.text(), panel.progress_label.text()
    qtbot.waitUntil(lambda: "bertscore:gold" in panel.table_model.metric_columns, timeout=5_000)
    chip = panel.notes.chips[0]
    assert chip.text().startswith("⚠ BERTScore: all-MiniLM-L6-v2")  # a warning chip
    assert "not in the local cache" in chip.toolTip()
    assert "BERTScore: all-MiniLM-L6-v2 (packaged), NOT rescaled" in panel.notes.notes[0].label
    column = panel.table_model.column_of("bertscore:gold")
    tip = panel.table_model.headerData(
        column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole
    )
    assert "all-MiniLM-L6-v2" in tip and "NOT rescaled" in tip
    panel.select_text(ids.verbalisations[(2, 1, "en")])
    assert "all-MiniLM-L6-v2, NOT rescaled" in panel.text_view.toPlainText()
