"""The rating rule: one rating per annotator and item, the first by id.

An annotator's rating of a text (a verbalisation or a reference) is one row of
``annotations`` with ``is_golden`` false; golden answers are answer keys, not ratings, and
follow their own rule (``core.edits.ratings.GoldenEdit``). Saving again replaces that row
(``core.annotation.ratings.save_rating``); merging a pack compares the pack's rating with
it and adds one only where there is none (``core.annotation.packs.merge``).

Since schema revision 0008 the session holds the rule itself: a unique index per item
column refuses a second row (``core.store.models.Annotation``). A session from before
could hold several rows for one annotator and item; the upgrade keeps the first by id in
``annotations`` and moves the others, whole, to ``ratings_superseded``. "The first by id"
is therefore the rating wherever more than one row could still be read (a pack from
another program, a file upgraded by hand): every lookup here orders by id and keeps the
first.

Only the session's tables are imported: the rating edits (``core.edits.ratings``,
``core.edits.packs``) sit below ``core.annotation``, which validates a rating and then
applies them, and both look ratings up here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple, TypeVar

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from core.store.batching import in_chunks
from core.store.models import Annotation

# The item kinds as core.annotation.types names them.
VERBALISATION, REFERENCE = "verbalisation", "reference"
R = TypeVar("R")
K = TypeVar("K")


class RatingKey(NamedTuple):
    """What a rating is one of: an annotator's rating of one text."""

    annotator_id: int
    kind: str  # VERBALISATION | REFERENCE
    item_id: int


def key_of(row: Any) -> RatingKey:
    """The key of an ``annotations`` row (or a row of its columns)."""
    if row.verbalisation_id is not None:
        return RatingKey(int(row.annotator_id), VERBALISATION, int(row.verbalisation_id))
    return RatingKey(int(row.annotator_id), REFERENCE, int(row.reference_id))


def item_column(kind: str) -> Any:
    """The column of ``annotations`` that names an item of ``kind``."""
    return Annotation.verbalisation_id if kind == VERBALISATION else Annotation.reference_id


def item_columns(kind: str, item_id: int) -> dict[str, int | None]:
    """The two item columns of a new row for an item of ``kind``."""
    return {
        "verbalisation_id": item_id if kind == VERBALISATION else None,
        "reference_id": item_id if kind == REFERENCE else None,
    }


def rating_query(annotator_id: int, kind: str, item_id: int, *columns: Any) -> Select[Any]:
    """The rows that are ``annotator_id``'s rating of the item, the rating first."""
    wanted = columns or (Annotation,)
    return (
        select(*wanted)
        .where(
            Annotation.annotator_id == annotator_id,
            item_column(kind) == item_id,
            Annotation.is_golden.is_(False),
        )
        .order_by(Annotation.id)
    )


def the_rating(db: Session, annotator_id: int, kind: str, item_id: int) -> Annotation | None:
    """``annotator_id``'s rating of the item (the first row by id), or None."""
    return db.scalar(rating_query(annotator_id, kind, item_id).limit(1))


def first_ratings(rows: Iterable[R], key: Callable[[R], K]) -> dict[K, R]:
    """The rating of each key among ``rows``, read in id order: the first row of a key
    is its rating, a later one is not."""
    found: dict[K, R] = {}
    for row in rows:
        found.setdefault(key(row), row)
    return found


def ratings_of(db: Session, annotator_ids: Iterable[int], *columns: Any) -> dict[RatingKey, Any]:
    """Every rating of these annotators by key, read in chunks of ids: whole rows, or the
    ``columns`` given (which must include the annotator and both item columns)."""
    wanted = columns or (Annotation,)

    def rows() -> Iterator[Any]:
        for chunk in in_chunks(sorted(set(annotator_ids))):
            query = (
                select(*wanted)
                .where(Annotation.annotator_id.in_(chunk), Annotation.is_golden.is_(False))
                .order_by(Annotation.id)
            )
            yield from (db.scalars(query) if not columns else db.execute(query))

    return first_ratings(rows(), key_of)
