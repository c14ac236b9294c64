"""Annotation queues: which texts an annotator rates next (:class:`QueueFilter`), the
choices a filter offers, and :class:`AnnotationQueue`, which saves as it goes and undoes
its saves in order."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from core.annotation.ratings import (
    promote_correction,
    rating_of,
    save_rating,
    undo_last_rating,
    undo_rating,
)
from core.annotation.types import (
    FLUENCY_MAX,
    FLUENCY_MIN,
    REFERENCE,
    VERBALISATION,
    AnnotationError,
    AnnotatorInfo,
    ItemRef,
    QueueFilter,
    QueueItem,
    QueueOptions,
    QueueProgress,
    Rating,
    SavedRating,
    StoredRating,
    item_ref,
)
from core.groups import (
    category_name,
    matches_tier,
    order_key,
    subtier_group,
    tier_group,
)
from core.store import SessionStore
from core.store.models import (
    Annotation,
    Annotator,
    Category,
    DataUnit,
    ModelRun,
    UnitReference,
    UnitTriple,
    Verbalisation,
)
from core.vocab import run_name


def _triples_by_unit(db: Session, unit_ids: set[int]) -> dict[tuple[int, str], list[tuple]]:
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


def rateable_texts(db: Session, target: str, *, parsed_only: bool = True) -> list[dict[str, Any]]:
    """Every rateable text with its unit's group fields, as plain dicts.

    ``parsed_only`` leaves out verbalisations whose reply could not be parsed (no text to
    rate); aggregates still count ratings such texts got elsewhere (e.g. imported)."""
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
                    "model": run_name(row.system_name, row.model_id),
                    "quality": None,
                }
            )
    elif target == "references":
        references = select(UnitReference).order_by(
            UnitReference.unit_id, UnitReference.lang, UnitReference.id
        )
        for reference in db.scalars(references):
            found.append(
                {
                    "ref": ItemRef(REFERENCE, reference.id),
                    "unit": units[reference.unit_id],
                    "lang": reference.lang,
                    "text": reference.text,
                    "run_id": None,
                    "model": None,
                    "quality": reference.quality,
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


def queue_options(store: SessionStore) -> QueueOptions:
    """The choices of :class:`QueueFilter` the session offers, from distinct (unit,
    language, run) rows: what the items of a queue of verbalisations and one of references
    (any annotator, rated or not, no golden items) show, without building either."""
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
            sorted({run_name(r.system_name, r.model_id) for r in texts}, key=str.casefold)
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


# Each other rating of a text: who gave it, its fluency and its adequacy.
_Given = tuple[int, int | None, int | None]


class _QueueInputs(NamedTuple):
    """What a queue is built from, read in one snapshot."""

    annotator: AnnotatorInfo
    candidates: list[dict[str, Any]]  # every rateable text of the target (rateable_texts)
    ratings: dict[ItemRef, list[_Given]]  # the ratings of each text (not golden answers)
    golden: set[ItemRef]  # texts with a known answer
    triples: dict[tuple[int, str], list[Any]]  # each unit's triples by language


def build_queue(
    store: SessionStore, annotator_id: int, spec: QueueFilter | None = None
) -> AnnotationQueue:
    """The items ``annotator_id`` should rate next under ``spec`` (see :class:`QueueFilter`)."""
    spec = spec or QueueFilter()
    _check_filter(spec)
    inputs = _read_inputs(store, annotator_id, spec)
    regular, golden_pool, rated_earlier = _select(inputs, spec)
    ordered = _order(regular, golden_pool, spec, annotator_id)
    items = [_queue_item(c, inputs.triples) for c in ordered]
    return AnnotationQueue(
        store, inputs.annotator, items, spec, rated_earlier=frozenset(rated_earlier)
    )


def _check_filter(spec: QueueFilter) -> None:
    if not 0 <= spec.golden_rate <= 0.5:
        raise AnnotationError(
            f"The golden item rate must lie between 0 and 0.5, not {spec.golden_rate}."
        )
    if spec.limit is not None and spec.limit < 1:
        raise AnnotationError("A queue limit must be at least 1.")


def _read_inputs(store: SessionStore, annotator_id: int, spec: QueueFilter) -> _QueueInputs:
    with store.snapshot() as db:
        annotator = db.get(Annotator, annotator_id)
        if annotator is None:
            raise AnnotationError(f"There is no annotator {annotator_id} in this session.")
        info = AnnotatorInfo(annotator.id, annotator.name, bool(annotator.is_anonymous))
        candidates = rateable_texts(db, spec.target)
        ratings: dict[ItemRef, list[_Given]] = defaultdict(list)
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
            ref = item_ref(row.verbalisation_id, row.reference_id)
            if row.is_golden:
                golden.add(ref)
            else:
                ratings[ref].append((row.annotator_id, row.fluency, row.adequacy))
        triples = _triples_by_unit(db, {c["unit"].id for c in candidates})
    return _QueueInputs(info, candidates, ratings, golden, triples)


def _wanted(spec: QueueFilter) -> Callable[[dict[str, Any]], bool]:
    """Whether a text passes the filter's choices (model, run, language, category, tier,
    quality); an empty choice lets every text through."""
    models, langs = set(spec.models), set(spec.langs)
    categories, tiers = set(spec.categories), set(spec.tiers)
    runs, qualities = set(spec.run_ids), set(spec.qualities)

    def wanted(c: dict[str, Any]) -> bool:
        return (
            (not models or c["model"] in models)
            and (not runs or c["run_id"] in runs)
            and (not langs or c["lang"] in langs)
            and (not categories or c["category"] in categories)
            and (not tiers or matches_tier(tiers, *c["raw_tier"]))
            and (not qualities or c["quality"] in qualities)
        )

    return wanted


def _select(
    inputs: _QueueInputs, spec: QueueFilter
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], set[ItemRef]]:
    """The texts of the filter (each with its disagreement), the golden items the
    annotator has not rated, and the texts left out as rated already."""
    me = inputs.annotator.id

    def rated_by_me(ref: ItemRef) -> bool:
        return any(a == me for a, _, _ in inputs.ratings.get(ref, ()))

    wanted = _wanted(spec)
    regular, golden_pool = [], []
    rated_earlier: set[ItemRef] = set()  # of this filter, left out as rated already
    for c in inputs.candidates:
        if c["ref"] in inputs.golden:
            if not rated_by_me(c["ref"]):
                golden_pool.append(c)
            continue
        if not wanted(c):
            continue
        if spec.unrated_only and rated_by_me(c["ref"]):
            rated_earlier.add(c["ref"])
            continue
        rs = inputs.ratings.get(c["ref"], ())
        c["disagreement"] = disagreement(
            [f for _, f, _ in rs if f is not None], [a for _, _, a in rs if a is not None]
        )
        regular.append(c)
    return regular, golden_pool, rated_earlier


def _order(
    regular: list[dict[str, Any]],
    golden_pool: list[dict[str, Any]],
    spec: QueueFilter,
    annotator_id: int,
) -> list[dict[str, Any]]:
    """The queue's order: disagreements first when asked, cut to the limit, shuffled per
    annotator in blind mode, then golden items placed at seeded positions."""
    if spec.disagreements_first:
        regular.sort(key=lambda c: -c["disagreement"])  # stable: ties keep unit order
    if spec.limit is not None:
        regular = regular[: spec.limit]
    if spec.blind:  # an order of the annotator's own, the same every time
        order = np.random.default_rng([spec.seed, annotator_id]).permutation(len(regular))
        regular = [regular[int(i)] for i in order]
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
    return ordered


def _queue_item(c: dict[str, Any], triples: dict[tuple[int, str], list[Any]]) -> QueueItem:
    """A queue's item; its triples in the text's language, else in English."""
    unit = c["unit"]
    lang = c["lang"] if (unit.id, c["lang"]) in triples else "en"
    return QueueItem(
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


class AnnotationQueue:
    """The items of one annotator's queue, saving as it goes; Ctrl+Z undoes saves in order.

    Progress is read from the session, so ratings saved in another window count too;
    it counts the texts of the filter, those left out of the queue as rated already
    (``rated_earlier``) included, so a queue rebuilt after a restart does not read 0.
    """

    def __init__(
        self,
        store: SessionStore,
        annotator: AnnotatorInfo,
        items: Sequence[QueueItem],
        spec: QueueFilter,
        rated_earlier: frozenset[ItemRef] = frozenset(),
    ) -> None:
        self.store = store
        self.rated_earlier = rated_earlier
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

    def _mine(self) -> set[ItemRef]:
        """Every text the annotator has rated (not golden items)."""
        with self.store.snapshot() as db:
            rows = db.execute(
                select(Annotation.verbalisation_id, Annotation.reference_id).where(
                    Annotation.annotator_id == self.annotator.id, Annotation.is_golden.is_(False)
                )
            ).all()
        return {item_ref(v, r) for v, r in rows}

    def rated(self) -> set[ItemRef]:
        """Items of this queue the annotator has rated."""
        return self._mine() & {item.ref for item in self.items}

    def progress(self) -> QueueProgress:
        """Texts of the filter rated by the annotator, of all the filter's texts: the
        queue's items and those left out as rated already."""
        counted = {item.ref for item in self.items} | self.rated_earlier
        return QueueProgress(len(self._mine() & counted), len(counted))

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
