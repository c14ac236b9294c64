"""``taillens synonyms``: the CLI twin of the Scores panel's synonym editor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from core.store import SessionStore
from tests.fixtures.table_digest import table_digest


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def session(tmp_path: Path) -> str:
    SessionStore.create(tmp_path / "s.taillens").close()
    return str(tmp_path / "s.taillens")


def test_seed_add_list_remove_import(
    capsys: pytest.CaptureFixture[str], session: str, tmp_path: Path
) -> None:
    status, out, err = run(capsys, "synonyms", "list", "--session", session)
    assert status == 0 and "first use: the starter set's" in err
    assert "Spain\tSpanish\ten\tstarter" in out
    status, out, err = run(capsys, "synonyms", "list", "--session", session)
    assert "first use" not in err  # seeded once
    status, out, _ = run(capsys, "synonyms", "remove", "--session", session, "Spain", "Spanish")
    assert status == 0 and "removed 1 row" in out
    status, out, _ = run(capsys, "synonyms", "list", "--session", session, "--entity", "Spain")
    assert "Spanish" not in out  # a removed starter row stays removed
    status, out, _ = run(capsys, "synonyms", "seed", "--session", session)
    assert status == 0 and "1 added" in out
    status, out, _ = run(
        capsys, "synonyms", "add", "--session", session, "Alvinegro", "Galo", "--lang", "pt"
    )
    assert status == 0 and "added 'Galo'" in out
    status, out, _ = run(
        capsys, "synonyms", "list", "--session", session, "--entity", "Alvinegro", "--json"
    )
    assert json.loads(out) == [
        {"entity": "Alvinegro", "synonym": "Galo", "lang": "pt", "source": "user"}
    ]
    status, out, _ = run(capsys, "synonyms", "remove", "--session", session, "Alvinegro", "Galo")
    assert status == 0 and "removed 1 row" in out
    table = tmp_path / "mine.tsv"
    table.write_text("Abilene, Texas\tAbilene TX\n", encoding="utf-8")
    status, out, _ = run(capsys, "synonyms", "import", "--session", session, str(table))
    assert status == 0 and "1 rows read, 1 added" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("add", "", "Spanish"), "the row names no entity"),
        (("remove", "Spain", "Martian"), "no synonym 'Martian' of 'Spain'"),
        (("import", "FILE"), "FILE, line 2: the row names no entity"),
    ],
)
def test_bad_input_exits_2_and_changes_nothing(
    capsys: pytest.CaptureFixture[str],
    session: str,
    tmp_path: Path,
    args: tuple[str, ...],
    message: str,
) -> None:
    bad = tmp_path / "bad.tsv"
    bad.write_text("Italy\tItalian\n\tGerman\n", encoding="utf-8")
    args = tuple(str(bad) if a == "FILE" else a for a in args)
    message = message.replace("FILE", str(bad))
    with SessionStore.open(session) as store:
        before = table_digest(store)
    status, _, err = run(capsys, "synonyms", args[0], "--session", session, *args[1:])
    assert status == 2 and message in err and "Traceback" not in err
    with SessionStore.open(session) as store:
        assert table_digest(store) == before  # not even the first-use seeding
