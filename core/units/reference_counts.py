"""Units' reference texts as the Units panel shows them: counts per unit (a column, a
filter) and one unit's texts (beside its triples). Qt-free; reads one snapshot each."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from sqlalchemy import func, select

from core.store import models as m

if TYPE_CHECKING:
    from core.store import SessionStore


def reference_counts(store: SessionStore, unit_ids: Iterable[int]) -> dict[int, dict[str, int]]:
    """unit id -> {quality: texts} for the units in ``unit_ids`` (those with none are
    left out): one GROUP BY, for a page of units."""
    ids = list(unit_ids)
    if not ids:
        return {}
    counts: dict[int, dict[str, int]] = {}
    query = (
        select(m.UnitReference.unit_id, m.UnitReference.quality, func.count())
        .where(m.UnitReference.unit_id.in_(ids))
        .group_by(m.UnitReference.unit_id, m.UnitReference.quality)
    )
    with store.snapshot() as db:
        for unit_id, quality, n in db.execute(query):
            counts.setdefault(int(unit_id), {})[str(quality)] = int(n)
    return counts


def references_of(store: SessionStore, unit_id: int) -> list[tuple[str, str, str]]:
    """(language, quality, text) of every reference of the unit, by language, gold first."""
    query = (
        select(m.UnitReference.lang, m.UnitReference.quality, m.UnitReference.text)
        .where(m.UnitReference.unit_id == unit_id)
        .order_by(m.UnitReference.lang, m.UnitReference.quality != "gold", m.UnitReference.id)
    )
    with store.snapshot() as db:
        return [(str(lang), str(q), str(text)) for lang, q, text in db.execute(query)]
