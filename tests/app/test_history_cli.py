"""``taillens history``: the edits the CLI commands made (their command as the source),
undo and redo of each kind from the command line, a refused undo after another change,
and the history kept across opening the file again."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from app.cli import main
from core.annotation import list_annotators
from core.metrics.esa.synonyms import synonym_rows
from core.store import SessionStore
from core.tiers.stored import load_member_tiers, load_tier_settings


def run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def entries(capsys: pytest.CaptureFixture[str], session: Path, *extra: str) -> list[dict]:
    status, out, err = run(capsys, "history", "--session", session, "--json", *extra)
    assert status == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def fetched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    session = tmp_path_factory.mktemp("history") / "s.taillens"
    assert main(["fetch", "Airport", "--session", str(session), "--limit", "400", "--quiet"]) == 0
    return session


def test_tiers_through_the_cli(
    capsys: pytest.CaptureFixture[str], fetched: Path, tmp_path: Path
) -> None:
    session = tmp_path / "s.taillens"
    session.write_bytes(fetched.read_bytes())
    status, _, err = run(capsys, "tiers", "Airport", "--session", session, "--share", "0.5")
    assert status == 0, err
    status, _, err = run(capsys, "tiers", "Airport", "--session", session, "--share", "0.9")
    assert status == 0, err
    with SessionStore.open(session) as store:
        at_09 = load_member_tiers(store, "Airport")
    rows = entries(capsys, session, "--kind", "tiers")
    assert [(r["source"], r["status"]) for r in rows] == [("taillens tiers", "applied")] * 2
    assert rows[1]["before"]["settings"]["share"] == 0.5
    assert rows[1]["after"]["settings"]["share"] == 0.9
    assert "Pareto share 0.5 → Pareto share 0.9" in rows[1]["description"]

    status, out, _ = run(capsys, "history", "--session", session)
    assert status == 0 and "taillens tiers" in out and "Airport" in out

    # Undo (after reopening: every command opens the file anew), redo, undo again.
    status, out, err = run(capsys, "history", "--session", session, "--undo", rows[1]["id"])
    assert status == 0 and out.startswith("undone: the tiers of Airport"), err
    with SessionStore.open(session) as store:
        assert load_tier_settings(store, "Airport").share == 0.5
    assert run(capsys, "history", "--session", session, "--redo", rows[1]["id"])[0] == 0
    with SessionStore.open(session) as store:
        assert load_member_tiers(store, "Airport") == at_09
    assert entries(capsys, session)[1]["status"] == "redone"

    # Another program re-tiers one member: the undo is refused and nothing changes.
    with closing(sqlite3.connect(session)) as conn:
        conn.execute(
            "UPDATE category_members SET tier = 'torso' WHERE rowid = "
            "(SELECT min(rowid) FROM category_members)"
        )
        conn.commit()
    status, _, err = run(capsys, "history", "--session", session, "--undo", rows[1]["id"])
    assert status == 2 and "another change overwrote it" in err
    with SessionStore.open(session) as store:
        assert load_tier_settings(store, "Airport").share == 0.9


def test_annotators_and_synonyms_through_the_cli(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    session = tmp_path / "a.taillens"
    assert run(capsys, "session", "new", session)[0] == 0
    assert run(capsys, "annotators", "--session", session, "--add", "ana")[0] == 0
    status, _, err = run(
        capsys, "synonyms", "add", "Spain", "España", "--lang", "es", "--session", session
    )
    assert status == 0, err
    rows = entries(capsys, session)
    # The first use of the synonym table copies the starter set: an edit of its own.
    assert [(r["kind"], r["source"], r["description"]) for r in rows] == [
        ("annotator", "taillens annotators", "the annotator ana added"),
        ("synonyms", "taillens synonyms add", "the starter synonyms copied"),
        ("synonyms", "taillens synonyms add", "the synonym 'España' of 'Spain' added"),
    ]
    assert entries(capsys, session, "--annotator", "ana")[0]["kind"] == "annotator"
    assert entries(capsys, session, "--kind", "rating") == []

    for row in reversed(rows):
        assert run(capsys, "history", "--session", session, "--undo", row["id"])[0] == 0
    with SessionStore.open(session) as store:
        assert synonym_rows(store) == [] and list_annotators(store) == []
    assert run(capsys, "history", "--session", session, "--redo", rows[0]["id"])[0] == 0
    with SessionStore.open(session) as store:
        assert [a.name for a in list_annotators(store)] == ["ana"]

    status, _, err = run(capsys, "history", "--session", session, "--redo", rows[0]["id"])
    assert status == 2 and "not undone" in err
    status, _, err = run(capsys, "history", "--session", session, "--kind", "nonsense")
    assert status == 2 and "not an edit kind" in err


def test_units_references_and_categories_through_the_cli(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from core.store.models import UnitReference
    from core.units.builder.draft import UnitDraft
    from core.units.builder.render import render_unit
    from core.units.builder.saved import load_unit, save_unit
    from core.wikidata.category_store import session_categories
    from tests.fixtures.rome_italy_details import DETAILS, ITALY_CURRENCY, ROME_COUNTRY

    session = tmp_path / "u.taillens"
    with SessionStore.create(session) as store:
        draft = UnitDraft("Q220").add(ROME_COUNTRY).add(ITALY_CURRENCY)
        unit_id = save_unit(store, draft, render_unit(draft, DETAILS), uid="rome", source="t")
        plain = load_unit(store, unit_id).triples["es"]
    base = ("units", "override", unit_id, "--session", session, "--lang", "es")
    assert run(capsys, *base, "--position", 0, "--part", "object", "--text", "Italia")[0] == 0
    assert run(capsys, "annotators", "--session", session, "--add", "ana")[0] == 0
    status, _, err = run(
        capsys, "references", "write", "--session", session, "--annotator", "ana",
        "--unit", "rome", "--lang", "en", "--text", "Rome is in Italy.",
    )  # fmt: skip
    assert status == 0, err
    status, _, err = run(
        capsys, "category", "save", "Bakery", "--session", session, "--class", "Q274393"
    )
    assert status == 0, err

    rows = entries(capsys, session)
    assert [(r["kind"], r["source"]) for r in rows] == [
        ("unit override", "taillens units override"),
        ("annotator", "taillens annotators"),
        ("reference", "taillens references write"),
        ("category", "taillens category save"),
    ]
    assert [r["kind"] for r in entries(capsys, session, "--unit", str(unit_id))] == [
        "unit override",
        "reference",
    ]
    for row in reversed(rows):
        status, out, err = run(capsys, "history", "--session", session, "--undo", row["id"])
        assert status == 0 and out.startswith("undone: "), err
    with SessionStore.open(session) as store:
        assert load_unit(store, unit_id).triples["es"] == plain
        with store.snapshot() as db:
            assert db.query(UnitReference).filter(UnitReference.quality == "gold").count() == 0
        assert "Bakery" not in {c.name for c in session_categories(store)}
        assert list_annotators(store) == []
    assert run(capsys, "history", "--session", session, "--redo", rows[0]["id"])[0] == 0
    with SessionStore.open(session) as store:
        assert load_unit(store, unit_id).triples["es"][0].display[2] == "Italia"


def test_a_pack_merged_by_the_cli_is_one_edit_undone_and_redone(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from sqlalchemy import func, select

    from core.annotation import Rating, find_annotator, save_rating
    from core.annotation.packs import PackRequest, make_pack
    from core.store.models import Annotation, Verbalisation
    from tests.fixtures.report_session import build_report_session

    built = build_report_session(tmp_path / "study.taillens", scores=False, ratings=False)
    pack = tmp_path / "eve.taillens"
    with SessionStore.open(built.path) as store:
        make_pack(store, PackRequest(annotator="eve", out=pack, units=(built.units["u1"],)))
    with SessionStore.open(pack) as opened:
        eve = find_annotator(opened, "eve")
        with opened.snapshot() as db:
            texts = list(db.scalars(select(Verbalisation.id)))
        for vid in texts:
            save_rating(opened, eve.id, vid, Rating(fluency=3, adequacy=0))

    def ratings() -> int:
        with SessionStore.open(built.path) as store, store.snapshot() as db:
            return int(db.scalar(select(func.count()).select_from(Annotation)) or 0)

    status, _, err = run(capsys, "annotations", "merge", "--session", built.path, pack)
    assert status == 0, err
    assert ratings() == len(texts) > 0
    (row,) = entries(capsys, built.path, "--kind", "pack merge")
    assert (row["source"], row["annotator"]) == ("taillens annotations merge", "eve")
    status, out, err = run(capsys, "history", "--session", built.path, "--undo", row["id"])
    assert status == 0 and out.startswith("undone: the merge of eve.taillens"), err
    assert ratings() == 0  # one undo: every rating the merge brought
    assert run(capsys, "history", "--session", built.path, "--redo", row["id"])[0] == 0
    assert ratings() == len(texts)
