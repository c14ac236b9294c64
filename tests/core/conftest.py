"""Fixtures for the session store: real session files in a temporary folder."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, event

from core.store import APPLICATION_ID, SessionStore, alembic_config
from core.store.models import (
    Annotator,
    Category,
    DataUnit,
    Entity,
    ModelRun,
    UnitTriple,
    Verbalisation,
)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def folder_listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def add_sample_rows(store: SessionStore) -> None:
    """A category, an entity, a unit with two triples, a run with one output, an annotator."""
    with store.unit_of_work() as db:
        city = Category(name="City", class_qid="Q515", pattern="?item wdt:P31 wd:Q515 .")
        db.add_all([city, Entity(qid="Q90", sitelink_count=300, has_wiki_en=True)])
        unit = DataUnit(uid="u1", root_qid="Q90", category=city, size=2, origin="built")
        unit.triples = [
            UnitTriple(
                lang="en",
                position=0,
                subject="Paris",
                predicate="country",
                object="France",
                subject_qid="Q90",
                property_pid="P17",
            ),
            UnitTriple(
                lang="en",
                position=1,
                subject="Paris",
                predicate="mayor",
                object="Anne Hidalgo",
                subject_qid="Q90",
                property_pid="P6",
            ),
        ]
        run = ModelRun(kind="template", model_id="template-v1", parameters={"n": 1})
        db.add_all([unit, run, Annotator(name="ana")])
        db.flush()
        db.add(
            Verbalisation(
                run_id=run.id,
                unit_id=unit.id,
                lang="en",
                raw_output="Paris is in France.",
                text="Paris is in France.",
            )
        )


@pytest.fixture
def session_path(tmp_path: Path) -> Path:
    """Where a test's session file goes (not created)."""
    return tmp_path / "sessions" / "test.taillens"


@pytest.fixture
def make_session(tmp_path: Path) -> Callable[..., Path]:
    """Create a closed session file (with sample rows unless ``rows=False``); returns its path."""

    def make(name: str = "made.taillens", *, rows: bool = True) -> Path:
        path = tmp_path / name
        with SessionStore.create(path) as store:
            if rows:
                add_sample_rows(store)
        return path

    return make


@pytest.fixture
def make_old_session(tmp_path: Path) -> Callable[..., Path]:
    """Create a session file at an older schema revision, as an older TailLens wrote it."""

    def make(revision: str = "0001", name: str = "old.taillens") -> Path:
        path = tmp_path / name
        with closing(sqlite3.connect(path, isolation_level=None)) as conn:
            conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
            conn.execute("PRAGMA journal_mode=WAL")
        engine = create_engine(f"sqlite:///{path}")

        @event.listens_for(engine, "connect")
        def _fk_on(dbapi_connection: sqlite3.Connection, _record: object) -> None:
            dbapi_connection.execute("PRAGMA foreign_keys=ON")

        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), revision)
        engine.dispose()
        return path

    return make
