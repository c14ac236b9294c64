"""The session store: create, reopen, write, copy, refuse bad files, survive a second writer."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError

from core import __version__
from core.desktop.paths import default_session_path
from core.store import (
    APPLICATION_ID,
    NotASessionError,
    SessionCorruptError,
    SessionError,
    SessionExistsError,
    SessionLockedError,
    SessionMissingError,
    SessionReadOnlyError,
    SessionStore,
    head_revision,
    inspect_file,
    read_session_info,
)
from core.store.models import (
    Annotator,
    Claim,
    DataUnit,
    ModelRun,
    UnitTriple,
    Verbalisation,
)
from tests.fixtures.sample_session import add_sample_rows, folder_listing, sha256

# -- create, reopen, info --------------------------------------------------------------


def test_create_then_reopen_keeps_rows_and_describes_itself(session_path: Path) -> None:
    with SessionStore.create(session_path) as store:
        assert store.path == session_path.resolve()
        assert store.schema_revision == head_revision() == SessionStore.head_revision()
        add_sample_rows(store)

    with SessionStore.open(session_path) as store:
        assert store.migrated_from is None and store.backup_path is None
        counts = store.row_counts()
        info = store.info()
    assert counts["data_units"] == 1 and counts["unit_triples"] == 2
    assert counts["verbalisations"] == 1 and counts["session_meta"] == 2
    assert "alembic_version" not in counts
    assert set(counts) >= {"annotations", "scores", "job_history", "terms", "claims"}
    assert json.loads(json.dumps(info)) == info
    assert info["path"] == str(session_path.resolve())
    assert info["schema_revision"] == info["head_revision"] == head_revision()
    assert info["app_version"] == info["created_with"] == __version__
    assert info["created_at"].endswith("+00:00")
    assert info["tables"] == counts


def test_create_refuses_an_existing_file(make_session: Callable[..., Path]) -> None:
    path = make_session()
    before = sha256(path)
    with pytest.raises(SessionExistsError) as caught:
        SessionStore.create(path)
    assert path.name in str(caught.value)
    assert sha256(path) == before


def test_create_leaves_only_the_session_file(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "folder"
    SessionStore.create(folder / "s.taillens").close()
    assert folder_listing(folder) == ["s.taillens"]


def test_open_with_create_makes_the_default_session() -> None:
    path = default_session_path()
    assert not path.exists()
    with SessionStore.open(path, create=True) as store:
        assert store.schema_revision == head_revision()
    with SessionStore.open(path, create=True) as store:  # second time: just opens
        assert store.row_counts()["session_meta"] == 2


def test_file_header_carries_the_taillens_application_id(make_session: Callable[..., Path]) -> None:
    check = inspect_file(make_session())
    assert check.application_id == APPLICATION_ID
    assert check.revision == head_revision() and check.is_current and check.is_known
    assert check.size == check.page_size * check.page_count


def test_connections_use_wal_foreign_keys_and_busy_timeout(session_path: Path) -> None:
    with SessionStore.create(session_path, busy_timeout_s=1.5) as store:
        with store.engine.connect() as connection:
            pragma = connection.exec_driver_sql
            assert pragma("PRAGMA journal_mode").scalar() == "wal"
            assert pragma("PRAGMA foreign_keys").scalar() == 1
            assert pragma("PRAGMA busy_timeout").scalar() == 1500
            assert pragma("PRAGMA synchronous").scalar() == 1  # NORMAL
        with store.unit_of_work() as db:
            assert db.execute(select(func.count()).select_from(Annotator)).scalar() == 0


def test_close_leaves_a_self_contained_file(session_path: Path) -> None:
    store = SessionStore.create(session_path)
    add_sample_rows(store)
    assert (session_path.parent / (session_path.name + "-wal")).exists()
    store.close()
    store.close()  # twice is fine
    assert store.closed
    assert folder_listing(session_path.parent) == [session_path.name]
    with pytest.raises(SessionError, match="closed"):
        store.row_counts()


# -- foreign keys and units of work ------------------------------------------------------


def test_a_verbalisation_needs_an_existing_run(session_path: Path) -> None:
    with SessionStore.create(session_path) as store:
        add_sample_rows(store)
        with pytest.raises(IntegrityError), store.unit_of_work() as db:
            db.add(Verbalisation(run_id=999, unit_id=1, lang="en", raw_output="x"))
        assert store.row_counts()["verbalisations"] == 1


def test_deleting_a_unit_cascades_and_deleting_a_claim_sets_null(session_path: Path) -> None:
    with SessionStore.create(session_path) as store:
        add_sample_rows(store)
        with store.unit_of_work() as db:
            claim = Claim(
                subject_qid="Q90", property_pid="P17", value="Q142", value_type="wikibase-item"
            )
            db.add(claim)
            db.flush()
            triple = db.scalars(select(UnitTriple).where(UnitTriple.position == 0)).one()
            triple.claim_id = claim.id
        with store.unit_of_work() as db:
            db.execute(delete(Claim))
        with store.unit_of_work() as db:
            assert db.scalars(select(UnitTriple.claim_id)).all() == [None, None]
            db.execute(delete(DataUnit).where(DataUnit.uid == "u1"))
        counts = store.row_counts()
        assert counts["unit_triples"] == 0 and counts["verbalisations"] == 0
        assert counts["model_runs"] == 1  # the run outlives the unit


def test_unit_of_work_commits_on_success_and_rolls_back_on_error(session_path: Path) -> None:
    with SessionStore.create(session_path) as store:
        with store.unit_of_work() as db:
            db.add(Annotator(name="ana"))
        with pytest.raises(RuntimeError), store.unit_of_work() as db:
            db.add(Annotator(name="ben"))
            db.flush()
            raise RuntimeError("changed my mind")
        with store.unit_of_work() as db:
            names = db.scalars(select(Annotator.name)).all()
            anonymous = db.scalars(select(Annotator.is_anonymous)).one()
    assert names == ["ana"]
    assert anonymous is False  # server default


def test_meta_values_round_trip(session_path: Path) -> None:
    with SessionStore.create(session_path) as store:
        assert store.get_meta("created_with") == __version__
        assert store.get_meta("nothing") is None
        store.set_meta("last_category", "City")
        store.set_meta("last_category", "Painter")
    with SessionStore.open(session_path) as store:
        assert store.get_meta("last_category") == "Painter"


def test_job_history_records_start_and_end(session_path: Path) -> None:
    with SessionStore.create(session_path) as store:
        first = store.record_job_start("fetch", "Fetch City", {"out": Path("/tmp/x")})
        second = store.record_job_start("score", "Score run 1")
        store.record_job_end(first, "failed", "endpoint unreachable")
        history = store.job_history()
    assert [(h["id"], h["title"], h["status"]) for h in history] == [
        (first, "Fetch City", "failed"),
        (second, "Score run 1", "running"),
    ]
    assert history[0]["params"] == {"out": "/tmp/x"}
    assert history[0]["error"] == "endpoint unreachable"
    assert history[0]["finished_at"] is not None and history[1]["finished_at"] is None
    assert json.loads(json.dumps(history)) == history


# -- copies ------------------------------------------------------------------------------


def test_copy_to_writes_an_openable_session_with_the_same_rows(
    session_path: Path, tmp_path: Path
) -> None:
    with SessionStore.create(session_path) as store:
        add_sample_rows(store)
        copy = store.copy_to(tmp_path / "copies" / "copy.taillens")
        with pytest.raises(SessionError, match="onto itself"):
            store.copy_to(session_path)
        with pytest.raises(SessionError, match="already exists"):
            store.copy_to(copy)
        with store.unit_of_work() as db:
            db.add(Annotator(name="ben"))
        assert store.copy_to(copy, overwrite=True) == copy
        expected = store.row_counts()
        assert sha256(session_path) != ""  # the store's own file is still there
    assert folder_listing(copy.parent) == ["copy.taillens"]
    with SessionStore.open(copy) as reopened:
        assert reopened.row_counts() == expected
        assert reopened.schema_revision == head_revision()


# -- files that are refused, untouched --------------------------------------------------


def _foreign_sqlite(path: Path) -> None:
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE foo (x INTEGER)")
        conn.execute("INSERT INTO foo VALUES (1)")
        conn.commit()


def _empty_sqlite(path: Path) -> None:
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA user_version=1")  # forces the header to be written


def _truncated(path: Path) -> None:
    SessionStore.create(path).close()
    with SessionStore.open(path) as store:
        add_sample_rows(store)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _truncated_at_a_page_boundary(path: Path) -> None:
    _truncated(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 4096 * 4096])


def _garbage_in_the_middle(path: Path) -> None:
    with SessionStore.create(path) as store:
        add_sample_rows(store)
        with store.unit_of_work() as db:
            db.add_all(Annotator(name=f"person {i}" * 20) for i in range(400))
    data = bytearray(path.read_bytes())
    third = len(data) // 3
    data[third : 2 * third] = bytes((i * 131 + 7) % 256 for i in range(third))
    path.write_bytes(bytes(data))


BAD_FILES: list[tuple[str, Callable[[Path], None], type[SessionError]]] = [
    ("text", lambda p: p.write_text("just some notes\n"), NotASessionError),
    ("empty", lambda p: p.write_bytes(b""), NotASessionError),
    (
        "png",
        lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8),
        NotASessionError,
    ),
    (
        "short-header",
        lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\x00" * 50),
        SessionCorruptError,
    ),
    ("foreign-sqlite", _foreign_sqlite, NotASessionError),
    ("empty-sqlite", _empty_sqlite, NotASessionError),
    ("truncated", _truncated, SessionCorruptError),
    ("truncated-at-page", _truncated_at_a_page_boundary, SessionCorruptError),
    ("garbage", _garbage_in_the_middle, SessionCorruptError),
]


@pytest.mark.parametrize(
    ("make", "expected"), [(m, e) for _, m, e in BAD_FILES], ids=[n for n, _, _ in BAD_FILES]
)
def test_bad_files_are_refused_and_left_untouched(
    tmp_path: Path, make: Callable[[Path], None], expected: type[SessionError]
) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    path = folder / "bad.taillens"
    make(path)
    before, listing = sha256(path), folder_listing(folder)
    with pytest.raises(expected) as caught:
        SessionStore.open(path)
    assert "bad.taillens" in str(caught.value)
    assert caught.value.path.name == "bad.taillens"
    with pytest.raises(expected):
        read_session_info(path)
    assert sha256(path) == before
    assert folder_listing(folder) == listing  # no -wal/-shm left behind


def test_missing_file_and_folder_are_refused(tmp_path: Path) -> None:
    missing = tmp_path / "missing.taillens"
    with pytest.raises(SessionMissingError, match="does not exist") as caught:
        SessionStore.open(missing)
    assert "missing.taillens" in str(caught.value)
    assert not missing.exists()

    folder = tmp_path / "folder.taillens"
    folder.mkdir()
    with pytest.raises(SessionMissingError, match="folder") as caught:
        SessionStore.open(folder)
    assert "folder.taillens" in str(caught.value)
    assert list(folder.iterdir()) == []


def test_read_only_file_is_refused_but_can_be_described(
    make_session: Callable[..., Path],
) -> None:
    path = make_session("ro.taillens")
    path.chmod(0o444)
    before = sha256(path)
    try:
        with pytest.raises(SessionReadOnlyError) as caught:
            SessionStore.open(path)
        assert "ro.taillens" in str(caught.value) and "read-only" in str(caught.value)
        assert read_session_info(path)["tables"]["data_units"] == 1
    finally:
        path.chmod(0o644)
    assert sha256(path) == before


def test_read_only_folder_is_refused(make_session: Callable[..., Path], tmp_path: Path) -> None:
    path = make_session("in-ro-folder.taillens")
    before = sha256(path)
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(SessionReadOnlyError) as caught:
            SessionStore.open(path)
        assert caught.value.folder
        with pytest.raises(SessionReadOnlyError):
            SessionStore.create(tmp_path / "new.taillens")
    finally:
        tmp_path.chmod(0o755)
    assert "in-ro-folder.taillens" in str(caught.value)
    assert "read-only" in str(caught.value)
    assert sha256(path) == before
    assert not (tmp_path / "new.taillens").exists()


# -- two writers -------------------------------------------------------------------------


def test_two_stores_on_one_file_both_write(make_session: Callable[..., Path]) -> None:
    path = make_session()
    with SessionStore.open(path) as first:
        with first.unit_of_work() as db:
            db.add(Annotator(name="from first"))
        # The first store's pages may still sit in the -wal file: the second must see them.
        assert (path.parent / (path.name + "-wal")).stat().st_size > 0
        with SessionStore.open(path) as second:
            assert second.row_counts()["annotators"] == 2
            with second.unit_of_work() as db:
                db.add(Annotator(name="from second"))
        with first.unit_of_work() as db:
            names = set(db.scalars(select(Annotator.name)))
    assert {"from first", "from second"} <= names


def test_a_held_write_lock_becomes_session_locked_error(make_session: Callable[..., Path]) -> None:
    path = make_session("locked.taillens")
    blocker = sqlite3.connect(path, isolation_level=None)
    try:
        blocker.execute("BEGIN IMMEDIATE")
        blocker.execute("INSERT INTO annotators (name) VALUES ('blocker')")
        with SessionStore.open(path, busy_timeout_s=0.2) as store:
            assert store.row_counts()["annotators"] == 1  # readers are not blocked
            with pytest.raises(SessionLockedError) as caught, store.unit_of_work() as db:
                db.add(ModelRun(kind="template", model_id="t"))
            assert "locked.taillens" in str(caught.value)
            assert "in use by another TailLens" in str(caught.value)
            blocker.execute("COMMIT")
            with store.unit_of_work() as db:
                db.add(ModelRun(kind="template", model_id="t"))
            assert store.row_counts()["annotators"] == 2
            assert store.row_counts()["model_runs"] == 2
    finally:
        blocker.close()
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_closed_store_leaves_nothing_alive(tmp_path: Path) -> None:
    # SQLAlchemy's event registry held each store's read listener, and with it the store,
    # its engine and its pool, for the life of the process: a window that opens sessions
    # one after another, or a run of thousands of imports, kept every one.
    import gc
    import weakref

    from sqlalchemy.engine import Engine

    path = tmp_path / "s.taillens"
    SessionStore.create(path).close()

    def used(opener: Callable[[Path], SessionStore]) -> list[weakref.ref[object]]:
        with opener(path) as store:
            store.info()
            with store.snapshot() as db:
                db.scalar(select(func.count()).select_from(DataUnit))
        return [weakref.ref(store), weakref.ref(store.engine)]

    gone = used(SessionStore.open) + used(SessionStore.open_read_only)
    gc.collect()
    assert [ref() for ref in gone] == [None] * len(gone)
    assert not [o for o in gc.get_objects() if isinstance(o, Engine) and str(path) in str(o.url)]
