"""A box plot of many groups stays legible (16 WebNLG 2020 systems used to be
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


def test_upright_labels_that_would_touch_turn_the_boxes_on_their_side(qtbot) -> None:
    """8 "model · tier" groups: upright on a wide plot; on one as narrow as the Report's
    at 1366 x 768 the labels would touch, so the boxes lie on their side, and widening
    the plot again stands them up (a resize redraws once it settles)."""
    labelled = PlotSpec(
        kind="box",
        title="BLEU by model and tier",
        metric="bleu",
        ylabel="BLEU",
        groups=tuple(
            (f"{model} · {tier}", tuple(float(j) for j in range(10)))
            for model in ("AmazonAI", "NILC", "TGen", "bt5")
            for tier in ("head", "long_tail")
        ),
    )
    plots = ReportPlots()
    qtbot.addWidget(plots)
    plots.resize(1400, 500)
    plots.show()
    plots.set_specs([labelled])
    assert not plots.horizontal
    plots.resize(440, 500)
    qtbot.waitUntil(lambda: plots.horizontal, timeout=3_000)
    plots.resize(1400, 500)
    qtbot.waitUntil(lambda: not plots.horizontal, timeout=3_000)
