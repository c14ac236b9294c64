"""A session's single-triple units written as WDV records, the ratings aggregated again."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.annotation import aggregates
from core.formats.common import atomic_output
from core.formats.csv_export import category_of
from core.formats.report import EntryError, ExportReport
from core.formats.wdv.records import ANNOTATION_KEYS, RECORD_KEYS, UID_PREFIX
from core.io import jsonio
from core.jobs import Job, JobContext

if TYPE_CHECKING:
    from core.store import SessionStore


def _same(original: Any, computed: Any) -> bool:
    if original is None or computed is None:
        return original is computed
    if isinstance(original, bool) or not isinstance(original, int | float):
        return False
    return math.isclose(original, computed, rel_tol=1e-9, abs_tol=1e-9)


def _annotations(
    attributes: dict[str, Any] | None, fluency: list[int], adequacy: list[int]
) -> dict[str, Any] | None:
    imported = (attributes or {}).get("annotations", {})
    if imported is None and not fluency and not adequacy:
        return None
    imported = imported or {}
    computed = aggregates(fluency, adequacy)
    values: dict[str, Any] = {**imported, "fluency_scores": fluency, "adequacy_scores": adequacy}
    for name, value in computed.items():
        values[name] = (
            imported[name] if name in imported and _same(imported[name], value) else value
        )
    keys = (attributes or {}).get("annotation_keys")
    if keys is None:
        return {k: values[k] for k in ANNOTATION_KEYS}
    ordered = {k: values[k] for k in keys if k in values}
    # Fields the record did not have appear only once they hold something (ratings made
    # in the app), so an imported record without them round-trips as it was.
    ordered.update(
        {k: v for k, v in values.items() if k not in ordered and v is not None and v != []}
    )
    return ordered


def _worker_order(name: str, annotation_id: int) -> tuple[int, int]:
    # Imported workers keep their positions; people who rated in the app follow.
    match = re.fullmatch(r"wdv-worker-([0-9]+)", name)
    return (int(match.group(1)), 0) if match else (1 << 30, annotation_id)


def _text(row: Any, name: str) -> str:
    override = getattr(row, f"{name}_override")
    return override if override is not None else getattr(row, name)


def _record(
    unit: Any,
    triple: Any,
    verbalisation: Any,
    fluency: list[int],
    adequacy: list[int],
    category: str | None,
) -> dict[str, Any]:
    attributes = unit.attributes if _is_layout(unit.attributes) else None
    claim_id = unit.uid[len(UID_PREFIX) :] if unit.uid.startswith(UID_PREFIX) else unit.uid
    values: dict[str, Any] = {
        "claim_id": claim_id,
        "subject_id": unit.root_qid or triple.subject_qid,
        "property_id": triple.property_pid,
        "subject_label": _text(triple, "subject"),
        "property_label": _text(triple, "predicate"),
        "object_label": _text(triple, "object"),
        "verbalisation": verbalisation.text if verbalisation is not None else None,
    }
    annotations = _annotations(attributes, fluency, adequacy)
    if attributes is None:
        values.update(rank=None, object=triple.object_value, theme_label=category)
        values["annotations"] = annotations
        return {k: values.get(k) for k in RECORD_KEYS}
    values.update(attributes["record"])
    if "annotations" in attributes["keys"]:
        values["annotations"] = annotations
    ordered = {k: values[k] for k in attributes["keys"] if k in values}
    ordered.update({k: v for k, v in values.items() if k not in ordered})
    return ordered


def _is_layout(attributes: Any) -> bool:
    return (
        isinstance(attributes, dict)
        and attributes.get("format") == "wdv"
        and isinstance(attributes.get("keys"), list)
        and isinstance(attributes.get("record"), dict)
    )


def _skip_reason(unit: Any, english: list[Any]) -> str | None:
    """Why ``unit`` cannot be a WDV record (one English claim), or None if it can."""
    if unit.size != 1 or len(english) > 1:
        size = max(unit.size, len(english))
        return (
            f"{size} triples: a WDV record holds exactly one claim, so only "
            "single-triple units are exported"
        )
    if not english:
        return "no English triple: a WDV record is English"
    return None


@dataclass
class _SessionRows:
    """What export reads from the session, in one unit of work, before writing."""

    units: list[Any]
    english: dict[int, list[Any]]  # unit id -> its English main triples, by position
    firsts: dict[int, Any]  # unit id -> its first English verbalisation
    ratings: dict[int, list[tuple[tuple[int, int], Any]]]  # verbalisation id -> (order, rating)
    categories: dict[int, str]


def _read_session(store: SessionStore) -> _SessionRows:
    from sqlalchemy import select

    from core.store.models import (
        Annotation,
        Annotator,
        Category,
        DataUnit,
        UnitTriple,
        Verbalisation,
    )

    with store.unit_of_work() as db:
        units = list(db.scalars(select(DataUnit).order_by(DataUnit.id)))
        english: dict[int, list[Any]] = defaultdict(list)
        for row in db.scalars(
            select(UnitTriple)
            .where(UnitTriple.lang == "en", UnitTriple.tripleset == "main")
            .order_by(UnitTriple.position)
        ):
            english[row.unit_id].append(row)
        firsts: dict[int, Any] = {}
        for text in db.scalars(
            select(Verbalisation)
            .where(Verbalisation.lang == "en")
            .order_by(Verbalisation.run_id, Verbalisation.candidate_index, Verbalisation.id)
        ):
            firsts.setdefault(text.unit_id, text)
        wanted = {v.id for v in firsts.values()}
        ratings: dict[int, list[tuple[tuple[int, int], Any]]] = defaultdict(list)
        for annotation, name in db.execute(
            select(Annotation, Annotator.name)
            .join(Annotator)
            .where(Annotation.verbalisation_id.is_not(None))
        ):
            verbalisation_id = annotation.verbalisation_id
            if verbalisation_id is not None and verbalisation_id in wanted:
                ratings[verbalisation_id].append((_worker_order(name, annotation.id), annotation))
        categories = {row.id: row.name for row in db.execute(select(Category.id, Category.name))}
        db.expunge_all()
    return _SessionRows(units, english, firsts, ratings, categories)


def _unit_record(rows: _SessionRows, unit: Any) -> dict[str, Any]:
    """The WDV record of a unit that can be one (see :func:`_skip_reason`)."""
    triple = rows.english[unit.id][0]
    verbalisation = rows.firsts.get(unit.id)
    rated = (
        [a for _, a in sorted(rows.ratings.get(verbalisation.id, []), key=lambda p: p[0])]
        if verbalisation is not None
        else []
    )
    fluency = [a.fluency for a in rated if a.fluency is not None]
    adequacy = [a.adequacy for a in rated if a.adequacy is not None]
    category = category_of(unit, rows.categories) or None
    return _record(unit, triple, verbalisation, fluency, adequacy, category)


def export_wdv(
    store: SessionStore, path: Path | str, ctx: JobContext | None = None, *, force: bool = False
) -> ExportReport:
    """Write every single-triple unit of ``store`` as a WDV record.

    A unit's record carries its first English verbalisation (lowest run, candidate 0)
    and the ratings of that verbalisation, aggregated again from the session. Units of
    more than one triple (or with no English triple) are listed in the report's
    ``skipped`` with the reason, so an export never drops units without saying so.
    """
    rows = _read_session(store)
    units = rows.units
    records = []
    skipped: list[EntryError] = []
    for done, unit in enumerate(units, start=1):
        if ctx is not None:
            ctx.check_cancelled()
        reason = _skip_reason(unit, rows.english.get(unit.id, []))
        if reason is not None:
            skipped.append(EntryError(f"unit {unit.uid}", reason))
            continue
        records.append(_unit_record(rows, unit))
        if ctx is not None:
            ctx.progress(done, len(units), f"{len(records)} records")
    with atomic_output(path, force=force) as handle:
        jsonio.dump(records, handle, ensure_ascii=False, indent=1)
        handle.write("\n")
    return ExportReport(
        len(records), len(units), 0, skipped, triples=len(records), path=str(path), format="wdv"
    )


def export_job(store: SessionStore, path: Path | str) -> Job[ExportReport]:
    path = Path(path)
    return Job(
        title=f"Export {path.name}",
        run=lambda ctx: export_wdv(store, path, ctx=ctx),
        kind="export",
        params={"path": str(path), "format": "wdv"},
    )
