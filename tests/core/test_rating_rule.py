"""One rating per annotator and item, the first by id: the schema holds it (revision
0008_one_rating), an older session holding several is upgraded without losing one, and
saving and reading follow the same rule."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine

from core.annotation import Rating, add_annotator, rating_of, save_rating
from core.annotation.types import REFERENCE, VERBALISATION, ItemRef
from core.edits.rating_rule import RatingKey, first_ratings, ratings_of
from core.store import SessionStore, alembic_config

# Columns of a rating row worth comparing before and after the upgrade.
FIELDS = "annotator_id, verbalisation_id, reference_id, fluency, adequacy, corrected_text"


def _old_session_with_duplicates(make_old_session: Callable[..., Path]) -> Path:
    """A 0007 session where one annotator rated verbalisation 1 three times and reference
    1 twice (another program wrote them), with a golden answer and a pack's origin."""
    path = make_old_session("0007_edits", name="dupes.taillens")
    with closing(sqlite3.connect(path)) as conn:
        conn.executescript(
            """
            INSERT INTO annotators (id, name) VALUES (1, 'ana'), (2, 'bo');
            INSERT INTO data_units (id, uid, size, origin) VALUES (1, 'u1', 1, 'imported');
            INSERT INTO model_runs (id, kind, model_id) VALUES (1, 'causal', 'm');
            INSERT INTO verbalisations (id, run_id, unit_id, lang, raw_output, text)
                VALUES (1, 1, 1, 'en', 'Hi.', 'Hi.');
            INSERT INTO unit_references (id, unit_id, lang, text, quality)
                VALUES (1, 1, 'en', 'Hello.', 'gold');
            INSERT INTO annotations (id, annotator_id, verbalisation_id, fluency, adequacy)
                VALUES (1, 1, 1, 5, 0), (2, 1, 1, 3, 1), (3, 1, 1, 1, 2), (4, 2, 1, 4, 0);
            INSERT INTO annotations (id, annotator_id, reference_id, fluency, corrected_text)
                VALUES (5, 1, 1, 2, NULL), (6, 1, 1, 4, 'Hello there.');
            INSERT INTO annotations (id, annotator_id, verbalisation_id, fluency, is_golden)
                VALUES (7, 1, 1, 5, 1);
            INSERT INTO annotation_origins (annotation_id, pack_uid, pack_file, annotator,
                pack_annotation_id, pack_updated_at)
                VALUES (2, 'abc', 'ana.taillens', 'ana', 9, '2026-01-02T03:04:05');
            """
        )
        conn.commit()
    return path


def _rows(path: Path, table: str, columns: str = FIELDS) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute(f"SELECT id, {columns} FROM {table} ORDER BY id").fetchall()


def test_an_old_session_with_several_ratings_of_one_item_upgrades_losing_none(
    make_old_session: Callable[..., Path],
) -> None:
    path = _old_session_with_duplicates(make_old_session)
    before = _rows(path, "annotations")
    with SessionStore.open(path) as store:
        assert store.migrated_from == "0007_edits"
        shown = rating_of(store, 1, ItemRef(VERBALISATION, 1))
        shown_reference = rating_of(store, 1, ItemRef(REFERENCE, 1))
    # The first by id stays the rating, as the app read it before the upgrade.
    assert shown is not None and (shown.annotation_id, shown.fluency) == (1, 5)
    assert shown_reference is not None and (
        shown_reference.annotation_id,
        shown_reference.fluency,
    ) == (5, 2)
    kept = _rows(path, "annotations")
    moved = _rows(path, "ratings_superseded", FIELDS)
    assert [row[0] for row in kept] == [1, 4, 5, 7]  # bo's rating and the golden answer stay
    assert [row[0] for row in moved] == [2, 3, 6]
    assert sorted(kept + moved) == sorted(before)  # every row, each field as it was
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute(
            "SELECT id, kept_id FROM ratings_superseded ORDER BY id"
        ).fetchall() == [
            (2, 1),
            (3, 1),
            (6, 5),
        ]
        origin = conn.execute(
            "SELECT json_extract(origin, '$.pack_uid'), "
            "json_extract(origin, '$.pack_annotation_id') FROM ratings_superseded WHERE id = 2"
        ).fetchone()
        assert origin == ("abc", 9)  # the pack it came from moved with it
        assert conn.execute("SELECT count(*) FROM annotation_origins").fetchone() == (0,)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_the_downgrade_puts_the_superseded_ratings_back(
    make_old_session: Callable[..., Path],
) -> None:
    path = _old_session_with_duplicates(make_old_session)
    before = _rows(path, "annotations")
    SessionStore.open(path).close()
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.begin() as connection:
            command.downgrade(alembic_config(connection), "0007_edits")
    finally:
        engine.dispose()
    assert _rows(path, "annotations") == before
    with closing(sqlite3.connect(path)) as conn:
        origins = conn.execute(
            "SELECT annotation_id, pack_uid, pack_annotation_id, pack_updated_at "
            "FROM annotation_origins"
        ).fetchall()
    assert origins == [(2, "abc", 9, "2026-01-02T03:04:05")]


def test_sqlite_refuses_a_second_rating_of_one_item_by_one_annotator(
    make_session: Callable[..., Path],
) -> None:
    path = make_session(rows=False)
    with closing(sqlite3.connect(path)) as conn:
        conn.executescript(
            """
            INSERT INTO annotators (id, name) VALUES (1, 'ana'), (2, 'bo');
            INSERT INTO data_units (id, uid, size, origin) VALUES (1, 'u1', 1, 'imported');
            INSERT INTO model_runs (id, kind, model_id) VALUES (1, 'causal', 'm');
            INSERT INTO verbalisations (id, run_id, unit_id, lang, raw_output, text)
                VALUES (1, 1, 1, 'en', 'Hi.', 'Hi.');
            INSERT INTO unit_references (id, unit_id, lang, text, quality)
                VALUES (1, 1, 'en', 'Hello.', 'gold');
            INSERT INTO annotations (annotator_id, verbalisation_id, fluency) VALUES (1, 1, 5);
            INSERT INTO annotations (annotator_id, reference_id, fluency) VALUES (1, 1, 5);
            """
        )
        for second in (
            "INSERT INTO annotations (annotator_id, verbalisation_id, fluency) VALUES (1, 1, 2)",
            "INSERT INTO annotations (annotator_id, reference_id, fluency) VALUES (1, 1, 2)",
        ):
            with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
                conn.execute(second)
        # Another annotator's rating and a golden answer of the same text are not a second
        # rating: both go in.
        conn.execute(
            "INSERT INTO annotations (annotator_id, verbalisation_id, fluency) VALUES (2, 1, 2)"
        )
        conn.execute(
            "INSERT INTO annotations (annotator_id, verbalisation_id, fluency, is_golden) "
            "VALUES (1, 1, 4, 1)"
        )
        conn.commit()
        assert conn.execute("SELECT count(*) FROM annotations").fetchone() == (4,)


def test_saving_again_replaces_the_one_rating(make_session: Callable[..., Path]) -> None:
    path = make_session()
    with SessionStore.open(path) as store:
        with store.snapshot() as db:
            from sqlalchemy import select

            from core.store.models import Verbalisation

            vid = db.scalars(select(Verbalisation.id).order_by(Verbalisation.id)).first()
        assert vid is not None
        zoe = add_annotator(store, "zoe")
        first = save_rating(store, zoe.id, vid, Rating(fluency=2, adequacy=0))
        second = save_rating(store, zoe.id, vid, Rating(fluency=4, adequacy=0))
        assert second.annotation_id == first.annotation_id
        with store.snapshot() as db:
            found = {key: row.fluency for key, row in ratings_of(db, [zoe.id]).items()}
        assert found == {RatingKey(zoe.id, VERBALISATION, vid): 4}


def test_the_first_row_of_a_key_is_its_rating() -> None:
    rows = [("a", 1), ("b", 2), ("a", 3)]
    assert first_ratings(rows, lambda row: row[0]) == {"a": ("a", 1), "b": ("b", 2)}
