"""Read-only views of runs and units (core.verbalise.runs), on a hand-built session.

The session: add_units' five units u0..u4 (u0, u2, u4 head and in category City with one
triple; u1, u3 long_tail with two), plus u5, imported (category "Airport" in its
attributes, tier long_tail, sub-tier long_tail_2). Run A wrote u0 in es, en, it (en twice,
one unparsable); run B wrote nothing.
"""

from __future__ import annotations

import pytest

from core.store import SessionStore
from core.store.models import DataUnit, ModelRun, Verbalisation
from core.verbalise.prompts import parse_reply
from core.verbalise.runs import (
    RunOverview,
    UnitFilter,
    UnitOutput,
    UnitOutputs,
    UnitSummary,
    count_matching_units,
    list_runs,
    unit_groups,
    unit_outputs,
    unit_summary,
    units_overview,
    units_page,
)
from core.verbalise.selection import imported_category, select_units
from tests.fixtures.verbalise_units import add_units
from tests.shared_data import TAILNLG, require

NO_MARKER = parse_reply("no marker").reason


@pytest.fixture
def session(store: SessionStore) -> tuple[SessionStore, list[int], int, int]:
    ids = add_units(store, 5)
    with store.unit_of_work() as db:
        imported = DataUnit(
            uid="u5",
            size=3,
            origin="webnlg",
            tier="long_tail",
            sub_tier="long_tail_2",
            attributes={"entry": {"category": "Airport", "eid": "Id5"}},
        )
        run_a = ModelRun(
            kind="causal", model_id="/models/tiny", system_name="tiny", status="finished"
        )
        run_b = ModelRun(kind="openai", model_id="http://h m", system_name=None, status="failed")
        db.add_all([imported, run_a, run_b])
        db.flush()
        ids.append(imported.id)
        u0 = ids[0]
        db.add_all(
            [
                # Written out of order on purpose: the view sorts en, it, es, then by index.
                Verbalisation(
                    run_id=run_a.id,
                    unit_id=u0,
                    lang="es",
                    candidate_index=0,
                    raw_output="La verbalización final es: [París está en Francia.]",
                    text="París está en Francia.",
                    parse_ok=True,
                ),
                Verbalisation(
                    run_id=run_a.id,
                    unit_id=u0,
                    lang="en",
                    candidate_index=1,
                    raw_output="no marker",
                    text=None,
                    parse_ok=False,
                ),
                Verbalisation(
                    run_id=run_a.id,
                    unit_id=u0,
                    lang="it",
                    candidate_index=0,
                    raw_output="La verbalizzazione finale è: [Parigi è in Francia.]",
                    text="Parigi è in Francia.",
                    parse_ok=True,
                ),
                Verbalisation(
                    run_id=run_a.id,
                    unit_id=u0,
                    lang="en",
                    candidate_index=0,
                    raw_output="The final verbalization is: [Paris is in France.]",
                    text="Paris is in France.",
                    parse_ok=True,
                ),
            ]
        )
        return store, ids, run_a.id, run_b.id


def test_list_runs_newest_first_with_text_counts(session) -> None:
    store, _ids, run_a, run_b = session
    assert list_runs(store) == [
        # No display name: the model id names the run; no texts yet: 0, not missing.
        RunOverview(run_b, "http://h m", "openai", "failed", 0),
        RunOverview(run_a, "tiny", "causal", "finished", 4, unparsable=1),
    ]


def test_list_runs_of_an_empty_session(store: SessionStore) -> None:
    assert list_runs(store) == []


def test_unit_outputs_in_language_then_candidate_order(session) -> None:
    store, ids, run_a, _run_b = session
    found = unit_outputs(store, run_a, ids[0])
    assert found == UnitOutputs(
        "u0",
        (
            UnitOutput(
                "en",
                0,
                "Paris is in France.",
                "The final verbalization is: [Paris is in France.]",
                True,
            ),
            # Unparsable: text "", raw kept, and why.
            UnitOutput("en", 1, "", "no marker", False, NO_MARKER),
            UnitOutput(
                "it",
                0,
                "Parigi è in Francia.",
                "La verbalizzazione finale è: [Parigi è in Francia.]",
                True,
            ),
            UnitOutput(
                "es",
                0,
                "París está en Francia.",
                "La verbalización final es: [París está en Francia.]",
                True,
            ),
        ),
    )


def test_unit_outputs_of_a_skipped_unit_a_silent_run_and_a_gone_unit(session) -> None:
    store, ids, run_a, run_b = session
    assert unit_outputs(store, run_a, ids[1]) == UnitOutputs("u1", ())
    assert unit_outputs(store, run_b, ids[0]) == UnitOutputs("u0", ())
    assert unit_outputs(store, run_a, 9999) == UnitOutputs("9999", ())


def test_units_overview_counts_tiers_sub_tiers_and_both_kinds_of_category(session) -> None:
    store, ids, _run_a, _run_b = session
    overview = units_overview(store)
    assert overview.units == (
        UnitSummary(ids[0], "u0", 1, "head", None, "City"),
        UnitSummary(ids[1], "u1", 2, "long_tail", None, None),
        UnitSummary(ids[2], "u2", 1, "head", None, "City"),
        UnitSummary(ids[3], "u3", 2, "long_tail", None, None),
        UnitSummary(ids[4], "u4", 1, "head", None, "City"),
        UnitSummary(ids[5], "u5", 3, "long_tail", "long_tail_2", "Airport"),
    )
    # long_tail: u1, u3, u5; u5 also counts under its sub-tier.
    assert overview.tiers == (("head", 3), ("long_tail", 3), ("long_tail_2", 1))
    assert overview.categories == (("Airport", 1), ("City", 3))
    # Every name listed selects exactly the units it counts.
    for name, count in overview.tiers:
        assert len(select_units(store, f"tier:{name}")) == count
    for name, count in overview.categories:
        assert len(select_units(store, f"category:{name}")) == count


def test_units_overview_of_an_empty_session(store: SessionStore) -> None:
    overview = units_overview(store)
    assert (overview.units, overview.tiers, overview.categories) == ((), (), ())


def test_a_sub_tier_equal_to_the_tier_counts_once(store: SessionStore) -> None:
    with store.unit_of_work() as db:
        db.add(DataUnit(uid="x", size=1, origin="built", tier="head", sub_tier="head"))
    assert units_overview(store).tiers == (("head", 1),)


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        ({"entry": {"category": "Airport"}}, "Airport"),  # TailNLG / WebNLG entry attributes
        ({"category": "Food"}, "Food"),  # a flat attribute
        ({"entry": {"eid": "Id1"}}, None),
        ({"entry": "not a dict"}, None),
        (None, None),
        (["category"], None),
    ],
)
def test_imported_category(attributes: object, expected: str | None) -> None:
    assert imported_category(attributes) == expected


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        ({"entry": {"category": "Airport"}}, "Airport"),
        ({"category": "Food"}, "Food"),
        ({"entry": {"eid": "Id1"}, "category": "Food"}, None),  # the entry's, not the flat one
        ({"entry": "not a dict", "category": "Food"}, "Food"),
        ({"entry": {"eid": "Id1"}}, None),
        (None, None),
        # (attributes that are a list: a damaged row to core.store.integrity, hidden from every
        # reader; tests/core/test_integrity.py)
    ],
)
def test_the_sql_category_is_imported_category(
    store: SessionStore, attributes: object, expected: str | None
) -> None:
    """The picker's and select_units' category, resolved in SQL, is the one
    imported_category reads in Python; a session category comes first."""
    with store.unit_of_work() as db:
        unit = DataUnit(uid="x", size=1, origin="webnlg", attributes=attributes)
        db.add(unit)
        db.flush()
        unit_id = unit.id
    assert imported_category(attributes) == expected
    summary = unit_summary(store, unit_id)
    assert summary is not None and summary.category == expected
    assert select_units(store, f"category:{expected}") == ([unit_id] if expected else [])
    assert unit_groups(store)[1] == (((expected, 1),) if expected else ())


def test_units_page_filters_in_sql_and_pages_by_id(session) -> None:
    store, ids, _run_a, _run_b = session
    summaries = {u.id: u for u in units_overview(store).units}
    everything = units_page(store)
    assert [u.id for u in everything] == ids  # id order; one page holds them all
    assert count_matching_units(store) == len(ids)

    cases = {
        UnitFilter(text="CITY"): [ids[0], ids[2], ids[4]],  # a session category, any case
        UnitFilter(text="airp"): [ids[5]],  # an imported category
        UnitFilter(text="u3"): [ids[3]],
        UnitFilter(text="tail_2"): [ids[5]],  # a sub-tier
        UnitFilter(text=" u "): ids,  # stripped
        UnitFilter(tier="long_tail"): [ids[1], ids[3], ids[5]],
        UnitFilter(tier="long_tail_2"): [ids[5]],
        UnitFilter(lang="it"): ids[:5],  # u5 has no triples
        UnitFilter(text="city", tier="long_tail"): [],
        UnitFilter(text="city", lang="en", tier="head"): [ids[0], ids[2], ids[4]],
        UnitFilter(text="nothing like it"): [],
    }
    for where, expected in cases.items():
        assert count_matching_units(store, where) == len(expected), where
        # Keyset pages of two: each page follows the last id of the one before, the last
        # is short (or empty), and together they are every match once.
        seen: list[int] = []
        after = None
        while page := units_page(store, where, after_id=after, limit=2):
            assert len(page) <= 2
            assert [u for u in page] == [summaries[u.id] for u in page]
            seen += [u.id for u in page]
            after = page[-1].id
        assert seen == expected, where
    assert units_page(store, after_id=ids[-1]) == ()  # past the last page
    last = units_page(store, UnitFilter(text="u"), after_id=ids[3], limit=10)
    assert [u.id for u in last] == ids[4:]


def test_like_wildcards_in_the_search_are_literal(store: SessionStore) -> None:
    with store.unit_of_work() as db:
        db.add_all(
            [
                DataUnit(uid="a_b", size=1, origin="built"),
                DataUnit(uid="axb", size=1, origin="built"),
                DataUnit(uid="100%", size=1, origin="built"),
            ]
        )
    assert [u.uid for u in units_page(store, UnitFilter(text="a_b"))] == ["a_b"]
    assert [u.uid for u in units_page(store, UnitFilter(text="0%"))] == ["100%"]
    assert count_matching_units(store, UnitFilter(text="%")) == 1


def test_paged_queries_on_an_empty_session(store: SessionStore) -> None:
    assert units_page(store) == ()
    assert units_page(store, UnitFilter(text="x", tier="head", lang="en"), after_id=5) == ()
    assert count_matching_units(store) == 0
    assert unit_groups(store) == ((), ())
    assert unit_summary(store, 1) is None


def test_paged_queries_on_the_tailnlg_benchmark(tmp_path) -> None:
    """On the real benchmark: the GROUP BY counts are those of reading every unit, and each
    name selects (select_units, in SQL) and filters exactly the units it counts."""
    from collections import Counter

    from core.formats import import_webnlg

    tailnlg = require(*TAILNLG)
    with SessionStore.create(tmp_path / "t.taillens") as store:
        import_webnlg(store, tailnlg, flavour="tailnlg")
        with store.snapshot() as db:
            rows = db.query(DataUnit.id, DataUnit.tier, DataUnit.sub_tier, DataUnit.attributes)
            units = rows.all()
        tiers: Counter[str] = Counter()
        categories: Counter[str] = Counter()
        for _id, tier, sub_tier, attributes in units:
            tiers.update({t for t in (tier, sub_tier) if t})
            if category := imported_category(attributes):
                categories[category] += 1
        got_tiers, got_categories = unit_groups(store)
        assert got_tiers == tuple(sorted(tiers.items())) and got_categories
        assert got_categories == tuple(sorted(categories.items()))
        assert count_matching_units(store) == len(units)
        for name, count in got_categories:
            assert len(select_units(store, f"category:{name}")) == count
            assert count_matching_units(store, UnitFilter(text=name)) >= count
        for name, count in got_tiers:
            assert count_matching_units(store, UnitFilter(tier=name)) == count
