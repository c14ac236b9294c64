"""Browser panel: tiers follow the lines, the table filters and sorts, plots export."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from core.tiers.cutoffs import Distribution
from core.wikidata.categories import category_by_name
from core.wikidata.records import CategoryTable, ClaimRecord, EntityDetails, Term
from widgets.browser import BrowserPanel
from widgets.entity_table import COL_STATEMENTS, COL_TIER
from widgets.plot_export import ExportOptions


def make_columns(counts: list[int], wikis: list[str] | None = None) -> CategoryTable:
    n = len(counts)
    wikis = wikis or ["en"] * n
    return CategoryTable(
        "test",
        qids=[f"Q{i + 1}" for i in range(n)],
        labels=[f"Entity {i + 1}" if i % 5 else None for i in range(n)],
        statements=np.array(counts, dtype=np.int64),
        sitelinks=np.array(counts, dtype=np.int64) // 2,
        has_en=np.array(["en" in w for w in wikis]),
        has_it=np.array(["it" in w for w in wikis]),
        has_es=np.array(["es" in w for w in wikis]),
    )


@pytest.fixture
def panel(qtbot) -> BrowserPanel:
    widget = BrowserPanel()
    qtbot.addWidget(widget)
    widget.resize(1200, 800)
    widget.set_categories([category_by_name("City"), category_by_name("River")])
    widget.show()
    return widget


def visible_tiers(panel: BrowserPanel) -> list[str]:
    model = panel.model
    return [model.data(model.index(r, COL_TIER)) for r in range(model.rowCount())]


def test_pareto_split_of_a_hand_worked_category(panel: BrowserPanel) -> None:
    # 50 + 30 = 80 of 100 statements: with share 0.8 the cut-off is 30.
    panel.show_category("City", make_columns([5, 50, 3, 30, 10, 2]))
    assert panel.lines["pareto"] == 30
    assert panel.summary is not None
    assert panel.summary.tiers[0].size == 2
    assert panel.model.rowCount() == 6
    # Sorted by statements, descending: the first two rows are the head.
    assert visible_tiers(panel)[:3] == ["head", "head", "long tail · en only"]
    assert "2 entities" in panel.summary_label.text()


def test_dragging_a_line_retiers_and_updates_the_share(panel: BrowserPanel) -> None:
    panel.show_category("City", make_columns([5, 50, 3, 30, 10, 2]))
    panel.plots.line_moved.emit("pareto", 10.0)
    assert panel.summary.tiers[0].size == 3  # 50, 30, 10
    assert panel.share_spin.value() == pytest.approx(0.9)  # they hold 90 of 100 statements
    assert visible_tiers(panel).count("head") == 3


def test_only_the_splitting_line_is_bold_and_draggable_and_the_counts_follow_it(
    panel: BrowserPanel,
) -> None:
    """Split by Pareto: the head–tail line is faint, dashed and fixed; dragging the Pareto
    line re-tiers as it moves. Split by head–tail: the other way round."""
    panel.show_category("City", make_columns([5, 50, 3, 30, 10, 2]))
    assert panel.split_combo.currentData() == "pareto"
    histogram = panel.plots._line_sets[0].lines
    pareto, head_tail = histogram["pareto"], histogram["head_tail"]
    assert pareto.movable and not head_tail.movable
    assert pareto.pen.style() == Qt.PenStyle.SolidLine
    assert head_tail.pen.style() == Qt.PenStyle.DashLine
    assert head_tail.pen.color().alpha() < pareto.pen.color().alpha()
    assert head_tail.pen.widthF() < pareto.pen.widthF()
    for line_set in panel.plots._line_sets:  # every plot alike
        assert line_set.lines["pareto"].movable and not line_set.lines["head_tail"].movable
    assert panel.summary.tiers[0].size == 2

    # The Pareto line dragged (as the mouse moves it) to 10 statements: counts follow live.
    pareto.setValue(np.log10(10.0))
    assert panel.summary.tiers[0].size == 3
    assert "3 entities (50%)" in panel.summary_label.text()
    # A drag reaching the reference line is refused: it snaps back, tiers unchanged.
    panel.plots.line_moved.emit("head_tail", 3.0)
    assert panel.summary.tiers[0].size == 3 and panel.lines["head_tail"] == 30
    assert 10 ** head_tail.value() == pytest.approx(30)

    panel.split_combo.setCurrentIndex(panel.split_combo.findData("head_tail"))
    assert head_tail.movable and not pareto.movable
    assert pareto.pen.style() == Qt.PenStyle.DashLine
    assert panel.summary.tiers[0].size == 2  # 50, 30: the top 20 %
    head_tail.setValue(np.log10(4.5))  # stands for the 5 at or above it
    assert panel.summary.tiers[0].size == 4  # 50, 30, 10, 5


def test_head_tail_threshold_and_torso(panel: BrowserPanel) -> None:
    panel.show_category("City", make_columns([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]))
    panel.split_combo.setCurrentIndex(1)  # head–tail threshold, fraction 0.2 → rank 2 → 9
    assert panel.head_line() == 9
    assert panel.summary.tiers[0].size == 2
    panel.torso_check.setChecked(True)
    panel.torso_spin.setValue(5)
    assert [t.size for t in panel.summary.tiers] == [2, 4, 4]


def test_filters_and_search(panel: BrowserPanel) -> None:
    panel.show_category(
        "City", make_columns([5, 50, 3, 30, 10, 2], ["en", "it", "en it", "es", "", "en"])
    )
    panel.tier_filter.setCurrentIndex(1)  # head
    assert panel.model.rowCount() == 2
    panel.tier_filter.setCurrentIndex(0)
    panel.wiki_filter.setCurrentIndex(2)  # has it page
    assert {panel.model.data(panel.model.index(r, 1)) for r in range(panel.model.rowCount())} == {
        "Q2",
        "Q3",
    }
    panel.wiki_filter.setCurrentIndex(0)
    panel.search_edit.setText("q4")
    assert panel.model.rowCount() == 1
    assert panel.count_label.text() == "1 of 6"


def test_sorting_by_header(panel: BrowserPanel) -> None:
    panel.show_category("City", make_columns([5, 50, 3, 30, 10, 2]))
    panel.table.sortByColumn(COL_STATEMENTS, Qt.SortOrder.AscendingOrder)
    values = [panel.model.data(panel.model.index(r, COL_STATEMENTS)) for r in range(6)]
    assert values == ["2", "3", "5", "10", "30", "50"]


def test_empty_and_tiny_categories(panel: BrowserPanel) -> None:
    panel.show_category("River", make_columns([]))
    assert panel.summary is None and "press <b>Fetch</b>" in panel.summary_label.text()
    panel.show_category("River", make_columns([7]))
    assert panel.summary.tiers[0].size == 1
    panel.show_category("River", make_columns([0, 0]))
    assert panel.summary.n == 2


def test_selecting_a_row_picks_the_entity(qtbot, panel: BrowserPanel) -> None:
    panel.show_category("City", make_columns([5, 50, 3]))
    heard: list[tuple[str, object, object]] = []
    panel.state.selection.subscribe(lambda *change: heard.append(change), ("entity",))
    panel.table.selectRow(0)
    assert panel.state.selection.entity == "Q2" and heard == [("entity", None, "Q2")]


def test_inspector_greys_dropped_claims(panel: BrowserPanel, qtbot) -> None:
    details = EntityDetails(
        qid="Q2",
        terms=(
            Term("Q2", "en", "label", "Valdoria"),
            Term("Q2", "it", "label", "Valdoria"),
            Term("P17", "en", "label", "country"),
            Term("Q38", "en", "label", "Italy"),
        ),
        claims=(
            ClaimRecord("s1", "Q2", "P17", "Q38", "wikibase-item"),
            ClaimRecord("s2", "Q2", "P214", "123", "external-id"),
        ),
        property_types={"P17": "wikibase-item", "P214": "external-id"},
    )
    panel.show_entity(details)
    inspector = panel.inspector
    assert "Valdoria" in inspector.title.text()
    terms = inspector.terms_view.toPlainText()
    assert terms.count("— missing —") == 1 and terms.count("Valdoria") == 2  # no es label
    model = inspector.claims_model
    texts = {model.item(r, 0).text(): model.item(r, 0) for r in range(model.rowCount())}
    country = texts["country (P17)"]
    assert country.child(0, 0).text() == "Italy (Q38)"
    assert country.child(0, 1).text() == ""  # "dropped because", second
    viaf = texts["P214 (P214)"]
    assert "external-id" in viaf.child(0, 1).text()
    with qtbot.waitSignal(inspector.start_unit_requested) as blocker:
        inspector.start_unit.click()
    assert blocker.args == ["Q2"]


def test_overlay_and_export(panel: BrowserPanel, tmp_path: Path, monkeypatch) -> None:
    rng = np.random.default_rng(1)
    panel.show_category("City", make_columns(list(rng.zipf(1.8, 500) % 5000)))
    river = panel.compare_list.findItems("River", Qt.MatchFlag.MatchExactly)[0]
    river.setCheckState(Qt.CheckState.Checked)
    assert panel.state.compared == ("River",)
    panel.show_overlay("River", make_columns(list(rng.zipf(2.2, 300) % 5000)))
    assert [s.name for s in panel.plots.series] == ["City", "River"]
    for i, suffix in enumerate((".png", ".svg", ".pdf")):
        target = tmp_path / f"plot{i}{suffix}"
        panel.plots.export(target, which=i, options=ExportOptions(dpi=60))
        assert target.stat().st_size > 1000
    with pytest.raises(ValueError):
        panel.plots.export(tmp_path / "plot.eps")
    # The button: the dialog's choice is written, for the tab shown.
    import widgets.browser as browser_module

    chosen = tmp_path / "chosen.svg"
    monkeypatch.setattr(
        browser_module, "ask_export", lambda _parent, name: (chosen, ExportOptions(".svg"))
    )
    panel.export_button.click()
    assert b"<svg" in chosen.read_bytes()


def test_distribution_lines_map_between_plots() -> None:
    dist = Distribution([5, 50, 3, 30, 10, 2])
    assert dist.entity_share_at_or_above(10) == pytest.approx(0.5)
    assert dist.statement_share_at_or_above(10) == pytest.approx(0.9)
    assert dist.count_at_entity_share(0.5) == 10


def test_long_tail_sub_tiers_are_shown_and_filtered(panel: BrowserPanel) -> None:
    panel.show_category("City", make_columns([50, 30, 3, 2, 1], ["en it", "en", "it", "en es", ""]))
    tiers = dict(
        zip(
            [panel.model.data(panel.model.index(r, 1)) for r in range(5)],
            visible_tiers(panel),
            strict=True,
        )
    )
    assert tiers["Q3"] == "long tail · it only"
    assert tiers["Q4"] == "long tail" and tiers["Q5"] == "long tail"
    panel.tier_filter.setCurrentIndex(panel.tier_filter.findText("long tail · it only"))
    assert panel.model.rowCount() == 1


def test_a_dragged_line_reopens_at_the_same_place(qtbot, panel: BrowserPanel) -> None:
    # 10 entities at 4 statements and 6 at 3: the share of ">= 4" is 40/58 = 0.68966;
    # saved as the spin box rounded it (0.690) it is first reached among the 3s, which
    # moved the line on reopening. The stored setting maps back to 4.
    counts = [4] * 10 + [3] * 6
    assert Distribution(np.array(counts)).pareto_cutoff(round(40 / 58, 3)) == 3
    panel.show_category("City", make_columns(counts))
    panel.plots.line_moved.emit("pareto", 3.3)
    assert panel.lines["pareto"] == 4 and panel.summary.tiers[0].size == 10
    settings = panel.tier_settings()
    assert Distribution(np.array(counts)).pareto_cutoff(settings.share) == 4
    assert Distribution(np.array(counts)).pareto_cutoff(panel.share_spin.value()) == 4
    reopened = BrowserPanel()
    qtbot.addWidget(reopened)
    reopened.apply_tier_settings(settings)
    reopened.show_category("City", make_columns(counts))
    assert reopened.tier_settings() == settings
    assert reopened.lines["pareto"] == 4 and reopened.summary.tiers[0].size == 10
    assert np.array_equal(reopened.model.tiers, panel.model.tiers)


def test_incomplete_fetch_is_marked_in_the_summary(panel: BrowserPanel) -> None:
    from dataclasses import replace

    columns = replace(make_columns([5, 50, 3]), incomplete="cancelled after 3 <members>")
    panel.show_category("City", columns)
    assert "Incomplete:" in panel.summary_label.text()
    assert "cancelled after 3 &lt;members&gt;" in panel.summary_label.text()
    panel.show_category("City", make_columns([5, 50, 3]))
    assert "Incomplete" not in panel.summary_label.text()


def test_headers_and_line_labels_fit_at_a_laptop_size(qtbot, panel: BrowserPanel) -> None:
    """At 1366×768 the Browser cut "Statements" and "Pareto cut-o"; everything fits now."""
    panel.resize(900, 700)
    counts = [int(2000 / (r + 1) ** 1.2) + 1 for r in range(400)]
    panel.show_category("City", make_columns(counts))
    header = panel.table.horizontalHeader()
    metrics = header.fontMetrics()
    for column in range(1, panel.model.columnCount()):
        title = str(panel.model.headerData(column, Qt.Orientation.Horizontal))
        assert header.sectionSize(column) >= metrics.horizontalAdvance(title) + 20, title
    plots = panel.plots
    plots.tabs.setCurrentWidget(plots.rank_frequency)
    qtbot.wait(50)
    rank = plots._line_sets[1]
    view = rank.plot.getViewBox()
    inside = view.mapRectToScene(view.boundingRect()).adjusted(-1, -1, 1, 1)
    shown = [line for line in rank.lines.values() if line.isVisible()]
    assert shown
    for line in shown:
        box = line.label.mapRectToScene(line.label.boundingRect())
        assert inside.contains(box), (line.label.toPlainText(), box, inside)


def test_the_inspector_formats_dates_quantities_and_coordinates() -> None:
    """Readable values, not ``1080-01-01T00:00:00Z`` or ``Point(103.6627 -4.5244)``."""
    from widgets.entity_inspector import shown_value

    details = EntityDetails(
        "Q2",
        terms=(Term("Q11573", "en", "label", "metre"),),
    )

    def shown(value: str, kind: str, extra: dict | None = None) -> str:
        return shown_value(ClaimRecord("s", "Q2", "P1", value, kind, value_json=extra), details)

    assert shown("+1080-01-01T00:00:00Z", "time", {"precision": 9}) == "1080"
    assert shown("1871-05-12T00:00:00Z", "time", {"precision": 11}) == "12 May 1871"
    assert shown("Point(103.6627 -4.5244)", "globe-coordinate") == "4.5244° S, 103.6627° E"
    unit = "http://www.wikidata.org/entity/Q11573"
    assert shown("+1234.50", "quantity", {"unit": unit}) == "1234.5 metre"
    assert shown("Q99", "wikibase-item") == "(no label) (Q99)"
    assert shown("abc", "string") == "abc"
