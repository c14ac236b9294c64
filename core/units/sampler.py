"""Sampling data units from entities' claims (METHODS §5), reproducibly.

:func:`sample_units` is pure: the same details, entities, settings and seed give the same
drafts, because every random choice comes from one ``numpy.random.default_rng(seed)`` and
entities and claims are visited in the order given. Chains and mixed units follow item
values whose details are present; an entity that cannot give the requested shape and size
is skipped with a reason, and every draft is checked with :func:`core.units.shapes.unit_structure`
before it is returned, so an invalid unit is never produced.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.changes import Topic
from core.errors import UserFacingError
from core.jobs import Job, JobContext
from core.labels import plural
from core.store import SessionStore
from core.units.builder.draft import UnitDraft, claim_triple
from core.units.builder.render import label_index, parallel_languages, render_unit
from core.units.builder.saved import record_saved_units, save_unit
from core.units.claim_filters import ClaimFilterSettings, drop_reasons
from core.units.shapes import MAX_SIZE, MIN_SIZE, Shape, Triple, unit_structure
from core.vocab import LANGUAGES
from core.wikidata.records import ClaimRecord, EntityDetails

SHAPES: tuple[str, ...] = tuple(s.value for s in Shape)
SIZES: tuple[int, ...] = tuple(range(MIN_SIZE, MAX_SIZE + 1))
_ATTEMPTS = 8  # random restarts before a shape/size is declared impossible for an entity
NOT_PARALLEL = "not parallel (a label missing in {langs})"

Details = Mapping[str, EntityDetails]


@dataclass(frozen=True)
class SampleResult:
    drafts: tuple[UnitDraft, ...]
    skipped: dict[str, int]  # reason -> entities (or extra units) skipped for it
    by_entity: dict[str, tuple[int, ...]]  # qid -> indices into drafts
    skipped_entities: dict[str, str] = field(default_factory=dict)  # qid -> first reason


class _Impossible(Exception):
    """This entity cannot give the shape and size asked for (the message says why)."""


def _kept(
    details: Details, qid: str, subjects: frozenset[str], filters: ClaimFilterSettings
) -> list[ClaimRecord]:
    entity = details.get(qid)
    if entity is None:
        return []
    claims = entity.claims
    return [
        c for c, r in zip(claims, drop_reasons(claims, filters, subjects), strict=True) if r is None
    ]


def _followable(claim: ClaimRecord, details: Details) -> bool:
    return claim.value_type == "wikibase-item" and claim.value in details


def _shuffled(rng: np.random.Generator, items: Sequence[ClaimRecord]) -> list[ClaimRecord]:
    return [items[i] for i in rng.permutation(len(items))]


def _sibling(
    root: str, size: int, details: Details, filters: ClaimFilterSettings, rng: np.random.Generator
) -> list[ClaimRecord]:
    kept = _unique(_kept(details, root, frozenset({root}), filters))
    if len(kept) < size:
        raise _Impossible("too few claims" if kept else "no claim kept by the filters")
    chosen = sorted(rng.choice(len(kept), size=size, replace=False).tolist())
    return [kept[i] for i in chosen]  # the entity's own order reads best


def _unique(claims: Sequence[ClaimRecord], taken: Collection[Triple] = ()) -> list[ClaimRecord]:
    seen = set(taken)
    out = []
    for claim in claims:
        triple = claim_triple(claim)
        if triple not in seen:
            seen.add(triple)
            out.append(claim)
    return out


def _chain(
    root: str, size: int, details: Details, filters: ClaimFilterSettings, rng: np.random.Generator
) -> list[ClaimRecord]:
    """A random path root → … of ``size`` claims, each subject used once (depth-first with
    backtracking, so a dead end tries the next branch)."""

    def walk(node: str, path: list[ClaimRecord], visited: frozenset[str]) -> list | None:
        if len(path) == size:
            return path
        last = len(path) == size - 1
        for claim in _shuffled(rng, _unique(_kept(details, node, visited, filters))):
            if last:
                return [*path, claim]
            if (
                _followable(claim, details)
                and claim.value is not None
                and claim.value not in visited
            ):
                found = walk(claim.value, [*path, claim], visited | {claim.value})
                if found:
                    return found
        return None

    found = walk(root, [], frozenset({root}))
    if found is None:
        raise _Impossible(f"no chain of size {size}")
    return found


def _mixed(
    root: str, size: int, details: Details, filters: ClaimFilterSettings, rng: np.random.Generator
) -> list[ClaimRecord]:
    """A two-claim chain, then claims of subjects already in the unit (or of items it
    reaches) until ``size``; the third claim repeats a subject, which makes it mixed."""
    for _ in range(_ATTEMPTS):
        try:
            claims = _chain(root, 2, details, filters, rng)
        except _Impossible:
            break
        subjects = {root, claims[1].subject_qid}
        reached = set(subjects) | {
            c.value for c in claims if _followable(c, details) and c.value is not None
        }
        while len(claims) < size:
            pool_nodes = sorted(subjects) if len(claims) == 2 else sorted(reached)
            taken = [claim_triple(c) for c in claims]
            pool = _unique(
                [c for n in pool_nodes for c in _kept(details, n, frozenset(subjects), filters)],
                taken,
            )
            pool = [c for c in pool if claim_triple(c) not in taken]
            if not pool:
                break
            claim = pool[int(rng.integers(len(pool)))]
            claims.append(claim)
            subjects.add(claim.subject_qid)
            if _followable(claim, details) and claim.value is not None:
                reached.add(claim.value)
        if len(claims) == size:
            return claims
    raise _Impossible(f"no mixed unit of size {size}")


_BUILDERS = {"sibling": _sibling, "chain": _chain, "mixed": _mixed}


def _build(
    shape: str,
    root: str,
    size: int,
    details: Details,
    filters: ClaimFilterSettings,
    rng: np.random.Generator,
) -> list[ClaimRecord]:
    if shape == "chain" and size < 2:
        raise _Impossible("a chain needs at least 2 triples")
    if shape == "mixed" and size < 3:
        raise _Impossible("a mixed unit needs at least 3 triples")
    claims = _BUILDERS[shape](root, size, details, filters, rng)
    built = unit_structure([claim_triple(c) for c in claims], root)
    # A guard, not a filter: the builders only make valid units of the shape asked for.
    if not built.valid or built.shape is None or built.shape.value != shape:
        raise _Impossible(f"no {shape} of size {size}")
    return claims


def _check_sample_settings(
    shapes: Sequence[str], sizes: Sequence[int], per_entity: int, parallel: Sequence[str]
) -> None:
    unknown = [s for s in shapes if s not in _BUILDERS]
    if unknown or not shapes:
        raise ValueError(f"unknown shapes {unknown}: use {', '.join(SHAPES)}")
    if not sizes or any(not MIN_SIZE <= s <= MAX_SIZE for s in sizes):
        raise ValueError(f"sizes must be in {MIN_SIZE}..{MAX_SIZE}, got {list(sizes)}")
    if per_entity < 1:
        raise ValueError("per_entity must be at least 1")
    unknown_langs = [lang for lang in parallel if lang not in LANGUAGES]
    if unknown_langs:
        raise ValueError(
            f"parallel languages must be among {', '.join(LANGUAGES)}, got {unknown_langs}"
        )


@dataclass
class _Draws:
    """What the draws of one entity met so far: the first reason a draw could not be
    built, and whether a unit could be built but not a parallel one."""

    first_reason: str = ""
    saw_not_parallel: bool = False


class _Sampler:
    """The draws of :func:`sample_units`: one rng, taken in the same order for the same
    details, entities and settings."""

    def __init__(
        self,
        details: Details,
        shapes: Sequence[str],
        sizes: Sequence[int],
        seed: int,
        filters: ClaimFilterSettings,
        parallel: Sequence[str],
    ) -> None:
        self.details = details
        self.filters = filters
        self.parallel = tuple(parallel)
        self.labels = label_index(details) if parallel else {}
        self.not_parallel = NOT_PARALLEL.format(langs=", ".join(parallel))
        self.rng = np.random.default_rng(seed)
        self.combos = [(shape, size) for shape in shapes for size in sizes]

    def entity_units(self, qid: str, per_entity: int) -> tuple[list[list[ClaimRecord]], str | None]:
        """Up to ``per_entity`` distinct units of ``qid``, and why no (further) one could be
        made (None when every one was)."""
        units: list[list[ClaimRecord]] = []
        seen: set[frozenset[Triple]] = set()
        draws = _Draws()
        for _ in range(per_entity):
            claims = self._draw(qid, seen, draws)
            if claims is None:
                return units, self._reason(units, draws)
            seen.add(frozenset(claim_triple(c) for c in claims))
            units.append(claims)
        return units, None

    def _draw(
        self, qid: str, seen: set[frozenset[Triple]], draws: _Draws
    ) -> list[ClaimRecord] | None:
        """A unit of ``qid`` not in ``seen``: the shapes and sizes in a random order until
        one gives one."""
        for index in self.rng.permutation(len(self.combos)):
            shape, size = self.combos[int(index)]
            claims = self._draw_combination(qid, shape, size, seen, draws)
            if claims is not None:
                return claims
        return None

    def _draw_combination(
        self, qid: str, shape: str, size: int, seen: set[frozenset[Triple]], draws: _Draws
    ) -> list[ClaimRecord] | None:
        # A draw that is not parallel is drawn again (a few times) before the shape and
        # size are given up: one unlabelled claim must not sink an entity.
        for _attempt in range(_ATTEMPTS if self.parallel else 1):
            try:
                candidate = self._build_parallel(shape, qid, size)
            except _Impossible as why:
                draws.first_reason = draws.first_reason or str(why)
                if str(why) == self.not_parallel:
                    draws.saw_not_parallel = True
                    continue
                return None
            new = frozenset(claim_triple(c) for c in candidate) not in seen
            return candidate if new else None
        return None

    def _build_parallel(self, shape: str, qid: str, size: int) -> list[ClaimRecord]:
        candidate = _build(shape, qid, size, self.details, self.filters, self.rng)
        if self.parallel and not set(self.parallel) <= parallel_languages(
            render_unit(
                UnitDraft(qid, tuple(candidate)), self.details, self.parallel, labels=self.labels
            )
        ):
            raise _Impossible(self.not_parallel)
        return candidate

    def _reason(self, made: list[list[ClaimRecord]], draws: _Draws) -> str:
        if made:
            return "no further distinct unit"
        if draws.saw_not_parallel:
            return self.not_parallel
        if len(self.combos) > 1:
            return "no requested shape and size"
        return draws.first_reason


def sample_units(
    details_by_qid: Details,
    entities: Sequence[str],
    *,
    per_entity: int = 1,
    shapes: Sequence[str] = SHAPES,
    sizes: Sequence[int] = SIZES,
    seed: int = 0,
    filters: ClaimFilterSettings = ClaimFilterSettings(),  # noqa: B008 - frozen, shared
    category: str | None = None,
    tiers: Mapping[str, tuple[str | None, str | None]] | None = None,
    parallel: Sequence[str] = (),
) -> SampleResult:
    """Up to ``per_entity`` distinct units per entity, each of a shape and size drawn from
    ``shapes`` × ``sizes``; when the draw cannot be built the other combinations are
    tried in a random order before the entity is skipped.

    ``parallel`` (e.g. ``("en", "it", "es")``, as TailNLG's units are): only units where
    every subject, predicate and object has a label in each of these languages (METHODS
    §5); a draw that is not parallel counts as one that cannot be built."""
    _check_sample_settings(shapes, sizes, per_entity, parallel)
    sampler = _Sampler(details_by_qid, shapes, sizes, seed, filters, parallel)
    tiers = tiers or {}
    drafts: list[UnitDraft] = []
    skipped: Counter[str] = Counter()
    by_entity: dict[str, tuple[int, ...]] = {}
    skipped_entities: dict[str, str] = {}
    for qid in entities:
        if qid not in details_by_qid:
            skipped["entity details not loaded"] += 1
            skipped_entities[qid] = "entity details not loaded"
            continue
        units, reason = sampler.entity_units(qid, per_entity)
        if reason is not None:
            skipped[reason] += 1
            if not units:
                skipped_entities[qid] = reason
        tier, sub_tier = tiers.get(qid, (None, None))
        for claims in units:
            drafts.append(UnitDraft(qid, tuple(claims), category, tier, sub_tier, filters))
        if units:
            by_entity[qid] = tuple(range(len(drafts) - len(units), len(drafts)))
    return SampleResult(tuple(drafts), dict(skipped), by_entity, skipped_entities)


# --- as a job on a session --------------------------------------------------------------


@dataclass(frozen=True)
class SampleSummary:
    category: str
    entities: int  # entities considered
    units: int  # units saved
    unit_ids: tuple[int, ...]
    skipped: dict[str, int]
    shapes: dict[str, int]


@dataclass(frozen=True)
class SampleRequest:
    """What to sample, as the Units panel's Sample dialog and ``taillens units sample``
    ask for it: the settings of :func:`sample_job` besides the session, the source and
    the category."""

    shapes: tuple[str, ...] = SHAPES
    sizes: tuple[int, ...] = SIZES
    per_entity: int = 1
    seed: int = 0
    tiers: tuple[str, ...] | None = None  # tier or sub-tier names; None: every member
    limit_entities: int | None = None
    parallel: bool = False  # only units with every label in each language
    filters: ClaimFilterSettings = ClaimFilterSettings()  # noqa: RUF009 - frozen, shared

    def job_params(self) -> dict[str, object]:
        """The settings as the job's history row keeps them."""
        return {
            "tiers": sorted(self.tiers or ()),
            "per_entity": self.per_entity,
            "shapes": list(self.shapes),
            "sizes": list(self.sizes),
            "seed": self.seed,
            "limit_entities": self.limit_entities,
            "parallel": self.parallel,
        }


def sample_request_job(
    store: SessionStore,
    source: object | None,
    category: str,
    request: SampleRequest,
    *,
    recorded_as: str = "gui",
) -> Job[SampleSummary]:
    """:func:`sample_job` with the settings of a :class:`SampleRequest` (its units one
    recorded edit from ``recorded_as``)."""
    return sample_job(
        store,
        source,
        category,
        tiers=request.tiers,
        per_entity=request.per_entity,
        shapes=request.shapes,
        sizes=request.sizes,
        seed=request.seed,
        filters=request.filters,
        limit_entities=request.limit_entities,
        parallel=request.parallel,
        recorded_as=recorded_as,
    )


def _load(
    store: SessionStore, source: object | None, qid: str, cache: dict[str, EntityDetails | None]
) -> EntityDetails | None:
    from core.wikidata.cache import load_entity
    from core.wikidata.fetch import fetch_entity
    from core.wikidata.sources import SourceError

    if qid in cache:
        return cache[qid]
    details = load_entity(store, qid)
    if details is None and source is not None:
        try:
            details = fetch_entity(store, source, qid)  # type: ignore[arg-type]
        except SourceError:
            details = None  # an item the source does not have cannot be followed
    cache[qid] = details
    return details


def _members_to_sample(
    store: SessionStore, category: str, tiers: Collection[str] | None, limit: int | None
) -> tuple[list[str], dict[str, tuple[str | None, str | None]]]:
    """The members of ``category`` to sample, in QID order, after the tier filter (a tier
    or a sub-tier name) and up to ``limit``; and every member's (tier, sub-tier)."""
    from core.tiers.stored import load_member_tiers, no_members_in_tiers_message
    from core.wikidata.cache import load_category

    table = load_category(store, category)
    member_tiers = load_member_tiers(store, category)
    qids = [
        q for q in table.qids if not tiers or set(member_tiers.get(q, (None, None))) & set(tiers)
    ]
    if tiers and table.qids and not qids:
        raise UserFacingError(no_members_in_tiers_message(category, tiers, member_tiers))
    return (qids if limit is None else qids[:limit]), member_tiers


def _load_around(
    store: SessionStore,
    source: object | None,
    qid: str,
    depth: int,
    filters: ClaimFilterSettings,
    cache: dict[str, EntityDetails | None],
    details: dict[str, EntityDetails],
) -> None:
    """Into ``details``: ``qid``'s and, level by level, those of the items its kept claims
    lead to, up to ``depth`` steps (the chains and mixed units that may be drawn)."""
    frontier, level = [qid], 0
    while frontier and level <= depth:
        following: list[str] = []
        for item in frontier:
            found = _load(store, source, item, cache)
            if found is not None and item not in details:
                details[item] = found
                if level < depth:
                    kept = _kept(details, item, frozenset(), filters)
                    following.extend(
                        c.value
                        for c in kept
                        if c.value_type == "wikibase-item" and c.value and c.value not in cache
                    )
        frontier, level = sorted(set(following)), level + 1


@dataclass
class _Saved:
    """What a sample saved so far (the job's partial result is ``ids``)."""

    ids: list[int] = field(default_factory=list)
    uids: list[str] = field(default_factory=list)  # for the one edit that records them
    skipped: Counter[str] = field(default_factory=Counter)
    shapes: Counter[str] = field(default_factory=Counter)


def _save_drafts(
    store: SessionStore,
    drafts: Sequence[UnitDraft],
    details: Details,
    langs: Sequence[str],
    category: str,
    source_name: str,
    saved: _Saved,
) -> None:
    """Each draft rendered and saved in its own transaction, as it is made."""
    labels = label_index(details)
    for draft in drafts:
        rendered = render_unit(draft, details, langs, labels=labels)
        saved.uids.append(uuid.uuid4().hex)
        saved.ids.append(
            save_unit(
                store,
                draft,
                rendered,
                uid=saved.uids[-1],
                origin="sampled",
                category=category,
                source=source_name,
            )
        )
        saved.shapes[unit_structure(draft.triples, draft.root_qid).shape or ""] += 1


def _sample(
    store: SessionStore,
    source: object | None,
    category: str,
    request: SampleRequest,
    langs: Sequence[str],
    members: tuple[list[str], dict[str, tuple[str | None, str | None]]],
    ctx: JobContext,
    saved: _Saved,
) -> None:
    """:func:`sample_job`'s work on ``members`` (:func:`_members_to_sample`), each unit
    saved into ``saved`` as it is made."""
    source_name = getattr(source, "name", None) or "session cache"
    shapes, sizes, filters = request.shapes, request.sizes, request.filters
    qids, member_tiers = members
    depth = max(sizes) - 1 if set(shapes) & {"chain", "mixed"} else 0
    cache: dict[str, EntityDetails | None] = {}
    details: dict[str, EntityDetails] = {}
    for n, qid in enumerate(qids):
        ctx.check_cancelled()
        ctx.progress(n, len(qids), qid)
        _load_around(store, source, qid, depth, filters, cache, details)
        # One rng per entity, derived from the seed and its position, so a unit does not
        # change when another entity's details arrive or go.
        result = sample_units(
            details,
            [qid],
            per_entity=request.per_entity,
            shapes=shapes,
            sizes=sizes,
            seed=request.seed * 1_000_003 + n,
            filters=filters,
            category=category,
            tiers=member_tiers,
            parallel=tuple(langs) if request.parallel else (),
        )
        saved.skipped.update(result.skipped)
        _save_drafts(store, result.drafts, details, langs, category, source_name, saved)


def sample_job(
    store: SessionStore,
    source: object | None,
    category: str,
    *,
    tiers: Collection[str] | None = None,
    per_entity: int = 1,
    shapes: Sequence[str] = SHAPES,
    sizes: Sequence[int] = SIZES,
    seed: int = 0,
    filters: ClaimFilterSettings = ClaimFilterSettings(),  # noqa: B008 - frozen, shared
    limit_entities: int | None = None,
    langs: Sequence[str] = LANGUAGES,
    parallel: bool = False,
    recorded_as: str = "gui",
) -> Job[SampleSummary]:
    """Sample units for the members of ``category`` held in the session and save them.

    Details come from the session cache; with a ``source`` the missing ones are fetched
    (and kept). Members are taken in QID order, after the tier filter (a tier or a
    sub-tier name), up to ``limit_entities``. Chains and mixed units follow item values
    up to ``max(sizes) - 1`` steps from each member. With ``parallel`` only units with
    every label present in each of ``langs`` are saved (TailNLG's are parallel in en, it
    and es).

    Each unit is saved in its own transaction as it is made, so a stopped (cancelled,
    failed) sample keeps what it saved; when it ends, done or not, the units it saved are
    recorded as one edit from ``recorded_as`` (``record_saved_units``): one undo takes
    them all out."""
    source_name = getattr(source, "name", None) or "session cache"
    request = SampleRequest(
        tuple(shapes),
        tuple(sizes),
        per_entity,
        seed,
        None if tiers is None else tuple(tiers),
        limit_entities,
        parallel,
        filters,
    )

    def run(ctx: JobContext) -> SampleSummary:
        members = _members_to_sample(store, category, request.tiers, limit_entities)
        saved = _Saved()
        job.partial = saved.ids
        try:
            _sample(store, source, category, request, langs, members, ctx, saved)
        finally:
            record_saved_units(
                store,
                saved.uids,
                source=recorded_as,
                words=lambda n: f"{plural(n, 'unit')} sampled from {category}",
            )
        considered = len(members[0])
        ctx.progress(considered, considered, "done")
        return SampleSummary(
            category,
            considered,
            len(saved.ids),
            tuple(saved.ids),
            dict(saved.skipped),
            {str(k): v for k, v in saved.shapes.items()},
        )

    job: Job[SampleSummary] = Job(
        title=f"Sample units of {category}",
        run=run,
        kind="units.sample",
        writes=frozenset({Topic.UNITS, Topic.ENTITIES}),
        params={"category": category, "source": source_name, **request.job_params()},
    )
    return job
