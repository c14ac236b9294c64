"""Fixtures for the session store: real session files in a temporary folder."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, event

from core.store import APPLICATION_ID, SessionStore, alembic_config
from tests.fixtures.sample_session import add_sample_rows


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
