"""A box plot of many groups stays legible (issue 21 §3: 16 WebNLG 2020 systems
overprinted into one line): past HORIZONTAL_GROUPS the boxes lie on their side, one
labelled row per group, the first on top."""

from __future__ import annotations

from core.report import PlotSpec
from widgets.report.plots import HORIZONTAL_GROUPS, ReportPlots


def spec(groups: int) -> PlotSpec:
    return PlotSpec(
        kind="box",
        title="BLEU by system",
        metric="bleu",
        ylabel="BLEU",
        groups=tuple(
            (f"system_{i:02d}", tuple(float(i + j) for j in range(10))) for i in range(groups)
        ),
    )


def test_many_groups_are_horizontal_rows_with_their_labels(qtbot) -> None:
    plots = ReportPlots()
    qtbot.addWidget(plots)
    plots.draw(spec(16))
    assert plots.horizontal and len(plots.boxes) == 16
    ticks = plots.left_axis._tickLevels[0]  # pyqtgraph keeps the ticks given
    labels = [label for _pos, label in sorted(ticks, reverse=True)]
    assert labels[0] == "system 00 (n=10)" and labels[-1] == "system 15 (n=10)"
    assert plots.bottom_axis._tickLevels is None  # values along x, pyqtgraph's own ticks


def test_few_groups_stay_upright(qtbot) -> None:
    plots = ReportPlots()
    qtbot.addWidget(plots)
    plots.draw(spec(HORIZONTAL_GROUPS))
    assert not plots.horizontal
    assert len(plots.bottom_axis._tickLevels[0]) == HORIZONTAL_GROUPS
