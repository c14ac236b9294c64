"""Human entity mentions of reference texts (enriched WebNLG ``references/reference``).

Imported into ``reference_mentions`` by :mod:`core.formats.webnlg.importer`; read here as plain
data, e.g. as the gold standard for measuring mention detection (ESA)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.store import SessionStore


@dataclass(frozen=True)
class Mention:
    position: int
    entity: str  # the identifier exactly as the file spells it (``Aarhus_Airport``)
    mention: str  # the words of the text (``Aarhus Airport 's``)
    tag: str | None  # AGENT-1, BRIDGE-1, PATIENT-1
    mention_type: str | None  # name, description, pronoun, ...


@dataclass(frozen=True)
class AnnotatedReference:
    reference_id: int
    unit_id: int
    unit_uid: str
    lang: str
    text: str
    mentions: tuple[Mention, ...]


def _mention(row: Any) -> Mention:
    return Mention(row.position, row.entity, row.mention, row.tag, row.mention_type)


def mentions_of(store: SessionStore, reference_id: int) -> list[Mention]:
    """The mentions of one reference text, in the order the file gave them."""
    from sqlalchemy import select

    from core.store.models import ReferenceMention

    with store.unit_of_work() as db:
        rows = db.scalars(
            select(ReferenceMention)
            .where(ReferenceMention.reference_id == reference_id)
            .order_by(ReferenceMention.position, ReferenceMention.id)
        )
        return [_mention(row) for row in rows]


def annotated_references(
    store: SessionStore, *, lang: str | None = None
) -> list[AnnotatedReference]:
    """Every reference text that has mentions (optionally of one language), in id order,
    with its mentions: two queries, whatever the number of texts."""
    from sqlalchemy import select

    from core.store.models import DataUnit, ReferenceMention, UnitReference

    with store.unit_of_work() as db:
        by_reference: dict[int, list[Mention]] = defaultdict(list)
        for row in db.scalars(
            select(ReferenceMention).order_by(
                ReferenceMention.reference_id, ReferenceMention.position, ReferenceMention.id
            )
        ):
            by_reference[row.reference_id].append(_mention(row))
        query = (
            select(
                UnitReference.id,
                UnitReference.unit_id,
                DataUnit.uid,
                UnitReference.lang,
                UnitReference.text,
            )
            .join(DataUnit, DataUnit.id == UnitReference.unit_id)
            .where(UnitReference.id.in_(select(ReferenceMention.reference_id)))
            .order_by(UnitReference.id)
        )
        if lang is not None:
            query = query.where(UnitReference.lang == lang)
        return [
            AnnotatedReference(rid, unit_id, uid, rlang, text, tuple(by_reference[rid]))
            for rid, unit_id, uid, rlang, text in db.execute(query)
        ]
