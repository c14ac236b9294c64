"""An empty session for the verbalise tests (their units: tests/fixtures/verbalise_units.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.store import SessionStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    with SessionStore.create(tmp_path / "verbalise.taillens") as session:
        yield session
