"""The per-text table in process (core.formats.texts_table): pages give the same table
whatever their size, a missing pyarrow is a one-line message, the suffix picks the format."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from core.formats.texts_table.export import export_texts
from core.formats.texts_table.plan import TextsTableError
from core.store import SessionStore
from tests.fixtures.texts_table_session import TEXTS, build


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("table") / "s.taillens")


def test_pages_of_any_size_write_the_same_table(session: Path, tmp_path: Path) -> None:
    with SessionStore.open_read_only(session) as store:
        one = export_texts(store, tmp_path / "one.jsonl", page_size=1)
        many = export_texts(store, tmp_path / "many.jsonl")
    assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "many.jsonl").read_bytes()
    assert (one.entries, one.outputs, one.references, one.units) == (len(TEXTS) + 1, 4, 1, 2)
    assert one.columns == many.columns
    assert set(one.signatures) >= {"bleu:gold", "esa"}


def test_filters_narrow_the_rows(session: Path, tmp_path: Path) -> None:
    with SessionStore.open_read_only(session) as store:
        report = export_texts(store, tmp_path / "t.csv", runs=[1], langs=["en"])
        assert (report.outputs, report.references) == (2, 0)
        assert export_texts(store, tmp_path / "u.csv", langs=["it"]).entries == 0
        with pytest.raises(TextsTableError, match="run 7 is not in this session"):
            export_texts(store, tmp_path / "v.csv", runs=[7])


def test_parquet_without_pyarrow_is_a_message(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    with SessionStore.open_read_only(session) as store:
        with pytest.raises(TextsTableError, match="needs pyarrow, which is not installed"):
            export_texts(store, tmp_path / "t.parquet")
        with pytest.raises(TextsTableError, match="name the file .csv, .jsonl or .parquet"):
            export_texts(store, tmp_path / "t.xlsx")
    assert list(tmp_path.iterdir()) == []


def test_damaged_rows_are_left_out(session: Path, tmp_path: Path) -> None:
    """A score value that is no number and a rating of 33 (core.store.integrity): the
    table leaves them out, as every reader does, and is still written."""
    import json
    import shutil
    import sqlite3

    copy = tmp_path / "damaged.taillens"
    shutil.copyfile(session, copy)
    with sqlite3.connect(copy) as conn:
        conn.execute(
            "UPDATE scores SET value = 'abc' WHERE id = (SELECT min(id) FROM scores "
            "WHERE metric = 'esa' AND verbalisation_id IS NOT NULL)"
        )
        conn.execute("UPDATE annotations SET fluency = 33 WHERE fluency = 5")
    conn.close()
    with SessionStore.open_read_only(copy) as store:
        export_texts(store, tmp_path / "t.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    first = next(r for r in rows if r["text"] == "Rome is the capital of Italy.")
    assert first["esa"] is None and first["fluency__alice"] is None
    assert first["fluency__bob"] == 4 and first["ratings"] == 1
