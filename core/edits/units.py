"""Unit edits: a person's words for a part of a stored unit's triples (an override).

The state is the overrides of the unit's main triples in one language, by position
(subject, predicate, object; ``None`` where the generated label stands). Giving words
for an entity names it so wherever it appears in the unit (as subject or object, or as
the property of any predicate); a literal object is that one place only. Undo puts the
overrides back as they were; the words kept for the session's new units (``keep``) are
not part of this edit.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.changes import Topic
from core.edits.base import JSON, Edit, EditConflictError, EditRefusedError, canonical
from core.edits.drafts import DraftEdit
from core.labels import plural
from core.store import models as m
from core.store.batching import in_chunks
from core.units.builder.draft import claim_entity

PARTS = ("subject", "predicate", "object")
MAIN = "main"  # the unit's own triples (not a modified tripleset)


class UnitOverrideEdit(Edit):
    """Set (``text``) or clear (``None``) the words for one part of a stored unit's
    triple, wherever its entity appears in the unit in ``lang``."""

    kind = "unit override"
    label = "unit words"
    topics = frozenset({Topic.UNITS})

    def __init__(self, unit_id: int, lang: str, position: int, part: str, text: str | None):
        if part not in PARTS:
            raise EditRefusedError(
                f"a triple has no part {part!r}: use subject, predicate or object"
            )
        super().__init__({"unit_id": unit_id, "lang": lang}, None)
        self.position, self.part, self.text = position, part, text
        self.changed = 0  # triple parts the edit names (counted when it plans)
        self.entity: str | None = None  # the entity those parts name (None: a literal)

    def _rows(self, db: Session) -> list[m.UnitTriple]:
        return list(
            db.execute(
                select(m.UnitTriple)
                .where(
                    m.UnitTriple.unit_id == int(self.target["unit_id"]),
                    m.UnitTriple.lang == self.target["lang"],
                    m.UnitTriple.tripleset == MAIN,
                )
                .order_by(m.UnitTriple.position)
            )
            .scalars()
            .all()
        )

    def read(self, db: Session) -> JSON:
        return [
            [r.position, r.subject_override, r.predicate_override, r.object_override]
            for r in self._rows(db)
        ]

    def plan(self, db: Session, before: JSON) -> JSON:
        rows = self._rows(db)
        by_position = {row.position: row for row in rows}
        if self.position not in by_position:
            raise EditRefusedError(
                f"unit {self.target['unit_id']} has no {self.target['lang']} triple at "
                f"position {self.position}"
            )
        entity = claim_entity(by_position[self.position], self.part)
        places = {(self.position, self.part)}
        if entity is not None:
            kinds = ("predicate",) if self.part == "predicate" else ("subject", "object")
            places = {(r.position, k) for r in rows for k in kinds if claim_entity(r, k) == entity}
        self.entity, self.changed = entity, len(places)
        after = [list(row) for row in before]
        for row in after:
            for index, name in enumerate(PARTS, start=1):
                if (row[0], name) in places:
                    row[index] = self.text
        return after

    def write(self, db: Session, state: JSON) -> None:
        wanted = {row[0]: row[1:] for row in state}
        for row in self._rows(db):
            if row.position in wanted:
                row.subject_override, row.predicate_override, row.object_override = wanted[
                    row.position
                ]
        db.flush()

    def describe(self, before: JSON = None) -> str:
        unit, lang = self.target["unit_id"], self.target["lang"]
        part = getattr(self, "part", "part")
        text = getattr(self, "text", None)
        number = getattr(self, "position", 0) + 1
        words = f"{text!r}" if text is not None else "the generated label again"
        return f"the words for the {part} of triple {number} of unit {unit} ({lang}): {words}"


KEPT_LABELS_META_KEY = "units:kept-labels"  # as core.units.builder.render keeps them


class KeptLabelEdit(Edit):
    """Keep (``text``) or forget (``None``) a person's words for one entity in one
    language for the session: new units use them. The state is those words."""

    kind = "kept words"
    label = "kept words"
    topics = frozenset({Topic.UNITS})

    def __init__(self, lang: str, entity: str, text: str | None) -> None:
        super().__init__({"lang": lang, "entity": entity}, text)

    @staticmethod
    def _all(db: Session) -> dict[str, dict[str, str]]:
        import json

        raw = db.execute(
            select(m.SessionMeta.value).where(m.SessionMeta.key == KEPT_LABELS_META_KEY)
        ).scalar_one_or_none()
        try:
            data = json.loads(raw or "{}")
        except ValueError:
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            str(lang): {str(q): str(t) for q, t in by.items()}
            for lang, by in data.items()
            if isinstance(by, dict)
        }

    def read(self, db: Session) -> JSON:
        return self._all(db).get(self.target["lang"], {}).get(self.target["entity"])

    def write(self, db: Session, state: JSON) -> None:
        import json

        kept = self._all(db)
        lang, entity = self.target["lang"], self.target["entity"]
        if state is None:
            kept.get(lang, {}).pop(entity, None)
        else:
            kept.setdefault(lang, {})[entity] = state
        value = json.dumps(
            {k: by for k, by in kept.items() if by}, ensure_ascii=False, sort_keys=True
        )
        db.merge(m.SessionMeta(key=KEPT_LABELS_META_KEY, value=value))
        db.flush()

    def describe(self, before: JSON = None) -> str:
        lang, entity = self.target["lang"], self.target["entity"]
        if self.after is None:
            return f"the kept words for {entity} ({lang}) forgotten"
        return f"{self.after!r} kept for {entity} ({lang}) in new units"


# The columns of a unit and of its triples that a saved unit's state holds (its id is in
# the state too: redo puts the unit back under the same id, so edits made to it later,
# which name it by id, find it again).
UNIT_COLUMNS = (
    "id",
    "root_qid",
    "category_id",
    "shape",
    "size",
    "tier",
    "sub_tier",
    "origin",
    "source",
    "attributes",
    "notes",
)
TRIPLE_COLUMNS = (
    "lang",
    "tripleset",
    "position",
    "subject",
    "predicate",
    "object",
    "subject_qid",
    "property_pid",
    "object_value",
    "claim_id",
    "subject_override",
    "predicate_override",
    "object_override",
    "label_missing",
)
DRAFT_TARGET = "units"  # the target's "draft": the save also cleared the Units draft


class UnitSaveEdit(Edit):
    """New units saved: one from the Units panel's Save, every unit a search saved in
    one transaction, or every unit a sample saved (each in its own transaction, recorded
    when the sample ends: :meth:`saved_already`). The state is each unit (by uid) with
    its triples (``None``: no unit with that uid) and, when the save cleared the draft it
    was built from, that draft (``core.edits.drafts.DraftEdit``'s state), so undo takes
    the units out and puts the draft back in the builder, and redo saves them again under
    the same ids.

    Undo is refused while anything refers to one of the units (a verbalisation or a
    reference: ratings and scores hang on those) or its triples were changed since; redo
    is refused when another unit has taken one of their ids. The units are written by
    the caller's ``add`` (``core.units.builder.saved``, which checks and renders them)
    inside the edit's transaction; a rebuilt edit writes the state."""

    kind = "unit"
    label = "units saved"
    topics = frozenset({Topic.UNITS})

    def __init__(
        self,
        uids: list[str],
        add: Callable[[Session], list[int]],
        *,
        clears_draft: bool = False,
        words: str = "",
    ) -> None:
        target: dict[str, JSON] = {"uids": list(uids)}
        if clears_draft:
            target["draft"] = DRAFT_TARGET
        super().__init__(target, None)
        self._add = add
        self.words = words
        self.units: list[int] = []  # the ids the units got (set when it is applied)

    def _units(self, db: Session) -> dict[str, m.DataUnit]:
        uids = list(self.target["uids"])
        found: dict[str, m.DataUnit] = {}
        for chunk in in_chunks(uids):
            for unit in db.scalars(select(m.DataUnit).where(m.DataUnit.uid.in_(chunk))):
                found[unit.uid] = unit
        return found

    @staticmethod
    def _draft() -> DraftEdit:
        return DraftEdit("", "[]")

    def read(self, db: Session) -> JSON:
        units = self._units(db)
        triples: dict[int, list[JSON]] = {}
        for chunk in in_chunks([u.id for u in units.values()]):
            for t in db.scalars(
                select(m.UnitTriple)
                .where(m.UnitTriple.unit_id.in_(chunk))
                .order_by(m.UnitTriple.lang, m.UnitTriple.tripleset, m.UnitTriple.position)
            ):
                triples.setdefault(t.unit_id, []).append(
                    [getattr(t, name) for name in TRIPLE_COLUMNS]
                )
        state: dict[str, JSON] = {
            "units": [
                None
                if (unit := units.get(uid)) is None
                else {
                    **{name: getattr(unit, name) for name in UNIT_COLUMNS},
                    "triples": triples.get(unit.id, []),
                }
                for uid in self.target["uids"]
            ]
        }
        if "draft" in self.target:
            state["draft"] = self._draft().read(db)
        return state

    def apply(self, db: Session) -> tuple[JSON, JSON]:
        before = canonical(self.read(db))
        pairs = zip(self.target["uids"], before["units"], strict=True)
        taken = [uid for uid, unit in pairs if unit is not None]
        if taken:
            raise EditRefusedError(f"the session has a unit {taken[0]} already")
        self.units = self._add(db)
        if "draft" in self.target:
            self._draft().write(db, self._draft().after)
        self.after = canonical(self.read(db))
        return before, self.after

    def saved_already(self, db: Session) -> tuple[JSON, JSON]:
        """(before, after) of units written earlier in transactions of their own (a
        sample saves each unit as it is made, so a stopped one keeps what it saved): no
        unit before, each as the session holds it now after; the caller records it
        (``core.edits.record_edit``). A unit deleted since is left out of the edit.
        Nothing is written."""
        found = self._units(db)
        self.target = canonical({"uids": [uid for uid in self.target["uids"] if uid in found]})
        self.after = canonical(self.read(db))
        self.units = [int(unit["id"]) for unit in self.after["units"] if unit is not None]
        before: dict[str, JSON] = {"units": [None] * len(self.target["uids"])}
        return canonical(before), self.after

    def revert(self, db: Session, before: JSON, description: str) -> None:
        ids = [unit.id for unit in self._units(db).values()]
        uses = []
        for what, table in (("verbalisation", m.Verbalisation), ("reference", m.UnitReference)):
            count = sum(
                int(
                    db.scalar(
                        select(func.count()).select_from(table).where(table.unit_id.in_(chunk))
                    )
                    or 0
                )
                for chunk in in_chunks(ids)
            )
            if count:
                uses.append(plural(count, what))
        if uses:
            which = "the unit has" if len(ids) == 1 else "its units have"
            raise EditConflictError(
                f"Cannot undo {description}: {which} {' and '.join(uses)} since "
                "(delete them first); nothing was reverted."
            )
        super().revert(db, before, description)

    def write(self, db: Session, state: JSON) -> None:
        units = self._units(db)
        for uid, saved in zip(self.target["uids"], state["units"], strict=True):
            unit = units.get(uid)
            if saved is None:
                if unit is not None:
                    db.delete(unit)  # its triples go with it (ON DELETE CASCADE)
                continue
            if unit is not None:
                continue
            if db.get(m.DataUnit, saved["id"]) is not None:
                raise EditConflictError(
                    f"Cannot save unit {saved['id']} again: another unit has its id since; "
                    "nothing was written."
                )
            category = saved["category_id"]
            if category is not None and db.get(m.Category, category) is None:
                raise EditConflictError(
                    f"Cannot save unit {saved['id']} again: its category was deleted since; "
                    "nothing was written."
                )
            db.add(m.DataUnit(uid=uid, **{name: saved[name] for name in UNIT_COLUMNS}))
            db.flush()
            db.add_all(
                m.UnitTriple(unit_id=saved["id"], **dict(zip(TRIPLE_COLUMNS, row, strict=True)))
                for row in saved["triples"]
            )
        if "draft" in self.target and "draft" in state:
            self._draft().write(db, state["draft"])
        db.flush()

    def unit_id(self) -> int | None:
        """The unit, when the edit saved one (the history's unit filter)."""
        if len(self.units) == 1:
            return self.units[0]
        saved = self.after.get("units") if isinstance(self.after, dict) else None
        if isinstance(saved, list) and len(saved) == 1 and isinstance(saved[0], dict):
            return int(saved[0]["id"])
        return None

    def describe(self, before: JSON = None) -> str:
        words = getattr(self, "words", "")
        saved = self.after.get("units") if isinstance(self.after, dict) else None
        saved = [u for u in saved or [] if isinstance(u, dict)]
        if words:
            return words
        if len(saved) == 1:
            root = saved[0].get("root_qid") or "no root"
            return f"unit {saved[0]['id']} saved (rooted at {root})"
        if saved:
            first, last = min(u["id"] for u in saved), max(u["id"] for u in saved)
            return f"{plural(len(saved), 'unit')} saved ({first}–{last})"
        return f"{plural(len(self.target['uids']), 'unit')} saved"
