"""Human annotation (METHODS §9): annotators, queues, ratings, golden items, aggregates.

Every change is its own committed transaction (``store.unit_of_work()``), so a killed
process loses nothing already saved. The Annotate panel keeps no state the session does
not hold, apart from an :class:`AnnotationQueue`'s undo stack.

Storage (no schema of its own; the ``annotations`` table of revision 0001):

* one rating per annotator and item: saving again replaces the annotator's rating;
* ``adequacy`` 0 Yes / 1 No / 2 Not sure (as in WDV); ``blame`` the parts to blame,
  ``"+"``-joined in the order of :data:`BLAME_PARTS` (``"subject+object"`` is a
  combination; ``"combination"`` alone when the annotator did not say which), with
  ``blame_other`` holding the free text of ``other``;
* ``checks``: ``{name: bool}`` for the three TailNLG validation checks (:data:`CHECKS`);
* ``error_taxonomy``: ``{"accuracy": [...], "fluency": [...]}`` (:data:`ERROR_TAXONOMY`),
  meant for translated (silver) references;
* **golden items**: an annotation with ``is_golden = True`` holds the known answer of an
  item, set by an expert annotator (:func:`set_golden_answer`). Golden answers are answer
  keys, not ratings: they never count in aggregates or agreement; every other annotator's
  rating of such an item is checked against them (:func:`golden_accuracy`).

A correction (``corrected_text``) may be promoted to a gold reference of the item's unit
(:func:`promote_correction`): ``unit_references`` with ``quality = 'gold'``,
``created_by`` = the annotator, ``source_verbalisation_id`` = the corrected text, and a
provenance line saying who, when and from which text.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, NamedTuple

import numpy as np

from core.errors import UserFacingError
from core.groups import (
    UNKNOWN,
    category_name,
    matches_tier,
    model_name,
    order_key,
    subtier_group,
    tier_group,
)

FLUENCY_MIN, FLUENCY_MAX = 0, 5
YES, NO, NOT_SURE = 0, 1, 2
ADEQUACY_LABELS = {YES: "Yes", NO: "No", NOT_SURE: "Not sure"}
ADEQUACY_KEYS = {"y": YES, "n": NO, "s": NOT_SURE}  # the panel's keyboard
BLAME_PARTS = ("text", "subject", "predicate", "object", "other")
COMBINATION = "combination"
CHECKS = ("fluent_natural", "all_and_only_information", "no_spelling_grammar_errors")
CHECK_LABELS = {
    "fluent_natural": "fluent and natural",
    "all_and_only_information": "all and only the information",
    "no_spelling_grammar_errors": "no spelling or grammar errors",
}
ERROR_TAXONOMY: dict[str, tuple[str, ...]] = {
    "accuracy": ("terminology", "mistranslation", "omission", "addition", "untranslated"),
    "fluency": ("grammar", "style", "spelling", "typography", "unintelligible"),
}
VERBALISATION, REFERENCE = "verbalisation", "reference"
MAX_NAME_LENGTH = 100
GROUP_DIMENSIONS = ("category", "tier", "subtier", "model", "lang")


class AnnotationError(UserFacingError):
    """A rating, annotator or queue request that cannot be honoured; the message says why."""


class ItemRef(NamedTuple):
    """What is rated: a verbalisation or a reference text, by id."""

    kind: str  # VERBALISATION | REFERENCE
    id: int


# -- annotators -------------------------------------------------------------------------


@dataclass(frozen=True)
class AnnotatorInfo:
    id: int
    name: str
    is_anonymous: bool
    ratings: int = 0  # ratings made (golden answers not counted)
    golden_answers: int = 0


def list_annotators(store: Any) -> list[AnnotatorInfo]:
    """Every annotator, named ones first, with how many ratings each made."""
    from sqlalchemy import func, select

    from core.store.models import Annotation, Annotator

    with store.unit_of_work() as db:
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
    return sorted(infos, key=lambda a: (a.is_anonymous, _natural(a.name)))


def _natural(name: str) -> tuple[Any, ...]:
    # wdv-worker-2 before wdv-worker-10
    import re

    return tuple(int(p) if p.isdigit() else p.casefold() for p in re.split(r"(\d+)", name))


def add_annotator(store: Any, name: str) -> AnnotatorInfo:
    """A new named annotator; refuses an empty, overlong or already used name."""
    from sqlalchemy import select

    from core.store.models import Annotator

    clean = " ".join(str(name).split())
    if not clean:
        raise AnnotationError("An annotator needs a name.")
    if len(clean) > MAX_NAME_LENGTH:
        raise AnnotationError(
            f"An annotator's name may have at most {MAX_NAME_LENGTH} "
            f"characters ({len(clean)} given)."
        )
    with store.unit_of_work() as db:
        if db.scalar(select(Annotator.id).where(Annotator.name == clean)) is not None:
            raise AnnotationError(
                f"There is already an annotator named {clean!r} in this "
                "session; choose them instead of adding a new one."
            )
        row = Annotator(name=clean, is_anonymous=False)
        db.add(row)
        db.flush()
        return AnnotatorInfo(row.id, row.name, False)


def find_annotator(store: Any, name_or_id: str | int) -> AnnotatorInfo:
    """An annotator by id or exact name; a clear error when there is none."""
    for info in list_annotators(store):
        if info.id == name_or_id or info.name == name_or_id:
            return info
    raise AnnotationError(
        f"There is no annotator {name_or_id!r} in this session "
        "(taillens annotators --session S --add NAME adds one)."
    )


# -- ratings ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Rating:
    """What an annotator says about an item; every field optional, at least one given.

    ``blame`` is one of :data:`BLAME_PARTS`, ``"combination"``, or several parts (a
    combination); it is only asked for when adequacy is No or Not sure.
    """

    fluency: int | None = None
    adequacy: int | None = None
    blame: str | Sequence[str] | None = None
    blame_other: str | None = None
    checks: Mapping[str, bool] | None = None
    error_taxonomy: Mapping[str, Sequence[str]] | None = None
    corrected_text: str | None = None


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def normalise_blame(blame: str | Sequence[str] | None) -> str | None:
    """The stored form of a blame: parts in :data:`BLAME_PARTS` order, ``"+"``-joined."""
    if blame is None:
        return None
    parts = blame.split("+") if isinstance(blame, str) else list(blame)
    parts = [str(p).strip().lower() for p in parts if str(p).strip()]
    if not parts:
        return None
    if parts == [COMBINATION]:
        return COMBINATION
    wrong = sorted(set(parts) - set(BLAME_PARTS))
    if wrong:
        raise AnnotationError(
            f"Unknown blame {', '.join(map(repr, wrong))}: choose from "
            f"{', '.join(BLAME_PARTS)}, or {COMBINATION!r} (several parts make a combination)."
        )
    return "+".join(p for p in BLAME_PARTS if p in parts)


def validate_rating(rating: Rating) -> dict[str, Any]:
    """The column values of a rating, or an :class:`AnnotationError` saying what is wrong."""
    fluency, adequacy = rating.fluency, rating.adequacy
    if fluency is not None and (
        not _is_int(fluency) or not FLUENCY_MIN <= int(fluency) <= FLUENCY_MAX
    ):
        raise AnnotationError(
            f"Fluency must be a whole number from {FLUENCY_MIN} to {FLUENCY_MAX}, not {fluency!r}."
        )
    if adequacy is not None and (not _is_int(adequacy) or int(adequacy) not in ADEQUACY_LABELS):
        raise AnnotationError(
            f"Adequacy must be 0 (Yes), 1 (No) or 2 (Not sure), not {adequacy!r}."
        )
    blame = normalise_blame(rating.blame)
    other = (rating.blame_other or "").strip() or None
    if blame is not None and adequacy not in (NO, NOT_SURE):
        raise AnnotationError("Blame is only recorded when adequacy is No or Not sure.")
    if blame is not None and "other" in blame.split("+") and other is None:
        raise AnnotationError("Blame 'other' needs a few words saying what is wrong.")
    if other is not None and (blame is None or "other" not in blame.split("+")):
        raise AnnotationError("Free text for the blame is only kept with blame 'other'.")
    checks = None
    if rating.checks:
        wrong = sorted(set(rating.checks) - set(CHECKS))
        if wrong:
            raise AnnotationError(
                f"Unknown check(s) {', '.join(map(repr, wrong))}: the "
                f"checks are {', '.join(CHECKS)}."
            )
        if not all(isinstance(v, bool) for v in rating.checks.values()):
            raise AnnotationError("Each check is true or false.")
        checks = {name: rating.checks[name] for name in CHECKS if name in rating.checks}
    taxonomy: dict[str, list[str]] | None = None
    if rating.error_taxonomy:
        taxonomy = {}
        for family, errors in rating.error_taxonomy.items():
            if family not in ERROR_TAXONOMY:
                raise AnnotationError(
                    f"Unknown error family {family!r}: choose accuracy or fluency."
                )
            listed = [errors] if isinstance(errors, str) else list(errors)
            wrong = sorted(set(listed) - set(ERROR_TAXONOMY[family]))
            if wrong:
                raise AnnotationError(
                    f"Unknown {family} error(s) {', '.join(map(repr, wrong))}: choose from "
                    f"{', '.join(ERROR_TAXONOMY[family])}."
                )
            if listed:
                taxonomy[family] = [e for e in ERROR_TAXONOMY[family] if e in listed]
        taxonomy = taxonomy or None
    corrected = rating.corrected_text.strip() if rating.corrected_text else None
    values = {
        "fluency": None if fluency is None else int(fluency),
        "adequacy": None if adequacy is None else int(adequacy),
        "blame": blame,
        "blame_other": other,
        "checks": checks,
        "error_taxonomy": taxonomy,
        "corrected_text": corrected or None,
    }
    if all(v is None for v in values.values()):
        raise AnnotationError(
            "Nothing to save: give a fluency, an adequacy, a check, an error or a corrected text."
        )
    return values


RATING_FIELDS = (
    "fluency",
    "adequacy",
    "blame",
    "blame_other",
    "checks",
    "error_taxonomy",
    "corrected_text",
)


@dataclass(frozen=True)
class SavedRating:
    """A saved rating, and what it replaced (None: it was new), so it can be undone."""

    annotation_id: int
    annotator_id: int
    item: ItemRef
    values: dict[str, Any]
    previous: dict[str, Any] | None


def _item_columns(item: ItemRef) -> dict[str, int | None]:
    if item.kind == VERBALISATION:
        return {"verbalisation_id": item.id, "reference_id": None}
    if item.kind == REFERENCE:
        return {"verbalisation_id": None, "reference_id": item.id}
    raise AnnotationError(f"Cannot rate a {item.kind!r}: only verbalisations and references.")


def _item_filter(item: ItemRef) -> Any:
    from core.store.models import Annotation

    if item.kind == VERBALISATION:
        return Annotation.verbalisation_id == item.id
    return Annotation.reference_id == item.id


def _check_item(db: Any, item: ItemRef) -> None:
    from core.store.models import UnitReference, Verbalisation

    model = Verbalisation if item.kind == VERBALISATION else UnitReference
    if db.get(model, item.id) is None:
        raise AnnotationError(
            f"There is no {item.kind} {item.id} in this session (it may have been deleted)."
        )


def _as_ref(item: ItemRef | QueueItem | int) -> ItemRef:
    if isinstance(item, QueueItem):
        return item.ref
    if isinstance(item, ItemRef):
        return item
    if _is_int(item):
        return ItemRef(VERBALISATION, int(item))
    raise AnnotationError(f"Not an item to rate: {item!r}")


def save_rating(
    store: Any, annotator_id: int, item: ItemRef | QueueItem | int, rating: Rating
) -> SavedRating:
    """Save (or replace) ``annotator_id``'s rating of ``item`` in one committed transaction."""
    from sqlalchemy import select

    from core.store.models import Annotation, Annotator

    ref = _as_ref(item)
    values = validate_rating(rating)
    with store.unit_of_work() as db:
        if db.get(Annotator, annotator_id) is None:
            raise AnnotationError(f"There is no annotator {annotator_id} in this session.")
        _check_item(db, ref)
        row = db.scalar(
            select(Annotation)
            .where(
                Annotation.annotator_id == annotator_id,
                _item_filter(ref),
                Annotation.is_golden.is_(False),
            )
            .order_by(Annotation.id)
        )
        previous = None
        # Microsecond times (CURRENT_TIMESTAMP has seconds): "the last rating" is exact.
        now = datetime.now(UTC)
        if row is None:
            row = Annotation(
                annotator_id=annotator_id,
                is_golden=False,
                **_item_columns(ref),
                created_at=now,
                updated_at=now,
                **values,
            )
            db.add(row)
        else:
            previous = {name: getattr(row, name) for name in (*RATING_FIELDS, "updated_at")}
            for name, value in values.items():
                setattr(row, name, value)
            row.updated_at = now
        db.flush()
        return SavedRating(row.id, annotator_id, ref, values, previous)


def undo_rating(store: Any, saved: SavedRating) -> bool:
    """Undo one save: delete a new rating, or put back what a replacing save overwrote.

    Returns False when the rating is no longer there (deleted meanwhile).
    """
    from core.store.models import Annotation

    with store.unit_of_work() as db:
        row = db.get(Annotation, saved.annotation_id)
        if row is None:
            return False
        if saved.previous is None:
            db.delete(row)
        else:
            from sqlalchemy.orm.attributes import flag_modified

            for name, value in saved.previous.items():
                setattr(row, name, value)  # updated_at too: it is no longer the latest
            flag_modified(row, "updated_at")  # else the column's onupdate would restamp it
    return True


def undo_last_rating(store: Any, annotator_id: int) -> ItemRef | None:
    """Delete ``annotator_id``'s most recent rating (golden answers untouched).

    Without a :class:`SavedRating` there is no record of what a replacing save
    overwrote, so this removes the rating; returns the item it was of, or None.
    """
    from sqlalchemy import select

    from core.store.models import Annotation

    with store.unit_of_work() as db:
        row = db.scalar(
            select(Annotation)
            .where(Annotation.annotator_id == annotator_id, Annotation.is_golden.is_(False))
            .order_by(Annotation.updated_at.desc(), Annotation.id.desc())
            .limit(1)
        )
        if row is None:
            return None
        ref = (
            ItemRef(VERBALISATION, row.verbalisation_id)
            if row.verbalisation_id is not None
            else ItemRef(REFERENCE, row.reference_id)
        )
        db.delete(row)
        return ref


@dataclass(frozen=True)
class StoredRating:
    annotation_id: int
    annotator_id: int
    item: ItemRef
    fluency: int | None
    adequacy: int | None
    blame: str | None
    blame_other: str | None
    checks: dict[str, bool] | None
    error_taxonomy: dict[str, list[str]] | None
    corrected_text: str | None
    is_golden: bool


def rating_of(
    store: Any, annotator_id: int, item: ItemRef | QueueItem | int
) -> StoredRating | None:
    """``annotator_id``'s rating of ``item`` (not a golden answer), or None."""
    from sqlalchemy import select

    from core.store.models import Annotation

    ref = _as_ref(item)
    with store.unit_of_work() as db:
        row = db.scalar(
            select(Annotation)
            .where(
                Annotation.annotator_id == annotator_id,
                _item_filter(ref),
                Annotation.is_golden.is_(False),
            )
            .order_by(Annotation.id)
        )
        return None if row is None else _stored(row)


def ratings_of_item(
    store: Any,
    item: ItemRef | QueueItem | int,
) -> list[tuple[str, StoredRating]]:
    """Every annotator's rating of ``item`` (golden answers included), with the
    annotator's name, in the order they were saved."""
    from sqlalchemy import select

    from core.store.models import Annotation, Annotator

    ref = _as_ref(item)
    with store.unit_of_work() as db:
        rows = db.execute(
            select(Annotator.name, Annotation)
            .join(Annotator, Annotator.id == Annotation.annotator_id)
            .where(_item_filter(ref))
            .order_by(Annotation.id)
        ).all()
        return [(name, _stored(row)) for name, row in rows]


def _stored(row: Any) -> StoredRating:
    ref = (
        ItemRef(VERBALISATION, row.verbalisation_id)
        if row.verbalisation_id is not None
        else ItemRef(REFERENCE, row.reference_id)
    )
    return StoredRating(
        row.id,
        row.annotator_id,
        ref,
        row.fluency,
        row.adequacy,
        row.blame,
        row.blame_other,
        row.checks,
        row.error_taxonomy,
        row.corrected_text,
        bool(row.is_golden),
    )


# -- corrections become gold references ---------------------------------------------------


def promote_correction(store: Any, annotation_id: int) -> int:
    """Make an annotation's corrected text a gold reference of its unit; returns its id.

    Provenance: ``created_by`` the annotator, ``source_verbalisation_id`` the corrected
    verbalisation, and a line with who, when and from which text. Promoting the same
    text twice returns the reference made the first time.
    """
    from sqlalchemy import select

    from core.store.models import Annotation, Annotator, UnitReference, Verbalisation

    with store.unit_of_work() as db:
        row = db.get(Annotation, annotation_id)
        if row is None:
            raise AnnotationError(f"There is no annotation {annotation_id} in this session.")
        if not row.corrected_text:
            raise AnnotationError("This rating has no corrected text to promote.")
        if row.verbalisation_id is not None:
            source = db.get(Verbalisation, row.verbalisation_id)
            unit_id, lang, what = source.unit_id, source.lang, f"verbalisation {source.id}"
            source_verbalisation = source.id
        else:
            source = db.get(UnitReference, row.reference_id)
            unit_id, lang = source.unit_id, source.lang
            what, source_verbalisation = f"{source.quality} reference {source.id}", None
        existing = db.scalar(
            select(UnitReference.id).where(
                UnitReference.unit_id == unit_id,
                UnitReference.lang == lang,
                UnitReference.quality == "gold",
                UnitReference.text == row.corrected_text,
            )
        )
        if existing is not None:
            return int(existing)
        annotator = db.get(Annotator, row.annotator_id)
        when = datetime.now(UTC).isoformat(timespec="seconds")
        reference = UnitReference(
            unit_id=unit_id,
            lang=lang,
            text=row.corrected_text,
            quality="gold",
            provenance=f"correction by {annotator.name} at {when} of {what} (annotation {row.id})",
            source_verbalisation_id=source_verbalisation,
            created_by=row.annotator_id,
        )
        db.add(reference)
        db.flush()
        return int(reference.id)


# -- golden items ------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldenAnswer:
    item: ItemRef
    expert_id: int
    fluency: int | None
    adequacy: int | None


def set_golden_answer(
    store: Any,
    expert_id: int,
    item: ItemRef | QueueItem | int,
    *,
    fluency: int | None = None,
    adequacy: int | None = None,
) -> int:
    """Record the known answer of ``item`` (a golden annotation by ``expert_id``).

    One answer per item: setting it again (by anyone) replaces the previous answer.
    """
    from sqlalchemy import delete

    from core.store.models import Annotation, Annotator

    ref = _as_ref(item)
    if fluency is None and adequacy is None:
        raise AnnotationError("A golden item needs a known fluency, adequacy or both.")
    values = validate_rating(Rating(fluency=fluency, adequacy=adequacy))
    with store.unit_of_work() as db:
        if db.get(Annotator, expert_id) is None:
            raise AnnotationError(f"There is no annotator {expert_id} in this session.")
        _check_item(db, ref)
        db.execute(delete(Annotation).where(_item_filter(ref), Annotation.is_golden.is_(True)))
        row = Annotation(
            annotator_id=expert_id,
            is_golden=True,
            **_item_columns(ref),
            fluency=values["fluency"],
            adequacy=values["adequacy"],
        )
        db.add(row)
        db.flush()
        return int(row.id)


def clear_golden_answer(store: Any, item: ItemRef | QueueItem | int) -> bool:
    from sqlalchemy import delete

    from core.store.models import Annotation

    with store.unit_of_work() as db:
        result = db.execute(
            delete(Annotation).where(_item_filter(_as_ref(item)), Annotation.is_golden.is_(True))
        )
        return bool(result.rowcount)


def golden_answers(store: Any) -> dict[ItemRef, GoldenAnswer]:
    from sqlalchemy import select

    from core.store.models import Annotation

    answers: dict[ItemRef, GoldenAnswer] = {}
    with store.unit_of_work() as db:
        for row in db.scalars(
            select(Annotation).where(Annotation.is_golden.is_(True)).order_by(Annotation.id)
        ):
            ref = _stored(row).item
            answers[ref] = GoldenAnswer(ref, row.annotator_id, row.fluency, row.adequacy)
    return answers


@dataclass(frozen=True)
class GoldenAccuracy:
    """How often an annotator's ratings of golden items matched the known answers.

    Adequacy must match exactly; fluency counts as right within ``fluency_tolerance``.
    """

    annotator_id: int
    annotator: str
    items: int
    adequacy_checked: int
    adequacy_correct: int
    fluency_checked: int
    fluency_within: int
    fluency_tolerance: int
    fluency_mae: float | None

    @property
    def adequacy_accuracy(self) -> float | None:
        return self.adequacy_correct / self.adequacy_checked if self.adequacy_checked else None

    @property
    def fluency_accuracy(self) -> float | None:
        return self.fluency_within / self.fluency_checked if self.fluency_checked else None


def golden_accuracy(store: Any, fluency_tolerance: int = 1) -> list[GoldenAccuracy]:
    """Each annotator's accuracy on golden items they rated (experts' own answers excluded)."""
    from sqlalchemy import select

    from core.store.models import Annotation, Annotator

    answers = golden_answers(store)
    if not answers:
        return []
    with store.unit_of_work() as db:
        names = dict(db.execute(select(Annotator.id, Annotator.name)).all())
        rows = [
            _stored(r)
            for r in db.scalars(select(Annotation).where(Annotation.is_golden.is_(False)))
        ]
    per: dict[int, list[tuple[StoredRating, GoldenAnswer]]] = defaultdict(list)
    for rating in rows:
        answer = answers.get(rating.item)
        # The expert who set an answer is not checked against it (an ordinary rating of
        # theirs on that item would always agree, or only show they changed their mind).
        if answer is not None and rating.annotator_id != answer.expert_id:
            per[rating.annotator_id].append((rating, answer))
    results = []
    for annotator_id, pairs in per.items():
        adequacy = [
            (r.adequacy, a.adequacy)
            for r, a in pairs
            if r.adequacy is not None and a.adequacy is not None
        ]
        fluency = [
            abs(r.fluency - a.fluency)
            for r, a in pairs
            if r.fluency is not None and a.fluency is not None
        ]
        results.append(
            GoldenAccuracy(
                annotator_id,
                names.get(annotator_id, str(annotator_id)),
                len(pairs),
                len(adequacy),
                sum(r == a for r, a in adequacy),
                len(fluency),
                sum(d <= fluency_tolerance for d in fluency),
                fluency_tolerance,
                float(np.mean(fluency)) if fluency else None,
            )
        )
    return sorted(results, key=lambda g: _natural(g.annotator))


# -- the queue -----------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueFilter:
    """Which items an annotator sees. Empty tuples mean "any".

    ``models`` match a run's display name or model id; ``tiers`` match tiers and
    sub-tiers (``head`` includes TailNLG's ``top_head``). ``golden_rate`` is the share
    of the queue made of golden items (0 to 0.5), placed at seeded random positions.
    ``target`` "references" queues reference texts (``qualities`` picks gold/silver)
    instead of verbalisations, e.g. to mark errors of translated (silver) references.
    """

    models: tuple[str, ...] = ()
    run_ids: tuple[int, ...] = ()
    langs: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    unrated_only: bool = True
    disagreements_first: bool = False
    golden_rate: float = 0.0
    target: str = "verbalisations"
    qualities: tuple[str, ...] = ()
    seed: int = 0
    limit: int | None = None


@dataclass(frozen=True)
class QueueItem:
    """One text to rate, with what the annotator needs to judge it."""

    ref: ItemRef
    unit_id: int
    unit_uid: str
    lang: str
    text: str
    triples: tuple[tuple[str, str, str], ...]  # in ``triples_lang``
    triples_lang: str  # the text's language, else English when the unit lacks it
    model: str | None  # verbalisations only
    run_id: int | None
    quality: str | None  # references only
    category: str
    tier: str
    sub_tier: str
    is_golden: bool = False  # the panel must not reveal it
    disagreement: float = 0.0


@dataclass(frozen=True)
class QueueProgress:
    done: int
    total: int

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0


def _triples_by_unit(db: Any, unit_ids: set[int]) -> dict[tuple[int, str], list[tuple]]:
    from sqlalchemy import select

    from core.store.models import UnitTriple

    triples: dict[tuple[int, str], list[tuple[str, str, str]]] = defaultdict(list)
    for row in db.scalars(
        select(UnitTriple)
        .where(UnitTriple.tripleset == "main")
        .order_by(UnitTriple.unit_id, UnitTriple.lang, UnitTriple.position)
    ):
        if row.unit_id in unit_ids:
            triples[(row.unit_id, row.lang)].append(
                tuple(
                    getattr(row, f"{p}_override")
                    if getattr(row, f"{p}_override") is not None
                    else getattr(row, p)
                    for p in ("subject", "predicate", "object")
                )
            )
    return triples


def _candidates(db: Any, target: str, *, parsed_only: bool = True) -> list[dict[str, Any]]:
    """Every rateable text with its unit's group fields, as plain dicts.

    ``parsed_only`` leaves out verbalisations whose reply could not be parsed (no text to
    rate); aggregates still count ratings such texts got elsewhere (e.g. imported)."""
    from sqlalchemy import select

    from core.store.models import Category, DataUnit, ModelRun, UnitReference, Verbalisation

    categories = dict(db.execute(select(Category.id, Category.name)).all())
    units = {
        u.id: u
        for u in db.execute(
            select(
                DataUnit.id,
                DataUnit.uid,
                DataUnit.tier,
                DataUnit.sub_tier,
                DataUnit.category_id,
                DataUnit.attributes,
            )
        )
    }
    found = []
    if target == "verbalisations":
        query = (
            select(
                Verbalisation.id,
                Verbalisation.unit_id,
                Verbalisation.lang,
                Verbalisation.text,
                Verbalisation.run_id,
                Verbalisation.candidate_index,
                ModelRun.system_name,
                ModelRun.model_id,
            )
            .join(ModelRun, ModelRun.id == Verbalisation.run_id)
            .order_by(
                Verbalisation.unit_id,
                Verbalisation.lang,
                Verbalisation.run_id,
                Verbalisation.candidate_index,
            )
        )
        if parsed_only:
            query = query.where(Verbalisation.text.is_not(None))
        for row in db.execute(query):
            found.append(
                {
                    "ref": ItemRef(VERBALISATION, row.id),
                    "unit": units[row.unit_id],
                    "lang": row.lang,
                    "text": row.text,
                    "run_id": row.run_id,
                    "model": model_name(row.system_name, row.model_id),
                    "quality": None,
                }
            )
    elif target == "references":
        references = select(UnitReference).order_by(
            UnitReference.unit_id, UnitReference.lang, UnitReference.id
        )
        for row in db.scalars(references):
            found.append(
                {
                    "ref": ItemRef(REFERENCE, row.id),
                    "unit": units[row.unit_id],
                    "lang": row.lang,
                    "text": row.text,
                    "run_id": None,
                    "model": None,
                    "quality": row.quality,
                }
            )
    else:
        raise AnnotationError(f"A queue holds 'verbalisations' or 'references', not {target!r}.")
    for item in found:
        unit = item["unit"]
        item["category"] = category_name(unit.category_id, unit.attributes, categories)
        item["tier"] = tier_group(unit.tier)
        item["sub_tier"] = subtier_group(unit.tier, unit.sub_tier)
        item["raw_tier"] = (unit.tier, unit.sub_tier)
    return found


def disagreement(fluency: Sequence[int], adequacy: Sequence[int]) -> float:
    """How much raters disagree on an item: share of adequacy votes off the majority plus
    the fluency range over 5 (0 when fewer than two ratings)."""
    score = 0.0
    if len(adequacy) >= 2:
        score += 1 - Counter(adequacy).most_common(1)[0][1] / len(adequacy)
    if len(fluency) >= 2:
        score += (max(fluency) - min(fluency)) / (FLUENCY_MAX - FLUENCY_MIN)
    return score


@dataclass(frozen=True)
class QueueOptions:
    """What a queue filter can choose from: the models, languages, categories and tiers
    (tiers and sub-tiers together) of the session's rateable, non-golden texts, in the
    order the panel lists them."""

    models: tuple[str, ...] = ()
    langs: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()

    def as_mapping(self) -> dict[str, list[str]]:
        return {
            "models": list(self.models),
            "langs": list(self.langs),
            "categories": list(self.categories),
            "tiers": list(self.tiers),
        }


def queue_options(store: Any) -> QueueOptions:
    """The choices of :class:`QueueFilter` the session offers, from distinct (unit,
    language, run) rows: what the items of a queue of verbalisations and one of references
    (any annotator, rated or not, no golden items) show, without building either."""
    from sqlalchemy import select

    from core.store.models import (
        Annotation,
        Category,
        DataUnit,
        ModelRun,
        UnitReference,
        Verbalisation,
    )

    with store.snapshot() as db:
        categories = dict(db.execute(select(Category.id, Category.name)).all())
        units = {
            u.id: u
            for u in db.execute(
                select(
                    DataUnit.id,
                    DataUnit.tier,
                    DataUnit.sub_tier,
                    DataUnit.category_id,
                    DataUnit.attributes,
                )
            )
        }
        golden_texts = select(Annotation.verbalisation_id).where(
            Annotation.is_golden, Annotation.verbalisation_id.is_not(None)
        )
        golden_refs = select(Annotation.reference_id).where(
            Annotation.is_golden, Annotation.reference_id.is_not(None)
        )
        texts = db.execute(
            select(
                Verbalisation.unit_id, Verbalisation.lang, ModelRun.system_name, ModelRun.model_id
            )
            .join(ModelRun, ModelRun.id == Verbalisation.run_id)
            .where(Verbalisation.text.is_not(None), Verbalisation.id.not_in(golden_texts))
            .distinct()
        ).all()
        refs = db.execute(
            select(UnitReference.unit_id, UnitReference.lang)
            .where(UnitReference.id.not_in(golden_refs))
            .distinct()
        ).all()
    seen_units = [units[row.unit_id] for row in (*texts, *refs)]
    tiers = {tier_group(u.tier) for u in seen_units} | {
        subtier_group(u.tier, u.sub_tier) for u in seen_units
    }
    return QueueOptions(
        models=tuple(
            sorted({model_name(r.system_name, r.model_id) for r in texts}, key=str.casefold)
        ),
        langs=tuple(sorted({r.lang for r in (*texts, *refs)}, key=lambda v: order_key("lang", v))),
        categories=tuple(
            sorted(
                {category_name(u.category_id, u.attributes, categories) for u in seen_units},
                key=str.casefold,
            )
        ),
        tiers=tuple(sorted(tiers, key=lambda v: order_key("subtier", v))),
    )


def build_queue(store: Any, annotator_id: int, spec: QueueFilter | None = None) -> AnnotationQueue:
    """The items ``annotator_id`` should rate next under ``spec`` (see :class:`QueueFilter`)."""
    from sqlalchemy import select

    from core.store.models import Annotation, Annotator

    spec = spec or QueueFilter()
    if not 0 <= spec.golden_rate <= 0.5:
        raise AnnotationError(
            f"The golden item rate must lie between 0 and 0.5, not {spec.golden_rate}."
        )
    if spec.limit is not None and spec.limit < 1:
        raise AnnotationError("A queue limit must be at least 1.")
    with store.unit_of_work() as db:
        annotator = db.get(Annotator, annotator_id)
        if annotator is None:
            raise AnnotationError(f"There is no annotator {annotator_id} in this session.")
        info = AnnotatorInfo(annotator.id, annotator.name, bool(annotator.is_anonymous))
        candidates = _candidates(db, spec.target)
        ratings: dict[ItemRef, list[tuple[int, int | None, int | None]]] = defaultdict(list)
        golden: set[ItemRef] = set()
        for row in db.execute(
            select(
                Annotation.annotator_id,
                Annotation.verbalisation_id,
                Annotation.reference_id,
                Annotation.fluency,
                Annotation.adequacy,
                Annotation.is_golden,
            )
        ):
            ref = (
                ItemRef(VERBALISATION, row.verbalisation_id)
                if row.verbalisation_id is not None
                else ItemRef(REFERENCE, row.reference_id)
            )
            if row.is_golden:
                golden.add(ref)
            else:
                ratings[ref].append((row.annotator_id, row.fluency, row.adequacy))
        triples = _triples_by_unit(db, {c["unit"].id for c in candidates})

    def rated_by_me(ref: ItemRef) -> bool:
        return any(a == annotator_id for a, _, _ in ratings.get(ref, ()))

    models, langs = set(spec.models), set(spec.langs)
    categories, tiers = set(spec.categories), set(spec.tiers)
    runs, qualities = set(spec.run_ids), set(spec.qualities)
    regular, golden_pool = [], []
    for c in candidates:
        if c["ref"] in golden:
            if not rated_by_me(c["ref"]):
                golden_pool.append(c)
            continue
        if models and c["model"] not in models:
            continue
        if runs and c["run_id"] not in runs:
            continue
        if langs and c["lang"] not in langs:
            continue
        if categories and c["category"] not in categories:
            continue
        if tiers and not matches_tier(tiers, *c["raw_tier"]):
            continue
        if qualities and c["quality"] not in qualities:
            continue
        if spec.unrated_only and rated_by_me(c["ref"]):
            continue
        rs = ratings.get(c["ref"], ())
        c["disagreement"] = disagreement(
            [f for _, f, _ in rs if f is not None], [a for _, _, a in rs if a is not None]
        )
        regular.append(c)
    if spec.disagreements_first:
        regular.sort(key=lambda c: -c["disagreement"])  # stable: ties keep unit order
    if spec.limit is not None:
        regular = regular[: spec.limit]
    ordered = list(regular)
    if spec.golden_rate > 0 and golden_pool and regular:
        rng = np.random.default_rng(spec.seed)
        wanted = round(len(regular) * spec.golden_rate / (1 - spec.golden_rate))
        chosen = [golden_pool[i] for i in rng.permutation(len(golden_pool))[: max(1, wanted)]]
        positions = sorted(rng.choice(len(regular) + len(chosen), len(chosen), replace=False))
        for position, c in zip(positions, chosen, strict=True):
            c["is_golden"] = True
            c["disagreement"] = 0.0
            ordered.insert(int(position), c)
    items = []
    for c in ordered:
        unit = c["unit"]
        lang = c["lang"] if (unit.id, c["lang"]) in triples else "en"
        items.append(
            QueueItem(
                ref=c["ref"],
                unit_id=unit.id,
                unit_uid=unit.uid,
                lang=c["lang"],
                text=c["text"],
                triples=tuple(triples.get((unit.id, lang), ())),
                triples_lang=lang,
                model=c["model"],
                run_id=c["run_id"],
                quality=c["quality"],
                category=c["category"],
                tier=c["tier"],
                sub_tier=c["sub_tier"],
                is_golden=c.get("is_golden", False),
                disagreement=c.get("disagreement", 0.0),
            )
        )
    return AnnotationQueue(store, info, items, spec)


class AnnotationQueue:
    """The items of one annotator's queue, saving as it goes; Ctrl+Z undoes saves in order.

    Progress is read from the session, so ratings saved in another window count too.
    """

    def __init__(
        self, store: Any, annotator: AnnotatorInfo, items: Sequence[QueueItem], spec: QueueFilter
    ) -> None:
        self.store = store
        self.annotator = annotator
        self.items: list[QueueItem] = list(items)
        self.spec = spec
        self._undo: list[SavedRating] = []
        # The rating the last undo took back, as it was (None: none, or not known), so a
        # window can put it back in its form for editing.
        self.last_undone: StoredRating | None = None

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> QueueItem:
        return self.items[index]

    def rated(self) -> set[ItemRef]:
        """Items of this queue the annotator has rated."""
        from sqlalchemy import select

        from core.store.models import Annotation

        with self.store.unit_of_work() as db:
            rows = db.execute(
                select(Annotation.verbalisation_id, Annotation.reference_id).where(
                    Annotation.annotator_id == self.annotator.id, Annotation.is_golden.is_(False)
                )
            ).all()
        mine = {
            ItemRef(VERBALISATION, v) if v is not None else ItemRef(REFERENCE, r) for v, r in rows
        }
        return mine & {item.ref for item in self.items}

    def progress(self) -> QueueProgress:
        return QueueProgress(len(self.rated()), len(self.items))

    def next_index(self, after: int = -1) -> int | None:
        """Index of the first unrated item after ``after`` (wrapping round), else None."""
        done = self.rated()
        n = len(self.items)
        for step in range(1, n + 1):
            index = (after + step) % n
            if self.items[index].ref not in done:
                return index
        return None

    def rating(self, index: int) -> StoredRating | None:
        return rating_of(self.store, self.annotator.id, self.items[index].ref)

    def save(self, index: int, rating: Rating) -> SavedRating:
        saved = save_rating(self.store, self.annotator.id, self.items[index].ref, rating)
        self._undo.append(saved)
        return saved

    def can_undo(self) -> bool:
        return bool(self._undo)

    def undo(self) -> ItemRef | None:
        """Undo the last save of this queue (else the annotator's latest rating).

        What was undone stays readable in :attr:`last_undone`."""
        self.last_undone = None
        while self._undo:
            saved = self._undo.pop()
            before = rating_of(self.store, self.annotator.id, saved.item)
            if undo_rating(self.store, saved):
                self.last_undone = before
                return saved.item
        return undo_last_rating(self.store, self.annotator.id)

    def index_of(self, ref: ItemRef) -> int | None:
        return next((i for i, item in enumerate(self.items) if item.ref == ref), None)

    def promote(self, index: int) -> int:
        """Promote the annotator's correction of item ``index`` to a gold reference."""
        rating = self.rating(index)
        if rating is None or not rating.corrected_text:
            raise AnnotationError("Save a corrected text for this item before promoting it.")
        return promote_correction(self.store, rating.annotation_id)


# -- aggregation and agreement ---------------------------------------------------------------


# Adequacy answers from the most cautious to the least: a tie goes to the first of them.
CAUTION_ORDER = (NOT_SURE, NO, YES)


def adequacy_majority(votes: Sequence[int]) -> int | None:
    """The item's adequacy answer as WDV computed it (METHODS §9).

    The answer given by more than half of the votes (a strict majority); without one,
    the most cautious of the answers with the most votes (Not sure over No over Yes).
    With WDV's five votes per item that is exactly "a tie goes to the most cautious of
    the tied answers": ``[0, 0, 1, 1, 2]`` gives No, ``[0, 0, 2, 2, 1]`` Not sure.
    None without votes."""
    if not votes:
        return None
    counts = Counter(int(v) for v in votes)
    answer, n = counts.most_common(1)[0]
    if n * 2 > len(votes):
        return answer
    best = max(counts.values())
    return next(code for code in CAUTION_ORDER if counts.get(code) == best)


def adequacy_percentage(votes: Sequence[int], majority: int | None = None) -> float | None:
    """Share of Yes votes (0-1; Not sure counts as not Yes), and 0 when the item's
    majority (:func:`adequacy_majority`) is Not sure, as WDV computed it. None without
    votes."""
    if not votes:
        return None
    if majority is None:
        majority = adequacy_majority(votes)
    if majority == NOT_SURE:
        return 0.0
    return sum(1 for v in votes if int(v) == YES) / len(votes)


def aggregates(fluency: Sequence[int], adequacy: Sequence[int]) -> dict[str, Any]:
    """One item's aggregates under WDV's names: fluency mean and median, adequacy
    majority (:func:`adequacy_majority`) and percentage (:func:`adequacy_percentage`).

    The one definition used by the annotation summaries, the report and the WDV export."""
    import statistics

    majority = adequacy_majority(adequacy)
    return {
        "fluency_mean": statistics.fmean(fluency) if fluency else None,
        "fluency_median": float(statistics.median(fluency)) if fluency else None,
        "adequacy_majority_voted": majority,
        "adequacy_percentage": adequacy_percentage(adequacy, majority),
    }


def item_aggregates(fluency: Sequence[int], adequacy: Sequence[int]) -> dict[str, Any]:
    """:func:`aggregates` of one item's ratings (kept under this name for callers)."""
    return aggregates(list(fluency), list(adequacy))


def sampling_weight(attributes: Any) -> float | None:
    """The ``sampling_weight`` of an imported WDV record (its stratified-sampling weight),
    else None. Only a positive finite number counts."""
    record = attributes.get("record") if isinstance(attributes, dict) else None
    value = record.get("sampling_weight") if isinstance(record, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None


AlphaLevel = Literal["nominal", "ordinal", "interval", "ratio"]


def krippendorff_alpha(
    matrix: Sequence[Sequence[float]] | np.ndarray, level: AlphaLevel
) -> float | None:
    """Krippendorff's alpha of a reliability matrix (annotators × items, NaN = no rating).

    ``level`` "interval" (fluency) or "nominal" (adequacy). Computed by the
    ``krippendorff`` package; None when undefined: fewer than two pairable ratings
    (no item rated twice) or no variation at all among the ratings.
    """
    import krippendorff

    data = np.asarray(matrix, dtype=float)
    if data.ndim != 2 or data.size == 0:
        return None
    pairable = np.sum(~np.isnan(data), axis=0) >= 2
    if not pairable.any():
        return None
    data = data[:, pairable]
    values = data[~np.isnan(data)]
    if np.unique(values).size < 2:
        return None
    alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    return None if math.isnan(alpha) else alpha


def reliability_matrix(ratings: Iterable[tuple[int, Any, float | None]]) -> np.ndarray:
    """(annotator, item, value) triples as an annotators × items matrix with NaN gaps."""
    rows = [(a, i, v) for a, i, v in ratings if v is not None]
    annotators = sorted({a for a, _, _ in rows})
    items = sorted({i for _, i, _ in rows}, key=repr)
    matrix = np.full((len(annotators), len(items)), np.nan)
    a_index = {a: n for n, a in enumerate(annotators)}
    i_index = {i: n for n, i in enumerate(items)}
    for a, i, v in rows:
        matrix[a_index[a], i_index[i]] = v
    return matrix


@dataclass(frozen=True)
class ItemAggregate:
    """One rated item's aggregates, with the groups it belongs to."""

    item: ItemRef
    unit_id: int
    lang: str
    model: str
    category: str
    tier: str
    subtier: str
    ratings: int
    fluency_mean: float | None
    fluency_median: float | None
    adequacy_majority: int | None
    adequacy_yes: float | None  # WDV's adequacy percentage: share of Yes (0 if majority Not sure)
    weight: float | None = None  # the unit's WDV sampling_weight, when it has one

    def group(self, dimension: str) -> str:
        return str(getattr(self, dimension))


@dataclass(frozen=True)
class GroupAggregate:
    """A group's figures: per-item aggregates averaged (each item once), as WDV reports
    them; ``pooled_*`` pool every rating and are labelled so; alpha over the group's
    ratings (interval for fluency, nominal for adequacy)."""

    group: tuple[tuple[str, str], ...]  # e.g. (("tier", "head"),); () for all items
    items: int
    ratings: int
    annotators: int
    fluency_mean: float | None
    fluency_median: float | None
    adequacy_yes: float | None
    majority_yes: float | None  # share of items whose majority vote is Yes
    pooled_fluency_mean: float | None
    pooled_adequacy_yes: float | None
    alpha_fluency: float | None = None
    alpha_adequacy: float | None = None
    weighted: bool = False  # per-item figures weighted by sampling weight (WDV per theme)

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.group) or "all"


SUMMARY_COLUMNS = (
    "group",
    "items",
    "ratings",
    "annotators",
    "fluency_mean",
    "fluency_median",
    "adequacy_yes",
    "majority_yes",
    "pooled_fluency_mean",
    "pooled_adequacy_yes",
    "alpha_fluency",
    "alpha_adequacy",
)


@dataclass
class AnnotationSummary:
    by: tuple[str, ...]
    overall: GroupAggregate
    groups: list[GroupAggregate]
    items: list[ItemAggregate] = field(default_factory=list)
    agreement: bool = True
    weighted: bool = False

    @property
    def columns(self) -> tuple[str, ...]:
        return SUMMARY_COLUMNS if self.agreement else SUMMARY_COLUMNS[:-2]

    def rows(self) -> list[list[Any]]:
        """The overall row then one per group, values in :attr:`columns` order."""
        out = []
        for g in [self.overall, *self.groups]:
            row = [g.label] + [getattr(g, c) for c in self.columns[1:]]
            out.append(row)
        return out


@dataclass(frozen=True)
class _Rated:
    annotator_id: int
    item: ItemRef
    fluency: int | None
    adequacy: int | None


def _load_ratings(store: Any) -> tuple[list[_Rated], dict[ItemRef, dict[str, Any]]]:
    from sqlalchemy import select

    from core.store.models import Annotation

    with store.unit_of_work() as db:
        rated = [
            _Rated(
                r.annotator_id,
                ItemRef(VERBALISATION, r.verbalisation_id)
                if r.verbalisation_id is not None
                else ItemRef(REFERENCE, r.reference_id),
                r.fluency,
                r.adequacy,
            )
            for r in db.execute(
                select(
                    Annotation.annotator_id,
                    Annotation.verbalisation_id,
                    Annotation.reference_id,
                    Annotation.fluency,
                    Annotation.adequacy,
                ).where(Annotation.is_golden.is_(False))
            )
        ]
        info: dict[ItemRef, dict[str, Any]] = {}
        wanted = {r.item for r in rated}
        for target, kind in (("verbalisations", VERBALISATION), ("references", REFERENCE)):
            if any(ref.kind == kind for ref in wanted):
                for c in _candidates(db, target, parsed_only=False):
                    if c["ref"] in wanted:
                        info[c["ref"]] = c
    return rated, info


def _group_aggregate(
    group: tuple[tuple[str, str], ...],
    items: list[ItemAggregate],
    ratings: list[_Rated],
    agreement: bool,
    weighted: bool = False,
) -> GroupAggregate:
    def mean(values: Iterable[float | None]) -> float | None:
        # Per-item figures averaged, each item once; weighted: by its sampling weight
        # (an item without one counts with weight 1).
        pairs = [
            (v, (i.weight or 1.0) if weighted else 1.0)
            for v, i in zip(values, items, strict=True)
            if v is not None
        ]
        if not pairs:
            return None
        return float(np.average([v for v, _ in pairs], weights=[w for _, w in pairs]))

    fluency = [r.fluency for r in ratings if r.fluency is not None]
    adequacy = [r.adequacy for r in ratings if r.adequacy is not None]
    majorities = [i.adequacy_majority for i in items if i.adequacy_majority is not None]
    alpha_f = alpha_a = None
    if agreement:
        alpha_f = krippendorff_alpha(
            reliability_matrix((r.annotator_id, r.item, r.fluency) for r in ratings), "interval"
        )
        alpha_a = krippendorff_alpha(
            reliability_matrix((r.annotator_id, r.item, r.adequacy) for r in ratings), "nominal"
        )
    return GroupAggregate(
        group=group,
        items=len(items),
        ratings=len(ratings),
        annotators=len({r.annotator_id for r in ratings}),
        fluency_mean=mean(i.fluency_mean for i in items),
        fluency_median=mean(i.fluency_median for i in items),
        adequacy_yes=mean(i.adequacy_yes for i in items),
        majority_yes=mean(
            None if i.adequacy_majority is None else float(i.adequacy_majority == YES)
            for i in items
        )
        if majorities
        else None,
        pooled_fluency_mean=float(np.mean(fluency)) if fluency else None,
        pooled_adequacy_yes=(adequacy.count(YES) / len(adequacy)) if adequacy else None,
        alpha_fluency=alpha_f,
        alpha_adequacy=alpha_a,
        weighted=weighted,
    )


def aggregate_annotations(
    store: Any,
    by: Sequence[str] = (),
    *,
    agreement: bool = True,
    models: Sequence[str] = (),
    langs: Sequence[str] = (),
    weighted: bool = False,
) -> AnnotationSummary:
    """Per-item aggregates, and group figures for each value (combination) of ``by``.

    ``by`` names dimensions of :data:`GROUP_DIMENSIONS`; golden answers are left out.
    Group figures average the per-item figures, each item once (METHODS §9); with
    ``weighted`` each item counts by its WDV ``sampling_weight`` instead (items without
    one count 1), as WDV's weighted per-theme figures. Pooled figures stay unweighted.
    """
    wrong = [d for d in by if d not in GROUP_DIMENSIONS]
    if wrong:
        raise AnnotationError(
            f"Cannot group ratings by {', '.join(wrong)}: choose from "
            f"{', '.join(GROUP_DIMENSIONS)}."
        )
    rated, info = _load_ratings(store)
    per_item: dict[ItemRef, list[_Rated]] = defaultdict(list)
    for r in rated:
        c = info.get(r.item)
        if c is None:
            continue
        if models and c["model"] not in models:
            continue
        if langs and c["lang"] not in langs:
            continue
        per_item[r.item].append(r)
    items = []
    for ref, rs in per_item.items():
        c = info[ref]
        agg = item_aggregates(
            [r.fluency for r in rs if r.fluency is not None],
            [r.adequacy for r in rs if r.adequacy is not None],
        )
        items.append(
            ItemAggregate(
                item=ref,
                unit_id=c["unit"].id,
                lang=c["lang"],
                model=c["model"] or f"{c['quality']} reference",
                category=c["category"],
                tier=c["tier"],
                subtier=c["sub_tier"],
                ratings=len(rs),
                fluency_mean=agg["fluency_mean"],
                fluency_median=agg["fluency_median"],
                adequacy_majority=agg["adequacy_majority_voted"],
                adequacy_yes=agg["adequacy_percentage"],
                weight=sampling_weight(c["unit"].attributes),
            )
        )
    items.sort(key=lambda i: (i.item.kind, i.item.id))
    all_ratings = [r for rs in per_item.values() for r in rs]
    overall = _group_aggregate((), items, all_ratings, agreement, weighted)
    groups: list[GroupAggregate] = []
    if by:
        buckets: dict[tuple[str, ...], list[ItemAggregate]] = defaultdict(list)
        for item in items:
            buckets[tuple(item.group(d) for d in by)].append(item)
        keys = sorted(
            buckets, key=lambda k: tuple(order_key(d, v) for d, v in zip(by, k, strict=True))
        )
        for key in keys:
            members = buckets[key]
            rs = [r for item in members for r in per_item[item.item]]
            groups.append(
                _group_aggregate(tuple(zip(by, key, strict=True)), members, rs, agreement, weighted)
            )
    return AnnotationSummary(tuple(by), overall, groups, items, agreement, weighted)


def per_item_values(store: Any) -> dict[int, dict[str, float]]:
    """Verbalisation id -> {"fluency": mean, "adequacy": share of Yes}, for the report."""
    summary = aggregate_annotations(store, agreement=False)
    values: dict[int, dict[str, float]] = {}
    for item in summary.items:
        if item.item.kind != VERBALISATION:
            continue
        entry = {}
        if item.fluency_mean is not None:
            entry["fluency"] = item.fluency_mean
        if item.adequacy_yes is not None:
            entry["adequacy"] = item.adequacy_yes
        if entry:
            values[item.item.id] = entry
    return values


__all__ = [
    "ADEQUACY_KEYS",
    "ADEQUACY_LABELS",
    "BLAME_PARTS",
    "CHECKS",
    "CHECK_LABELS",
    "ERROR_TAXONOMY",
    "UNKNOWN",
    "AnnotationError",
    "AnnotationQueue",
    "AnnotationSummary",
    "AnnotatorInfo",
    "GoldenAccuracy",
    "GoldenAnswer",
    "GroupAggregate",
    "ItemAggregate",
    "ItemRef",
    "QueueFilter",
    "QueueItem",
    "QueueOptions",
    "QueueProgress",
    "Rating",
    "SavedRating",
    "StoredRating",
    "add_annotator",
    "aggregate_annotations",
    "build_queue",
    "clear_golden_answer",
    "find_annotator",
    "golden_accuracy",
    "golden_answers",
    "CAUTION_ORDER",
    "adequacy_majority",
    "adequacy_percentage",
    "aggregates",
    "item_aggregates",
    "krippendorff_alpha",
    "sampling_weight",
    "list_annotators",
    "per_item_values",
    "queue_options",
    "promote_correction",
    "rating_of",
    "reliability_matrix",
    "save_rating",
    "set_golden_answer",
    "undo_last_rating",
    "undo_rating",
    "validate_rating",
]
