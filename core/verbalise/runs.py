"""Read-only views of a session's verbalise runs and units, as the Verbalise panel shows them.

The panel (and any other reader: the CLI, a notebook) asks these questions without
knowing the schema: which runs the session holds and how many texts each wrote, what one
run wrote for one unit, and which units, tiers and categories a run can be limited to.
Tier and category names are the ones :func:`core.verbalise.selection.select_units` accepts
(``tier:NAME`` matches a tier or a sub-tier; a TailNLG/WebNLG import's category counts
when the unit has no session category).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from sqlalchemy import ColumnElement, Select, exists, func, or_, select

from core.store import SessionStore
from core.store import models as m
from core.verbalise.prompts import parse_reply
from core.verbalise.selection import unit_category_column

UNIT_PICKER_PAGE = 200  # units the Verbalise panel's picker reads at a time
# Outputs are listed in the benchmark's language order, then any other language by code.
_LANGUAGE_ORDER = {"en": 0, "it": 1, "es": 2}


@dataclass(frozen=True)
class RunOverview:
    """One ``model_runs`` row and how many texts (candidates) it holds."""

    id: int
    model: str  # the display name, else the model id
    kind: str
    status: str
    texts: int
    unparsable: int = 0  # texts whose reply could not be parsed

    @property
    def marks(self) -> str:
        """What a run list says beside a run that is not a finished, usable one: a
        cancelled or failed run, one whose every reply was unparsable ("" for none)."""
        words = [self.status] if self.status not in ("finished", "running") else []
        if self.texts and self.unparsable == self.texts:
            words.append("all unparsable")
        elif self.unparsable:
            words.append(f"{self.unparsable:,} unparsable")
        return ", ".join(words)


@dataclass(frozen=True)
class UnitOutput:
    """One candidate a run wrote for a unit in a language. ``text`` is "" when the reply
    could not be parsed (``parse_ok`` False, ``reason`` says why: the parser's verdict on
    the raw reply); ``raw`` is the reply as the model wrote it."""

    lang: str
    index: int
    text: str
    raw: str
    parse_ok: bool
    reason: str = ""


@dataclass(frozen=True)
class UnitOutputs:
    """What one run wrote for one unit: the unit's uid (its id as text when the unit is
    gone) and the candidates, by language (en, it, es, then others) and candidate index."""

    uid: str
    outputs: tuple[UnitOutput, ...]


@dataclass(frozen=True)
class UnitSummary:
    """A unit as the run scope picker names it. ``category`` is the session category, else
    the category an import recorded in the unit's attributes."""

    id: int
    uid: str
    size: int
    tier: str | None
    sub_tier: str | None
    category: str | None


@dataclass(frozen=True)
class UnitsOverview:
    """The session's units in id order, and the tiers (tiers and sub-tiers together) and
    categories they fall in, each ``(name, units)`` sorted by name."""

    units: tuple[UnitSummary, ...]
    tiers: tuple[tuple[str, int], ...]
    categories: tuple[tuple[str, int], ...]


def list_runs(store: SessionStore) -> list[RunOverview]:
    """Every run of the session, newest first, with its count of texts (0 for a run that
    wrote none yet)."""
    with store.snapshot() as db:
        rows = db.execute(
            select(
                m.ModelRun.id,
                m.ModelRun.system_name,
                m.ModelRun.model_id,
                m.ModelRun.kind,
                m.ModelRun.status,
                func.count(m.Verbalisation.id),
                func.count(m.Verbalisation.id).filter(m.Verbalisation.parse_ok.is_(False)),
            )
            .outerjoin(m.Verbalisation, m.Verbalisation.run_id == m.ModelRun.id)
            .group_by(m.ModelRun.id)
            .order_by(m.ModelRun.id.desc())
        ).all()
    return [
        RunOverview(run_id, name or model_id, kind, status, texts, unparsable)
        for run_id, name, model_id, kind, status, texts, unparsable in rows
    ]


@dataclass(frozen=True)
class RunText:
    """One text of a run as the Results tab browses them: its unit and the output."""

    unit_id: int
    uid: str
    output: UnitOutput


def run_outputs(store: SessionStore, run_id: int, *, limit: int = 500) -> tuple[list[RunText], int]:
    """The first ``limit`` texts run ``run_id`` wrote (by unit, language, candidate) and
    how many it wrote in all: what a run produced, browsable without picking a unit."""
    with store.snapshot() as db:
        total = int(
            db.scalar(
                select(func.count(m.Verbalisation.id)).where(m.Verbalisation.run_id == run_id)
            )
            or 0
        )
        rows = db.execute(
            select(m.Verbalisation, m.DataUnit.uid)
            .outerjoin(m.DataUnit, m.DataUnit.id == m.Verbalisation.unit_id)
            .where(m.Verbalisation.run_id == run_id)
            .order_by(
                m.Verbalisation.unit_id, m.Verbalisation.lang, m.Verbalisation.candidate_index
            )
            .limit(limit)
        ).all()
        texts = [
            RunText(
                v.unit_id,
                uid or str(v.unit_id),
                UnitOutput(
                    v.lang,
                    v.candidate_index,
                    v.text or "",
                    v.raw_output,
                    bool(v.parse_ok),
                    _unparsed_reason(v),
                ),
            )
            for v, uid in rows
        ]
    return texts, total


def unit_outputs(store: SessionStore, run_id: int, unit_id: int) -> UnitOutputs:
    """The candidates run ``run_id`` wrote for unit ``unit_id`` (none when the run or unit
    does not exist, or the run skipped the unit)."""
    with store.snapshot() as db:
        unit = db.get(m.DataUnit, unit_id)
        uid = unit.uid if unit is not None else str(unit_id)
        rows = db.scalars(
            select(m.Verbalisation).where(
                m.Verbalisation.run_id == run_id, m.Verbalisation.unit_id == unit_id
            )
        ).all()
        outputs = [
            UnitOutput(
                v.lang,
                v.candidate_index,
                v.text or "",
                v.raw_output,
                bool(v.parse_ok),
                _unparsed_reason(v),
            )
            for v in rows
        ]
    outputs.sort(key=lambda o: (_LANGUAGE_ORDER.get(o.lang, 9), o.lang, o.index))
    return UnitOutputs(uid, tuple(outputs))


@dataclass(frozen=True)
class UnitFilter:
    """Which units the picker lists, each test applied in SQL: ``text`` is a part of the
    uid, the category, the tier or the sub-tier (any case; ``%`` and ``_`` are literal),
    ``tier`` a tier or sub-tier, ``lang`` a language the unit has triples in. The empty
    filter lists every unit."""

    text: str = ""
    tier: str | None = None
    lang: str | None = None


def units_page(
    store: SessionStore,
    where: UnitFilter | None = None,
    *,
    after_id: int | None = None,
    limit: int | None = UNIT_PICKER_PAGE,
) -> tuple[UnitSummary, ...]:
    """One keyset page of the units ``where`` matches, in id order: those with an id
    above ``after_id``, at most ``limit`` (None: all). A panel reads one page at a time
    and never the whole session."""
    query = _summaries().where(*_conditions(where or UnitFilter())).order_by(m.DataUnit.id)
    if after_id is not None:
        query = query.where(m.DataUnit.id > after_id)
    if limit is not None:
        query = query.limit(limit)
    with store.snapshot() as db:
        return tuple(UnitSummary(*row) for row in db.execute(query).all())


def count_matching_units(store: SessionStore, where: UnitFilter | None = None) -> int:
    """How many units ``where`` matches (an SQL COUNT; no unit is read)."""
    query = (
        select(func.count())
        .select_from(m.DataUnit)
        .outerjoin(m.Category, m.DataUnit.category_id == m.Category.id)
        .where(*_conditions(where or UnitFilter()))
    )
    with store.snapshot() as db:
        return int(db.scalar(query) or 0)


def unit_summary(store: SessionStore, unit_id: int) -> UnitSummary | None:
    """The picker's row for one unit (None when the session has no such unit)."""
    with store.snapshot() as db:
        row = db.execute(_summaries().where(m.DataUnit.id == unit_id)).first()
    return UnitSummary(*row) if row is not None else None


def unit_groups(
    store: SessionStore,
) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]:
    """The tiers (tiers and sub-tiers together; a unit whose sub-tier equals its tier
    counts once) and the categories of the session's units, each ``(name, units)`` sorted
    by name: GROUP BY queries, no unit is read."""
    unit, category = m.DataUnit, unit_category_column().label("name")
    categorised = (
        select(category)
        .select_from(unit)
        .outerjoin(m.Category, unit.category_id == m.Category.id)
        .subquery()
    )
    tiers: Counter[str] = Counter()
    with store.snapshot() as db:
        # Tiers, then the sub-tiers that differ from their unit's tier (two GROUP BYs
        # that add up: no unit counts twice under one name).
        for column, where in (
            (unit.tier, func.coalesce(unit.tier, "") != ""),
            (
                unit.sub_tier,
                (func.coalesce(unit.sub_tier, "") != "")
                & (unit.sub_tier != func.coalesce(unit.tier, "")),
            ),
        ):
            for name, n in db.execute(select(column, func.count()).where(where).group_by(column)):
                tiers[str(name)] += int(n)
        categories = db.execute(
            select(categorised.c.name, func.count())
            .where(func.coalesce(categorised.c.name, "") != "")
            .group_by(categorised.c.name)
            .order_by(categorised.c.name)
        ).all()
    return (
        tuple(sorted(tiers.items())),
        tuple((str(name), int(n)) for name, n in categories),
    )


def units_overview(store: SessionStore) -> UnitsOverview:
    """Every unit of the session with its tier and category, and how many units each
    tier, sub-tier and category holds. This reads the whole session: a panel reads
    :func:`units_page`, :func:`count_matching_units` and :func:`unit_groups` instead."""
    tiers, categories = unit_groups(store)
    return UnitsOverview(units_page(store, limit=None), tiers, categories)


def _summaries() -> Select[int, str, int, str | None, str | None, str | None]:
    """The columns of :class:`UnitSummary`, the category resolved in SQL."""
    return select(
        m.DataUnit.id,
        m.DataUnit.uid,
        m.DataUnit.size,
        m.DataUnit.tier,
        m.DataUnit.sub_tier,
        unit_category_column(),
    ).outerjoin(m.Category, m.DataUnit.category_id == m.Category.id)


def _conditions(where: UnitFilter) -> list[ColumnElement[bool]]:
    """``where`` as SQL conditions over ``data_units`` joined to ``categories``."""
    unit = m.DataUnit
    conditions: list[ColumnElement[bool]] = []
    text = where.text.strip()
    if text:
        conditions.append(
            or_(
                *(
                    column.contains(text, autoescape=True)
                    for column in (unit.uid, unit_category_column(), unit.tier, unit.sub_tier)
                )
            )
        )
    if where.tier:
        conditions.append(or_(unit.tier == where.tier, unit.sub_tier == where.tier))
    if where.lang:
        conditions.append(
            exists().where(m.UnitTriple.unit_id == unit.id, m.UnitTriple.lang == where.lang)
        )
    return conditions


__all__ = [
    "UNIT_PICKER_PAGE",
    "RunOverview",
    "UnitFilter",
    "UnitOutput",
    "UnitOutputs",
    "UnitSummary",
    "UnitsOverview",
    "count_matching_units",
    "list_runs",
    "unit_groups",
    "unit_outputs",
    "unit_summary",
    "units_overview",
    "units_page",
]


def _unparsed_reason(row: m.Verbalisation) -> str:
    """Why a stored reply has no text ("" when it has one). Recomputed from the raw reply,
    so rows of every schema revision get one; imported empty lines say so."""
    if row.parse_ok:
        return ""
    reason = parse_reply(row.raw_output or "").reason
    return reason or "no text was parsed from the reply"
