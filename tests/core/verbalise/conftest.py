"""A session with a few units in en/it/es, for the verbalise tests (and the CLI's)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.store import SessionStore
from core.store.models import Category, DataUnit, UnitTriple

FACTS = {
    "en": [("Paris", "country", "France"), ("Paris", "mayor", "Anne Hidalgo")],
    "it": [("Parigi", "paese", "Francia"), ("Parigi", "sindaco", "Anne Hidalgo")],
    "es": [("París", "país", "Francia"), ("París", "alcalde", "Anne Hidalgo")],
}


def add_units(
    store: SessionStore,
    count: int = 5,
    langs: tuple[str, ...] = ("en", "it", "es"),
) -> list[int]:
    """``count`` units of 1-2 triples (unit i has ``i % 2 + 1`` triples); tiers alternate
    head / long_tail; every other unit is in category City. Returns their ids."""
    ids = []
    with store.unit_of_work() as db:
        city = Category(name="City", class_qid="Q515", pattern="?item wdt:P31 wd:Q515 .")
        db.add(city)
        for i in range(count):
            size = i % 2 + 1
            unit = DataUnit(
                uid=f"u{i}",
                root_qid=f"Q{i}",
                size=size,
                origin="built",
                tier="head" if i % 2 == 0 else "long_tail",
                category=city if i % 2 == 0 else None,
            )
            unit.triples = [
                UnitTriple(lang=lang, position=p, subject=f"{s}{i}", predicate=pr, object=o)
                for lang in langs
                for p, (s, pr, o) in enumerate(FACTS[lang][:size])
            ]
            db.add(unit)
            db.flush()
            ids.append(unit.id)
    return ids


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    with SessionStore.create(tmp_path / "verbalise.taillens") as session:
        yield session
