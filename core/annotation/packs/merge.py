"""Merging packs back: the pack checked against the session (its source, its record,
its texts' digests), its ratings matched with the session's by the rating rule
(:mod:`core.edits.rating_rule`) and sorted into added, updated, unchanged and in
conflict, then written in bulk as one recorded edit."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session

from core.annotation.packs.manifest import (
    KIND_LETTER,
    LETTER_KIND,
    PackError,
    session_uid,
    text_hash,
)
from core.annotation.packs.read import PackRating, read_pack
from core.annotation.ratings import RATING_FIELDS
from core.annotation.types import (
    REFERENCE,
    VERBALISATION,
    ItemRef,
)
from core.edits import canonical, collect, record_edit
from core.edits.history import current_user
from core.edits.packs import PackMergeEdit
from core.edits.rating_rule import RatingKey, first_ratings, item_columns, ratings_of
from core.jobs import Job, JobContext
from core.store import SessionStore
from core.store.batching import in_chunks
from core.store.models import (
    Annotation,
    AnnotationOrigin,
    AnnotationPack,
    Annotator,
    UnitReference,
    Verbalisation,
)


@dataclass(frozen=True)
class Conflict:
    item: ItemRef
    annotator: str
    kept: dict[str, Any]
    pack: dict[str, Any]

    def describe(self) -> str:
        def short(v: dict[str, Any]) -> str:
            return (
                ", ".join(f"{k} {v[k]}" for k in ("fluency", "adequacy") if v.get(k) is not None)
                or "no scores"
            )

        return (
            f"{self.item.kind} {self.item.id} by {self.annotator}: the session has "
            f"{short(self.kept)}, the pack {short(self.pack)} (kept the session's)"
        )


@dataclass(frozen=True)
class MergeReport:
    path: Path
    pack_uid: str
    annotator: str
    added: int
    updated: int
    unchanged: int
    conflicts: tuple[Conflict, ...] = ()
    changed_texts: tuple[ItemRef, ...] = ()  # skipped: the text changed since packing
    outside: int = 0  # ratings of texts that were not handed out in the pack
    refused: tuple[str, ...] = ()  # ratings left out: what the app would not have saved

    def describe(self) -> str:
        parts = [f"{self.added} added", f"{self.updated} updated", f"{self.unchanged} already in"]
        if self.conflicts:
            parts.append(f"{len(self.conflicts)} in conflict (the session's kept)")
        if self.changed_texts:
            parts.append(f"{len(self.changed_texts)} skipped (text changed since packing)")
        if self.outside:
            parts.append(f"{self.outside} skipped (not in the pack)")
        if self.refused:
            parts.append(f"{len(self.refused)} refused (not a rating the app would save)")
        line = f"{self.path.name} ({self.annotator}): " + ", ".join(parts)
        # Merging a pack again changes nothing: fine, and said in words.
        return line if self.added or self.updated else line + ": nothing new"


def _current_hashes(db: Any, refs: Iterable[ItemRef]) -> dict[ItemRef, str | None]:
    verbs = [r.id for r in refs if r.kind == VERBALISATION]
    refs_ = [r.id for r in refs if r.kind == REFERENCE]
    out: dict[ItemRef, str | None] = {}
    for chunk in in_chunks(verbs):
        for vid, text in db.execute(
            select(Verbalisation.id, Verbalisation.text).where(Verbalisation.id.in_(chunk))
        ):
            out[ItemRef(VERBALISATION, vid)] = text_hash(text)
    for chunk in in_chunks(refs_):
        for rid, text in db.execute(
            select(UnitReference.id, UnitReference.text).where(UnitReference.id.in_(chunk))
        ):
            out[ItemRef(REFERENCE, rid)] = text_hash(text)
    return out


def _iso(value: datetime | None) -> str:
    if value is None:
        return ""
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()


class ChangedTextsError(PackError):
    """A pack holding ratings of texts changed (or deleted) since it was made: nothing of
    it was merged. ``changed`` names those texts; merging with ``skip_changed`` brings in
    the rest."""

    def __init__(self, path: Path, changed: Sequence[ItemRef]) -> None:
        self.path = path
        self.changed = tuple(changed)
        shown = ", ".join(f"{r.kind} {r.id}" for r in self.changed[:5])
        more = f" and {len(self.changed) - 5} more" if len(self.changed) > 5 else ""
        # What happened, without the command line's way out: the window offers its own.
        self.reason = (
            f"{path.name}: {len(self.changed)} rated texts changed (or were deleted) "
            f"since the pack was made ({shown}{more}); nothing was merged."
        )
        super().__init__(f"{self.reason} Merge with --skip-changed to bring in the rest.")


class _Pack(NamedTuple):
    """A pack read and checked against the session it claims to come from."""

    path: Path
    uid: str
    annotator: str
    digests: dict[ItemRef, str]  # each handed-out text's digest when the pack was made
    ratings: list[PackRating]
    refused: list[str]


class _Change(NamedTuple):
    """A rating the merge made before and the pack changed since: it follows the pack."""

    row_id: int
    key: RatingKey
    rating: PackRating


@dataclass
class _Plan:
    """What one merge does with each rating of the pack."""

    new: list[tuple[RatingKey, PackRating]] = field(default_factory=list)
    changes: list[_Change] = field(default_factory=list)
    unchanged: int = 0
    conflicts: list[Conflict] = field(default_factory=list)
    skipped: list[ItemRef] = field(default_factory=list)  # the text changed since packing
    outside: int = 0  # not handed out in the pack, or a second rating of one text

    def touched(self) -> list[tuple[int, str, int]]:
        """The keys of the ratings it adds or changes, as ``PackMergeEdit`` names them."""
        keys = [key for key, _rating in self.new] + [change.key for change in self.changes]
        return [(key.annotator_id, KIND_LETTER[key.kind], key.item_id) for key in keys]


def merge_pack(
    store: SessionStore,
    path: Path | str,
    *,
    skip_changed: bool = False,
    ctx: JobContext | None = None,
    source: str = "gui",
) -> MergeReport:
    """Bring one pack's ratings and corrections into ``store`` (one transaction), as one
    recorded edit from ``source`` (``core.edits.packs.PackMergeEdit``: one undo takes the
    whole merge back).

    The pack is a file from elsewhere: it is read as :func:`core.annotation.packs.read.
    read_pack` reads one (checked before any row is read, within bounds of time and
    memory, an older one upgraded as a private copy), and each rating it holds passes the
    checks a rating made in the app passes: one that does not is left out and said. A
    pack with ratings of texts changed since it was made is refused
    (:class:`ChangedTextsError`) unless ``skip_changed``."""
    pack = _open_pack(store, Path(path), ctx)
    with store.unit_of_work() as db:
        changed = _changed_texts(db, store, pack, skip_changed)
        annotators = _annotator_ids(db, {rating.annotator for rating in pack.ratings})
        plan = _plan(db, pack, annotators, changed)
        touched = plan.touched()
        # The ratings the merge adds or changes, read before it writes them: one recorded
        # edit, so one undo takes the whole merge back.
        edit = PackMergeEdit(pack.uid, pack.path.name, pack.annotator, touched) if touched else None
        before = canonical(edit.read(db)) if edit is not None else None
        added = _write(db, pack, plan)
        entry = None
        if edit is not None:
            after = canonical(edit.read(db))
            if after != before:
                entry = record_edit(db, edit, before, after, source=source, who=current_user())
    collect(entry)  # committed: a window's undo stack may offer its undo
    return MergeReport(
        pack.path,
        pack.uid,
        pack.annotator,
        added,
        len(plan.changes),
        plan.unchanged,
        tuple(plan.conflicts),
        tuple(plan.skipped),
        plan.outside,
        tuple(pack.refused),
    )


def _open_pack(store: SessionStore, path: Path, ctx: JobContext | None) -> _Pack:
    """The pack at ``path``, read, if it was made from this session (by its uid)."""
    from core.formats.common import check_readable
    from core.store.placing import file_identity

    path = check_readable(path.expanduser(), "an annotation pack (.taillens)")
    if file_identity(path) == file_identity(store.path):
        raise PackError(f"{path.name} is this session itself, not a pack made from it.")
    manifest, ratings, refused = read_pack(path, ctx)
    mine = session_uid(store)
    if mine is None or manifest["source_session"] != mine:
        raise PackError(
            f"{path.name} was made from another session "
            f"({manifest.get('source_name') or 'unknown'}), not from {store.path.name}; "
            "merge it into the session it came from."
        )
    digests = {ItemRef(LETTER_KIND[k], i): h for k, i, h in manifest["items"]}
    return _Pack(path, manifest["pack_uid"], manifest["annotator"], digests, ratings, refused)


def _changed_texts(
    db: Session, store: SessionStore, pack: _Pack, skip_changed: bool
) -> frozenset[ItemRef]:
    """The pack's texts changed or deleted since it was made; refused when any of them
    was rated, unless ``skip_changed``. The session must hold the pack's record."""
    record = db.scalar(select(AnnotationPack.id).where(AnnotationPack.pack_uid == pack.uid))
    if record is None:
        raise PackError(
            f"{store.path.name} has no record of the pack {pack.path.name} (it was made from a "
            "copy of this session); merge it into the session it was made from."
        )
    current = _current_hashes(db, list(pack.digests))
    changed = frozenset(r for r, h in pack.digests.items() if current.get(r) != h)
    rated = {rating.item for rating in pack.ratings}
    rated_changed = sorted(changed & rated, key=lambda r: (r.kind, r.id))
    if rated_changed and not skip_changed:
        raise ChangedTextsError(pack.path, rated_changed)
    return changed


def _annotator_ids(db: Session, names: set[str]) -> dict[str, int]:
    """Every annotator's id by name, the pack's annotators added where missing."""
    annotators = {name: id_ for name, id_ in db.execute(select(Annotator.name, Annotator.id))}
    for who in sorted(names - set(annotators)):
        added = Annotator(name=who)
        db.add(added)
        db.flush()
        annotators[who] = added.id
    return annotators


def _plan(
    db: Session, pack: _Pack, annotators: dict[str, int], changed: frozenset[ItemRef]
) -> _Plan:
    """Each rating of the pack matched with the session's rating of the same annotator and
    text (the rating rule) and sorted: new, changed in the pack since its last merge,
    unchanged, in conflict, of a changed text, or not the pack's to bring."""
    plan = _Plan()
    wanted: list[PackRating] = []
    for rating in pack.ratings:
        if rating.item not in pack.digests:
            plan.outside += 1
        elif rating.item in changed:
            plan.skipped.append(rating.item)
        else:
            wanted.append(rating)
    # One rating per annotator and text in the pack too: a second one is not the app's.
    mine = first_ratings(wanted, lambda r: _key(annotators, r))
    plan.outside += len(wanted) - len(mine)
    held = ratings_of(
        db,
        {key.annotator_id for key in mine},
        Annotation.id,
        Annotation.annotator_id,
        Annotation.verbalisation_id,
        Annotation.reference_id,
        *(getattr(Annotation, f) for f in RATING_FIELDS),
    )
    merged = _merged_stamps(db, pack.uid)
    for key, rating in mine.items():
        row = held.get(key)
        if row is None:
            plan.new.append((key, rating))
            continue
        kept = {f: getattr(row, f) for f in RATING_FIELDS}
        stamp = merged.get(row.id)
        if kept == rating.values:
            plan.unchanged += 1
        elif stamp is not None and _iso(rating.changed) > stamp:
            plan.changes.append(_Change(row.id, key, rating))
        else:
            plan.conflicts.append(Conflict(rating.item, rating.annotator, kept, rating.values))
    return plan


def _key(annotators: dict[str, int], rating: PackRating) -> RatingKey:
    return RatingKey(annotators[rating.annotator], rating.item.kind, rating.item.id)


def _merged_stamps(db: Session, pack_uid: str) -> dict[int, str]:
    """The ratings an earlier merge of this pack made, with the pack's change time then."""
    query = select(AnnotationOrigin.annotation_id, AnnotationOrigin.pack_updated_at).where(
        AnnotationOrigin.pack_uid == pack_uid
    )
    return {annotation_id: stamp for annotation_id, stamp in db.execute(query)}


def _write(db: Session, pack: _Pack, plan: _Plan) -> int:
    """Write the plan in bulk (a merge of 13,000 ratings is a few statements, not 13,000
    round trips), each new rating with its origin; returns how many were added."""
    now = datetime.now(UTC)
    if plan.changes:
        db.execute(
            update(Annotation),
            [
                {"id": c.row_id, "updated_at": c.rating.changed, **c.rating.values}
                for c in plan.changes
            ],
        )
        db.execute(
            update(AnnotationOrigin),
            [
                {
                    "annotation_id": c.row_id,
                    "pack_updated_at": _iso(c.rating.changed),
                    "merged_at": now,
                }
                for c in plan.changes
            ],
        )
    if not plan.new:
        return 0
    new_ids = db.scalars(
        insert(Annotation).returning(Annotation.id, sort_by_parameter_order=True),
        [
            {
                "annotator_id": key.annotator_id,
                "is_golden": False,
                **item_columns(key.kind, key.item_id),
                "created_at": rating.created,
                "updated_at": rating.changed,
                **rating.values,
            }
            for key, rating in plan.new
        ],
    ).all()
    db.execute(
        insert(AnnotationOrigin),
        [
            {
                "annotation_id": annotation_id,
                "pack_uid": pack.uid,
                "pack_file": pack.path.name,
                "annotator": rating.annotator,
                "pack_annotation_id": rating.pack_id,
                "pack_updated_at": _iso(rating.changed),
                "merged_at": now,
            }
            for annotation_id, (_, rating) in zip(new_ids, plan.new, strict=True)
        ],
    )
    return len(new_ids)


def merge_packs(
    store: SessionStore,
    paths: Sequence[Path | str],
    *,
    skip_changed: bool = False,
    ctx: JobContext | None = None,
    source: str = "gui",
) -> list[MergeReport]:
    """Merge each pack in turn; a pack that is refused stops nothing already merged (each
    pack is its own transaction and its own recorded edit) and its error names it."""
    reports = []
    for n, path in enumerate(paths):
        if ctx is not None:
            ctx.progress(n, len(paths), f"merging {Path(path).name}")
            ctx.check_cancelled()
        reports.append(merge_pack(store, path, skip_changed=skip_changed, ctx=ctx, source=source))
    if ctx is not None:
        ctx.progress(len(paths), len(paths), "merged")
    return reports


def merge_job(
    store: SessionStore,
    paths: Sequence[Path],
    *,
    skip_changed: bool = False,
    source: str = "gui",
) -> Job[list[MergeReport]]:
    from core.changes import Topic

    return Job(
        title=f"Merge {len(paths)} annotation pack{'s' if len(paths) != 1 else ''}",
        run=lambda ctx: merge_packs(
            store, paths, skip_changed=skip_changed, ctx=ctx, source=source
        ),
        kind="annotation-merge",
        params={"packs": [str(p) for p in paths]},
        writes=frozenset({Topic.ANNOTATIONS}),
    )
