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

Only the session's tables are imported here: ``core.annotation`` applies this edit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import flag_modified

from core.changes import Topic
from core.edits.base import JSON, Edit, EditConflictError
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
        """Each key's rating row (the first, as a rating saved in the app updates it)."""
        keys = set(self._keys())
        found: dict[Key, Annotation] = {}
        for chunk in in_chunks(sorted({a for a, _k, _i in keys})):
            for row in db.scalars(
                select(Annotation)
                .where(Annotation.annotator_id.in_(chunk), Annotation.is_golden.is_(False))
                .order_by(Annotation.id)
            ):
                kind = VERBALISATION if row.verbalisation_id is not None else REFERENCE
                item = row.verbalisation_id if kind == VERBALISATION else row.reference_id
                key = (row.annotator_id, kind, int(item or 0))
                if key in keys:
                    found.setdefault(key, row)
        return found

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
        rows = self._rows(db)
        origins = self._origins(db, [row.id for row in rows.values()])
        for key, wanted in zip(self._keys(), state, strict=True):
            row = rows.get(key)
            if wanted is None:
                if row is not None:
                    db.delete(row)  # its origin goes with it (ON DELETE CASCADE)
                continue
            annotator_id, kind, item_id = key
            when = datetime.fromisoformat(wanted["updated_at"]) if wanted["updated_at"] else None
            values = {name: wanted.get(name) for name in FIELDS}
            if row is None:
                table = Verbalisation if kind == VERBALISATION else UnitReference
                if db.get(table, item_id) is None:
                    raise EditConflictError(
                        f"Cannot merge the rating of {kind} {item_id} again: the text was "
                        "deleted since; nothing was written."
                    )
                row = Annotation(
                    annotator_id=annotator_id,
                    is_golden=False,
                    verbalisation_id=item_id if kind == VERBALISATION else None,
                    reference_id=item_id if kind == REFERENCE else None,
                    created_at=when,
                    **values,
                )
                db.add(row)
                db.flush()
            else:
                for name, value in values.items():
                    setattr(row, name, value)
            # Set and flagged: the column's onupdate would restamp it otherwise.
            row.updated_at = when  # type: ignore[assignment]
            flag_modified(row, "updated_at")
            origin = origins.get(row.id)
            if wanted["origin"] is None:
                if origin is not None:
                    db.delete(origin)
            elif origin is None:
                db.add(AnnotationOrigin(annotation_id=row.id, **wanted["origin"]))
            else:
                for name in ORIGIN_FIELDS:
                    setattr(origin, name, wanted["origin"][name])
        db.flush()

    def describe(self, before: JSON = None) -> str:
        count = len(self.target["ratings"])
        added = sum(1 for state in before or [] if state is None)
        changed = f", {count - added} changed" if before is not None and count - added else ""
        return (
            f"the merge of {self.target['pack_file']} ({self.target['annotator']}): "
            f"{count} rating{'s' if count != 1 else ''}"
            + (f" ({added} added{changed})" if before is not None else "")
        )
