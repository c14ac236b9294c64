"""The edit model: apply, undo, redo, refusal after a concurrent change, the history
rows, undo after reopening, an old session opening, and random sequences replayed."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from core.annotation import ItemRef, list_annotators
from core.edits import (
    EditConflictError,
    EditRefusedError,
    apply_edit,
    current_states,
    history,
    redo_edit,
    replayed_states,
    undo_edit,
    undoable_tail,
)
from core.edits.ratings import AnnotatorEdit
from core.edits.tiers import TierEdit
from core.store import SessionStore
from core.tiers.cutoffs import Distribution, TierSettings, long_tail_sub_tiers, tier_category
from core.tiers.stored import load_member_tiers, load_tier_settings, retier_category
from core.wikidata.cache import load_category, store_members_page
from core.wikidata.categories import category_by_name
from core.wikidata.records import EntityRecord, MembersPage
from tests.fixtures.sampling_session import sampling_session

COUNTS = [50, 30, 10, 5, 3, 2, 1, 1]


def _city(path: Path) -> SessionStore:
    store = SessionStore.create(path)
    entities = tuple(
        EntityRecord(f"Q{i + 1}", f"E{i + 1}", c, c // 2, frozenset({"en"}))
        for i, c in enumerate(COUNTS)
    )
    store_members_page(store, category_by_name("City"), MembersPage("City", 0, entities), "t")
    return store


def _edit(store: SessionStore, settings: TierSettings) -> TierEdit:
    table = load_category(store, "City")
    result = tier_category(Distribution(table.statements), settings)
    subs = long_tail_sub_tiers(result.codes, table.has_en, table.has_it, table.has_es)
    return TierEdit.from_codes("City", settings, list(table.qids), result.codes, subs)


def test_apply_undo_redo_and_history(tmp_path: Path) -> None:
    with _city(tmp_path / "s.taillens") as store:
        untiered = load_member_tiers(store, "City")
        assert set(untiered.values()) == {(None, None)}
        entry = apply_edit(store, _edit(store, TierSettings(share=0.5)), source="taillens tiers")
        assert entry is not None
        assert entry.kind == "tiers" and entry.source == "taillens tiers" and entry.who
        assert entry.status == "applied" and entry.before["settings"] is None
        assert "Pareto share 0.5" in entry.description
        assert load_tier_settings(store, "City") == TierSettings(share=0.5)
        tiered = load_member_tiers(store, "City")
        assert tiered["Q1"] == ("head", None)

        undone = undo_edit(store, entry.id)
        assert undone.status == "undone" and undone.changed_at is not None
        assert load_member_tiers(store, "City") == untiered
        assert store.get_meta("tiers:City") is None
        with pytest.raises(EditRefusedError, match="undone already"):
            undo_edit(store, entry.id)

        redone = redo_edit(store, entry.id)
        assert redone.status == "redone"
        assert load_member_tiers(store, "City") == tiered
        rows = history(store)
        assert [(r.id, r.status) for r in rows] == [(entry.id, "redone")]
        assert history(store, kinds=["ratings"]) == []


def test_an_edit_that_changes_nothing_is_not_recorded(tmp_path: Path) -> None:
    with _city(tmp_path / "s.taillens") as store:
        assert apply_edit(store, _edit(store, TierSettings())) is not None
        assert apply_edit(store, _edit(store, TierSettings())) is None
        assert len(history(store)) == 1


def test_undo_is_refused_after_a_concurrent_change(tmp_path: Path) -> None:
    path = tmp_path / "s.taillens"
    with _city(path) as store:
        entry = apply_edit(store, _edit(store, TierSettings(share=0.5)))
        assert entry is not None
    # Another process (here: a plain SQLite connection) moves one member's tier.
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("UPDATE category_members SET tier = 'torso' WHERE tier = 'head'")
        conn.commit()
    with SessionStore.open(path) as store:
        before = load_member_tiers(store, "City")
        with pytest.raises(EditConflictError, match="another change overwrote it"):
            undo_edit(store, entry.id)
        assert load_member_tiers(store, "City") == before  # nothing reverted
        assert history(store)[0].status == "applied"
        assert undoable_tail(store) == []  # not offered after reopening either


def test_undo_after_reopen(tmp_path: Path) -> None:
    path = tmp_path / "s.taillens"
    with _city(path) as store:
        first = apply_edit(store, _edit(store, TierSettings(share=0.5)))
        second = apply_edit(store, _edit(store, TierSettings(share=0.9)))
        assert first is not None and second is not None
    with SessionStore.open(path) as store:
        tail = undoable_tail(store)
        assert [e.id for e in tail] == [first.id, second.id]
        undo_edit(store, tail[-1].id)
        assert load_tier_settings(store, "City") == TierSettings(share=0.5)
        undo_edit(store, tail[0].id)
        assert store.get_meta("tiers:City") is None


def test_the_cli_path_records_its_command(tmp_path: Path) -> None:
    with _city(tmp_path / "s.taillens") as store:
        retier_category(store, "City", TierSettings(share=0.6), source="taillens tiers")
        (entry,) = history(store)
    assert entry.source == "taillens tiers" and entry.after["settings"]["share"] == 0.6


def test_an_old_session_opens_and_records_edits(
    make_old_session: Callable[..., Path],
) -> None:
    path = make_old_session("0006_refs")
    with SessionStore.open(path) as store:
        assert store.schema_revision.startswith("0007")
        assert history(store) == []
        store_members_page(
            store,
            category_by_name("City"),
            MembersPage("City", 0, (EntityRecord("Q1", "E1", 3, 1, frozenset()),)),
            "t",
        )
        assert apply_edit(store, _edit(store, TierSettings(share=0.4))) is not None
        assert len(history(store)) == 1


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_edits_and_undos_replay_to_the_session(tmp_path: Path, seed: int) -> None:
    """A seeded random walk of edits, undos and redos (as an undo stack makes them);
    after each step the session holds exactly what its history replays to."""
    rng = random.Random(seed)
    shares = [0.3, 0.5, 0.7, 0.8, 0.95, 1.0]
    with _city(tmp_path / "s.taillens") as store:
        done: list[int] = []  # the undo stack
        undone: list[int] = []  # the redo stack
        for _ in range(25):
            action = rng.choice(["edit", "edit", "undo", "redo"])
            if action == "edit":
                settings = TierSettings(
                    split_by=rng.choice(["pareto", "head_tail"]),
                    share=rng.choice(shares),
                    fraction=rng.choice(shares),
                )
                entry = apply_edit(store, _edit(store, settings))
                if entry is not None:
                    done.append(entry.id)
                    undone.clear()
            elif action == "undo" and done:
                undone.append(undo_edit(store, done.pop()).id)
            elif action == "redo" and undone:
                done.append(redo_edit(store, undone.pop()).id)
            rows = history(store)
            assert replayed_states(rows) == current_states(store, rows)
        assert {r.id for r in history(store) if r.stands} >= set(done)
        assert store.check() == []  # every history row reads as a whole row


def test_tier_edit_alignment_is_checked() -> None:
    with pytest.raises(ValueError, match="aligned"):
        TierEdit.from_codes("City", TierSettings(), ["Q1"], np.zeros(2), np.zeros(2))


# -- ratings, annotators, synonyms ---------------------------------------------------------


def test_a_rating_and_its_correction_undo_and_redo(tmp_path: Path) -> None:
    from core.annotation import Rating, add_annotator, rating_of, save_rating, undo_rating
    from tests.fixtures.report_session import build_report_session

    built = build_report_session(tmp_path / "r.taillens")
    item = ItemRef("verbalisation", built.verbalisations[("model-b", "u8", "it")])
    with SessionStore.open(built.path) as store:
        zoe = add_annotator(store, "zoe")
        saved = save_rating(store, zoe.id, item, Rating(fluency=3, corrected_text="Fixed."))
        assert saved.previous is None and saved.history_id is not None
        entry = history(store, annotator="zoe", kinds=["rating"])[-1]
        assert entry.unit_id is not None and entry.who == "zoe"
        assert "a correction" in entry.description

        undo_edit(store, saved.history_id)
        assert rating_of(store, zoe.id, item) is None
        redo_edit(store, saved.history_id)  # the correction comes back with the rating
        back = rating_of(store, zoe.id, item)
        assert back is not None and (back.fluency, back.corrected_text) == (3, "Fixed.")

        # Another save replaced it meanwhile: undoing the first save is refused.
        save_rating(store, zoe.id, item, Rating(fluency=1))
        with pytest.raises(EditConflictError):
            undo_rating(store, saved)
        assert rating_of(store, zoe.id, item).fluency == 1
        rows = history(store)
        assert replayed_states(rows) == current_states(store, rows)
        assert [r.kind for r in history(store, annotator="zoe")] == [
            "annotator",
            "rating",
            "rating",
        ]
        assert history(store, kinds=["annotator"])[0].description == "the annotator zoe added"


def test_adding_an_annotator_undoes_unless_they_rated(tmp_path: Path) -> None:
    from core.annotation import Rating, add_annotator, save_rating
    from tests.fixtures.report_session import build_report_session

    built = build_report_session(tmp_path / "r.taillens")
    item = ItemRef("verbalisation", built.verbalisations[("model-a", "u1", "en")])
    with SessionStore.open(built.path) as store:
        (added,) = [e for e in [apply_edit(store, AnnotatorEdit("kim"))] if e is not None]
        undo_edit(store, added.id)
        assert "kim" not in {a.name for a in list_annotators(store)}
        redo_edit(store, added.id)
        kim = next(a for a in list_annotators(store) if a.name == "kim")
        save_rating(store, kim.id, item, Rating(fluency=4))
        with pytest.raises(EditRefusedError, match="has ratings"):
            undo_edit(store, added.id)
        assert "kim" in {a.name for a in list_annotators(store)}
        assert add_annotator(store, "lee").name == "lee"


def test_synonym_edits_keep_rows_added_meanwhile(tmp_path: Path) -> None:
    from core.metrics.esa import synonyms

    with SessionStore.create(tmp_path / "s.taillens") as store:
        assert synonyms.add_synonym(store, "Spain", "España", "es")
        first = history(store)[-1]
        # Another window adds a row; the first edit's undo is refused, the table kept.
        synonyms.add_synonym(store, "Italy", "Italia", "it", source="taillens synonyms add")
        with pytest.raises(EditConflictError):
            undo_edit(store, first.id)
        second = history(store)[-1]
        assert second.source == "taillens synonyms add"
        undo_edit(store, second.id)
        assert synonyms.synonym_rows(store) == [("Spain", "España", "es")]
        undo_edit(store, first.id)
        assert synonyms.synonym_rows(store) == []
        total, added = synonyms.seed(store)
        assert added == total and store.get_meta("synonyms:seeded") == "starter"
        undo_edit(store, history(store)[-1].id)
        assert synonyms.synonym_rows(store) == [] and store.get_meta("synonyms:seeded") is None
        with pytest.raises(synonyms.SynonymError, match="no synonym"):
            synonyms.remove_synonym(store, "Spain", "Espagne")


def test_words_for_a_unit_undo_redo_and_refusal(tmp_path: Path) -> None:
    from core.store import models as m
    from core.units.builder.draft import UnitDraft
    from core.units.builder.render import render_unit
    from core.units.builder.saved import load_unit, save_unit, set_label_override
    from tests.fixtures.rome_italy_details import (
        DETAILS,
        ITALY_CURRENCY,
        ROME_COUNTRY,
        ROME_INCEPTION,
    )

    with SessionStore.create(tmp_path / "u.taillens") as store:
        with store.unit_of_work() as db:
            db.add(m.Category(name="City", class_qid="Q515", pattern="?item wdt:P31 wd:Q515 ."))
        draft = UnitDraft("Q220", category="City").add(ROME_COUNTRY).add(ITALY_CURRENCY)
        draft = draft.add(ROME_INCEPTION)
        unit_id = save_unit(store, draft, render_unit(draft, DETAILS), source="test")

        def spanish() -> list[tuple[str | None, ...]]:
            return [t.display for t in load_unit(store, unit_id).triples["es"]]

        plain = spanish()
        assert set_label_override(store, unit_id, "es", 0, "object", "Italia") == 2
        italia = spanish()
        (entry,) = history(store, unit_id=unit_id)
        assert entry.kind == "unit override" and "'Italia'" in entry.description
        undo_edit(store, entry.id)
        assert spanish() == plain
        redo_edit(store, entry.id)
        assert spanish() == italia
        set_label_override(store, unit_id, "es", 2, "object", "753 a. C.", source="taillens x")
        with pytest.raises(EditConflictError):
            undo_edit(store, entry.id)  # the unit's Spanish words changed since
        assert history(store, unit_id=unit_id)[-1].source == "taillens x"
        rows = history(store)
        assert replayed_states(rows) == current_states(store, rows)


def test_a_golden_answer_is_set_undone_and_redone(tmp_path: Path) -> None:
    from core.annotation import golden_answers, set_golden_answer
    from core.annotation.golden import clear_golden_answer
    from tests.fixtures.report_session import build_report_session

    built = build_report_session(tmp_path / "g.taillens")
    item = ItemRef("verbalisation", built.verbalisations[("model-a", "u2", "en")])
    with SessionStore.open(built.path) as store:
        before = golden_answers(store).get(item)
        set_golden_answer(store, built.annotators["dora"], item, fluency=4, adequacy=0)
        entry = history(store, kinds=["golden"])[-1]
        assert entry.unit_id is not None and "fluency 4" in entry.description
        undo_edit(store, entry.id)
        assert golden_answers(store).get(item) == before
        redo_edit(store, entry.id)
        assert golden_answers(store)[item].fluency == 4
        assert clear_golden_answer(store, item) and item not in golden_answers(store)
        undo_edit(store, history(store, kinds=["golden"])[-1].id)
        assert golden_answers(store)[item].adequacy == 0
        rows = history(store)
        assert replayed_states(rows) == current_states(store, rows)


def test_a_written_reference_and_a_promoted_correction_undo_and_redo(tmp_path: Path) -> None:
    from core.annotation import Rating, save_rating
    from core.annotation.ratings import promote_correction
    from core.references.review import write_reference
    from core.store.models import UnitReference
    from tests.fixtures.report_session import build_report_session

    built = build_report_session(tmp_path / "w.taillens")
    ana = built.annotators["ana"]

    def gold(store: SessionStore) -> list[str]:
        with store.snapshot() as db:
            rows = db.query(UnitReference).filter(UnitReference.quality == "gold").all()
            return sorted(r.text for r in rows)

    with SessionStore.open(built.path) as store:
        start = gold(store)
        ref = write_reference(store, ana, built.units["u1"], "en", "Rome is in Italy.")
        entry = history(store, kinds=["reference"])[-1]
        assert entry.annotator == "ana" and entry.unit_id == built.units["u1"]
        undo_edit(store, entry.id)
        assert gold(store) == start
        redo_edit(store, entry.id)
        assert "Rome is in Italy." in gold(store) and ref > 0

        item = ItemRef("verbalisation", built.verbalisations[("model-a", "u4", "en")])
        saved = save_rating(store, ana, item, Rating(fluency=2, corrected_text="Fixed u4."))
        promote_correction(store, saved.annotation_id)
        promoted = history(store, kinds=["reference"])[-1]
        assert promoted.after["source_verbalisation_id"] == item.id
        undo_edit(store, promoted.id)
        assert "Fixed u4." not in gold(store)
        rows = history(store)
        assert replayed_states(rows) == current_states(store, rows)


def test_a_category_definition_undo_and_redo(tmp_path: Path) -> None:
    from core.wikidata.categories import Category
    from core.wikidata.category_store import find_category, save_category, session_categories

    with _city(tmp_path / "c.taillens") as store:
        city = find_category(store, "City")
        changed = Category(
            "City", city.class_qid, city.membership_property, city.pattern + " # narrower"
        )
        assert save_category(store, changed, source="taillens category save") == len(COUNTS)
        entry = history(store, kinds=["category"])[-1]
        assert entry.source == "taillens category save"
        undo_edit(store, entry.id)
        assert find_category(store, "City").pattern == city.pattern  # members stay dropped
        redo_edit(store, entry.id)
        assert find_category(store, "City").pattern.endswith("# narrower")

        bakery = Category("Bakery", "Q274393", "P31", "?item wdt:P31 wd:Q274393 .")
        save_category(store, bakery)
        assert "Bakery" in {c.name for c in session_categories(store)}
        added = history(store, kinds=["category"])[-1]
        assert added.description == "the category Bakery added"
        undo_edit(store, added.id)
        assert "Bakery" not in {c.name for c in session_categories(store)}
        rows = history(store)
        assert replayed_states(rows) == current_states(store, rows)


@pytest.mark.parametrize("seed", [4, 5])
def test_random_edits_of_every_kind_replay_to_the_session(tmp_path: Path, seed: int) -> None:
    """Ratings, golden answers, synonyms and references mixed, with undos and redos as an
    undo stack makes them (refused undos included); after each step the session holds
    what its history replays to."""
    from core.annotation import Rating, save_rating, set_golden_answer
    from core.metrics.esa import synonyms
    from core.references.review import write_reference
    from tests.fixtures.report_session import build_report_session

    rng = random.Random(seed)
    built = build_report_session(tmp_path / "m.taillens")
    items = [ItemRef("verbalisation", v) for v in list(built.verbalisations.values())[:4]]
    who = list(built.annotators.values())[:2]
    with SessionStore.open(built.path) as store:
        done: list[int] = []
        undone: list[int] = []

        def edit() -> None:
            kind = rng.choice(["rating", "rating", "golden", "synonym", "reference"])
            if kind == "rating":
                text = rng.choice([None, "Fixed."])
                save_rating(
                    store,
                    rng.choice(who),
                    rng.choice(items),
                    Rating(fluency=rng.randint(0, 5), corrected_text=text),
                )
            elif kind == "golden":
                set_golden_answer(store, who[0], rng.choice(items), fluency=rng.randint(0, 5))
            elif kind == "synonym":
                synonyms.add_synonym(store, "Spain", rng.choice(["España", "Espagne", "ES"]))
            else:
                write_reference(store, who[1], built.units["u1"], "en", f"Text {rng.random()}")
            latest = max(history(store), key=lambda e: e.seq, default=None)
            if latest is not None and latest.status == "applied" and latest.id not in done:
                done.append(latest.id)
                undone.clear()

        for _ in range(30):
            action = rng.choice(["edit", "edit", "undo", "redo"])
            try:
                if action == "edit":
                    edit()
                elif action == "undo" and done:
                    undone.append(undo_edit(store, done[-1]).id)
                    done.pop()
                elif action == "redo" and undone:
                    done.append(redo_edit(store, undone[-1]).id)
                    undone.pop()
            except EditConflictError:
                done.clear()  # as the window's stack does: cleared past a refused undo
                undone.clear()
            rows = history(store)
            assert replayed_states(rows) == current_states(store, rows)
        assert len(history(store)) >= 10
        assert len({e.kind for e in history(store)}) >= 3  # the kinds were mixed


def test_words_kept_for_new_units_undo_and_redo(tmp_path: Path) -> None:
    from core.units.builder.render import keep_label, kept_labels

    with SessionStore.create(tmp_path / "k.taillens") as store:
        keep_label(store, "es", "Q38", "Italia")
        keep_label(store, "it", "Q29", "Spagna", source="taillens units override")
        first, second = history(store, kinds=["kept words"])
        assert second.source == "taillens units override"
        undo_edit(store, first.id)  # another entity's words were kept since: no conflict
        assert kept_labels(store) == {"it": {"Q29": "Spagna"}}
        redo_edit(store, first.id)
        assert kept_labels(store) == {"es": {"Q38": "Italia"}, "it": {"Q29": "Spagna"}}
        keep_label(store, "es", "Q38", None)
        with pytest.raises(EditConflictError):
            undo_edit(store, first.id)
        rows = history(store)
        assert replayed_states(rows) == current_states(store, rows)


def test_a_saved_unit_is_undone_redone_and_refused_once_used(tmp_path: Path) -> None:
    from core.store import models as m
    from core.units.builder.draft import UnitDraft
    from core.units.builder.render import render_unit
    from core.units.builder.saved import (
        count_units,
        load_draft,
        load_unit,
        save_draft,
        save_unit,
        save_units,
    )
    from core.vocab import GOLD
    from tests.fixtures.rome_italy_details import DETAILS, ITALY_CURRENCY, ROME_COUNTRY

    with SessionStore.create(tmp_path / "n.taillens") as store:
        draft = UnitDraft("Q220").add(ROME_COUNTRY).add(ITALY_CURRENCY)
        save_draft(store, draft)
        unit_id = save_unit(
            store, draft, render_unit(draft, DETAILS), recorded_as="gui", clears_draft=True
        )
        (entry,) = history(store, kinds=["unit"])
        assert entry.unit_id == unit_id and entry.source == "gui"
        assert f"unit {unit_id} saved" in entry.description
        assert load_draft(store) is None  # the save cleared the draft it was built from
        saved = load_unit(store, unit_id)

        undo_edit(store, entry.id)
        assert count_units(store) == 0
        assert load_draft(store) == draft  # the draft is back in the builder
        redo_edit(store, entry.id)
        assert load_unit(store, unit_id) == saved and load_draft(store) is None  # same id
        rows = history(store)
        assert replayed_states(rows) == current_states(store, rows)

        # A unit something refers to since is not taken out.
        with store.unit_of_work() as db:
            db.add(m.UnitReference(unit_id=unit_id, lang="en", text="Rome.", quality=GOLD))
        with pytest.raises(EditConflictError, match="1 reference"):
            undo_edit(store, entry.id)
        assert count_units(store) == 1

        # Saving without recording (a sample's each unit; it records them when it ends)
        # writes no history row.
        save_unit(store, draft, render_unit(draft, DETAILS), source="sampled")
        assert len(history(store, kinds=["unit"])) == 1
        # Many units in one transaction (a search's) are one edit, undone as a whole.
        items = [(draft, render_unit(draft, DETAILS), {})] * 2
        ids = save_units(store, items, origin="search", recorded_as="taillens units search")
        many = history(store, kinds=["unit"])[-1]
        assert many.description == f"2 units saved ({ids[0]}–{ids[1]})" and many.unit_id is None
        undo_edit(store, many.id)
        assert count_units(store) == 2
        redo_edit(store, many.id)
        assert [load_unit(store, i).origin for i in ids] == ["search", "search"]


def test_a_sample_is_one_edit_undone_redone_and_refused_once_used(tmp_path: Path) -> None:
    from core.jobs import JobSucceeded, run_job
    from core.store import models as m
    from core.units.builder.saved import count_units, list_units
    from core.units.sampler import sample_job
    from core.vocab import GOLD

    with sampling_session(tmp_path / "s.taillens") as store:
        job = sample_job(
            store, None, "City", per_entity=2, shapes=["sibling"], sizes=[1], recorded_as="cli"
        )
        outcome = run_job(job)
        assert isinstance(outcome, JobSucceeded) and outcome.result.units == 4
        sampled = list_units(store)
        assert [u.id for u in sampled] == list(outcome.result.unit_ids)
        (entry,) = history(store, kinds=["unit"])  # one edit for every unit it saved
        assert (entry.source, entry.status) == ("cli", "applied")
        assert entry.description == "4 units sampled from City"
        assert [u["id"] for u in entry.after["units"]] == [u.id for u in sampled]
        assert entry.before == {"units": [None] * 4}

        undo_edit(store, entry.id)
        assert count_units(store) == 0
        redo_edit(store, entry.id)
        assert list_units(store) == sampled  # the same units, under the same ids
        rows = history(store)
        assert replayed_states(rows) == current_states(store, rows)

        # A sampled unit a reference points at since is not taken out, nor are the others.
        with store.unit_of_work() as db:
            db.add(m.UnitReference(unit_id=sampled[1].id, lang="en", text="Rome.", quality=GOLD))
        with pytest.raises(EditConflictError, match="1 reference"):
            undo_edit(store, entry.id)
        assert count_units(store) == 4


def test_a_cancelled_sample_records_the_units_it_saved(tmp_path: Path) -> None:
    from core.jobs import CancelToken, JobWasCancelled, run_job
    from core.units.builder.saved import count_units, list_units
    from core.units.sampler import sample_job

    token = CancelToken()
    with sampling_session(tmp_path / "s.taillens") as store:
        job = sample_job(store, None, "City", per_entity=2, shapes=["sibling"], sizes=[1])
        # Stopped once the first member's units are saved: the second is never sampled.
        outcome = run_job(job, token, lambda progress: token.cancel())
        assert isinstance(outcome, JobWasCancelled)
        kept = list_units(store)
        assert len(kept) == 2 and [u.id for u in kept] == list(outcome.partial)
        (entry,) = history(store, kinds=["unit"])
        assert entry.source == "gui" and entry.description == "2 units sampled from City"
        undo_edit(store, entry.id)
        assert count_units(store) == 0
        redo_edit(store, entry.id)
        assert list_units(store) == kept
