"""``core.formats.outputs``: one text per line, aligned with the units by id."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from core.formats.outputs import OutputsError, import_outputs
from core.store import SessionStore
from core.store.models import ModelRun, Verbalisation
from tests.fixtures.scoring_session import build_session
from tests.fixtures.table_digest import table_digest


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    build_session(tmp_path / "s.taillens")
    with SessionStore.open(tmp_path / "s.taillens") as opened:
        yield opened


def test_lines_become_an_external_run_in_unit_order(store: SessionStore, tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_bytes(b"\xef\xbb\xbfFirst text.\r\nSecond text, caf\xc3\xa9.\n")
    result = import_outputs(store, path, system="my system", lang="it")
    assert (result.lines, result.empty, result.system, result.lang) == (2, 0, "my system", "it")
    with store.unit_of_work() as db:
        run = db.get(ModelRun, result.run_id)
        assert run is not None and run.kind == "external" and run.system_name == "my system"
        assert run.parameters["order"] == "data_units.id"
        texts = db.execute(
            select(Verbalisation.unit_id, Verbalisation.text, Verbalisation.lang)
            .where(Verbalisation.run_id == run.id)
            .order_by(Verbalisation.unit_id)
        ).all()
    assert [(t.text, t.lang) for t in texts] == [
        ("First text.", "it"),
        ("Second text, café.", "it"),
    ]
    assert texts[0].unit_id < texts[1].unit_id


def test_an_empty_line_is_kept_and_flagged(store: SessionStore, tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("\nSecond.\n", encoding="utf-8")
    result = import_outputs(store, path, system="x")
    assert result.empty == 1
    with store.unit_of_work() as db:
        flags = db.execute(
            select(Verbalisation.parse_ok, Verbalisation.text)
            .where(Verbalisation.run_id == result.run_id)
            .order_by(Verbalisation.unit_id)
        ).all()
    assert [tuple(f) for f in flags] == [(False, None), (True, "Second.")]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"only one line\n", "has 1 line but the session has 2 units"),
        (b"a\nb\nc\n", "has 3 lines but the session has 2 units"),
        (b"caf\xe9\nline two\n", "line 1 is not UTF-8"),
        (b"ok\n\xff\xfebad\n", "line 2 is not UTF-8"),
        ("a\nb\n".encode("utf-16-le"), "NUL"),
    ],
)
def test_bad_files_import_nothing(
    store: SessionStore, tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "out.txt"
    path.write_bytes(content)
    before = table_digest(store)
    with pytest.raises(OutputsError, match=message):
        import_outputs(store, path, system="x")
    assert table_digest(store) == before


def test_missing_file_and_folder(store: SessionStore, tmp_path: Path) -> None:
    with pytest.raises(OutputsError, match="no such file"):
        import_outputs(store, tmp_path / "nope.txt", system="x")
    with pytest.raises(OutputsError, match="it is a folder, not a file"):
        import_outputs(store, tmp_path, system="x")
    (tmp_path / "ok.txt").write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(OutputsError, match="needs a name"):
        import_outputs(store, tmp_path / "ok.txt", system="  ")
