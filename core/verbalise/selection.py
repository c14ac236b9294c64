"""Which units a run verbalises (``all``, ``tier:X``, ``category:NAME``, ``ids:1,2,3``)
and their triples in each language, as the job reads them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, case, func, or_, select
from sqlalchemy.orm import Session

from core.store import SessionStore
from core.store import models as m
from core.store.batching import in_chunks
from core.verbalise.base import Triples
from core.verbalise.outcome import VerbaliseError

MAIN = "main"


def select_units(store: SessionStore, query: str | Sequence[int] = "all") -> list[int]:
    """Unit ids for ``all``, ``tier:X`` (tier or sub-tier), ``category:NAME`` or
    ``ids:1,2,3`` (or a list of ids), in id order."""
    with store.unit_of_work() as db:
        if not isinstance(query, str):
            wanted = sorted({int(i) for i in query})
            return _existing(db, wanted)
        text = query.strip()
        kind, _, value = text.partition(":")
        kind, value = kind.strip().lower(), value.strip()
        if kind == "all" and not value:
            return list(db.scalars(select(m.DataUnit.id).order_by(m.DataUnit.id)))
        if kind == "tier" and value:
            ids = list(
                db.scalars(
                    select(m.DataUnit.id)
                    .where(or_(m.DataUnit.tier == value, m.DataUnit.sub_tier == value))
                    .order_by(m.DataUnit.id)
                )
            )
            if not ids:
                # A unit takes its root's tier when built: none has this one (yet).
                present = sorted(
                    {
                        t
                        for pair in db.execute(select(m.DataUnit.tier, m.DataUnit.sub_tier)).all()
                        for t in pair
                        if t
                    }
                )
                held = (
                    f"the session's units have {', '.join(present)}"
                    if present
                    else "no unit has any tier"
                )
                raise VerbaliseError(
                    f"no unit has the tier {value!r} ({held}): a unit records its root "
                    "entity's tier when it is built; assign tiers with `taillens tiers "
                    "CATEGORY --session FILE` (or the Browser's lines), then build units"
                )
            return ids
        if kind == "category" and value:
            # Resolved in SQL: the unit's own category, else its imported one.
            return list(
                db.scalars(
                    select(m.DataUnit.id)
                    .outerjoin(m.Category, m.DataUnit.category_id == m.Category.id)
                    .where(unit_category_column() == value)
                    .order_by(m.DataUnit.id)
                )
            )
        if kind == "ids" and value:
            try:
                wanted = sorted({int(v) for v in value.split(",") if v.strip()})
            except ValueError:
                raise VerbaliseError(f"unit ids must be integers: {value!r}") from None
            return _existing(db, wanted)
    raise VerbaliseError(
        f"unknown unit selection {query!r}: use all, tier:NAME, category:NAME or ids:1,2,3"
    )


def imported_category(attributes: Any) -> str | None:
    """The category a TailNLG/WebNLG import recorded in a unit's ``attributes`` (the
    entry's ``category``, kept among the entry attributes), or None. A unit with no session
    category is selected and listed by this one."""
    if isinstance(attributes, dict):
        entry = attributes.get("entry")
        if isinstance(entry, dict):
            return entry.get("category")
        return attributes.get("category")
    return None


def unit_category_column() -> ColumnElement[Any]:
    """The category :func:`imported_category` gives a unit, as an SQL expression over
    ``data_units`` outer-joined to ``categories``: the session category, else the
    category an import recorded in the unit's attributes (NULL when neither)."""
    attributes = m.DataUnit.attributes
    imported = case(
        (
            func.json_type(attributes, "$.entry") == "object",
            func.json_extract(attributes, "$.entry.category"),
        ),
        (func.json_type(attributes) == "object", func.json_extract(attributes, "$.category")),
        else_=None,
    )
    return case(
        (func.coalesce(m.Category.name, "") != "", m.Category.name),
        (func.json_valid(attributes) == 1, imported),
        else_=None,
    )


def _existing(db: Session, wanted: list[int]) -> list[int]:
    found = set()
    for chunk in in_chunks(wanted):
        found |= set(db.scalars(select(m.DataUnit.id).where(m.DataUnit.id.in_(chunk))))
    missing = [i for i in wanted if i not in found]
    if missing:
        shown = ", ".join(str(i) for i in missing[:10]) + (" ..." if len(missing) > 10 else "")
        raise VerbaliseError(f"the session has no unit(s) {shown}")
    return wanted


def unit_triples(
    store: SessionStore, unit_ids: Sequence[int], langs: Sequence[str]
) -> dict[tuple[int, str], Triples]:
    """(unit id, lang) -> the unit's main triples in that language, overrides applied."""
    result: dict[tuple[int, str], list[tuple[int, tuple[str, str, str]]]] = {}
    ids = list(unit_ids)
    with store.snapshot() as db:  # a read: never waits for a writer
        for chunk in in_chunks(ids):
            rows = db.scalars(
                select(m.UnitTriple).where(
                    m.UnitTriple.unit_id.in_(chunk),
                    m.UnitTriple.tripleset == MAIN,
                    m.UnitTriple.lang.in_(list(langs)),
                )
            )
            for row in rows:
                # UnitTriple.shown(): the one override rule, shared with the scoring job.
                result.setdefault((row.unit_id, row.lang), []).append((row.position, row.shown()))
    return {key: tuple(t for _, t in sorted(rows)) for key, rows in result.items()}
