"""Tier settings and members' tiers saved in the session."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.errors import UserFacingError
from core.store import SessionStore
from core.tiers.cutoffs import Distribution, TierSettings, long_tail_sub_tiers
from core.tiers.stored import load_member_tiers, load_tier_settings, save_tiers
from core.wikidata.cache import load_category, store_members_page
from core.wikidata.categories import category_by_name
from core.wikidata.records import EntityRecord, MembersPage


def filled_store(path: Path, counts: list[int], wikis: list[frozenset[str]]) -> SessionStore:
    store = SessionStore.create(path)
    entities = tuple(
        EntityRecord(f"Q{i + 1}", f"E{i + 1}", int(c), int(c) // 2, w)
        for i, (c, w) in enumerate(zip(counts, wikis, strict=True))
    )
    store_members_page(store, category_by_name("City"), MembersPage("City", 0, entities), "test")
    return store


def test_settings_default_and_round_trip(tmp_path: Path) -> None:
    with filled_store(tmp_path / "s.taillens", [1], [frozenset()]) as store:
        assert load_tier_settings(store, "City") == TierSettings()
        table = load_category(store, "City")
        settings = TierSettings("head_tail", 0.7, 0.25, 2.0)
        save_tiers(
            store, "City", settings, table.qids, np.zeros(1, np.int8), np.full(1, -1, np.int8)
        )
        assert load_tier_settings(store, "City") == settings
        store.set_meta("tiers:City", "{not json")
        assert load_tier_settings(store, "City") == TierSettings()


def test_member_tiers_are_saved(tmp_path: Path) -> None:
    counts = [50, 30, 10, 5, 3, 2]
    wikis = [
        frozenset({"en", "it"}),
        frozenset({"en"}),
        frozenset({"it"}),
        frozenset(),
        frozenset({"es"}),
        frozenset({"en", "es"}),
    ]
    with filled_store(tmp_path / "s.taillens", counts, wikis) as store:
        table = load_category(store, "City")
        dist = Distribution(table.statements)
        codes = dist.tier(dist.pareto_cutoff(0.8))
        subs = long_tail_sub_tiers(codes, table.has_en, table.has_it, table.has_es)
        assert save_tiers(store, "City", TierSettings(), table.qids, codes, subs) == 6
        saved = load_member_tiers(store, "City")
    assert saved["Q1"] == ("head", None) and saved["Q2"] == ("head", None)
    assert saved["Q3"] == ("long_tail", "long_tail_it")
    assert saved["Q4"] == ("long_tail", None)
    assert saved["Q5"] == ("long_tail", "long_tail_es")
    assert saved["Q6"] == ("long_tail", None)  # two wikis: no sub-tier


def test_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="split_by"):
        TierSettings("median")
    with pytest.raises(ValueError, match="share"):
        TierSettings(share=0)
    with filled_store(tmp_path / "s.taillens", [1], [frozenset()]) as store:
        with pytest.raises(ValueError, match="aligned"):
            save_tiers(
                store, "City", TierSettings(), ["Q1"], np.zeros(2, np.int8), np.zeros(2, np.int8)
            )
        with pytest.raises(UserFacingError, match="no category"):
            save_tiers(
                store, "River", TierSettings(), [], np.zeros(0, np.int8), np.zeros(0, np.int8)
            )


def test_twenty_thousand_members_are_saved(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    counts = list(rng.zipf(1.9, 20_000) % 10_000)
    store = filled_store(tmp_path / "big.taillens", counts, [frozenset({"en"})] * 20_000)
    with store:
        table = load_category(store, "City")
        dist = Distribution(table.statements)
        codes = dist.tier(dist.pareto_cutoff())
        n = save_tiers(
            store, "City", TierSettings(), table.qids, codes, np.full(len(codes), -1, np.int8)
        )
        assert n == 20_000
        tiers = load_member_tiers(store, "City")
    assert sum(1 for t, _ in tiers.values() if t == "head") == int((codes == 0).sum())
