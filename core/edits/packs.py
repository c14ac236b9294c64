"""Pack merge edits: the ratings an annotation pack brought into the session, as one edit.

The target names the pack and every rating the merge added or changed (annotator id,
``v`` or ``r`` for a verbalisation or a reference, the text's id); the state is, for
each, the rating's fields and when it was last changed, with where it came from (its
``annotation_origins`` row), or ``None`` where the annotator had not rated the text. One
undo takes the whole merge back (ratings it added deleted, ratings it changed as they
were); it is refused when any of those ratings changed since (a later rating, another
merge). Annotators the merge added stay (a name, not a rating). The merge itself is
``core.annotation.packs.merge_pack``, which writes in bulk and records this edit in the
same transaction (``core.edits.record_edit``).

Only the session's tables and the rating rule (``core.edits.rating_rule``, which says
which row is a rating) are imported here: ``core.annotation`` applies this edit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.orm import Session

from core.changes import Topic
from core.edits.base import JSON, Edit, EditConflictError
from core.edits.rating_rule import REFERENCE as RATING_REFERENCE
from core.edits.rating_rule import VERBALISATION as RATING_VERBALISATION
from core.edits.rating_rule import ratings_of
from core.edits.ratings import FIELDS, stamp
from core.store.batching import in_chunks
from core.store.models import Annotation, AnnotationOrigin, UnitReference, Verbalisation

VERBALISATION, REFERENCE = "v", "r"  # as a pack's manifest names the kinds
ORIGIN_FIELDS = ("pack_uid", "pack_file", "annotator", "pack_annotation_id", "pack_updated_at")
Key = tuple[int, str, int]  # annotator id, kind letter, text id


class PackMergeEdit(Edit):
    """The ratings one merge of a pack added or changed (see the module doc)."""

    kind = "pack merge"
    label = "pack merge"
    topics = frozenset({Topic.ANNOTATIONS})

    def __init__(self, pack_uid: str, pack_file: str, annotator: str, ratings: list[Key]) -> None:
        super().__init__(
            {
                "pack_uid": pack_uid,
                "pack_file": pack_file,
                "annotator": annotator,
                "ratings": [list(key) for key in ratings],
            },
            None,
        )

    def _keys(self) -> list[Key]:
        return [(int(a), str(k), int(i)) for a, k, i in self.target["ratings"]]

    def _rows(self, db: Session) -> dict[Key, Annotation]:
        """Each key's rating row (``core.edits.rating_rule``: the first by id)."""
        keys = set(self._keys())
        found = ratings_of(db, {a for a, _k, _i in keys})
        letter = {RATING_VERBALISATION: VERBALISATION, RATING_REFERENCE: REFERENCE}
        rows = {
            (key.annotator_id, letter[key.kind], key.item_id): row for key, row in found.items()
        }
        return {key: row for key, row in rows.items() if key in keys}

    def _origins(self, db: Session, ids: list[int]) -> dict[int, AnnotationOrigin]:
        origins: dict[int, AnnotationOrigin] = {}
        for chunk in in_chunks(ids):
            for origin in db.scalars(
                select(AnnotationOrigin).where(AnnotationOrigin.annotation_id.in_(chunk))
            ):
                origins[origin.annotation_id] = origin
        return origins

    def read(self, db: Session) -> JSON:
        rows = self._rows(db)
        origins = self._origins(db, [row.id for row in rows.values()])
        state: list[JSON] = []
        for key in self._keys():
            row = rows.get(key)
            if row is None:
                state.append(None)
                continue
            rating: dict[str, Any] = {name: getattr(row, name) for name in FIELDS}
            rating["updated_at"] = stamp(row.updated_at) if row.updated_at is not None else None
            origin = origins.get(row.id)
            rating["origin"] = (
                None if origin is None else {n: getattr(origin, n) for n in ORIGIN_FIELDS}
            )
            state.append(rating)
        return state

    def write(self, db: Session, state: JSON) -> None:
        # In bulk, as the merge writes (a pack of 13,000 ratings is a few statements):
        # ratings deleted (their origins go with them, ON DELETE CASCADE), added with
        # their origins, or set back with their origins.
        rows = {key: row.id for key, row in self._rows(db).items()}
        origins = set(self._origins(db, list(rows.values())))
        deletes: list[int] = []
        inserts: list[dict[str, Any]] = []
        inserted_origins: list[JSON] = []
        updates: list[dict[str, Any]] = []
        origin_updates: list[dict[str, Any]] = []
        origin_inserts: list[dict[str, Any]] = []
        origin_deletes: list[int] = []
        for key, wanted in zip(self._keys(), state, strict=True):
            row_id = rows.get(key)
            if wanted is None:
                if row_id is not None:
                    deletes.append(row_id)
                continue
            annotator_id, kind, item_id = key
            when = datetime.fromisoformat(wanted["updated_at"]) if wanted["updated_at"] else None
            values = {name: wanted.get(name) for name in FIELDS}
            if row_id is None:
                inserts.append(
                    {
                        "annotator_id": annotator_id,
                        "is_golden": False,
                        "verbalisation_id": item_id if kind == VERBALISATION else None,
                        "reference_id": item_id if kind == REFERENCE else None,
                        "created_at": when,
                        "updated_at": when,
                        **values,
                    }
                )
                inserted_origins.append(wanted["origin"])
                continue
            updates.append({"id": row_id, "updated_at": when, **values})
            origin = wanted["origin"]
            if origin is None:
                if row_id in origins:
                    origin_deletes.append(row_id)
            elif row_id in origins:
                origin_updates.append({"annotation_id": row_id, **origin})
            else:
                origin_inserts.append({"annotation_id": row_id, **origin})
        self._check_texts(db, inserts)
        for chunk in in_chunks(deletes):
            db.execute(
                delete(Annotation).where(Annotation.id.in_(chunk)),
                execution_options={"synchronize_session": False},
            )
        for chunk in in_chunks(origin_deletes):
            db.execute(
                delete(AnnotationOrigin).where(AnnotationOrigin.annotation_id.in_(chunk)),
                execution_options={"synchronize_session": False},
            )
        if updates:
            db.execute(update(Annotation), updates)
        if origin_updates:
            db.execute(update(AnnotationOrigin), origin_updates)
        if inserts:
            new_ids = db.scalars(
                insert(Annotation).returning(Annotation.id, sort_by_parameter_order=True),
                inserts,
            ).all()
            origin_inserts += [
                {"annotation_id": new_id, **origin}
                for new_id, origin in zip(new_ids, inserted_origins, strict=True)
                if origin is not None
            ]
        if origin_inserts:
            db.execute(insert(AnnotationOrigin), origin_inserts)
        db.expire_all()  # the rows read above are stale now
        db.flush()

    @staticmethod
    def _check_texts(db: Session, inserts: list[dict[str, Any]]) -> None:
        """Refuse to rate again a text deleted since (read in chunks, not one by one)."""
        for kind, table, column in (
            (VERBALISATION, Verbalisation, "verbalisation_id"),
            (REFERENCE, UnitReference, "reference_id"),
        ):
            wanted = sorted({row[column] for row in inserts if row[column] is not None})
            found: set[int] = set()
            for chunk in in_chunks(wanted):
                found.update(db.scalars(select(table.id).where(table.id.in_(chunk))))
            gone = [item for item in wanted if item not in found]
            if gone:
                raise EditConflictError(
                    f"Cannot merge the rating of {kind} {gone[0]} again: the text was deleted "
                    "since; nothing was written."
                )

    def describe(self, before: JSON = None) -> str:
        count = len(self.target["ratings"])
        added = sum(1 for state in before or [] if state is None)
        changed = f", {count - added} changed" if before is not None and count - added else ""
        return (
            f"the merge of {self.target['pack_file']} ({self.target['annotator']}): "
            f"{count} rating{'s' if count != 1 else ''}"
            + (f" ({added} added{changed})" if before is not None else "")
        )
