"""The Report panel renders its options (and what it shows of a build) from ReportState
and writes edits into it; the window keeps the options across restarts by restoring
that state."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt

from app.window_state import ReportOptionsMemory
from core.report.panel_state import ReportState
from widgets.report.panel import ReportPanel

USER = Qt.ItemDataRole.UserRole


def ticked(widget) -> list:
    return [
        widget.item(i).data(USER)
        for i in range(widget.count())
        if widget.item(i).checkState() == Qt.CheckState.Checked
    ]


def test_the_widgets_follow_the_state(qtbot) -> None:
    state = ReportState()
    panel = ReportPanel(state=state)
    qtbot.addWidget(panel)
    state.update(
        metrics=(("bleu", 3), ("chrf", 3)),
        unticked_metrics=("chrf",),
        by=("lang", "model"),
        seed=11,
        correction="bh",
        study_refs="silver:quality",
        statistic="median",
        alpha=0.2,
        where="tier=long_tail",
    )
    state.offer_runs(((5, "m", "finished"), (6, "n", "failed")))
    state.runs = (6,)
    assert ticked(panel.metric_list) == ["bleu"]
    assert ticked(panel.dimension_list) == ["lang", "model"]
    assert ticked(panel.run_list) == [6]
    assert panel.run_list.item(1).text() == "6 · n (failed)"
    assert panel.seed_spin.value() == 11 and panel.alpha_spin.value() == 0.2
    assert panel.correction_combo.currentData() == "bh"
    assert panel.quality_combo.currentData() == "silver:quality"
    assert panel.statistic_combo.currentText() == "median"
    assert panel.where_edit.text() == "tier=long_tail"


def test_edits_in_the_widgets_are_the_state(qtbot) -> None:
    panel = ReportPanel()
    qtbot.addWidget(panel)
    state = panel.state
    panel.set_available([("bleu", 2), ("ter", 2)])
    panel.set_runs([(1, "m", "finished")])
    panel.metric_list.item(1).setCheckState(Qt.CheckState.Unchecked)
    panel.run_list.item(0).setCheckState(Qt.CheckState.Checked)
    panel.dimension_list.item(2).setCheckState(Qt.CheckState.Checked)  # Language
    panel.repetitions_spin.setValue(4)
    panel.correction_combo.setCurrentIndex(panel.correction_combo.findData("none"))
    assert state.unticked_metrics == ("ter",) and state.runs == (1,)
    assert state.by == ("tier", "lang")
    assert (state.repetitions, state.correction) == (4, "none")
    request = panel.request()
    assert request.metrics == ("bleu",) and request.settings.correction == "none"
    # A metric unticked stays so when the session's metrics are listed again.
    panel.set_available([("bleu", 3), ("ter", 3), ("comet", 3)])
    assert ticked(panel.metric_list) == ["bleu", "comet"]


def test_the_options_come_back_after_a_restart(qtbot, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    first = ReportPanel()
    qtbot.addWidget(first)
    ReportOptionsMemory(settings, first.state, first, "report/options")
    first.seed_spin.setValue(42)
    first.set_dimensions(["model"])
    first.quality_combo.setCurrentIndex(first.quality_combo.findData("gold:split"))
    settings.sync()

    again = ReportPanel()
    qtbot.addWidget(again)
    ReportOptionsMemory(settings, again.state, again, "report/options")
    assert (again.state.seed, again.state.by, again.state.study_refs) == (
        42,
        ("model",),
        "gold:split",
    )
    assert again.seed_spin.value() == 42 and ticked(again.dimension_list) == ["model"]
    assert again.quality_combo.currentData() == "gold:split"


def test_settings_that_do_not_parse_leave_the_defaults(qtbot, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    settings.setValue("report/options", "{not json")
    panel = ReportPanel()
    qtbot.addWidget(panel)
    ReportOptionsMemory(settings, panel.state, panel, "report/options")
    assert panel.state.values() == ReportState().values()


def test_a_build_running_and_a_report_out_of_date_are_the_states(qtbot) -> None:
    panel = ReportPanel()
    qtbot.addWidget(panel)
    state = panel.state
    state.busy = True
    assert not panel.build_button.isEnabled() and panel.cancel_button.isEnabled()
    assert not panel.busy_row.isHidden() and panel.progress.maximum() == 0
    state.progress = (3, 4, "comparing")
    assert panel.progress.value() == 750 and panel.progress.format() == "comparing"
    state.busy = False
    assert panel.build_button.isEnabled() and panel.busy_row.isHidden()
    panel.set_available([], session=False)  # no session: nothing to build
    assert not state.session and not panel.build_button.isEnabled()
    panel.mark_stale()  # no report shown: nothing is out of date
    assert not state.stale
    state.stale = True
    assert not panel.stale_label.isHidden()
