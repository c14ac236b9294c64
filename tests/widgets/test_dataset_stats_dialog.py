"""The dataset checks' findings are laid out a hundred rows per turn of the event loop:
a large data set's findings never hold the UI thread in one go, every finding still
arrives, and a filter chosen meanwhile stops the older fill."""

from __future__ import annotations

from core.report.dataset_stats import Finding
from widgets.dataset_stats import FILL_ROWS, DatasetStatsDialog

CHECKS = ["copied-object", "missing-label"]


def _findings(count: int) -> list[Finding]:
    return [
        Finding(f"U{i}", CHECKS[i % 2], f"reason {i}, long enough to wrap " * (i % 3 + 1))
        for i in range(count)
    ]


def test_many_findings_fill_in_turns_and_all_arrive(qtbot) -> None:
    dialog = DatasetStatsDialog()
    qtbot.addWidget(dialog)
    findings = _findings(FILL_ROWS * 3 + 7)
    dialog.show_statistics([], findings, CHECKS, units=len(findings))
    table = dialog.findings_table
    assert table.rowCount() == len(findings)
    # The call returned after one turn's rows: the rest come from the event loop.
    assert table.item(FILL_ROWS - 1, 0) is not None and table.item(FILL_ROWS, 0) is None
    qtbot.waitUntil(lambda: table.item(len(findings) - 1, 0) is not None, timeout=10_000)
    assert [row[0] for row in dialog.shown_findings()] == [f.uid for f in findings]


def test_a_filter_chosen_mid_fill_shows_only_its_findings(qtbot) -> None:
    dialog = DatasetStatsDialog()
    qtbot.addWidget(dialog)
    findings = _findings(FILL_ROWS * 4)
    dialog.show_statistics([], findings, CHECKS, units=len(findings))
    dialog.check_filter.setCurrentIndex(dialog.check_filter.findData("missing-label"))
    wanted = [f.uid for f in findings if f.check == "missing-label"]
    table = dialog.findings_table
    qtbot.waitUntil(lambda: table.item(len(wanted) - 1, 0) is not None, timeout=10_000)
    qtbot.wait(50)  # turns of the event loop: an older fill would write rows past these
    assert table.rowCount() == len(wanted)
    assert [row[0] for row in dialog.shown_findings()] == wanted
