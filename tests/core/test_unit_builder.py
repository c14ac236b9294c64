"""Unit drafts: editing, candidate claims, rendering per language, saving and loading."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from core.store import SessionStore
from core.store import models as m
from core.units.builder.candidates import candidates, follow
from core.units.builder.draft import UnitDraft, UnitError, override_across, structure
from core.units.builder.render import keep_label, kept_labels, parallel_languages, render_unit
from core.units.builder.saved import load_unit, reorder, save_unit, set_label_override, set_override
from core.units.claim_filters import ClaimFilterSettings
from core.wikidata.records import ClaimRecord
from tests.fixtures.rome_italy_details import (
    DETAILS,
    ITALY,
    ITALY_CAPITAL,
    ITALY_CURRENCY,
    ORPHAN,
    ROME,
    ROME_AREA,
    ROME_COUNTRY,
    ROME_INCEPTION,
    ROME_PART,
)


def test_draft_edits_are_immutable_and_shape_follows() -> None:
    empty = UnitDraft("Q220")
    one = empty.add(ROME_COUNTRY)
    two = one.add(ROME_INCEPTION)
    assert empty.claims == () and one.claims == (ROME_COUNTRY,)
    assert structure(two).shape == "sibling"
    chain = one.add(ITALY_CURRENCY)
    assert structure(chain).shape == "chain"
    mixed = chain.add(ROME_INCEPTION)
    assert structure(mixed).shape == "mixed"
    moved = mixed.move(2, 0)
    assert moved.claims == (ROME_INCEPTION, ROME_COUNTRY, ITALY_CURRENCY)
    assert structure(moved).shape == "mixed"  # order never changes the shape
    assert moved.remove(0).claims == (ROME_COUNTRY, ITALY_CURRENCY)
    assert mixed.reordered([1, 2, 0]).claims == (ITALY_CURRENCY, ROME_INCEPTION, ROME_COUNTRY)
    with pytest.raises(UnitError, match="already in the unit"):
        one.add(ROME_COUNTRY)
    with pytest.raises(UnitError, match="no triple at position 5"):
        one.remove(5)
    with pytest.raises(UnitError, match="each position"):
        two.reordered([0, 0])


def test_candidates_give_reasons_and_counts_per_rule() -> None:
    found = candidates(UnitDraft("Q220"), DETAILS)
    by_claim = {c.claim.statement_id: c for c in found.claims}
    assert by_claim["Q220$4"].rule == "drop_unreadable_types"
    assert by_claim["Q220$5"].rule == "drop_ontology_properties"
    assert by_claim["Q220$6"].rule == "drop_deprecated"
    assert by_claim["Q220$7"].rule == "only_within_unit"  # Italy is not yet in the unit
    assert by_claim["Q220$1"].reason is None
    assert found.counts.by_rule == {
        "drop_deprecated": 1,
        "truthy_only": 0,
        "drop_no_or_some_value": 0,
        "drop_unreadable_types": 1,
        "drop_ontology_properties": 1,
        "only_within_unit": 1,
    }
    assert found.counts.kept == 3 and found.counts.dropped == 4
    # Switching a rule off keeps what it dropped.
    lenient = UnitDraft("Q220", filters=ClaimFilterSettings(drop_unreadable_types=False))
    assert candidates(lenient, DETAILS).counts.by_rule["drop_unreadable_types"] == 0
    # Once Italy is a subject in the unit, "part of Italy" may enter it.
    draft = UnitDraft("Q220").add(ROME_COUNTRY).add(ITALY_CURRENCY)
    after = candidates(draft, DETAILS)
    assert after.counts.by_rule["only_within_unit"] == 0
    assert ROME_PART in after.kept and ROME_COUNTRY not in after.kept  # already in the unit


def test_follow_lists_the_object_claims() -> None:
    draft = UnitDraft("Q220").add(ROME_COUNTRY)
    followed = follow(draft, DETAILS, "Q38")
    assert followed.qid == "Q38" and followed.kept == (ITALY_CAPITAL, ITALY_CURRENCY)
    with pytest.raises(UnitError, match="not an object"):
        follow(draft, DETAILS, "Q4916")
    with pytest.raises(UnitError, match="has not been loaded"):
        follow(draft.add(ITALY_CURRENCY), DETAILS, "Q4916")


def test_render_templates_missing_labels_and_overrides() -> None:
    draft = UnitDraft("Q220").add(ROME_COUNTRY).add(ROME_INCEPTION).add(ROME_AREA)
    rendered = render_unit(draft, DETAILS, overrides={("es", 0, "object"): "Italia"})
    en, it, es = rendered["en"], rendered["it"], rendered["es"]
    assert [t.display for t in en] == [
        ("Rome", "country", "Italy"),
        ("Rome", "inception", "21 April 753 BC"),
        ("Rome", "area", "1285.5 square kilometre"),
    ]
    assert it[1].object == "21 aprile 753 a.C." and it[2].object == "1285,5 chilometro quadrato"
    assert es[1].object == "21 de abril de 753 a.C."
    # No Spanish label for Italy: the id stands in, flagged; the override is kept apart.
    assert es[0].object == "Q38" and es[0].object_missing and es[0].label_missing
    assert es[0].object_override == "Italia" and es[0].display[2] == "Italia"
    assert en[0].statement_id == "Q220$1" and en[0].object_value == "Q38"
    assert parallel_languages(rendered) == {"en", "it", "es"}  # the override fills the gap
    plain = render_unit(draft, DETAILS)
    assert parallel_languages(plain) == {"en", "it"}
    with pytest.raises(UnitError, match="does not exist"):
        render_unit(draft, DETAILS, overrides={("en", 9, "subject"): "x"})


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    with SessionStore.create(tmp_path / "s.taillens") as created:
        with created.unit_of_work() as db:
            db.add(m.Category(name="City", class_qid="Q515", pattern="?item wdt:P31 wd:Q515 ."))
            db.add(
                m.Claim(
                    statement_id="Q220$1",
                    subject_qid="Q220",
                    property_pid="P17",
                    value="Q38",
                    value_type="wikibase-item",
                )
            )
        yield created


def test_save_load_override_reorder_round_trip(store: SessionStore) -> None:
    draft = UnitDraft("Q220", category="City", tier="head", sub_tier=None)
    draft = draft.add(ROME_COUNTRY).add(ITALY_CURRENCY).add(ROME_INCEPTION)
    rendered = render_unit(draft, DETAILS)
    unit_id = save_unit(store, draft, rendered, uid="rome-1", source="test")
    unit = load_unit(store, unit_id)
    assert (unit.uid, unit.root_qid, unit.shape, unit.size, unit.tier) == (
        "rome-1",
        "Q220",
        "mixed",
        3,
        "head",
    )
    assert unit.category == "City" and unit.origin == "built" and unit.source == "test"
    assert unit.attributes["entities"] == ["Q220", "Q38", "Q4916"]
    assert unit.attributes["properties"] == ["P17", "P38", "P571"]
    assert unit.attributes["filters"]["truthy_only"] is True
    assert unit.languages == ("en", "es", "it") and unit.parallel == {"en", "it"}
    assert unit.triples["en"] == tuple(
        t if t.statement_id != "Q220$1" else t.__class__(**{**t.__dict__, "claim_id": 1})
        for t in rendered["en"]
    )
    assert unit.triples["es"][0].object_missing and not unit.triples["es"][0].subject_missing

    set_override(store, unit_id, "es", 0, "object", "Italia")
    assert load_unit(store, unit_id).triples["es"][0].display[2] == "Italia"
    assert load_unit(store, unit_id).triples["es"][0].object == "Q38"  # original kept
    assert load_unit(store, unit_id).parallel == {"en", "it"}  # Italy is also subject 2
    set_override(store, unit_id, "es", 1, "subject", "Italia")
    assert load_unit(store, unit_id).parallel == {"en", "it", "es"}
    set_override(store, unit_id, "es", 0, "object", None)
    assert load_unit(store, unit_id).triples["es"][0].display[2] == "Q38"

    reorder(store, unit_id, [2, 0, 1])
    again = load_unit(store, unit_id)
    assert [t.property_pid for t in again.triples["it"]] == ["P571", "P17", "P38"]
    assert [t.position for t in again.triples["it"]] == [0, 1, 2]
    assert again.triples["es"][1].object_missing and again.shape == "mixed"
    assert again.triples["es"][2].subject_override == "Italia"  # overrides move along
    with pytest.raises(UnitError, match="no es triple at position 7"):
        set_override(store, unit_id, "es", 7, "object", "x")
    with pytest.raises(UnitError, match="each position"):
        reorder(store, unit_id, [0, 1])


def test_refuses_disconnected_empty_and_oversized_units(store: SessionStore) -> None:
    disconnected = UnitDraft("Q220").add(ROME_COUNTRY).add(ORPHAN)
    with pytest.raises(UnitError, match="not connected"):
        save_unit(store, disconnected, render_unit(disconnected, DETAILS))
    with pytest.raises(UnitError, match="at least one triple"):
        save_unit(store, UnitDraft("Q220"), {})
    big = UnitDraft(
        "Q220",
        tuple(
            ClaimRecord(f"s{i}", "Q220", "P1448", f"name {i}", "monolingualtext") for i in range(8)
        ),
    )
    with pytest.raises(UnitError, match="at most 7"):
        save_unit(store, big, render_unit(big, DETAILS))
    with store.unit_of_work() as db:
        assert db.scalars(select(m.DataUnit)).all() == []


def test_the_draft_survives_in_the_session(tmp_path) -> None:
    from core.store import SessionStore
    from core.units.builder.draft import UnitDraft
    from core.units.builder.saved import load_draft, save_draft
    from core.wikidata.records import ClaimRecord

    claim = ClaimRecord("s1", "Q1", "P17", "Q38", "wikibase-item", value_json={"x": 1})
    draft = UnitDraft("Q1", (claim,), category="City", tier="long_tail")
    with SessionStore.create(tmp_path / "d.taillens") as store:
        assert load_draft(store) is None
        save_draft(store, draft)
    with SessionStore.open(tmp_path / "d.taillens") as store:
        assert load_draft(store) == draft
        save_draft(store, None)
        assert load_draft(store) is None
        store.set_meta("units:draft", "{broken")
        assert load_draft(store) is None


def test_a_unit_built_from_a_long_tail_member_records_its_sub_tier(store: SessionStore) -> None:
    from core.jobs import JobSucceeded, run_job
    from core.tiers.cutoffs import Distribution, TierSettings, long_tail_sub_tiers
    from core.tiers.stored import load_member_tiers, save_tiers
    from core.units.sampler import sample_job
    from core.wikidata.cache import load_category, store_entity, store_members_page
    from core.wikidata.categories import category_by_name
    from core.wikidata.records import EntityRecord, MembersPage

    # Two head cities and Rome, with 3 statements and only an Italian Wikipedia page:
    # Pareto cut-off 0.8 of 193 statements falls at 90, so Rome is long_tail_it.
    members = (
        EntityRecord("Q1", "Big", 100, 90, frozenset({"en", "it", "es"})),
        EntityRecord("Q2", "Bigger", 90, 80, frozenset({"en", "it"})),
        EntityRecord("Q220", "Rome", 3, 1, frozenset({"it"})),
    )
    store_members_page(store, category_by_name("City"), MembersPage("City", 0, members), "t")
    table = load_category(store, "City")
    distribution = Distribution(table.statements)
    codes = distribution.tier(distribution.pareto_cutoff(0.8))
    subs = long_tail_sub_tiers(codes, table.has_en, table.has_it, table.has_es)
    save_tiers(store, "City", TierSettings(), table.qids, codes, subs)
    assert load_member_tiers(store, "City")["Q220"] == ("long_tail", "long_tail_it")
    store_entity(store, ROME, "t")
    store_entity(store, ITALY, "t")

    # Sampled from the long tail of the category ...
    outcome = run_job(
        sample_job(store, None, "City", tiers=["long_tail"], shapes=["sibling"], sizes=[1])
    )
    assert isinstance(outcome, JobSucceeded) and outcome.result.units == 1
    sampled = load_unit(store, outcome.result.unit_ids[0])
    # ... and started by hand, as the Browser's "Start a data unit" does.
    tier, sub_tier = load_member_tiers(store, "City")["Q220"]
    draft = UnitDraft("Q220", category="City", tier=tier, sub_tier=sub_tier).add(ROME_COUNTRY)
    by_hand = load_unit(store, save_unit(store, draft, render_unit(draft, DETAILS)))
    for unit in (sampled, by_hand):
        assert (unit.root_qid, unit.category, unit.tier) == ("Q220", "City", "long_tail")
        assert unit.sub_tier == "long_tail_it"
        assert unit.attributes["tier"] == "long_tail"
        assert unit.attributes["sub_tier"] == "long_tail_it"  # the provenance, not only a column


def test_a_label_override_names_the_entity_across_the_draft() -> None:
    draft = UnitDraft("Q220").add(ROME_COUNTRY).add(ITALY_CURRENCY).add(ROME_INCEPTION)
    claims = draft.claims
    # Italy: object of triple 0 and subject of triple 1; one override names both places.
    overrides = override_across(claims, {}, "es", 0, "object", "Italia")
    assert overrides == {("es", 0, "object"): "Italia", ("es", 1, "subject"): "Italia"}
    rendered = render_unit(draft, DETAILS, overrides=overrides)
    assert rendered["es"][1].display[0] == "Italia" and rendered["it"][1].subject_override is None
    assert "es" in parallel_languages(rendered)
    # Rome, the subject of triples 0 and 2; a literal object is only its own place.
    rome = override_across(claims, overrides, "en", 2, "subject", "the Eternal City")
    assert {k for k, v in rome.items() if v == "the Eternal City"} == {
        ("en", 0, "subject"),
        ("en", 2, "subject"),
    }
    date = override_across(claims, {}, "en", 2, "object", "753 BC")
    assert date == {("en", 2, "object"): "753 BC"}
    assert override_across(claims, overrides, "es", 1, "subject", None) == {}  # cleared both
    with pytest.raises(UnitError, match="does not exist"):
        override_across(claims, {}, "es", 5, "object", "x")


def test_a_stored_unit_override_spreads_and_can_be_kept_for_the_session(
    store: SessionStore,
) -> None:
    draft = UnitDraft("Q220", category="City").add(ROME_COUNTRY).add(ITALY_CURRENCY)
    draft = draft.add(ROME_INCEPTION)
    unit_id = save_unit(store, draft, render_unit(draft, DETAILS), source="test")
    assert set_label_override(store, unit_id, "es", 0, "object", "Italia") == 2
    unit = load_unit(store, unit_id)
    assert unit.triples["es"][0].display[2] == unit.triples["es"][1].display[0] == "Italia"
    assert unit.triples["it"][1].subject_override is None  # other languages untouched
    assert unit.parallel == {"en", "it", "es"}
    assert set_label_override(store, unit_id, "es", 1, "subject", None) == 2
    assert load_unit(store, unit_id).triples["es"][0].object_override is None
    assert set_label_override(store, unit_id, "en", 2, "object", "753 BC") == 1
    with pytest.raises(UnitError, match="cannot be kept"):
        set_label_override(store, unit_id, "en", 2, "object", "753 BC", keep=True)
    with pytest.raises(UnitError, match="no es triple at position 7"):
        set_label_override(store, unit_id, "es", 7, "object", "x")
    assert kept_labels(store) == {}

    # Kept for the session: a new unit naming Italy uses the words at once.
    set_label_override(store, unit_id, "es", 0, "object", "Italia", keep=True)
    assert kept_labels(store) == {"es": {"Q38": "Italia"}}
    fresh = UnitDraft("Q38").add(ITALY_CAPITAL).add(ITALY_CURRENCY)
    rendered = render_unit(fresh, DETAILS, kept=kept_labels(store))
    assert [t.subject_override for t in rendered["es"]] == ["Italia", "Italia"]
    assert rendered["en"][0].subject_override is None
    own = render_unit(
        fresh, DETAILS, overrides={("es", 0, "subject"): "la Italia"}, kept=kept_labels(store)
    )
    assert own["es"][0].subject_override == "la Italia"  # the unit's own words win
    keep_label(store, "es", "Q38", None)
    assert kept_labels(store) == {}
    with pytest.raises(UnitError, match="not a Wikidata id"):
        keep_label(store, "es", "753 BC", "x")


def test_overrides_follow_their_triple_when_it_moves_or_another_goes() -> None:
    from core.units.builder.draft import move_triple, remove_triple

    draft = UnitDraft("Q220").add(ROME_COUNTRY).add(ROME_INCEPTION).add(ROME_AREA)
    overrides = {("es", 0, "object"): "Italia", ("it", 2, "subject"): "Urbe"}
    moved, moved_overrides = move_triple(draft, overrides, 0, 2)
    assert moved.claims == (ROME_INCEPTION, ROME_AREA, ROME_COUNTRY)
    assert moved_overrides == {("es", 2, "object"): "Italia", ("it", 1, "subject"): "Urbe"}
    with pytest.raises(UnitError):
        move_triple(draft, overrides, 0, 3)
    fewer, fewer_overrides = remove_triple(draft, overrides, 0)
    assert fewer.claims == (ROME_INCEPTION, ROME_AREA)
    assert fewer_overrides == {("it", 1, "subject"): "Urbe"}  # the removed one's is gone
    with pytest.raises(UnitError):
        remove_triple(draft, overrides, 5)


def test_the_draft_overrides_survive_in_the_session(tmp_path: Path) -> None:
    from core.units.builder.saved import (
        DRAFT_OVERRIDES_META_KEY,
        load_draft_overrides,
        save_draft_overrides,
    )

    overrides = {("es", 0, "object"): "Italia", ("it", 1, "subject"): "Roma antica"}
    with SessionStore.create(tmp_path / "o.taillens") as store:
        assert load_draft_overrides(store) == {}
        save_draft_overrides(store, overrides)
    with SessionStore.open(tmp_path / "o.taillens") as store:
        assert load_draft_overrides(store) == overrides
        save_draft_overrides(store, {})
        assert load_draft_overrides(store) == {}
        for broken in ("{broken", '[["es", "x", "object", "y"]]', '[["es", 0]]'):
            store.set_meta(DRAFT_OVERRIDES_META_KEY, broken)
            assert load_draft_overrides(store) == {}
