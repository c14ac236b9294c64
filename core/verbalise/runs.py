"""Read-only views of a session's verbalise runs and units, as the Verbalise panel shows them.

The panel (and any other reader: the CLI, a notebook) asks these questions without
knowing the schema: which runs the session holds and how many texts each wrote, what one
run wrote for one unit, and which units, tiers and categories a run can be limited to.
Tier and category names are the ones :func:`core.verbalise.job.select_units` accepts
(``tier:NAME`` matches a tier or a sub-tier; a TailNLG/WebNLG import's category counts
when the unit has no session category).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from sqlalchemy import func, select

from core.store import SessionStore
from core.store import models as m
from core.verbalise.job import imported_category
from core.verbalise.prompts import parse_reply

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
            )
            .outerjoin(m.Verbalisation, m.Verbalisation.run_id == m.ModelRun.id)
            .group_by(m.ModelRun.id)
            .order_by(m.ModelRun.id.desc())
        ).all()
    return [
        RunOverview(run_id, name or model_id, kind, status, texts)
        for run_id, name, model_id, kind, status, texts in rows
    ]


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


def units_overview(store: SessionStore) -> UnitsOverview:
    """The session's units with their tiers and categories, and how many units each tier,
    sub-tier and category holds (a unit whose sub-tier equals its tier counts once)."""
    with store.snapshot() as db:
        rows = db.execute(
            select(
                m.DataUnit.id,
                m.DataUnit.uid,
                m.DataUnit.size,
                m.DataUnit.tier,
                m.DataUnit.sub_tier,
                m.Category.name,
                m.DataUnit.attributes,
            )
            .outerjoin(m.Category, m.DataUnit.category_id == m.Category.id)
            .order_by(m.DataUnit.id)
        ).all()
    units: list[UnitSummary] = []
    tiers: Counter[str] = Counter()
    categories: Counter[str] = Counter()
    for unit_id, uid, size, tier, sub_tier, category, attributes in rows:
        category = category or imported_category(attributes)
        units.append(UnitSummary(unit_id, uid, size, tier, sub_tier, category))
        for name in {t for t in (tier, sub_tier) if t}:
            tiers[name] += 1
        if category:
            categories[category] += 1
    return UnitsOverview(
        tuple(units), tuple(sorted(tiers.items())), tuple(sorted(categories.items()))
    )


__all__ = [
    "RunOverview",
    "UnitOutput",
    "UnitOutputs",
    "UnitSummary",
    "UnitsOverview",
    "list_runs",
    "unit_outputs",
    "units_overview",
]


def _unparsed_reason(row: m.Verbalisation) -> str:
    """Why a stored reply has no text ("" when it has one). Recomputed from the raw reply,
    so rows of every schema revision get one; imported empty lines say so."""
    if row.parse_ok:
        return ""
    reason = parse_reply(row.raw_output or "").reason
    return reason or "no text was parsed from the reply"
