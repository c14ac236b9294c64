"""Saving units to the session and reading them back: overrides are kept apart from the
rendered text so the original is never lost; the draft being built is kept in the session
so a crash loses nothing."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import CursorResult, select, update

from core.store import SessionStore
from core.store import models as m

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from core.edits import HistoryEntry


from core.units.builder.draft import (
    MAIN,
    PARTS,
    Overrides,
    UnitDraft,
    UnitError,
    check_permutation,
    draft_from_json,
    draft_to_json,
    structure,
)
from core.units.builder.render import RenderedTriple, keep_label, parallel_languages

# --- the session ------------------------------------------------------------------------


def provenance(draft: UnitDraft) -> dict[str, Any]:
    """What a saved unit records about how it was built (kept in ``attributes``)."""
    entities = [draft.root_qid]
    for claim in draft.claims:
        for qid in (
            claim.subject_qid,
            claim.value if claim.value_type == "wikibase-item" else None,
        ):
            if qid and qid not in entities:
                entities.append(qid)
    return {
        "entities": entities,
        "properties": [c.property_pid for c in draft.claims],
        "statements": [c.statement_id for c in draft.claims],
        "category": draft.category,
        "tier": draft.tier,
        "sub_tier": draft.sub_tier,
        "filters": {f.name: getattr(draft.filters, f.name) for f in fields(draft.filters)},
    }


def save_unit(
    store: SessionStore,
    draft: UnitDraft,
    rendered: Mapping[str, Sequence[RenderedTriple]],
    *,
    uid: str | None = None,
    origin: str = "built",
    category: str | None = None,
    source: str | None = None,
    recorded_as: str | None = None,
    clears_draft: bool = False,
) -> int:
    """Write the unit and its triples per language in one transaction; returns its id.

    With ``recorded_as`` (who saves it: "gui", a command) the save is a recorded edit
    (``core.edits.units.UnitSaveEdit``, with its history row in the same transaction), so
    it can be undone; with ``clears_draft`` too, the Units draft it was built from is
    cleared by the same edit (undo puts it back). Without it nothing is recorded: a
    sample saves each unit so and records them as one edit when it ends
    (:func:`record_saved_units`).

    Refuses (:class:`UnitError`) a unit that is empty, larger than 7 or not connected."""
    if recorded_as is not None:
        from core.edits import apply_edit
        from core.edits.units import UnitSaveEdit

        new_uid = uid or uuid.uuid4().hex
        edit = UnitSaveEdit(
            [new_uid],
            lambda db: [
                _add_unit(
                    db,
                    draft,
                    rendered,
                    uid=new_uid,
                    origin=origin,
                    category=category,
                    source=source,
                )
            ],
            clears_draft=clears_draft,
        )
        apply_edit(store, edit, source=recorded_as)
        (unit_id,) = edit.units  # set by the edit's apply
        return unit_id
    with store.unit_of_work() as db:
        return _add_unit(
            db, draft, rendered, uid=uid, origin=origin, category=category, source=source
        )


def save_units(
    store: SessionStore,
    items: Sequence[tuple[UnitDraft, Mapping[str, Sequence[RenderedTriple]], Mapping]],
    *,
    origin: str,
    category: str | None = None,
    source: str | None = None,
    recorded_as: str | None = None,
    words: str = "",
) -> list[int]:
    """Save many units in one transaction (all or none); each item is a draft, its
    rendering and extra attributes merged into the unit's provenance. With
    ``recorded_as`` (who saves them) the save is one recorded edit
    (``core.edits.units.UnitSaveEdit``, described by ``words`` when given): one undo
    takes every unit out."""
    uids = [uuid.uuid4().hex for _item in items]

    def add(db: Session) -> list[int]:
        return [
            _add_unit(
                db,
                draft,
                rendered,
                uid=uid,
                origin=origin,
                category=category,
                source=source,
                extra=extra,
            )
            for uid, (draft, rendered, extra) in zip(uids, items, strict=True)
        ]

    if recorded_as is not None and items:
        from core.edits import apply_edit
        from core.edits.units import UnitSaveEdit

        edit = UnitSaveEdit(uids, add, words=words)
        apply_edit(store, edit, source=recorded_as)
        return list(edit.units)
    with store.unit_of_work() as db:
        return add(db)


def record_saved_units(
    store: SessionStore,
    uids: Sequence[str],
    *,
    source: str,
    words: Callable[[int], str] | None = None,
) -> HistoryEntry | None:
    """Record units saved earlier, each in its own transaction, as one edit
    (``core.edits.units.UnitSaveEdit``, described by ``words(units recorded)`` when
    given) from
    ``source``: a sample saves each unit as it is made, so a stopped sample keeps what it
    saved, and its units are one undo. A unit deleted meanwhile is left out; None when
    none is left."""
    from core.edits import collect, record_edit
    from core.edits.units import UnitSaveEdit

    entry = None
    with store.unit_of_work() as db:
        edit = UnitSaveEdit(list(uids), lambda _db: [])
        before, after = edit.saved_already(db)
        if edit.target["uids"]:
            edit.words = words(len(edit.target["uids"])) if words is not None else ""
            entry = record_edit(db, edit, before, after, source=source)
    collect(entry)  # once committed: a recording() block (the window's stack) takes it
    return entry


def _checked_shape(draft: UnitDraft, rendered: Mapping[str, Sequence[RenderedTriple]]) -> Any:
    """The draft's structure, refused unless valid and rendered from these very claims."""
    shape = structure(draft)
    if not shape.valid:
        raise UnitError("the unit cannot be saved: " + "; ".join(shape.problems))
    for lang, rows in rendered.items():
        if [(t.subject_qid, t.property_pid, t.object_value) for t in rows] != [
            (c.subject_qid, c.property_pid, c.value) for c in draft.claims
        ]:
            raise UnitError(f"the {lang} triples do not match the unit: render it again")
    return shape


def _unit_attributes(
    draft: UnitDraft,
    rendered: Mapping[str, Sequence[RenderedTriple]],
    category_name: str | None,
    extra: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """Provenance, category and, per language, which labels were missing."""
    attributes = provenance(draft)
    attributes["category"] = category_name
    attributes["label_missing"] = {
        lang: {
            str(t.position): [p for p in PARTS if getattr(t, f"{p}_missing")]
            for t in rows
            if t.label_missing
        }
        for lang, rows in rendered.items()
    }
    attributes.update(extra or {})
    return attributes


def _claim_ids(db: Session, draft: UnitDraft) -> dict[str | None, int]:
    """The session's claim row of each of the draft's statements (those it holds)."""
    statement_ids = [c.statement_id for c in draft.claims if c.statement_id]
    if not statement_ids:
        return {}
    rows = db.execute(
        select(m.Claim.statement_id, m.Claim.id).where(m.Claim.statement_id.in_(statement_ids))
    ).all()
    return {statement: claim for statement, claim in rows}


def _add_unit(
    db: Session,
    draft: UnitDraft,
    rendered: Mapping[str, Sequence[RenderedTriple]],
    *,
    uid: str | None = None,
    origin: str = "built",
    category: str | None = None,
    source: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> int:
    shape = _checked_shape(draft, rendered)
    category_name = category or draft.category
    attributes = _unit_attributes(draft, rendered, category_name, extra)
    category_id = None
    if category_name:
        category_id = db.execute(
            select(m.Category.id).where(m.Category.name == category_name)
        ).scalar_one_or_none()
    claim_ids = _claim_ids(db, draft)
    unit = m.DataUnit(
        uid=uid or uuid.uuid4().hex,
        root_qid=draft.root_qid,
        category_id=category_id,
        shape=shape.shape.value if shape.shape else None,
        size=shape.size,
        tier=draft.tier,
        sub_tier=draft.sub_tier,
        origin=origin,
        source=source,
        attributes=attributes,
    )
    db.add(unit)
    db.flush()
    db.add_all(
        m.UnitTriple(
            unit_id=unit.id,
            lang=lang,
            tripleset=MAIN,
            position=t.position,
            subject=t.subject,
            predicate=t.predicate,
            object=t.object,
            subject_qid=t.subject_qid,
            property_pid=t.property_pid,
            object_value=t.object_value,
            claim_id=claim_ids.get(t.statement_id) if t.statement_id else None,
            subject_override=t.subject_override,
            predicate_override=t.predicate_override,
            object_override=t.object_override,
            label_missing=t.label_missing,
        )
        for lang, rows in rendered.items()
        for t in rows
    )
    return unit.id


def set_override(
    store: SessionStore, unit_id: int, lang: str, position: int, part: str, text: str | None
) -> None:
    """Set (or, with None, clear) a manual text for one part of one triple; commits."""
    if part not in PARTS:
        raise UnitError(f"a triple has no part {part!r}: use subject, predicate or object")
    with store.unit_of_work() as db:
        result = db.execute(
            update(m.UnitTriple)
            .where(
                m.UnitTriple.unit_id == unit_id,
                m.UnitTriple.lang == lang,
                m.UnitTriple.tripleset == MAIN,
                m.UnitTriple.position == position,
            )
            .values({f"{part}_override": text})
        )
        if cast(CursorResult[Any], result).rowcount != 1:
            raise UnitError(f"unit {unit_id} has no {lang} triple at position {position}")


def set_label_override(
    store: SessionStore,
    unit_id: int,
    lang: str,
    position: int,
    part: str,
    text: str | None,
    keep: bool = False,
    *,
    source: str = "gui",
) -> int:
    """Set (None: clear) a person's words for the entity at ``position``/``part`` wherever
    it appears in the unit in ``lang`` (subject or object of any triple; the property in any
    predicate); a literal object is only that one place. With ``keep``, the words are also
    kept for the session (:func:`keep_label`), so new units use them. A recorded edit
    (`core.edits.units.UnitOverrideEdit`, from ``source``); returns how many triple
    parts it names."""
    from core.edits import EditRefusedError, apply_edit
    from core.edits.units import UnitOverrideEdit

    if part not in PARTS:
        raise UnitError(f"a triple has no part {part!r}: use subject, predicate or object")
    edit = UnitOverrideEdit(unit_id, lang, position, part, text)
    try:
        apply_edit(store, edit, source=source)
    except EditRefusedError as error:
        raise UnitError(str(error)) from None
    entity = edit.entity
    if keep:
        if entity is None:
            raise UnitError(
                "a literal value (a date, a number, a text) cannot be kept for "
                "the session: only an entity's or a property's words can"
            )
        keep_label(store, lang, entity, text, source=source)
    return edit.changed


def reorder(store: SessionStore, unit_id: int, new_order: Sequence[int]) -> None:
    """Put the unit's triples (every language) in ``new_order`` (old positions); commits.

    Order never changes the shape (METHODS §5), so nothing else is recomputed."""
    with store.unit_of_work() as db:
        size = db.execute(
            select(m.DataUnit.size).where(m.DataUnit.id == unit_id)
        ).scalar_one_or_none()
        if size is None:
            raise UnitError(f"the session has no unit {unit_id}")
        check_permutation(new_order, size)
        main = (m.UnitTriple.unit_id == unit_id, m.UnitTriple.tripleset == MAIN)
        # (unit, lang, tripleset, position) is unique and SQLite checks it row by row,
        # so positions go through negative values first to swap without a clash.
        for new, old in enumerate(new_order):
            db.execute(
                update(m.UnitTriple)
                .where(*main, m.UnitTriple.position == old)
                .values(position=-1 - new)
            )
        db.execute(
            update(m.UnitTriple)
            .where(*main, m.UnitTriple.position < 0)
            .values(position=-1 - m.UnitTriple.position)
        )
        unit = db.get(m.DataUnit, unit_id)
        if unit is not None and unit.attributes:
            attributes = dict(unit.attributes)
            for key in ("properties", "statements"):
                if isinstance(attributes.get(key), list) and len(attributes[key]) == size:
                    attributes[key] = [attributes[key][i] for i in new_order]
            missing = attributes.get("label_missing") or {}
            attributes["label_missing"] = {
                lang: {
                    str(new): parts[str(old)]
                    for new, old in enumerate(new_order)
                    if str(old) in parts
                }
                for lang, parts in missing.items()
            }
            unit.attributes = attributes


@dataclass(frozen=True)
class StoredUnit:
    id: int
    uid: str
    root_qid: str | None
    category: str | None
    shape: str | None
    size: int
    tier: str | None
    sub_tier: str | None
    origin: str
    source: str | None
    attributes: Mapping[str, Any]
    triples: Mapping[str, tuple[RenderedTriple, ...]]  # lang -> main triples in order

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(self.triples)

    @property
    def parallel(self) -> set[str]:
        return parallel_languages(self.triples)


def load_unit(store: SessionStore, unit_id: int) -> StoredUnit:
    with store.snapshot() as db:
        unit = db.get(m.DataUnit, unit_id)
        if unit is None:
            raise UnitError(f"the session has no unit {unit_id}")
        return _stored(unit)


UNIT_PAGE = 200  # units the Units panel reads at a time


def list_units(
    store: SessionStore, *, after_id: int | None = None, limit: int | None = None
) -> list[StoredUnit]:
    """The session's units in id order; with ``after_id``/``limit`` one keyset page (the
    units with a larger id, at most ``limit``), so a panel never loads every unit."""
    from sqlalchemy.orm import selectinload

    query = (
        select(m.DataUnit)
        .order_by(m.DataUnit.id)
        .options(selectinload(m.DataUnit.triples), selectinload(m.DataUnit.category))
    )
    if after_id is not None:
        query = query.where(m.DataUnit.id > after_id)
    if limit is not None:
        query = query.limit(limit)
    with store.snapshot() as db:
        return [_stored(u) for u in db.scalars(query)]


def count_units(store: SessionStore) -> int:
    """How many units the session holds (COUNT(*), no unit loaded)."""
    from sqlalchemy import func

    with store.snapshot() as db:
        return int(db.scalar(select(func.count()).select_from(m.DataUnit)) or 0)


def _stored(unit: m.DataUnit) -> StoredUnit:
    attributes = dict(unit.attributes or {})
    missing = attributes.get("label_missing") or {}
    triples: dict[str, list[RenderedTriple]] = {}
    for row in unit.triples:
        if row.tripleset != MAIN:
            continue
        parts = missing.get(row.lang, {}).get(str(row.position))
        if parts is None:
            # Units imported from files carry one flag for the triple, not one per part.
            parts = list(PARTS) if row.label_missing else []
        triples.setdefault(row.lang, []).append(
            RenderedTriple(
                position=row.position,
                subject=row.subject,
                predicate=row.predicate,
                object=row.object,
                subject_qid=row.subject_qid or "",
                property_pid=row.property_pid or "",
                object_value=row.object_value,
                subject_missing="subject" in parts,
                predicate_missing="predicate" in parts,
                object_missing="object" in parts,
                subject_override=row.subject_override,
                predicate_override=row.predicate_override,
                object_override=row.object_override,
                claim_id=row.claim_id,
            )
        )
    statements = attributes.get("statements") or []
    result = {}
    for lang, rows in triples.items():
        rows.sort(key=lambda t: t.position)
        result[lang] = tuple(
            replace(t, statement_id=statements[t.position])
            if t.position < len(statements) and len(rows) == len(statements)
            else t
            for t in rows
        )
    return StoredUnit(
        id=unit.id,
        uid=unit.uid,
        root_qid=unit.root_qid,
        category=unit.category.name if unit.category else attributes.get("category"),
        shape=unit.shape,
        size=unit.size,
        tier=unit.tier,
        sub_tier=unit.sub_tier,
        origin=unit.origin,
        source=unit.source,
        attributes=attributes,
        triples=result,
    )


# --- the draft being built, kept in the session so a crash loses nothing ---------------


DRAFT_META_KEY = "units:draft"


def save_draft(store: SessionStore, draft: UnitDraft | None) -> None:
    store.set_meta(DRAFT_META_KEY, draft_to_json(draft) if draft is not None else "")


def load_draft(store: SessionStore) -> UnitDraft | None:
    text = store.get_meta(DRAFT_META_KEY)
    return draft_from_json(text) if text else None


DRAFT_OVERRIDES_META_KEY = "units:draft-overrides"


def save_draft_overrides(store: SessionStore, overrides: Overrides) -> None:
    """The draft's overrides ((lang, position, part) -> words), kept beside the draft."""
    import json

    rows = [[lang, pos, part, text] for (lang, pos, part), text in overrides.items()]
    store.set_meta(DRAFT_OVERRIDES_META_KEY, json.dumps(rows))


def load_draft_overrides(store: SessionStore) -> dict[tuple[str, int, str], str]:
    """The draft's overrides as saved; none when there are none or they cannot be read."""
    from core.io.bounded import stored_json

    try:
        rows = stored_json(store.get_meta(DRAFT_OVERRIDES_META_KEY), [])
        return {(lang, int(pos), part): value for lang, pos, part, value in rows}
    except (ValueError, TypeError):
        return {}
