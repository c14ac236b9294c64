"""The Report's tables show tier codes in the words every panel uses."""

from __future__ import annotations

from PySide6.QtCore import Qt

from core.report.render import study_grid
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


def test_the_reports_own_tables_show_tier_words() -> None:
    """The columns the report really writes: a comparison's groups (``group_a``,
    ``group_b``) and the study table's ``type``."""
    from core.report.render import COMPARISON_COLUMNS
    from core.report.study import StudyRow, StudyTable

    values = {"group_a": "head", "group_b": "long_tail", "metric": "bleu", "model": "m"}
    row = tuple(values.get(column) for column in COMPARISON_COLUMNS)
    model = ReportTableModel(
        Table("compare_tier", "Comparison by tier", COMPARISON_COLUMNS, (row,))
    )
    shown = {c: model.index(0, i).data() for i, c in enumerate(COMPARISON_COLUMNS)}
    assert (shown["group_a"], shown["group_b"]) == ("head", "long tail")

    study = StudyTable("gold", "mean", ("bleu",), [StudyRow("m", "long_tail", "en", {})])
    table = study_grid(study)
    model = ReportTableModel(table)
    assert model.index(0, table.columns.index("type")).data() == "long tail"
