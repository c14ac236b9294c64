"""core.store.integrity: checks derived from the schema, damaged rows hidden from every
ORM read with the rows that belong to them, nothing changed."""

from __future__ import annotations

import json
import logging
import math
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import JSON, func, select, update
from sqlalchemy.exc import StatementError

from core.annotation import FLUENCY_MAX, FLUENCY_MIN
from core.annotation.types import ADEQUACY_LABELS
from core.io import jsonio
from core.store import SessionStore
from core.store.integrity import checked_tables, column_checks
from core.store.models import Annotation, DataUnit, ModelRun, Score, Verbalisation
from tests.fixtures.report_session import build_report_session


@pytest.fixture
def session(tmp_path: Path) -> Path:
    build_report_session(tmp_path / "s.taillens")
    return tmp_path / "s.taillens"


def damage(path: Path, sql: str) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA foreign_keys=OFF")
        conn.execute(sql)
        conn.commit()
    finally:
        conn.close()


def test_every_json_column_is_checked() -> None:
    for table in checked_tables().values():
        conditions = " ".join(c for c, _ in column_checks(table))
        for column in table.columns:
            if isinstance(column.type, JSON):
                assert f'json_valid("{column.name}")' in conditions, (table.name, column.name)


def test_the_rating_ranges_are_the_annotation_scales() -> None:
    assert Annotation.__table__.c.fluency.info["range"] == (FLUENCY_MIN, FLUENCY_MAX)
    assert Annotation.__table__.c.adequacy.info["range"] == (
        min(ADEQUACY_LABELS),
        max(ADEQUACY_LABELS),
    )


def test_a_damaged_run_is_hidden_with_what_belongs_to_it(
    session: Path, caplog: pytest.LogCaptureFixture
) -> None:
    damage(session, "UPDATE model_runs SET parameters = '[1]' WHERE id = 1")
    before = session.read_bytes()
    with SessionStore.open_read_only(session) as store, caplog.at_level(logging.WARNING):
        with store.unit_of_work() as db:
            assert db.scalars(select(ModelRun.id)).all() == [2]
            assert set(db.scalars(select(Verbalisation.run_id))) == {2}
            assert set(db.scalars(select(Score.run_id).where(Score.run_id.is_not(None)))) == {2}
            # Joins and counts see the same rows.
            joined = select(func.count()).select_from(Score).join(Verbalisation)
            assert db.scalar(joined) == db.scalar(
                select(func.count()).select_from(Score).where(Score.verbalisation_id.is_not(None))
            )
        assert [str(r) for r in store.damaged_rows] == [
            "model_runs id 1: parameters is a JSON array, not an object"
        ]
    notices = [r.getMessage() for r in caplog.records if r.name == "core.store"]
    assert notices[0] == (
        "s.taillens: skipped 1 damaged row: model_runs id 1: parameters is a JSON array, "
        "not an object"
    )
    assert "s.taillens: also skipped 16 rows of verbalisations that belong to damaged rows" in (
        notices
    )
    assert len(notices) == len(set(notices))  # each said once
    assert session.read_bytes() == before


def test_a_writable_store_hides_them_too_and_writes_the_rest(session: Path) -> None:
    damage(session, "UPDATE data_units SET attributes = 'nope' WHERE id = 1")
    with SessionStore.open(session) as store:
        with store.unit_of_work() as db:
            assert 1 not in db.scalars(select(DataUnit.id)).all()
            db.add(DataUnit(uid="new", size=1, origin="built", attributes={"a": 1}))
        with store.snapshot() as db:
            assert "new" in db.scalars(select(DataUnit.uid)).all()
    with sqlite3.connect(session) as conn:
        assert conn.execute("SELECT attributes FROM data_units WHERE id = 1").fetchone() == (
            "nope",
        )
    # A write that mends the row (or removes it) is seen: reads check again after it.
    with SessionStore.open(session) as store:
        with store.snapshot() as db:
            assert 1 not in db.scalars(select(DataUnit.id)).all()
        with store.unit_of_work() as db:
            db.execute(update(DataUnit).where(DataUnit.id == 1).values(attributes={"ok": 1}))
        with store.snapshot() as db:
            assert db.get(DataUnit, 1).attributes == {"ok": 1}  # type: ignore[union-attr]
        assert store.damaged_rows == []


def test_many_damaged_rows_are_counted_in_one_notice(
    session: Path, caplog: pytest.LogCaptureFixture
) -> None:
    damage(session, "UPDATE scores SET value = 'x' WHERE id <= 100")
    with SessionStore.open_read_only(session) as store, caplog.at_level(logging.WARNING):
        with store.unit_of_work() as db:
            assert db.scalar(select(func.min(Score.id))) == 101
        damaged = store.check()
    assert len(damaged) == 100
    (notice,) = [r.getMessage() for r in caplog.records if r.name == "core.store"]
    assert notice.startswith("s.taillens: skipped 100 damaged rows: scores id 1: value 'x'")
    assert notice.endswith("; and 97 more ('taillens session check' lists them)")


def test_session_json_columns_refuse_non_finite_numbers(session: Path) -> None:
    with SessionStore.open(session) as store:
        refused = pytest.raises(StatementError, match="Out of range float")
        with refused, store.unit_of_work() as db:
            db.add(DataUnit(uid="nan", size=1, origin="built", attributes={"w": math.nan}))
        assert store.check() == []


def test_jsonio_writes_standard_json() -> None:
    text = jsonio.dumps({"p": math.nan, "v": [1.5, math.inf, (-math.inf,)], "n": 2})
    assert json.loads(text) == {"p": None, "v": [1.5, None, [None]], "n": 2}
    assert "NaN" not in text and "Infinity" not in text


def test_the_surrogate_escape_check_finds_what_a_lowered_search_found(session: Path) -> None:
    """The JSON columns' lone-surrogate check finds the texts with a ``\\ud…`` escape in
    either case with GLOB instead of a lowered copy: the same rows as before, NULs
    included."""
    conditions = [c for c, _ in column_checks(Score.__table__) if "taillens_json_text" in c]
    assert len(conditions) == 1
    lowered = "details IS NOT NULL AND instr(lower(details), '\\ud') > 0"
    glob = conditions[0].replace('"details"', "details").split(" AND NOT taillens_json_text")[0]
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE scores (id INTEGER PRIMARY KEY, details TEXT)")
    texts = [
        '{"a": "\\ud800"}', '{"a": "\\uD800"}', '{"a": "\\Ud800"}', '{"a": "\\UDFFF"}',
        '{"a": "\\u00e9"}', '{"a": "ud800"}', '{"a": "\\\\ud800"}', "{}", None,
        '{"a": "x"}\x00\\ud800', '{"a": "\\ud83d\\ude00"}', "\\u", "\\ud",
    ]  # fmt: skip
    conn.executemany("INSERT INTO scores (details) VALUES (?)", [(t,) for t in texts])
    found = [
        [i for (i,) in conn.execute(f"SELECT id FROM scores WHERE {c} ORDER BY id")]
        for c in (lowered, glob)
    ]
    # A NUL hides what follows it from GLOB; the Python check then finds no JSON there
    # (text after a NUL is no JSON), so the row was never damaged by this check anyway.
    assert found[1] == [i for i in found[0] if "\x00" not in (texts[i - 1] or "")]
    assert (len(found[0]), len(found[1])) == (8, 7)


def test_the_rows_found_are_those_a_check_per_column_finds() -> None:
    """Rows are found with the text columns' UTF-8 checks made one call per row: over
    random rows of every checked table (text, broken UTF-8, bytes, numbers, JSON, NULL in
    each column), exactly the rows the per-column checks find, and some of them."""
    import random

    from core.store.engine import _are_utf8, _is_utf8, _json_is_text
    from core.store.integrity import row_conditions

    conn = sqlite3.connect(":memory:")
    conn.create_function("taillens_utf8", 1, _is_utf8, deterministic=True)
    conn.create_function("taillens_utf8_all", -1, _are_utf8, deterministic=True)
    conn.create_function("taillens_json_text", 1, _json_is_text, deterministic=True)
    rng = random.Random(8)
    kinds = [
        None, "text", "é and ü", 3, 2.5, b"\xff\xfe", "{}", '{"a": 1}', "2024-01-02 03:04:05",
        "[1]", '{"a": "\\ud800"}', 1, 0,
    ]  # fmt: skip
    broken_text = "CAST(X'61FF62' AS TEXT)"  # stored as TEXT, not UTF-8
    found_any = broken = 0
    for name, table in checked_tables().items():
        columns = [c.name for c in table.columns]
        conn.execute(
            f'CREATE TABLE "{name}" ({", ".join(f"{chr(34)}{c}{chr(34)}" for c in columns)})'
        )
        for row_id in range(1, 121):
            values = [row_id] + [rng.choice(kinds) for _ in columns[1:]]
            conn.execute(f'INSERT INTO "{name}" VALUES ({", ".join("?" * len(columns))})', values)
            if row_id % 6 == 0:  # broken UTF-8 in one text column, as another program wrote
                texts = [c.name for c in table.columns if str(c.type).startswith("VARCHAR")]
                if texts:
                    conn.execute(
                        f'UPDATE "{name}" SET "{rng.choice(texts)}" = {broken_text} '
                        f"WHERE id = {row_id}"
                    )
        per_column = " OR ".join(f"({c})" for c, _ in column_checks(table))
        one_call = " OR ".join(f"({c})" for c in row_conditions(table))
        if not per_column:
            continue
        found = [
            {i for (i,) in conn.execute(f'SELECT id FROM "{name}" WHERE {where}')}
            for where in (per_column, one_call)
        ]
        assert found[0] == found[1], name
        found_any += len(found[0])
        if "taillens_utf8_all" in row_conditions(table)[-1]:
            broken += conn.execute(
                f'SELECT count(*) FROM "{name}" WHERE NOT taillens_utf8_all('
                + ", ".join(
                    f"CASE WHEN typeof({chr(34)}{c}{chr(34)}) = 'text' "
                    f"THEN CAST({chr(34)}{c}{chr(34)} AS BLOB) END"
                    for c in columns[1:]
                )
                + ")"
            ).fetchone()[0]
    assert found_any > 100
    assert broken > 20  # the broken UTF-8 planted was among what the check had to find


class _Driver:
    """A raw sqlite3 connection with the one method of SQLAlchemy's the check calls."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def exec_driver_sql(self, sql: str) -> sqlite3.Cursor:
        return self.connection.execute(sql)


def test_text_values_checked_once_per_combination_find_the_same_rows(monkeypatch) -> None:
    """A table whose text columns hold few distinct combinations has each checked for
    UTF-8 once; broken UTF-8 among them, or more combinations than the bound, leaves the
    check to each row. Either way the rows found are those the per-column checks find."""
    import random

    from core.store import integrity
    from core.store.engine import _are_utf8, _is_utf8, _json_is_text

    monkeypatch.setattr(integrity, "DISTINCT_TEXTS", 20)  # 16 combinations below, or 300
    table = checked_tables()["scores"]
    columns = [c.name for c in table.columns]
    texts = [c.name for c in table.columns if str(c.type).startswith("VARCHAR")]
    rng = random.Random(3)
    verdicts = []
    for case in ("few", "few with broken UTF-8", "many", "blob among few"):
        conn = sqlite3.connect(":memory:")
        conn.create_function("taillens_utf8", 1, _is_utf8, deterministic=True)
        conn.create_function("taillens_utf8_all", -1, _are_utf8, deterministic=True)
        conn.create_function("taillens_json_text", 1, _json_is_text, deterministic=True)
        conn.execute(f"CREATE TABLE scores ({', '.join(chr(34) + c + chr(34) for c in columns)})")
        for row_id in range(1, 301):
            row: dict[str, object] = {c: None for c in columns}
            row.update(id=row_id, value=rng.choice([1.5, 3]), details='{"quality": "gold"}')
            row.update({c: rng.choice(["bleu", "chrf++"]) for c in texts})
            if case == "many":
                row[texts[0]] = f"metric {row_id}"
            conn.execute(
                f"INSERT INTO scores VALUES ({', '.join('?' * len(columns))})", list(row.values())
            )
        conn.execute("UPDATE scores SET value = 'abc' WHERE id = 11")  # damaged in every case
        if case == "few with broken UTF-8":
            conn.execute(f"UPDATE scores SET {texts[1]} = CAST(X'61FF62' AS TEXT) WHERE id = 7")
        if case == "blob among few":
            conn.execute(f"UPDATE scores SET {texts[1]} = X'6162' WHERE id = 9")
        checked = integrity.texts_are_utf8(_Driver(conn), table)  # type: ignore[arg-type]
        verdicts.append(checked)
        per_column = " OR ".join(f"({c})" for c, _ in column_checks(table))
        fast = " OR ".join(f"({c})" for c in integrity.row_conditions(table, texts_checked=checked))
        found = [
            sorted(i for (i,) in conn.execute(f"SELECT id FROM scores WHERE {where}"))
            for where in (per_column, fast)
        ]
        assert found[0] == found[1], case
        assert found[0] == sorted(
            {11}
            | ({7} if case == "few with broken UTF-8" else set())
            | ({9} if case == "blob among few" else set())
        ), case
    assert verdicts == [True, False, False, True]


class _HeldElsewhere:
    """An integrity lock that another thread holds: taking it would wait."""

    def __enter__(self) -> None:
        raise AssertionError("waited for the lock a check on another thread holds")

    def __exit__(self, *exc: object) -> None:
        return None


def test_reads_of_other_tables_never_wait_for_a_check_on_another_thread(session: Path) -> None:
    """While one thread checks a large table (a report reading the scores), another
    (the window writing a session setting) reads a table that needs no check, one checked
    already or another one still to check, and the damaged rows' criteria: none of that
    waits for the scores' check."""
    damage(session, "UPDATE model_runs SET parameters = '[1]' WHERE id = 1")
    with SessionStore.open(session) as store, store.snapshot() as db:
        assert db.scalars(select(Verbalisation.id)).all() is not None  # checked now
        integrity = store.integrity
        hidden = integrity.criteria()
        assert hidden  # the damaged run and what belongs to it
        integrity._table_locks["scores"] = _HeldElsewhere()  # type: ignore[assignment]
        store.get_meta("browser:category")  # session_meta: no row ids, no check
        assert db.scalars(select(Verbalisation.id)).all() is not None
        assert db.scalars(select(Annotation.id)).all() is not None  # checked now, apart
        assert "annotations" in integrity.hidden
        assert set(hidden) <= set(integrity.criteria())  # and the annotations they hide
        with pytest.raises(AssertionError, match="waited for the lock"):
            db.scalars(select(Score.id)).all()  # the scores themselves wait for it


def test_a_check_under_way_when_the_session_is_written_stores_nothing(
    session: Path, monkeypatch
) -> None:
    """A write makes the checks start again (a damaged row may be gone, its id given to
    a new row): a check that was under way then keeps nothing, and the next read checks
    the table afresh."""
    from core.store import integrity as module

    damage(session, "UPDATE scores SET value = 'abc' WHERE id = 1")
    real = module.find_damaged_rows
    with SessionStore.open(session) as store:
        calls = []

        def written_meanwhile(connection, table):
            found = real(connection, table)
            calls.append(table.name)
            if table.name == "scores" and calls.count("scores") == 1:
                store.integrity.forget()  # as a write on another thread does
            return found

        monkeypatch.setattr(module, "find_damaged_rows", written_meanwhile)
        with store.snapshot() as db:
            db.scalars(select(Score.id)).all()
            assert "scores" not in store.integrity.hidden
        with store.snapshot() as db:
            assert 1 not in db.scalars(select(Score.id)).all()
        assert calls.count("scores") == 2
        assert [r.row_id for r in store.integrity.damaged["scores"]] == [1]
