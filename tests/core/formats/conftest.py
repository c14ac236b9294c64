"""Fixtures for format tests: the real TailNLG benchmark (read in place, never copied)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from core.store import SessionStore
from core.store.models import Base
from tests.shared_data import TAILNLG, require


@pytest.fixture
def tailnlg_path() -> Path:
    return require(*TAILNLG)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    with SessionStore.create(tmp_path / "s.taillens") as session:
        yield session


def table_digest(store: SessionStore) -> dict[str, str]:
    """A sha256 of every table's rows in primary-key order, by table name."""
    digests = {}
    with store.engine.connect() as connection:
        for table in Base.metadata.sorted_tables:
            rows = connection.execute(
                text(f"SELECT * FROM {table.name} ORDER BY 1")  # known names
            ).all()
            digests[table.name] = hashlib.sha256(repr(rows).encode()).hexdigest()
    return digests
