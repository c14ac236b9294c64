"""The Report panel on the fixture session: tables as core builds them, marks, headlines,
plots and their exports, CSV and HTML exports, the empty session, the job's thread."""

from __future__ import annotations

import importlib
import math
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QImage

from app.gui import build_window
from core.jobs import JobSucceeded, JobWasCancelled
from core.report import ReportRequest, Settings, build_report, plot_specs
from core.report.render import report_tables
from core.store import SessionStore
from tests.fixtures import report_session as fixture_module
from tests.fixtures.reads import settle_reads
from tests.fixtures.report_session import ReportSession
from widgets.plot_export import ExportOptions
from widgets.report.headlines import headline_text
from widgets.report.table import MARK_BACKGROUND

report_session = fixture_module.report_session  # registers the fixture here

DISPLAY, USER = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.UserRole
BACKGROUND, FONT = Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.FontRole


@pytest.fixture
def wired(qtbot, tmp_path: Path, report_session: ReportSession):
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    assert controller.open_session(report_session.path)
    settle_reads(qtbot, controller)  # the metrics and runs, listed off the UI thread
    yield window, controller
    controller.shutdown()


def wait_built(qtbot, handle, timeout_ms: int = 30_000) -> object:
    with qtbot.waitSignal(handle.finished, timeout=timeout_ms) as blocker:
        pass
    return blocker.args[0]


def build(qtbot, report, request: ReportRequest | None = None) -> None:
    handle = report.build(request)
    assert handle is not None
    assert isinstance(wait_built(qtbot, handle), JobSucceeded)


def rows_of(model) -> list[tuple]:
    return [
        tuple(model.data(model.index(r, c), USER) for c in range(model.columnCount()))
        for r in range(model.rowCount())
    ]


def find_row(table_model, **values) -> int:
    columns = table_model.table.columns
    for r in range(table_model.rowCount()):
        if all(table_model.raw(r, columns.index(k)) == v for k, v in values.items()):
            return r
    raise AssertionError(f"no row with {values}")


def test_building_fills_the_tables_as_core_builds_them(qtbot, wired, report_session) -> None:
    window, controller = wired
    panel = controller.report.panel
    # The metrics the session holds are listed before any build, ratings included.
    names = [panel.metric_list.item(i).data(USER) for i in range(panel.metric_list.count())]
    assert names == ["bleu", "chrf++", "ppl", "entity_ppl", "human_fluency", "human_adequacy"]
    assert "Build report" in panel.message.text()

    panel.set_dimensions(["tier", "lang"])
    panel.repetitions_spin.setValue(3)
    panel.seed_spin.setValue(5)
    request = panel.request()
    assert request.by == ("tier", "lang") and request.metrics is None
    build(qtbot, controller.report, request)
    assert panel.stack.currentWidget() is panel.outer
    settings = Settings(repetitions=3, seed=5)
    assert controller.report.view.report.settings == settings

    with SessionStore.open(report_session.path) as store:
        expected = {
            t.name: t
            for t in report_tables(build_report(store, by=("tier", "lang"), settings=settings))
        }
    assert set(panel.pages) == set(expected)
    for name in ("compare_tier", "compare_lang", "study_gold", "counts", "annotations"):
        model = panel.pages[name].model
        assert rows_of(model) == [tuple(r) for r in expected[name].rows], name
    tier = panel.pages["compare_tier"].model
    assert tier.rowCount() == len(expected["compare_tier"].rows) > 0
    r = find_row(tier, metric="bleu", model="model-a", lang="en", quality="gold")
    columns = tier.table.columns
    assert tier.data(tier.index(r, columns.index("group_a")), DISPLAY) == "head"
    assert tier.data(tier.index(r, columns.index("median_a")), DISPLAY) == "65.00"  # 50..80
    assert tier.data(tier.index(r, columns.index("median_b")), DISPLAY) == "25.00"  # 10..40
    assert tier.data(tier.index(r, columns.index("metric")), DISPLAY) == "BLEU"
    # The verdict columns come right after the groups' names.
    header = panel.pages["compare_tier"].view.horizontalHeader()
    assert header.visualIndex(columns.index("p_value")) == columns.index("group_b") + 1
    study = panel.pages["study_gold"].model
    r = find_row(study, model="model-a", type="long_tail", lang="en")
    assert study.raw(r, study.table.columns.index("BLEU")) == pytest.approx(25.0)


def test_significant_cells_are_highlighted_with_a_legend(qtbot, wired) -> None:
    window, controller = wired
    panel = controller.report.panel
    # Uncorrected, so the 4-against-4 comparisons keep their marks (Holm: see below).
    panel.correction_combo.setCurrentIndex(panel.correction_combo.findData("none"))
    build(qtbot, controller.report)
    tier = panel.pages["compare_tier"].model
    p = tier.table.columns.index("p_value")
    # model-a: head 50-80 against long tail 10-40, fully separated: exact p = 2/70.
    separated = find_row(tier, metric="bleu", model="model-a", lang="en", quality="gold")
    overlapping = find_row(tier, metric="bleu", model="model-b", lang="en", quality="gold")
    assert tier.raw(separated, p) == pytest.approx(2 / 70)
    marked, plain = tier.index(separated, p), tier.index(overlapping, p)
    assert tier.data(marked, BACKGROUND).color() == MARK_BACKGROUND
    assert tier.data(marked, FONT).bold()
    assert tier.data(marked, DISPLAY).endswith("*")
    assert tier.data(plain, BACKGROUND) is None and tier.data(plain, FONT) is None
    assert "p < 0.05" in tier.data(marked, Qt.ItemDataRole.ToolTipRole)
    study = panel.pages["study_gold"].model
    assert any(
        study.data(study.index(r, c), BACKGROUND) is not None
        for r in range(study.rowCount())
        for c in range(study.columnCount())
    )
    assert "highlighted" in panel.legend.text() and "p &lt; 0.05" in panel.legend.text()
    tabs = [panel.tabs.tabText(i) for i in range(panel.tabs.count())]
    assert panel.tabs.tabText(panel.tabs.currentIndex()) == "By tier *"
    assert "Study table *" in tabs and "Counts" in tabs


def test_headlines_read_head_against_long_tail(qtbot, wired) -> None:
    window, controller = wired
    panel = controller.report.panel
    build(qtbot, controller.report)
    lines = {headline_text(c, show_model=True) for c in panel.headlines}
    # Languages pooled: model-a head 45..80 (median 62.5), long tail 5..40 (median 22.5),
    # 8 against 8 fully separated: exact two-sided p = 2 / C(16, 8) = 1.55e-4.
    assert (
        "BLEU (model-a, gold refs): head 62.50 vs long tail 22.50, p = 1.6e-04 "
        "(significant; long tail worse)"
    ) in lines
    # Perplexity: higher is worse (model-a head median 13.5, long tail 70.5).
    assert (
        "PPL (model-a): head 13.50 vs long tail 70.50, p = 1.6e-04 (significant; long tail worse)"
    ) in lines
    model_b = next(line for line in lines if line.startswith("BLEU (model-b"))
    assert "head 42.50 vs long tail 47.50" in model_b and "not significant" in model_b
    assert "significant: long tail worse" in panel.headline.text()


def test_plots_show_the_specs_and_export_png_and_svg(qtbot, wired, tmp_path: Path) -> None:
    window, controller = wired
    panel = controller.report.panel
    build(qtbot, controller.report)
    specs = plot_specs(controller.report.view.report)
    plots = panel.plots
    assert [s.title for s in plots.specs] == [s.title for s in specs]
    assert plots.picker.count() == len(specs)
    boxes = next(i for i, s in enumerate(specs) if s.kind == "box" and s.metric == "bleu")
    plots.show_plot(boxes)
    assert len(plots.boxes) == 4 == len(plots.box_item.opts["x"])
    assert [b.label for b in plots.boxes] == [
        "model-a · head",
        "model-a · long_tail",
        "model-b · head",
        "model-b · long_tail",
    ]
    assert plots.boxes[0].median == pytest.approx(62.5)
    ppl = next(i for i, s in enumerate(specs) if s.kind == "box" and s.metric == "ppl")
    plots.show_plot(ppl)
    assert plots.left_axis.log_values
    # Drawn on log10: the median of the logs of 10..17 lies between log10(13) and log10(14).
    assert plots.boxes[0].median == pytest.approx((math.log10(13) + math.log10(14)) / 2)
    scatter = next(i for i, s in enumerate(specs) if s.kind == "scatter")
    plots.show_plot(scatter)
    assert len(plots.scatter_item.data) == 32  # 2 models × 8 units × 2 languages
    distribution = next(i for i, s in enumerate(specs) if s.kind == "distribution")
    plots.show_plot(distribution)
    assert len(plots.plot.getPlotItem().listDataItems()) == 2  # head, long tail

    png = plots.export(tmp_path / "p.png", ExportOptions(dpi=100, size_in=(4, 3)))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (QImage(str(png)).width(), QImage(str(png)).height()) == (400, 300)
    svg, pdf = plots.export(tmp_path / "p.svg"), plots.export(tmp_path / "p.pdf")
    assert ET.parse(svg).getroot().tag.endswith("svg")
    assert pdf.read_bytes()[:5] == b"%PDF-"
    written = plots.export_all(tmp_path / "all", ExportOptions(dpi=50), suffixes=(".png", ".svg"))
    assert len(written) == 2 * len(specs) and all(p.stat().st_size for p in written)
    # Exporting draws no other plot in the panel.
    assert plots.current_spec() == specs[distribution]
    assert len(plots.plot.getPlotItem().listDataItems()) == 2
    with pytest.raises(ValueError, match=r"\.png, \.svg or \.pdf"):
        plots.export(tmp_path / "p.eps")


def test_csv_and_html_exports_run_as_jobs(qtbot, wired, tmp_path: Path) -> None:
    window, controller = wired
    panel = controller.report.panel
    assert not panel.csv_button.isEnabled()
    build(qtbot, controller.report)
    assert panel.csv_button.isEnabled() and panel.html_button.isEnabled()
    requested: list[str] = []
    panel.csv_requested.connect(requested.append)
    panel.csv_requested.emit(str(tmp_path / "csv"))  # what the CSV… button sends
    handle = controller.report.last_export
    assert requested and handle is not None
    # Every message the status bar shows: another panel's job (the Browser's demo data)
    # may say it is done after the export did, and replace its message.
    shown: list[str] = []
    window.statusBar().messageChanged.connect(shown.append)
    assert isinstance(wait_built(qtbot, handle), JobSucceeded)
    names = {p.stem for p in (tmp_path / "csv").glob("*.csv")}
    assert {t.name for t in report_tables(controller.report.view.report)} <= names
    assert any("CSV files written" in message for message in shown), shown
    panel.html_requested.emit(str(tmp_path / "report.html"))
    assert isinstance(wait_built(qtbot, controller.report.last_export), JobSucceeded)
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Long-tail bias report" in html and "<svg" in html
    assert any("report.html" in message for message in shown), shown


def test_an_empty_session_says_so_instead_of_empty_tables(qtbot, wired, tmp_path) -> None:
    window, controller = wired
    panel = controller.report.panel
    controller.new_session(tmp_path / "empty.taillens")
    settle_reads(qtbot, controller)
    assert panel.metric_list.count() == 0
    started = []
    controller.runner.job_started.connect(lambda h: started.append(h.job.kind))
    panel.build_button.click()
    assert "report" not in started and controller.report.handle is None
    assert panel.stack.currentWidget() is panel.message
    assert "Nothing to compare yet" in panel.message.text()


def test_the_build_runs_off_the_ui_thread_and_cancels(qtbot, wired, monkeypatch) -> None:
    window, controller = wired
    panel = controller.report.panel
    build_module = importlib.import_module("core.report.build")

    threads: list[int] = []

    def slow_build(store, **kwargs):
        threads.append(threading.get_ident())
        ctx = kwargs["ctx"]
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            ctx.check_cancelled()
            time.sleep(0.01)
        raise AssertionError("never cancelled")

    monkeypatch.setattr(build_module, "build_report", slow_build)
    handle = controller.report.build()
    qtbot.waitUntil(lambda: bool(threads), timeout=10_000)
    assert threads[0] != threading.get_ident()
    assert panel.cancel_button.isEnabled() and not panel.build_button.isEnabled()
    qtbot.wait(50)  # the UI thread keeps serving events while the job runs
    assert controller.report.build() is handle  # one build at a time
    panel.cancel_button.click()
    assert isinstance(wait_built(qtbot, handle), JobWasCancelled)
    assert panel.build_button.isEnabled() and not panel.progress.isVisible()
    assert controller.report.view is None and panel.stack.currentWidget() is panel.message


def test_the_report_builds_itself_when_first_shown(qtbot, wired) -> None:
    """A live demo needs no clicks: showing the panel on a scored session builds it."""
    window, controller = wired
    window.show()
    dock = window.docks["report"]
    dock.show()
    dock.raise_()
    qtbot.waitUntil(lambda: controller.report.view is not None, timeout=30_000)
    panel = controller.report.panel
    assert panel.stack.currentWidget() is panel.outer and panel.headlines
    assert controller.report.view.report.by == ("tier",)


def test_build_button_stays_off_while_a_build_runs(qtbot) -> None:
    """Other jobs finishing re-list the metrics; that must not re-enable Build mid-build."""
    from widgets.report.panel import ReportPanel

    panel = ReportPanel()
    qtbot.addWidget(panel)
    panel.set_available([("bleu", 3)])
    assert panel.build_button.isEnabled()
    panel.set_busy(True)
    panel.set_available([("bleu", 3), ("esa", 3)])
    assert not panel.build_button.isEnabled()
    panel.set_busy(False)
    assert panel.build_button.isEnabled()


def test_study_references_and_dataset_choices(qtbot, wired) -> None:
    window, controller = wired
    panel = controller.report.panel
    panel.set_dimensions(["dataset"])
    panel.quality_combo.setCurrentIndex(panel.quality_combo.findData("gold:split"))
    request = panel.request()
    assert request.by == ("dataset",)
    assert request.settings.study_references == "split"
    assert request.settings.study_quality == "gold"  # headlines and plots
    request = replace(request, settings=replace(request.settings, repetitions=2))
    build(qtbot, controller.report, request)
    assert "study_split" in panel.pages
    assert controller.report.view.report.settings.study_references == "split"


def test_correction_bootstrap_and_run_picker(qtbot, wired, report_session: ReportSession) -> None:
    window, controller = wired
    panel = controller.report.panel
    runs = [panel.run_list.item(i).data(USER) for i in range(panel.run_list.count())]
    assert runs == sorted(report_session.runs.values()) and panel.picked_runs() is None
    assert panel.request().settings.correction == "holm"
    build(qtbot, controller.report)
    report = controller.report.view.report
    tier = panel.pages["compare_tier"].model
    columns = tier.table.columns
    adjusted = columns.index("p_adjusted")
    separated = find_row(tier, metric="bleu", model="model-a", lang="en", quality="gold")
    assert tier.raw(separated, columns.index("p_value")) == pytest.approx(2 / 70)
    assert tier.raw(separated, adjusted) > 0.05  # Holm over the whole report
    assert tier.data(tier.index(separated, adjusted), BACKGROUND) is None
    assert "Holm-corrected" in panel.legend.text() and "bootstrap" in panel.legend.text()
    assert tier.raw(separated, columns.index("median_diff_ci_low")) is not None
    assert "Holm p = " in panel.headline.text()
    assert report.tests_corrected > 0
    # Pick model-b's run only: the report says so and uses only its items.
    picked = report_session.runs["model-b"]
    panel.run_list.item(runs.index(picked)).setCheckState(Qt.CheckState.Checked)
    panel.correction_combo.setCurrentIndex(panel.correction_combo.findData("bh"))
    assert panel.request().runs == (picked,)
    build(qtbot, controller.report)
    report = controller.report.view.report
    assert report.settings.correction == "bh" and report.frame.picked_runs == (picked,)
    used = panel.pages["runs_used"].model
    assert [used.raw(r, 0) for r in range(used.rowCount())] == [picked]
    assert f"runs picked: {picked}" in used.table.note
    assert {c.stratum_value("model") for c in report.comparisons["tier"]} == {"model-b"}


def test_export_button_writes_the_chosen_file_or_says_why_not(
    qtbot, wired, tmp_path: Path, monkeypatch
) -> None:
    import widgets.report.panel as report_module

    window, controller = wired
    panel = controller.report.panel
    build(qtbot, controller.report)
    warnings = []
    monkeypatch.setattr(
        report_module.QMessageBox, "warning", lambda _parent, title, text: warnings.append(text)
    )
    target = tmp_path / "figure.pdf"
    monkeypatch.setattr(
        report_module, "ask_export", lambda _parent, _name: (target, ExportOptions(".pdf"))
    )
    panel.plots.export_button.click()
    assert target.read_bytes()[:5] == b"%PDF-" and warnings == []
    (tmp_path / "taken.png").mkdir()  # a folder where the file should go: a message
    monkeypatch.setattr(
        report_module,
        "ask_export",
        lambda _parent, _name: (tmp_path / "taken.png", ExportOptions()),
    )
    panel.plots.export_button.click()
    assert len(warnings) == 1 and "is a folder" in warnings[0]


def test_all_plots_export_as_a_job_off_the_ui_thread(
    qtbot, wired, tmp_path: Path, monkeypatch
) -> None:
    import widgets.report.panel as report_module

    window, controller = wired
    panel = controller.report.panel
    build(qtbot, controller.report)
    monkeypatch.setattr(
        report_module.QFileDialog, "getExistingDirectory", lambda *_args: str(tmp_path / "all")
    )
    panel._last_export_options = ExportOptions(dpi=40)
    with qtbot.waitSignal(panel.figures_requested) as requested:
        panel.all_plots_button.click()
    job = requested.args[0]
    assert not job.uses_session and job.kind == "report.figures"
    # Every plot in three formats through matplotlib: a minute and more on a loaded
    # 2-core machine (30 s timed out there), a few seconds otherwise.
    outcome = wait_built(qtbot, controller.report.last_export, timeout_ms=180_000)
    assert isinstance(outcome, JobSucceeded)
    written = outcome.result
    specs = panel.plots.specs
    assert len(written) == 3 * len(specs)
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == sorted(p.name for p in written)
    assert written[0].name == f"01-{specs[0].kind}-{specs[0].metric}.png"


def test_the_plots_open_on_a_significant_metric_and_keep_the_users_choice(qtbot, wired) -> None:
    from dataclasses import replace

    from widgets.report.headlines import opening_plot

    window, controller = wired
    panel = controller.report.panel
    build(qtbot, controller.report)
    specs, headlines = panel.plots.specs, panel.headlines
    shown = panel.plots.current_spec()
    first = next(c.metric for c in headlines if c.significant)
    assert shown is not None and shown.metric == first
    # The first metric with a significant verdict, whatever comes first in the list.
    quiet = [replace(c, p_adjusted=1.0) if c.metric == first else c for c in headlines]
    others = [c.metric for c in quiet if c.significant]
    index = opening_plot(specs, quiet)
    assert (specs[index].metric == others[0]) if others else index == 0
    assert opening_plot(specs, [replace(c, p_adjusted=1.0) for c in headlines]) == 0
    # A rebuild keeps the plot the user chose.
    last = len(specs) - 1
    panel.plots.show_plot(last)
    build(qtbot, controller.report)
    assert panel.plots.current_spec().title == specs[last].title


def test_a_report_tabbed_behind_another_panel_builds_when_its_tab_is_shown(
    qtbot, tmp_path: Path, report_session: ReportSession
) -> None:
    window, controller = build_window(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    window.resize(1366, 738)
    window.show()  # Explore: the Report is a tab behind Units on the right
    qtbot.waitExposed(window)
    started: list[str] = []
    controller.runner.job_started.connect(lambda h: started.append(h.job.title))
    assert controller.open_session(report_session.path)
    settle_reads(qtbot, controller)
    qtbot.wait(200)  # the turn in which a report in view would start building
    assert "Bias report" not in started and controller.report.view is None
    window.raise_panel("report")  # its tab clicked
    qtbot.waitUntil(lambda: controller.report.view is not None, timeout=60_000)
    assert "Bias report" in started
    controller.shutdown()
