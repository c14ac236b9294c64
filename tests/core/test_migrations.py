"""Alembic revisions: they build exactly the models, and old files are upgraded safely."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine

from core.store import (
    SessionStore,
    SessionTooNewError,
    alembic_config,
    head_revision,
    inspect_file,
    known_revisions,
    read_session_info,
)
from core.store.models import Base
from tests.fixtures.sample_session import add_sample_rows, folder_listing, sha256


def _schema_diffs(path: Path) -> list[object]:
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(
                connection, opts={"compare_type": True, "compare_server_default": True}
            )
            return compare_metadata(context, Base.metadata)
    finally:
        engine.dispose()


def _alembic(path: Path, action: str, revision: str) -> None:
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.begin() as connection:
            getattr(command, action)(alembic_config(connection), revision)
    finally:
        engine.dispose()


def test_revisions_are_linear_and_known() -> None:
    assert head_revision() == "0008_one_rating"
    assert known_revisions() == {
        "0001",
        "0002",
        "0003",
        "0004",
        "0005_likelihood",
        "0005_retrieval",
        "0006_packs",
        "0006_refs",
        "0007_edits",
        "0008_one_rating",
    }


def test_revisions_read_without_alembic_agree_with_alembic() -> None:
    """Opening a session checks its revision against the scripts' own revision lines
    (no Alembic import at start-up): the same graph Alembic reads."""
    from alembic.script import ScriptDirectory

    from core.store.migrate import revision_graph

    scripts = ScriptDirectory.from_config(alembic_config())
    assert scripts.get_current_head() == head_revision()
    assert revision_graph() == {s.revision: s.down_revision for s in scripts.walk_revisions()}


def test_opening_a_current_session_does_not_import_alembic(
    make_session: Callable[..., Path],
) -> None:
    import subprocess
    import sys

    path = make_session()
    code = (
        "import sys\n"
        "from core.store import SessionStore\n"
        f"store = SessionStore.open({str(path)!r})\n"
        "store.info()\n"
        "store.close()\n"
        "print('alembic' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert out.stdout.split()[-1] == "False"


def test_models_match_the_migrations(make_session: Callable[..., Path]) -> None:
    assert _schema_diffs(make_session(rows=False)) == []


def _columns(path: Path, table: str) -> list[str]:
    with closing(sqlite3.connect(path)) as conn:
        return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def test_downgrade_and_upgrade_again(make_session: Callable[..., Path]) -> None:
    path = make_session(rows=False)
    _alembic(path, "downgrade", "0002")
    assert inspect_file(path).revision == "0002"
    assert "prompt" not in _columns(path, "verbalisations")
    _alembic(path, "upgrade", "head")  # the table rebuilt by the downgrade is whole again
    assert _schema_diffs(path) == []
    _alembic(path, "downgrade", "0001")
    assert inspect_file(path).revision == "0001"
    assert "job_history" not in inspect_file(path).tables
    _alembic(path, "downgrade", "base")
    with closing(sqlite3.connect(path)) as conn:
        tables = [
            row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ]
    assert tables == ["alembic_version"]
    _alembic(path, "upgrade", "head")
    assert inspect_file(path).revision == head_revision()
    assert _schema_diffs(path) == []


def test_an_older_session_is_backed_up_then_upgraded(
    make_old_session: Callable[..., Path],
) -> None:
    path = make_old_session("0001")
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("INSERT INTO annotators (name) VALUES ('ana')")
        conn.execute("INSERT INTO data_units (uid, size, origin) VALUES ('u1', 1, 'imported')")
        conn.execute(
            "INSERT INTO unit_triples (unit_id, lang, position, subject, predicate, object) "
            "VALUES (1, 'en', 0, 'Paris', 'country', 'France')"
        )
        conn.commit()
    assert read_session_info(path)["schema_revision"] == "0001"  # described, not upgraded
    before = sha256(path)

    with SessionStore.open(path) as store:
        assert store.migrated_from == "0001"
        assert store.schema_revision == head_revision()
        backup = store.backup_path
        assert backup is not None and backup.parent == path.parent
        assert backup.name.startswith("old.backup-rev0001-") and backup.suffix == ".taillens"
        counts = store.row_counts()
        assert counts["annotators"] == 1 and counts["unit_triples"] == 1
        assert counts["job_history"] == 0
        store.record_job_start("test", "after upgrade")

    assert sha256(backup) != "" and inspect_file(backup).revision == "0001"
    backup_info = read_session_info(backup)
    assert backup_info["tables"]["annotators"] == 1
    assert "job_history" not in backup_info["tables"]
    assert sha256(path) != before
    assert _schema_diffs(path) == []
    assert "prompt" in _columns(path, "verbalisations")
    assert folder_listing(path.parent) == sorted([path.name, backup.name])

    with SessionStore.open(path) as store:  # now current: no second backup
        assert store.migrated_from is None and store.backup_path is None


def test_a_session_from_a_newer_taillens_is_refused_untouched(
    make_session: Callable[..., Path],
) -> None:
    path = make_session("future.taillens")
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
        conn.commit()
    before, listing = sha256(path), folder_listing(path.parent)
    with pytest.raises(SessionTooNewError) as caught:
        SessionStore.open(path)
    message = str(caught.value)
    assert "future.taillens" in message and "newer" in message and "9999" in message
    assert caught.value.revision == "9999"
    assert read_session_info(path)["schema_revision"] == "9999"
    assert sha256(path) == before
    assert folder_listing(path.parent) == listing


def test_upgrade_keeps_rows_that_reference_each_other(
    make_old_session: Callable[..., Path],
) -> None:
    """Units, triples, runs and outputs linked by foreign keys come through an upgrade whole."""
    path = make_old_session("0001", name="linked.taillens")
    with SessionStore.open(path) as store:
        add_sample_rows(store)
        expected = store.row_counts()
    _alembic(path, "downgrade", "0001")
    expected = {table: n for table, n in expected.items() if table != "job_history"}
    expected["job_history"] = 0
    with SessionStore.open(path) as store:
        assert store.migrated_from == "0001"
        assert store.row_counts() == expected


def test_a_0002_session_keeps_its_outputs_with_no_prompt(
    make_old_session: Callable[..., Path],
) -> None:
    """Outputs written before prompts were stored come through with prompt NULL."""
    path = make_old_session("0002", name="rev2.taillens")
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("INSERT INTO data_units (uid, size, origin) VALUES ('u1', 1, 'built')")
        conn.execute("INSERT INTO model_runs (kind, model_id) VALUES ('causal', 'm')")
        conn.execute(
            "INSERT INTO verbalisations (run_id, unit_id, lang, raw_output, text) "
            "VALUES (1, 1, 'en', 'The final verbalization is: [Hi.]', 'Hi.')"
        )
        conn.execute(
            "INSERT INTO scores (metric, level, verbalisation_id, run_id, lang, value) "
            "VALUES ('bleu', 'sentence', 1, 1, 'en', 1.0)"
        )
        conn.commit()
    with SessionStore.open(path) as store:
        assert store.migrated_from == "0002"
        assert store.row_counts()["scores"] == 1  # the rebuilt table lost no dependants
    assert _schema_diffs(path) == []
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT raw_output, text, prompt FROM verbalisations").fetchall() == [
            ("The final verbalization is: [Hi.]", "Hi.", None)
        ]
