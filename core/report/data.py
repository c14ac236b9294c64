"""The per-item values the report compares, read from a session in one pass.

An :class:`Observation` is one sentence-level score of one verbalisation (scores rows
of CONVENTIONS.md: ``level = 'sentence'``, ``verbalisation_id`` set, reference-based
metrics once per quality in ``details.quality``), with the groups it belongs to. Human
ratings join as two more metrics, per item as METHODS §9 aggregates them:
``human_fluency`` (the item's mean fluency) and ``human_adequacy`` (its share of Yes).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from core.errors import UserFacingError
from core.groups import (
    HUMAN_ADEQUACY,
    HUMAN_FLUENCY,
    UNKNOWN,
    category_name,
    dataset_name,
    metric_order,
    subtier_group,
    tier_group,
)
from core.labels import plural
from core.vocab import run_name

# Scores of reference texts themselves (e.g. ESA of a gold and a silver reference) are
# items of this pseudo-model, so gold and silver texts can be compared like models' texts.
REFERENCES_MODEL = "(references)"


@dataclass(frozen=True, slots=True)
class ItemContext:
    """The groups one verbalisation belongs to (shared by all its observations)."""

    verbalisation_id: int | None  # None for a reference text
    unit_id: int
    run_id: int | None
    model: str  # REFERENCES_MODEL for reference texts
    lang: str
    tier: str
    subtier: str
    category: str
    statement_count: int | None = None
    reference_id: int | None = None
    reference_quality: str | None = None  # gold / silver, of a reference text
    dataset: str = UNKNOWN  # TailNLG / WebNLG / WDV / Wikidata (groups.dataset_name)
    candidate_index: int = 0
    model_tail: str = UNKNOWN  # model_head / model_tail: the likelihood cut-off's sub-tier

    @property
    def is_reference(self) -> bool:
        return self.reference_id is not None


@dataclass(frozen=True, slots=True)
class Observation:
    """One per-item value of one metric (``quality`` for reference-based metrics)."""

    metric: str
    value: float
    quality: str | None
    item: ItemContext

    def group(self, dimension: str) -> str | None:
        if dimension == "quality":
            return self.quality
        return getattr(self.item, dimension)

    @property
    def verbalisation_id(self) -> int | None:
        return self.item.verbalisation_id

    @property
    def model(self) -> str:
        return self.item.model

    @property
    def lang(self) -> str:
        return self.item.lang

    @property
    def tier(self) -> str:
        return self.item.tier

    @property
    def subtier(self) -> str:
        return self.item.subtier

    @property
    def category(self) -> str:
        return self.item.category

    @property
    def statement_count(self) -> int | None:
        return self.item.statement_count


@dataclass(frozen=True)
class RunInfo:
    """A run's settings as the report prints them."""

    id: int
    name: str
    kind: str
    model_id: str
    status: str
    seed: int | None
    fingerprint: str | None
    parameters: dict[str, Any]
    prompt_templates: dict[str, Any]
    software: dict[str, Any]
    started_at: str | None


@dataclass(frozen=True)
class RunUse:
    """How much of one run a report used: its items (one per unit, language and candidate)
    that have values, and those left out because a later picked run of the same model has
    the same item (overlapping runs are never pooled)."""

    run_id: int
    model: str
    items: int
    superseded: int
    superseded_by: tuple[int, ...] = ()


@dataclass
class ScoreFrame:
    """Everything the report needs from a session, as plain data."""

    observations: list[Observation] = field(default_factory=list)
    runs: list[RunInfo] = field(default_factory=list)
    signatures: list[tuple[str, str]] = field(default_factory=list)  # (metric, signature)
    corpus_rows: int = 0
    picked_runs: tuple[int, ...] | None = None  # None: the latest output of each model
    run_use: list[RunUse] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Values per metric, made once for the observations they were counted on (the panel
    # shows them after every build; a copy made with dataclasses.replace counts afresh).
    _counted: tuple[int, int, dict[str, int]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def metrics(self) -> list[str]:
        """Metrics present, in the order of the study table, then alphabetical."""
        return sorted(self.counts(), key=metric_order)

    def counts(self) -> dict[str, int]:
        observations = self.observations
        counted = self._counted
        if counted is None or counted[:2] != (id(observations), len(observations)):
            counted = (
                id(observations),
                len(observations),
                dict(Counter(o.metric for o in observations)),
            )
            self._counted = counted
        return dict(counted[2])

    def __bool__(self) -> bool:
        return bool(self.observations)


_SCORES_SQL = """
SELECT s.verbalisation_id, s.reference_id, s.metric, s.value,
       json_extract(s.details, '$.quality') AS quality
FROM scores s
WHERE s.level = 'sentence' AND s.value IS NOT NULL
  AND (s.verbalisation_id IS NOT NULL OR s.reference_id IS NOT NULL) AND {usable_scores}
ORDER BY s.id
"""

_REFERENCES_SQL = """
SELECT ur.id AS reference_id, ur.unit_id, ur.lang, ur.quality, u.tier, u.sub_tier,
       u.category_id, u.attributes, e.statement_count, cm.model_tier
FROM unit_references ur
JOIN data_units u ON u.id = ur.unit_id
LEFT JOIN entities e ON e.qid = u.root_qid
LEFT JOIN category_members cm ON cm.category_id = u.category_id AND cm.entity_id = e.id
WHERE ur.id IN (SELECT reference_id FROM scores WHERE reference_id IS NOT NULL)
  AND {usable_references}
"""

_ITEMS_SQL = """
SELECT v.id AS verbalisation_id, v.unit_id, v.lang, v.run_id, r.system_name, r.model_id,
       v.candidate_index, u.tier, u.sub_tier, u.category_id, u.attributes, e.statement_count,
       cm.model_tier
FROM verbalisations v
JOIN model_runs r ON r.id = v.run_id
JOIN data_units u ON u.id = v.unit_id
LEFT JOIN entities e ON e.qid = u.root_qid
LEFT JOIN category_members cm ON cm.category_id = u.category_id AND cm.entity_id = e.id
WHERE {usable_verbalisations}
"""


def _attributes(raw: Any) -> Any:

    if isinstance(raw, str):
        from core.io.bounded import stored_json

        return stored_json(raw, None)
    return raw


def _rows(db: Any, sql: str) -> list[tuple[Any, ...]]:
    """Every row of a plain SQL read, as tuples, from the session's own SQLite connection
    in the snapshot's transaction (SQLAlchemy's row objects, made one at a time, took
    longer than the reads of a challenge-sized session themselves)."""
    return db.connection().connection.driver_connection.execute(sql).fetchall()


def _contexts(db: Any, categories: dict[int, str]) -> dict[tuple[str, int], ItemContext]:
    """Every verbalisation's groups, by id (one query; a unit's category parsed once)."""
    from core.store.integrity import usable_rows

    unit_groups: dict[int, tuple[str, str]] = {}

    def groups_of(unit_id: int, category_id: Any, raw_attributes: Any) -> tuple[str, str]:
        groups = unit_groups.get(unit_id)
        if groups is None:
            attributes = _attributes(raw_attributes)
            groups = (
                category_name(category_id, attributes, categories),
                dataset_name(attributes),
            )
            unit_groups[unit_id] = groups
        return groups

    contexts: dict[tuple[str, int], ItemContext] = {}
    # Damaged rows are skipped (and named) as every read of the session skips them; the
    # hidden ids are closed over the rows they belong to (a unit's, a run's).
    items_sql = _ITEMS_SQL.format(usable_verbalisations=usable_rows(db, "verbalisations", "v"))
    names: dict[tuple[Any, Any], str] = {}
    for (
        verbalisation_id,
        unit_id,
        lang,
        run_id,
        system_name,
        model_id,
        candidate_index,
        tier,
        sub_tier,
        category_id,
        attributes,
        statement_count,
        model_tier,
    ) in _rows(db, items_sql):
        category, dataset = groups_of(unit_id, category_id, attributes)
        model = names.get((system_name, model_id))
        if model is None:
            model = names[(system_name, model_id)] = run_name(system_name, model_id)
        contexts[("v", verbalisation_id)] = ItemContext(
            verbalisation_id=verbalisation_id,
            unit_id=unit_id,
            run_id=run_id,
            model=model,
            lang=lang or UNKNOWN,
            tier=tier_group(tier),
            subtier=subtier_group(tier, sub_tier),
            category=category,
            statement_count=statement_count,
            dataset=dataset,
            candidate_index=candidate_index or 0,
            model_tail=model_tier or UNKNOWN,
        )
    references_sql = _REFERENCES_SQL.format(
        usable_references=usable_rows(db, "unit_references", "ur")
    )
    for (
        reference_id,
        unit_id,
        lang,
        quality,
        tier,
        sub_tier,
        category_id,
        attributes,
        statement_count,
        model_tier,
    ) in _rows(db, references_sql):
        category, dataset = groups_of(unit_id, category_id, attributes)
        contexts[("r", reference_id)] = ItemContext(
            verbalisation_id=None,
            unit_id=unit_id,
            run_id=None,
            model=REFERENCES_MODEL,
            lang=lang or UNKNOWN,
            tier=tier_group(tier),
            subtier=subtier_group(tier, sub_tier),
            category=category,
            statement_count=statement_count,
            reference_id=reference_id,
            reference_quality=quality,
            dataset=dataset,
            model_tail=model_tier or UNKNOWN,
        )
    return contexts


class UnknownRunError(UserFacingError):
    """A run picked for the report is not in the session."""


def choose_items(
    contexts: dict[Any, ItemContext], runs: Sequence[int] | None, existing: Sequence[int]
) -> tuple[set[int], list[RunUse], list[str]]:
    """Which verbalisations the report counts: for each model, one per unit, language
    and candidate, from the latest of the ``runs`` (default: of all its runs) that has
    it. Returns their ids, each run's use, and notes on overlaps (METHODS §8)."""
    if runs is not None:
        missing = sorted(set(runs) - set(existing))
        if missing:
            known = ", ".join(str(r) for r in existing) or "none"
            raise UnknownRunError(
                f"run {', '.join(str(r) for r in missing)} "
                f"{'is' if len(missing) == 1 else 'are'} not in this session (it may have "
                f"been deleted); the session's runs are: {known}."
            )
    picked = None if runs is None else set(runs)
    best: dict[tuple[str, int, str, int], ItemContext] = {}
    losers: dict[tuple[str, int, str, int], list[ItemContext]] = defaultdict(list)
    for item in contexts.values():
        if item.verbalisation_id is None or item.run_id is None:
            continue
        if picked is not None and item.run_id not in picked:
            continue
        key = (item.model, item.unit_id, item.lang, item.candidate_index)
        held = best.get(key)
        if held is None:
            best[key] = item
            continue
        newer, older = (
            (item, held)
            if (item.run_id, item.verbalisation_id) > (held.run_id, held.verbalisation_id)
            else (held, item)
        )
        best[key] = newer
        losers[key].append(older)
    # Only model texts are chosen between: each has a run and a verbalisation id.
    kept = {cast(int, item.verbalisation_id) for item in best.values()}
    items: Counter[int] = Counter(cast(int, item.run_id) for item in best.values())
    superseded: Counter[int] = Counter()
    by: dict[int, set[int]] = defaultdict(set)
    for key, lost in losers.items():
        for item in lost:
            superseded[cast(int, item.run_id)] += 1
            by[cast(int, item.run_id)].add(cast(int, best[key].run_id))
    models = {item.run_id: item.model for item in contexts.values() if item.run_id is not None}
    use = [
        RunUse(run, models[run], items[run], superseded[run], tuple(sorted(by[run])))
        for run in sorted(set(items) | set(superseded))
    ]
    notes = []
    for model in sorted({u.model for u in use if u.superseded}):
        overlapping = [
            u
            for u in use
            if u.model == model
            and (
                u.superseded
                or u.run_id in {r for v in use if v.model == model for r in v.superseded_by}
            )
        ]
        dropped = sum(u.superseded for u in overlapping)
        notes.append(
            f"{model}: runs {', '.join(str(u.run_id) for u in overlapping)} overlap on "
            f"{plural(dropped, 'item')} (unit, language, candidate); each is counted once, "
            "from the latest run"
            + (" picked" if runs is not None else "")
            + " (pick runs with --runs or the Report panel's run list)."
        )
    return kept, use, notes


def load_frame(store: Any, *, human: bool = True, runs: Sequence[int] | None = None) -> ScoreFrame:
    """Read sentence-level scores (and, with ``human``, per-item human ratings) of the
    items `choose_items` keeps from ``runs`` (default: each model's latest output)."""
    from sqlalchemy import select, text

    from core.store.integrity import usable_rows
    from core.store.models import Category, ModelRun, Score

    frame = ScoreFrame(picked_runs=None if runs is None else tuple(sorted(set(runs))))
    ratings: dict[int, dict[str, float]] = {}
    if human:
        from core.annotation import per_item_values

        ratings = per_item_values(store)  # its own transaction: they never nest
    with store.snapshot() as db:
        categories = dict(db.execute(select(Category.id, Category.name)).all())
        contexts = _contexts(db, categories)
        existing = list(db.scalars(select(ModelRun.id).order_by(ModelRun.id)))
        kept, frame.run_use, frame.notes = choose_items(contexts, runs, existing)
        latest: dict[tuple[tuple[str, int], str, str | None], Observation] = {}
        scores_sql = _SCORES_SQL.format(usable_scores=usable_rows(db, "scores", "s"))
        for verbalisation_id, reference_id, metric, value, quality in _rows(db, scores_sql):
            key = ("v", verbalisation_id) if verbalisation_id is not None else ("r", reference_id)
            context = contexts[key]
            if context.reference_id is None:
                if verbalisation_id not in kept:
                    continue  # another run's output of the same item, or a run not picked
            elif not isinstance(quality, str):
                quality = context.reference_quality  # a reference text's own quality
            quality = quality if isinstance(quality, str) else None
            # Re-scoring replaces rows; should duplicates exist anyway, the newest counts.
            latest[(key, metric, quality)] = Observation(metric, float(value), quality, context)
        frame.observations = list(latest.values())
        frame.corpus_rows = int(
            db.scalar(text("SELECT count(*) FROM scores WHERE level = 'corpus'")) or 0
        )
        frame.signatures = sorted(
            {
                (m, s)
                for m, s in db.execute(
                    select(Score.metric, Score.signature)
                    .where(Score.signature.is_not(None))
                    .distinct()
                )
            }
        )
        for run in db.scalars(select(ModelRun).order_by(ModelRun.id)):
            frame.runs.append(
                RunInfo(
                    id=run.id,
                    name=run_name(run.system_name, run.model_id),
                    kind=run.kind,
                    model_id=run.model_id,
                    status=run.status,
                    seed=run.seed,
                    fingerprint=run.model_fingerprint,
                    parameters=dict(run.parameters or {}),
                    prompt_templates=dict(run.prompt_templates or {}),
                    software=dict(run.software or {}),
                    started_at=run.started_at.isoformat() if run.started_at else None,
                )
            )
    for verbalisation_id, values in sorted(ratings.items()):
        rated = contexts.get(("v", verbalisation_id))
        if rated is None or verbalisation_id not in kept:
            continue
        for name, metric in (("fluency", HUMAN_FLUENCY), ("adequacy", HUMAN_ADEQUACY)):
            if name in values:
                frame.observations.append(Observation(metric, values[name], None, rated))
    # Items used: the kept verbalisations with at least one value; only those runs listed.
    with_values = Counter(
        run
        for run, _ in {
            (o.item.run_id, o.item.verbalisation_id)
            for o in frame.observations
            if o.item.run_id is not None
        }
    )
    frame.run_use = [replace(u, items=with_values[u.run_id]) for u in frame.run_use]
    frame.run_use = [u for u in frame.run_use if u.items or u.superseded]
    frame.runs = [r for r in frame.runs if with_values[r.id]]
    return frame


def available_metrics(store: Any) -> list[tuple[str, int]]:
    """Metrics with per-item values in the session (name, count), human ratings included,
    in the study table's order. One cheap aggregate query: it runs on the UI thread."""
    from sqlalchemy import text

    with store.snapshot() as db:
        counts = dict(
            db.execute(
                text(
                    "SELECT metric, count(*) FROM scores WHERE level = 'sentence' "
                    "AND value IS NOT NULL AND (verbalisation_id IS NOT NULL "
                    "OR reference_id IS NOT NULL) GROUP BY metric"
                )
            ).all()
        )
        fluency, adequacy = db.execute(
            text(
                "SELECT count(DISTINCT CASE WHEN fluency IS NOT NULL THEN verbalisation_id END), "
                "count(DISTINCT CASE WHEN adequacy IS NOT NULL THEN verbalisation_id END) "
                "FROM annotations WHERE verbalisation_id IS NOT NULL"
            )
        ).one()
    if fluency:
        counts[HUMAN_FLUENCY] = int(fluency)
    if adequacy:
        counts[HUMAN_ADEQUACY] = int(adequacy)
    return [(m, int(counts[m])) for m in sorted(counts, key=metric_order)]


def available_runs(store: Any) -> list[tuple[int, str, str]]:
    """The session's runs as the report's run picker lists them: (id, model, status)."""
    from sqlalchemy import select

    from core.store.models import ModelRun

    with store.snapshot() as db:
        return [
            (run_id, run_name(system, model), status or "")
            for run_id, system, model, status in db.execute(
                select(
                    ModelRun.id, ModelRun.system_name, ModelRun.model_id, ModelRun.status
                ).order_by(ModelRun.id)
            )
        ]
