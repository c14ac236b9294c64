"""Annotators: the people (or anonymous imported workers) who rate items."""

from __future__ import annotations

from sqlalchemy import func, select

from core.annotation.types import (
    AnnotationError,
    AnnotatorInfo,
    clean_annotator_name,
    natural_key,
)
from core.store import SessionStore
from core.store.models import Annotation, Annotator


def list_annotators(store: SessionStore) -> list[AnnotatorInfo]:
    """Every annotator, named ones first, with how many ratings each made."""
    with store.snapshot() as db:
        counts: dict[tuple[int, bool], int] = {
            (a, bool(g)): n
            for a, g, n in db.execute(
                select(Annotation.annotator_id, Annotation.is_golden, func.count()).group_by(
                    Annotation.annotator_id, Annotation.is_golden
                )
            )
        }
        rows = db.execute(select(Annotator.id, Annotator.name, Annotator.is_anonymous)).all()
    infos = [
        AnnotatorInfo(i, name, bool(anon), counts.get((i, False), 0), counts.get((i, True), 0))
        for i, name, anon in rows
    ]
    return sorted(infos, key=lambda a: (a.is_anonymous, natural_key(a.name)))


def add_annotator(store: SessionStore, name: str, *, source: str = "gui") -> AnnotatorInfo:
    """A new named annotator (a recorded edit from ``source``); refuses an empty,
    overlong or already used name."""
    from core.edits import apply_edit
    from core.edits.ratings import AnnotatorEdit

    clean = clean_annotator_name(name)
    with store.snapshot() as db:
        if db.scalar(select(Annotator.id).where(Annotator.name == clean)) is not None:
            raise AnnotationError(
                f"There is already an annotator named {clean!r} in this "
                "session; choose them instead of adding a new one."
            )
    apply_edit(store, AnnotatorEdit(clean), source=source)
    with store.snapshot() as db:
        row_id = db.scalar(select(Annotator.id).where(Annotator.name == clean))
    if row_id is None:  # another program removed it between the two transactions
        raise AnnotationError(f"The annotator {clean!r} was removed by another change.")
    return AnnotatorInfo(int(row_id), clean, False)


def find_annotator(store: SessionStore, name_or_id: str | int) -> AnnotatorInfo:
    """An annotator by id or exact name; a clear error when there is none."""
    for info in list_annotators(store):
        if info.id == name_or_id or info.name == name_or_id:
            return info
    raise AnnotationError(
        f"There is no annotator {name_or_id!r} in this session "
        "(taillens annotators --session S --add NAME adds one)."
    )
