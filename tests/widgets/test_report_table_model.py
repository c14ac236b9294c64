"""The Report's tables show tier codes in the words every panel uses."""

from __future__ import annotations

from PySide6.QtCore import Qt

from core.tables import Table
from widgets.report.table import ReportTableModel


def test_tier_codes_read_as_words_and_keep_their_values() -> None:
    table = Table(
        name="compare_tier",
        title="Head vs long tail",
        columns=("metric", "language", "a", "b", "p"),
        rows=(
            ("bleu", "en", "head", "long_tail", 0.01),
            ("bleu", "it", "head", "long_tail_it", 0.2),
        ),
    )
    model = ReportTableModel(table)
    shown = [[model.index(r, c).data() for c in range(5)] for r in range(2)]
    assert shown[0][2:4] == ["head", "long tail"]
    assert shown[1][2:4] == ["head", "long tail · it only"]
    assert shown[0][1] == "en"  # other columns untouched
    assert model.index(0, 3).data(Qt.ItemDataRole.UserRole) == "long_tail"
