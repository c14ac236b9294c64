"""A session with units and gold references, for the references pipeline's tests."""

from __future__ import annotations

from pathlib import Path

from core.store import SessionStore
from core.store.models import Annotator, DataUnit, UnitReference, UnitTriple

GOLD_EN = (
    "Paris is the capital of France.",
    "Anne Hidalgo was born on 19 June 1959 in San Fernando, Cádiz, Spain.",
    "Rome has a population of 2 million.",
)


def seed_session(
    path: Path, texts: tuple[str, ...] = GOLD_EN, *, it_gold: int | None = None
) -> Path:
    """Units u0, u1, … each with one gold English reference; unit ``it_gold`` also has a
    gold Italian one. Two annotators, ann and bob."""
    with SessionStore.create(path) as store, store.unit_of_work() as db:
        for n, text in enumerate(texts):
            unit = DataUnit(uid=f"u{n}", root_qid=f"Q{n + 1}", size=1, origin="built")
            unit.triples = [
                UnitTriple(
                    lang="en", position=0, subject="Paris", predicate="country", object="France"
                )
            ]
            db.add(unit)
            db.flush()
            db.add(UnitReference(unit_id=unit.id, lang="en", text=text, quality="gold"))
            if n == it_gold:
                db.add(UnitReference(unit_id=unit.id, lang="it", text="Testo.", quality="gold"))
        db.add_all([Annotator(name="ann"), Annotator(name="bob")])
    return path
