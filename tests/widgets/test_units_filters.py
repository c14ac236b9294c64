"""The Units list is a sortable, filterable table that shows references."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from PySide6.QtCore import Qt

from core.store import SessionStore
from core.units.reference_counts import reference_counts, references_of
from tests.fixtures.scoring_session import build_session
from widgets.units import UNIT_COLUMNS, UnitsPanel


def unit(i: int, shape: str, size: int, tier: str, langs: tuple[str, ...]) -> SimpleNamespace:
    return SimpleNamespace(
        id=i,
        uid=f"U{i:03d}",
        shape=shape,
        size=size,
        tier=tier,
        sub_tier=None,
        origin="sampled",
        languages=langs,
        parallel=set(langs),
    )


UNITS = [
    unit(1, "chain", 10, "head", ("en", "it")),
    unit(2, "sibling", 2, "long_tail", ("en",)),
    unit(3, "chain", 3, "long_tail", ("es",)),
    unit(4, "mixed", 7, "head", ("en", "es")),
]
REFERENCES = {1: {"gold": 2}, 3: {"silver": 1}}


def shown(panel: UnitsPanel, column: str = "uid") -> list[str]:
    view, c = panel.units_view, UNIT_COLUMNS.index(column)
    return [view.model().index(r, c).data() for r in range(view.model().rowCount())]


def test_filters_by_shape_size_tier_language_and_references(qtbot) -> None:
    panel = UnitsPanel()
    qtbot.addWidget(panel)
    panel.show_units(UNITS, references=REFERENCES)
    assert shown(panel, "references") == ["gold 2", "", "silver 1", ""]

    def pick(name: str, value: str) -> None:
        combo = panel.unit_filters[name]
        combo.setCurrentIndex(combo.findData(value))

    pick("shape", "chain")
    assert shown(panel) == ["U001", "U003"]
    assert panel.units_label.text() == "2 of 4 units match the filters"
    pick("languages", "es")
    assert shown(panel) == ["U003"]
    pick("shape", "All")
    pick("languages", "All")
    pick("references", "none")
    assert shown(panel) == ["U002", "U004"]
    pick("references", "gold")
    assert shown(panel) == ["U001"]
    pick("references", "All")
    pick("tier", "long_tail")
    assert shown(panel) == ["U002", "U003"]
    pick("tier", "All")
    pick("size", "7")
    assert shown(panel) == ["U004"]
    pick("size", "All")
    assert shown(panel) == ["U001", "U002", "U003", "U004"]
    assert panel.units_label.text() == "4 units in the session"


def test_sorts_sizes_as_numbers_and_selects_the_unit_of_the_sorted_row(qtbot) -> None:
    panel = UnitsPanel()
    qtbot.addWidget(panel)
    panel.show_units(UNITS, references=REFERENCES)
    panel.units_view.sortByColumn(UNIT_COLUMNS.index("size"), Qt.SortOrder.AscendingOrder)
    assert shown(panel, "size") == ["2", "3", "7", "10"]  # not "10" < "2"
    with qtbot.waitSignal(panel.unit_selected) as picked:
        panel.units_view.selectRow(0)
    assert picked.args == [2]


def test_a_sort_reads_every_page_first(qtbot) -> None:
    panel = UnitsPanel()
    qtbot.addWidget(panel)
    pages = [UNITS[2:], []]
    panel.more_units_requested.connect(lambda _after: panel.add_units(pages.pop(0)))
    panel.show_units(UNITS[:2], total=4)
    panel.units_view.sortByColumn(UNIT_COLUMNS.index("uid"), Qt.SortOrder.DescendingOrder)
    assert shown(panel) == ["U004", "U003", "U002", "U001"]  # End reaches the end


def test_the_selected_units_references_are_shown(qtbot) -> None:
    panel = UnitsPanel()
    qtbot.addWidget(panel)
    panel.show_references([("en", "gold", "Rome is in Italy."), ("it", "silver", "Roma.")])
    assert not panel.references_scroll.isHidden()
    assert "Rome is in Italy." in panel.references_view.text()
    assert "silver" in panel.references_view.text()


def test_reference_counts_and_texts_from_a_session(tmp_path: Path) -> None:
    path = tmp_path / "s.taillens"
    ids = build_session(path)
    with SessionStore.open(path) as store:
        counts = reference_counts(store, ids.units)
        texts = {u: references_of(store, u) for u in ids.units}
    assert counts, counts
    for unit_id, by_quality in counts.items():
        assert sum(by_quality.values()) == len(texts[unit_id])
        qualities = [q for lang, q, _t in texts[unit_id] if lang == "en"]
        assert qualities == sorted(qualities, key=lambda q: q != "gold")  # gold first


def test_five_units_show_at_a_small_laptop_size(qtbot) -> None:
    """At 1024 x 640 (the dock about 600 px tall) the list showed one unit."""
    panel = UnitsPanel()
    qtbot.addWidget(panel)
    panel.show_units([unit(i, "chain", 2, "head", ("en",)) for i in range(1, 30)])
    panel.show_references([("en", "gold", "A reference text. " * 8)] * 3)
    panel.resize(620, 560)
    panel.show()
    qtbot.waitExposed(panel)
    view = panel.units_view
    whole = sum(
        view.viewport().rect().contains(view.visualRect(view.model().index(r, 0)))
        for r in range(view.model().rowCount())
    )
    assert whole >= 5, whole


def test_pages_answered_later_still_reach_a_sort_and_a_filter(qtbot) -> None:
    """The controller reads pages off the UI thread, so an answer comes later: the sort
    returns at once with what is shown, asks for the next page as each arrives, and the
    rows end sorted and filtered, the label counting while it reads."""
    from PySide6.QtCore import QTimer

    panel = UnitsPanel()
    qtbot.addWidget(panel)
    pages = {2: UNITS[2:3], 3: UNITS[3:], 4: []}
    asked: list[int | None] = []

    def answer(after: int | None) -> None:
        asked.append(after)
        QTimer.singleShot(20, lambda: panel.add_units(pages[after]))

    panel.more_units_requested.connect(answer)
    panel.show_units(UNITS[:2], total=4)
    panel.units_view.sortByColumn(UNIT_COLUMNS.index("uid"), Qt.SortOrder.DescendingOrder)
    assert shown(panel) == ["U002", "U001"]  # at once: nothing waited for
    combo = panel.unit_filters["shape"]
    combo.setCurrentIndex(combo.findData("chain"))
    assert "reading 2 of 4" in panel.units_label.text()
    qtbot.waitUntil(lambda: panel.units_model.rowCount() == 4, timeout=5_000)
    assert shown(panel) == ["U003", "U001"]
    assert panel.units_label.text() == "2 of 4 units match the filters"
    assert asked == [2, 3]  # each page asked once, in order


def test_tiers_are_the_panels_one_vocabulary_ordered_head_to_tail(qtbot) -> None:
    """TailNLG's tiers as every panel words them (Annotate's filter, the Report): its
    top_head is "head", rare_claims "rare claims", a long-tail unit is in "long tail"
    and in its language's sub-tier; the filter lists them head to tail, whatever the
    order units come in, and no internal id is shown."""
    from core.groups import SUBTIER_ORDER
    from core.labels import tier_label

    units = [
        unit(1, "chain", 2, "long_tail", ("it",)),
        unit(2, "chain", 2, "top_head", ("en",)),
        unit(3, "chain", 2, "top_head", ("en",)),
        unit(4, "chain", 2, "long_tail", ("en",)),
    ]
    units[0].sub_tier, units[1].sub_tier = "long_tail_it", "top_head"
    units[2].sub_tier, units[3].sub_tier = "rare_claims", "long_tail_en"
    panel = UnitsPanel()
    qtbot.addWidget(panel)
    panel.show_units(units)
    combo = panel.unit_filters["tier"]
    offered = [combo.itemData(i) for i in range(1, combo.count())]
    assert offered == ["head", "rare_claims", "long_tail", "long_tail_en", "long_tail_it"]
    assert offered == sorted(offered, key=SUBTIER_ORDER.index)
    words = [combo.itemText(i) for i in range(1, combo.count())]
    assert words == [tier_label(code) for code in offered]
    assert words[:3] == ["head", "rare claims", "long tail"]
    assert shown(panel, "tier") == [
        "long tail · it only",
        "head",
        "rare claims",
        "long tail · en only",
    ]
    assert not any("_" in w for w in [*words, *shown(panel, "tier")])
    combo.setCurrentIndex(combo.findData("long_tail"))
    assert shown(panel) == ["U001", "U004"]
    combo.setCurrentIndex(combo.findData("head"))
    assert shown(panel) == ["U002", "U003"]  # rare claims are head entities too
    combo.setCurrentIndex(0)
    panel.units_view.sortByColumn(UNIT_COLUMNS.index("tier"), Qt.SortOrder.AscendingOrder)
    assert shown(panel, "tier") == [
        "head",
        "rare claims",
        "long tail · en only",
        "long tail · it only",
    ]
