"""Offline annotation packs (METHODS §13): what a pack holds and hides, merging (idempotent,
with provenance, refusing packs from elsewhere and changed texts, reporting conflicts),
and the team's progress."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from core.annotation import Rating, find_annotator, save_rating
from core.annotation.packs import (
    GUIDELINES_KEY,
    MANIFEST_KEY,
    PackError,
    PackRequest,
    make_pack,
    merge_pack,
    overall_agreement,
    pack_info,
    parse_ids,
    team_progress,
    text_hash,
)
from core.annotation.types import VERBALISATION, ItemRef
from core.io.output_guard import OutputRefusedError
from core.store import SessionStore
from core.store.models import (
    Annotation,
    AnnotationOrigin,
    AnnotationPack,
    DataUnit,
    ModelRun,
    Score,
    Verbalisation,
)
from tests.fixtures import report_session as fixture_module
from tests.fixtures.report_session import ReportSession, build_report_session

report_session = fixture_module.report_session


def _unit_ids(session: ReportSession, *uids: str) -> tuple[int, ...]:
    return tuple(session.units[u] for u in uids)


def _pack(session: ReportSession, tmp_path: Path, name: str = "eve", **options: object) -> Path:
    out = tmp_path / f"{name}.taillens"
    with SessionStore.open(session.path) as store:
        make_pack(store, PackRequest(annotator=name, out=out, **options))  # type: ignore[arg-type]
    return out


def _rate_everything(pack: Path, fluency: int = 4, adequacy: int = 0) -> int:
    """What an annotator does in the pack: rate every text in it."""
    with SessionStore.open(pack) as store:
        info = pack_info(store)
        assert info is not None
        who = find_annotator(store, info.annotator)
        with store.snapshot() as db:
            ids = list(db.scalars(select(Verbalisation.id).order_by(Verbalisation.id)))
        for vid in ids:
            save_rating(store, who.id, vid, Rating(fluency=fluency, adequacy=adequacy))
    return len(ids)


def test_ids_are_read_as_lists_and_ranges() -> None:
    assert parse_ids("1-3,7, 9") == (1, 2, 3, 7, 9)
    assert parse_ids("all") is None and parse_ids(None) is None
    for bad in ("x", "5-2", "1,,2"):
        with pytest.raises(PackError):
            parse_ids(bad)


def test_a_blind_pack_holds_only_the_annotators_texts_and_hides_models_and_tiers(
    report_session: ReportSession, tmp_path: Path
) -> None:
    units = _unit_ids(report_session, "u1", "u5")
    out = _pack(
        report_session,
        tmp_path,
        units=units,
        langs=("en",),
        blind=True,
        golden=1,
        guidelines="Rate fluency 0-5.",
    )
    with SessionStore.open_read_only(out) as pack, pack.snapshot() as db:
        texts = list(
            db.execute(select(Verbalisation.id, Verbalisation.unit_id, Verbalisation.lang))
        )
        # u1 and u5 in English from both runs, plus the golden item (u3, model-a, en)
        golden_id = report_session.verbalisations[("model-a", "u3", "en")]
        assert {t.id for t in texts} == {
            report_session.verbalisations[(m, u, "en")]
            for m in ("model-a", "model-b")
            for u in ("u1", "u5")
        } | {golden_id}
        assert db.scalar(select(func.count()).select_from(Score)) == 0
        assert db.scalar(select(func.count()).select_from(Annotation)) == 0
        models = set(db.scalars(select(ModelRun.model_id)))
        assert models == {"System A", "System B"}
        assert set(db.scalars(select(ModelRun.system_name))) == {None}
        for unit in db.scalars(select(DataUnit)):
            assert unit.tier is None and unit.sub_tier is None and unit.category_id is None
            assert unit.attributes is None and unit.uid == f"unit-{unit.id}"
        info = pack_info(pack)
        assert info is not None and info.annotator == "eve" and info.blind
        assert pack.get_meta(GUIDELINES_KEY) == "Rate fluency 0-5."
        manifest = json.loads(pack.get_meta(MANIFEST_KEY) or "")
        # the manifest does not say which item is golden
        assert all(len(item) == 3 for item in manifest["items"])
    with SessionStore.open_read_only(report_session.path) as store, store.snapshot() as db:
        record = db.scalar(select(AnnotationPack))
        assert record is not None and record.annotator == "eve" and record.blind
        golden = [i for i in record.items["items"] if i[3]]
        assert golden == [["v", golden_id, golden[0][2], True]]


def test_a_pack_that_is_not_blind_keeps_models_and_tiers(
    report_session: ReportSession, tmp_path: Path
) -> None:
    out = _pack(report_session, tmp_path, units=_unit_ids(report_session, "u1"), runs=None)
    with SessionStore.open_read_only(out) as pack, pack.snapshot() as db:
        assert set(db.scalars(select(ModelRun.system_name))) == {"model-a", "model-b"}
        assert set(db.scalars(select(DataUnit.tier))) == {"head"}


def test_texts_the_annotator_rated_are_left_out_unless_asked(
    report_session: ReportSession, tmp_path: Path
) -> None:
    # ana rated model-a's English u1, u2, u3, u5, u6
    out = _pack(report_session, tmp_path, "ana", langs=("en",), runs=None)
    with SessionStore.open_read_only(out) as pack, pack.snapshot() as db:
        ids = set(db.scalars(select(Verbalisation.id)))
    assert report_session.verbalisations[("model-a", "u1", "en")] not in ids
    assert report_session.verbalisations[("model-b", "u1", "en")] in ids
    again = _pack(report_session, tmp_path / "b", "ana", langs=("en",), include_rated=True)
    with SessionStore.open_read_only(again) as pack, pack.snapshot() as db:
        assert report_session.verbalisations[("model-a", "u1", "en")] in set(
            db.scalars(select(Verbalisation.id))
        )


def test_nothing_to_pack_and_bad_targets_are_refused(
    report_session: ReportSession, tmp_path: Path
) -> None:
    with SessionStore.open(report_session.path) as store:
        with pytest.raises(PackError, match="No texts to pack"):
            make_pack(store, PackRequest("eve", tmp_path / "p.taillens", units=(99999,)))
        with pytest.raises(PackError, match="named annotator"):
            make_pack(store, PackRequest("  ", tmp_path / "p.taillens"))
        with pytest.raises(OutputRefusedError):
            make_pack(store, PackRequest("eve", store.path))  # the open session itself
        other = build_report_session(tmp_path / "other.taillens")
        with pytest.raises(OutputRefusedError, match="--force"):
            make_pack(store, PackRequest("eve", other.path))
    assert not (tmp_path / "p.taillens").exists()


def test_a_pack_that_fails_half_way_leaves_no_file_no_record_and_no_leftovers(
    report_session: ReportSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import core.annotation.packs as packs

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(packs, "_fill_pack", broken)
    with SessionStore.open(report_session.path) as store:
        with pytest.raises(OSError):
            make_pack(store, PackRequest("eve", tmp_path / "eve.taillens"))
        with store.snapshot() as db:
            assert db.scalar(select(func.count()).select_from(AnnotationPack)) == 0
    assert sorted(p.name for p in tmp_path.iterdir() if "eve" in p.name) == []


def test_merge_brings_ratings_back_once_with_provenance(
    report_session: ReportSession, tmp_path: Path
) -> None:
    pack = _pack(report_session, tmp_path, units=_unit_ids(report_session, "u1", "u2"))
    rated = _rate_everything(pack)
    assert rated == 8
    with SessionStore.open(report_session.path) as store:
        first = merge_pack(store, pack)
        assert (first.added, first.updated, first.unchanged, first.conflicts) == (8, 0, 0, ())
        second = merge_pack(store, pack)
        assert (second.added, second.updated, second.unchanged) == (0, 0, 8)
        with store.snapshot() as db:
            origins = list(db.scalars(select(AnnotationOrigin)))
            assert len(origins) == 8
            assert {o.pack_file for o in origins} == {"eve.taillens"}
            assert {o.annotator for o in origins} == {"eve"}
            eve = find_annotator(store, "eve")
            assert (
                db.scalar(
                    select(func.count())
                    .select_from(Annotation)
                    .where(Annotation.annotator_id == eve.id)
                )
                == 8
            )
    # the annotator changes their mind in the pack: the next merge updates, not adds
    with SessionStore.open(pack) as opened:
        who = find_annotator(opened, "eve")
        vid = report_session.verbalisations[("model-b", "u2", "en")]
        save_rating(opened, who.id, vid, Rating(fluency=1, adequacy=1, blame="text"))
    with SessionStore.open(report_session.path) as store:
        third = merge_pack(store, pack)
        assert (third.added, third.updated, third.unchanged) == (0, 1, 7)
        with store.snapshot() as db:
            row = db.scalar(
                select(Annotation).where(
                    Annotation.verbalisation_id == vid,
                    Annotation.annotator_id == find_annotator(store, "eve").id,
                )
            )
            assert row is not None and (row.fluency, row.adequacy) == (1, 1)


def test_a_different_rating_already_in_the_session_is_a_conflict_and_kept(
    report_session: ReportSession, tmp_path: Path
) -> None:
    units = _unit_ids(report_session, "u4")
    pack = _pack(report_session, tmp_path, "ben", units=units, langs=("en",))
    _rate_everything(pack, fluency=5)
    vid = report_session.verbalisations[("model-a", "u4", "en")]
    with SessionStore.open(report_session.path) as store:
        ben = find_annotator(store, "ben")
        save_rating(store, ben.id, vid, Rating(fluency=2, adequacy=0))  # rated here meanwhile
        report = merge_pack(store, pack)
        assert report.added == 1 and len(report.conflicts) == 1
        assert report.conflicts[0].item == ItemRef(VERBALISATION, vid)
        assert "fluency 2" in report.conflicts[0].describe()
        with store.snapshot() as db:
            kept = db.scalar(
                select(Annotation.fluency).where(
                    Annotation.verbalisation_id == vid, Annotation.annotator_id == ben.id
                )
            )
        assert kept == 2


def test_a_pack_from_another_session_or_a_copy_is_refused(
    report_session: ReportSession, tmp_path: Path
) -> None:
    other = build_report_session(tmp_path / "elsewhere" / "other.taillens")
    pack = _pack(other, tmp_path)
    _rate_everything(pack)
    with SessionStore.open(report_session.path) as store:
        with pytest.raises(PackError, match="made from another session"):
            merge_pack(store, pack)
        with store.snapshot() as db:
            assert db.scalar(select(func.count()).select_from(AnnotationOrigin)) == 0


def test_changed_texts_refuse_the_pack_unless_skipped(
    report_session: ReportSession, tmp_path: Path
) -> None:
    pack = _pack(report_session, tmp_path, units=_unit_ids(report_session, "u1"), langs=("en",))
    _rate_everything(pack)
    vid = report_session.verbalisations[("model-a", "u1", "en")]
    with SessionStore.open(report_session.path) as store:
        with store.unit_of_work() as db:
            db.execute(update(Verbalisation).where(Verbalisation.id == vid).values(text="Edited."))
        with pytest.raises(PackError, match="1 rated texts changed.*nothing was merged"):
            merge_pack(store, pack)
        report = merge_pack(store, pack, skip_changed=True)
        assert report.added == 1 and report.changed_texts == (ItemRef(VERBALISATION, vid),)


@pytest.mark.parametrize("what", ["not a pack", "the session", "not sqlite", "damaged manifest"])
def test_what_is_not_a_pack_gets_a_clear_message(
    report_session: ReportSession, tmp_path: Path, what: str
) -> None:
    if what == "not a pack":
        path = build_report_session(tmp_path / "plain.taillens").path
        message = "not an annotation pack"
    elif what == "the session":
        path = report_session.path
        message = "this session itself"
    elif what == "not sqlite":
        path = tmp_path / "notes.taillens"
        path.write_text("hello")
        message = "notes.taillens"
    else:
        path = _pack(report_session, tmp_path)
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE session_meta SET value = '{oops' WHERE key = ?", (MANIFEST_KEY,))
        message = "damaged"
    before = path.read_bytes()
    with SessionStore.open(report_session.path) as store, pytest.raises(Exception) as caught:
        merge_pack(store, path)
    assert message in str(caught.value)
    from core.errors import UserFacingError

    assert isinstance(caught.value, UserFacingError)
    if what != "the session":
        assert path.read_bytes() == before


def test_progress_counts_handed_out_done_golden_and_time(
    report_session: ReportSession, tmp_path: Path
) -> None:
    pack = _pack(report_session, tmp_path, "fay", units=_unit_ids(report_session, "u7"), golden=1)
    with SessionStore.open(pack) as opened:
        who = find_annotator(opened, "fay")
        with opened.snapshot() as db:
            ids = sorted(db.scalars(select(Verbalisation.id)))
        save_rating(opened, who.id, ids[0], Rating(fluency=3, adequacy=0))
        save_rating(opened, who.id, ids[1], Rating(fluency=3, adequacy=0))
    golden_id = report_session.verbalisations[("model-a", "u3", "en")]
    with SessionStore.open(report_session.path) as store:
        merge_pack(store, pack)
        team = team_progress(store, agreement=overall_agreement)
    fay = next(p for p in team.annotators if p.annotator == "fay")
    assert fay.packs == 1 and fay.assigned == len(ids) == 5  # 4 texts of u7 + the golden one
    assert fay.done == 2 and fay.remaining == 3
    assert golden_id in ids
    assert fay.seconds_per_item is not None and fay.seconds_per_item >= 0
    ana = next(p for p in team.annotators if p.annotator == "ana")
    assert ana.packs == 0 and ana.assigned == 0 and ana.ratings == 5
    assert team.alpha_fluency is not None and team.rated_items >= 5


def test_progress_counts_golden_accuracy_after_a_merge(
    report_session: ReportSession, tmp_path: Path
) -> None:
    golden_id = report_session.verbalisations[("model-a", "u3", "en")]
    pack = _pack(report_session, tmp_path, "gus", units=(), golden=1)
    with SessionStore.open(pack) as opened:
        who = find_annotator(opened, "gus")
        save_rating(opened, who.id, golden_id, Rating(fluency=5, adequacy=0))  # dora's answer
    with SessionStore.open(report_session.path) as store:
        merge_pack(store, pack)
        gus = next(p for p in team_progress(store).annotators if p.annotator == "gus")
    assert gus.golden_items == 1 and gus.golden_adequacy == 1.0 and gus.golden_fluency == 1.0


def test_the_hash_is_of_the_text() -> None:
    assert text_hash("a") != text_hash("b") and len(text_hash(None)) == 64


def test_a_merge_is_one_edit_undone_and_redone_whole_and_refused_after_a_change(
    report_session: ReportSession, tmp_path: Path
) -> None:
    from core.annotation import rating_of
    from core.edits import (
        EditConflictError,
        history,
        redo_edit,
        undo_edit,
    )

    pack = _pack(report_session, tmp_path, units=_unit_ids(report_session, "u1", "u2"))
    _rate_everything(pack)
    vid = report_session.verbalisations[("model-b", "u2", "en")]

    def eve_count(store: SessionStore) -> int:
        with store.snapshot() as db:
            return int(
                db.scalar(
                    select(func.count())
                    .select_from(Annotation)
                    .join(AnnotationOrigin, AnnotationOrigin.annotation_id == Annotation.id)
                )
                or 0
            )

    with SessionStore.open(report_session.path) as store:
        merge_pack(store, pack, source="taillens annotations merge")
        (entry,) = history(store, kinds=["pack merge"])
        assert entry.source == "taillens annotations merge" and entry.annotator == "eve"
        assert "eve.taillens" in entry.description and "8 ratings (8 added)" in entry.description
        assert eve_count(store) == 8
        undo_edit(store, entry.id)  # one undo: the whole merge
        assert eve_count(store) == 0
        redo_edit(store, entry.id)
        assert eve_count(store) == 8
        merge_pack(store, pack)  # nothing new: nothing recorded
        assert len(history(store, kinds=["pack merge"])) == 1

    # Changed in the pack: the next merge changes one rating, its own edit.
    with SessionStore.open(pack) as opened:
        save_rating(opened, find_annotator(opened, "eve").id, vid, Rating(fluency=1, adequacy=1))
    with SessionStore.open(report_session.path) as store:
        eve = find_annotator(store, "eve").id
        merge_pack(store, pack)
        update_entry = history(store, kinds=["pack merge"])[-1]
        assert "1 rating (0 added, 1 changed)" in update_entry.description
        undo_edit(store, update_entry.id)
        assert rating_of(store, eve, vid).fluency == 4  # as the first merge left it
        redo_edit(store, update_entry.id)
        assert rating_of(store, eve, vid).fluency == 1

        # A merged rating changed since: the merge is not undone, nothing is reverted.
        save_rating(store, eve, vid, Rating(fluency=3, adequacy=0))
        with pytest.raises(EditConflictError, match="another change overwrote it"):
            undo_edit(store, entry.id)
        assert eve_count(store) == 8 and rating_of(store, eve, vid).fluency == 3
