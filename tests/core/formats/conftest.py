"""Fixtures for format tests: the real TailNLG benchmark (read in place, never copied)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.store import SessionStore
from tests.shared_data import TAILNLG, require


@pytest.fixture
def tailnlg_path() -> Path:
    return require(*TAILNLG)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    with SessionStore.create(tmp_path / "s.taillens") as session:
        yield session
