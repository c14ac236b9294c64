"""Is an entry whose id is already in the session the same entry? (re-runnable imports)

An import re-run after a crash (or run twice by a script) meets every id it committed
before. An entry whose stored rows equal what the import would write is "already
imported": counted, not an error. Only different content under the same id is an error.

The comparison is of content, not of where it came from: the file name (the unit's
``source``, a reference's ``provenance``, a WDV unit's ``attributes["file"]``) is left
out, so the same entry from a renamed copy of the file is already imported too. Edits
made in TailLens since the import make the stored unit differ, and the entry is then
reported as different.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from core.formats.webnlg.entries import ParsedEntry


def _canonical(attributes: dict[str, Any]) -> str:
    """The attributes as comparable text, without the file they came from."""
    content = {k: v for k, v in attributes.items() if k != "file"}
    return json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)


def _unit_id(db: Session, uid: str) -> tuple[int, tuple[Any, ...]] | None:
    from sqlalchemy import select

    from core.store.models import DataUnit

    row = db.execute(
        select(
            DataUnit.id,
            DataUnit.shape,
            DataUnit.size,
            DataUnit.tier,
            DataUnit.sub_tier,
            DataUnit.root_qid,
            DataUnit.attributes,
        ).where(DataUnit.uid == uid)
    ).first()
    if row is None:
        return None
    return row[0], (row[1], row[2], row[3], row[4], row[5], _canonical(row[6] or {}))


def _triples(db: Session, unit_id: int, extra: bool = False) -> list[tuple[Any, ...]]:
    from sqlalchemy import select

    from core.store.models import UnitTriple as T

    columns = [T.lang, T.tripleset, T.position, T.subject, T.predicate, T.object]
    if extra:
        columns += [T.subject_qid, T.property_pid, T.object_value]
    rows = db.execute(select(*columns).where(T.unit_id == unit_id))
    return sorted((tuple(row) for row in rows), key=repr)


def same_webnlg_entry(db: Session, entry: ParsedEntry) -> bool:
    """Whether the session's unit ``entry.uid`` holds exactly what importing ``entry``
    would write (unit fields, triples in order, references)."""
    from sqlalchemy import select

    from core.store.models import UnitReference as R

    found = _unit_id(db, entry.uid)
    if found is None:
        return False
    unit_id, stored = found
    wanted = (
        entry.shape,
        entry.size,
        entry.tier,
        entry.sub_tier,
        entry.root_qid,
        _canonical(entry.attributes or {}),
    )
    if stored != wanted:
        return False
    triples = sorted(
        (
            (lang, tripleset, position, t.subject, t.predicate, t.object)
            for (lang, tripleset), rows in entry.triples.items()
            for position, t in enumerate(rows)
        ),
        key=repr,
    )
    if _triples(db, unit_id) != triples:
        return False
    rows = db.execute(select(R.lang, R.text, R.quality, R.lid).where(R.unit_id == unit_id))
    references = sorted((tuple(row) for row in rows), key=repr)
    wanted_references = sorted(
        ((r.lang, r.text, r.quality, r.lid) for r in entry.references), key=repr
    )
    return references == wanted_references


def same_wdv_record(db: Session, record: Any, system_name: str) -> bool:
    """Whether the session's unit ``record.uid`` holds exactly what importing the WDV
    ``record`` would write: the unit, its triple, and the verbalisation of an external
    ``system_name`` run with the same crowd ratings."""
    from sqlalchemy import select

    from core.store.models import Annotation, ModelRun, Verbalisation

    found = _unit_id(db, record.uid)
    if found is None:
        return False
    unit_id, stored = found
    if stored != ("sibling", 1, None, None, record.subject_id, _canonical(record.attributes or {})):
        return False
    triple = (
        "en",
        "main",
        0,
        *record.labels,
        record.subject_id,
        record.property_id,
        record.object_value,
    )
    if _triples(db, unit_id, extra=True) != [triple]:
        return False
    texts = db.execute(
        select(Verbalisation.id, Verbalisation.text)
        .join(ModelRun, ModelRun.id == Verbalisation.run_id)
        .where(
            Verbalisation.unit_id == unit_id,
            ModelRun.kind == "external",
            ModelRun.system_name == system_name,
        )
    ).all()
    if [text for _, text in texts] != [record.verbalisation]:
        return False
    rows = db.execute(
        select(Annotation.fluency, Annotation.adequacy).where(
            Annotation.verbalisation_id == texts[0][0]
        )
    )
    ratings = sorted((tuple(row) for row in rows), key=repr)
    count = max(len(record.fluency), len(record.adequacy))
    wanted = sorted(
        (
            (
                record.fluency[i] if i < len(record.fluency) else None,
                record.adequacy[i] if i < len(record.adequacy) else None,
            )
            for i in range(count)
        ),
        key=repr,
    )
    return ratings == wanted
