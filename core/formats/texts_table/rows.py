"""The per-text table's rows, read a page at a time (keyset by id): every output, then
the references, each with its scores, details, ratings and aggregates."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from core.annotation.aggregation import item_aggregates
from core.formats.texts_table.plan import (
    AGGREGATE_COLUMNS,
    DETAILS,
    ESA_UNDETECTED,
    OUTPUT,
    RATING_SEPARATOR,
    REFERENCE,
    Plan,
    in_list,
    output_where,
    reference_where,
    score_column,
)
from core.groups import category_name
from core.io import jsonio
from core.io.bounded import stored_json
from core.metrics.base import details_from_json
from core.metrics.details import EsaDetails, MetricDetails
from core.report.data import REFERENCES_MODEL
from core.store.batching import in_chunks
from core.vocab import run_name

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

_UNIT_COLUMNS = (
    "u.uid, u.tier, u.sub_tier, u.category_id, "
    "json_extract(u.attributes, '$.entry.category') AS entry_category, "
    "json_extract(u.attributes, '$.record.theme_label') AS theme"
)


def _category(row: Any, categories: dict[int, str]) -> str:
    """The unit's category by :func:`core.groups.category_name`, from the two attributes
    it looks at (read in SQL: a unit's whole attributes are never parsed here)."""
    attributes = {"entry": {"category": row.entry_category}, "record": {"theme_label": row.theme}}
    return category_name(row.category_id, attributes, categories)


def _keyset_pages(
    db: Session, query: str, where: Callable[[dict[str, Any]], str], page_size: int
) -> Iterator[Sequence[Any]]:
    """The rows of ``query`` (with ``{where}`` filled by ``where(params)``), a page at a
    time in id order: each page starts after the last id of the one before."""
    from sqlalchemy import text

    after = 0
    while True:
        params: dict[str, Any] = {"after": after, "limit": page_size}
        rows = db.execute(text(query.format(where=where(params))), params).all()
        if not rows:
            return
        after = rows[-1].id
        yield rows


def pages(db: Session, plan: Plan, page_size: int) -> Iterator[list[dict[str, Any]]]:
    """The table's rows, a page at a time: every output, then the references."""
    outputs = (
        "SELECT v.id, v.run_id, r.system_name, r.model_id, v.lang, v.candidate_index, "
        f"v.text, {_UNIT_COLUMNS} FROM verbalisations v "
        "JOIN model_runs r ON r.id = v.run_id JOIN data_units u ON u.id = v.unit_id "
        "WHERE v.id > :after AND {where} ORDER BY v.id LIMIT :limit"
    )
    for texts in _keyset_pages(db, outputs, lambda p: output_where(plan, p), page_size):
        rows = [
            {
                "kind": OUTPUT,
                "verbalisation_id": t.id,
                "reference_id": None,
                "unit": t.uid,
                "run": t.run_id,
                "model": run_name(t.system_name, t.model_id),
                "lang": t.lang,
                "candidate": t.candidate_index or 0,
                "tier": t.tier,
                "sub_tier": t.sub_tier,
                "category": _category(t, plan.categories),
                "quality": None,
                "text": t.text,
            }
            for t in texts
        ]
        _add_figures(db, plan, rows, "verbalisation_id")
        yield rows
    if not plan.references:
        return
    references = (
        f"SELECT ur.id, ur.lang, ur.quality, ur.text, {_UNIT_COLUMNS} "
        "FROM unit_references ur JOIN data_units u ON u.id = ur.unit_id "
        "WHERE ur.id > :after AND {where} ORDER BY ur.id LIMIT :limit"
    )
    for texts in _keyset_pages(db, references, lambda p: reference_where(plan, p), page_size):
        rows = [
            {
                "kind": REFERENCE,
                "verbalisation_id": None,
                "reference_id": t.id,
                "unit": t.uid,
                "run": None,
                "model": REFERENCES_MODEL,
                "lang": t.lang,
                "candidate": None,
                "tier": t.tier,
                "sub_tier": t.sub_tier,
                "category": _category(t, plan.categories),
                "quality": t.quality,
                "text": t.text,
            }
            for t in texts
        ]
        _add_figures(db, plan, rows, "reference_id")
        yield rows


# SQLite's host parameters per statement: the ids of a page are asked for this many at a time.


def _scores(
    db: Session, plan: Plan, ids: list[int], key: str
) -> tuple[dict[int, dict[str, float]], dict[int, dict[str, MetricDetails]]]:
    """The sentence scores of the texts ``ids`` (by ``key``): values and details, by
    text and column."""
    from sqlalchemy import text

    own = "" if key == "verbalisation_id" else "s.verbalisation_id IS NULL AND "
    values: dict[int, dict[str, float]] = defaultdict(dict)
    details: dict[int, dict[str, MetricDetails]] = defaultdict(dict)
    for ids_chunk in in_chunks(ids):
        params: dict[str, Any] = {}
        chunk = in_list("i", ids_chunk, params)
        for item, metric, value, raw in db.execute(
            text(
                f"SELECT s.{key}, s.metric, s.value, s.details FROM scores s "
                f"WHERE s.level = 'sentence' AND {own}s.{key} IN {chunk} AND {plan.kept['s']} "
                "ORDER BY s.id"
            ),
            params,
        ):
            # Not JSON (or not within bounds): integrity hides such rows; never a traceback.
            info = stored_json(raw, {}) if isinstance(raw, str) else (raw or {})
            typed = details_from_json(metric, info if isinstance(info, dict) else {})
            column = score_column(metric, typed.extra.get("quality"))
            if column not in plan.score_columns:
                continue
            values[item][column] = value  # the newest row wins, as everywhere
            typed = typed.without("quality")
            if typed:
                details[item][column] = typed
    return values, details


def _ratings(
    db: Session, plan: Plan, ids: list[int], key: str
) -> dict[int, dict[int, tuple[int | None, int | None]]]:
    """Each text's (fluency, adequacy) by annotator, golden answers left out."""
    from sqlalchemy import text

    ratings: dict[int, dict[int, tuple[int | None, int | None]]] = defaultdict(dict)
    for ids_chunk in in_chunks(ids):
        params: dict[str, Any] = {}
        chunk = in_list("i", ids_chunk, params)
        for item, annotator, fluency, adequacy in db.execute(
            text(
                f"SELECT n.{key}, n.annotator_id, n.fluency, n.adequacy FROM annotations n "
                f"WHERE n.is_golden = 0 AND n.{key} IN {chunk} AND {plan.kept['n']}"
                + ("" if key == "verbalisation_id" else " AND n.verbalisation_id IS NULL")
            ),
            params,
        ):
            ratings[item][annotator] = (fluency, adequacy)
    return ratings


def _add_details(plan: Plan, row: dict[str, Any], found: dict[str, MetricDetails]) -> None:
    if "esa" in plan.score_columns:  # the ESA_UNDETECTED column is there
        esa = found.get("esa")
        missing = esa.missing if isinstance(esa, EsaDetails) else None
        row[ESA_UNDETECTED] = [str(m) for m in missing] if missing is not None else None
    row[DETAILS] = (
        jsonio.dumps(
            {column: typed.to_json() for column, typed in found.items()},
            ensure_ascii=False,
            sort_keys=True,
        )
        if found
        else None
    )


def _add_ratings(
    plan: Plan, row: dict[str, Any], given: dict[int, tuple[int | None, int | None]]
) -> None:
    for annotator_id, name in plan.annotators:
        fluency, adequacy = given.get(annotator_id, (None, None))
        row[f"fluency{RATING_SEPARATOR}{name}"] = fluency
        row[f"adequacy{RATING_SEPARATOR}{name}"] = adequacy
    fluencies = [f for f, _ in given.values() if f is not None]
    adequacies = [a for _, a in given.values() if a is not None]
    aggregates = item_aggregates(fluencies, adequacies)
    row["ratings"] = len(given) if given else None
    for name, _kind in AGGREGATE_COLUMNS[1:]:
        row[name] = aggregates[name]


def _add_figures(db: Session, plan: Plan, rows: list[dict[str, Any]], key: str) -> None:
    """Scores, details, ratings and aggregates of one page's rows, in place."""
    by_id = {row[key]: row for row in rows}
    ids = list(by_id)
    values, details = _scores(db, plan, ids, key)
    ratings = _ratings(db, plan, ids, key)
    for item, row in by_id.items():
        scored = values.get(item, {})
        for column in plan.score_columns:
            row[column] = scored.get(column)
        _add_details(plan, row, details.get(item, {}))
        _add_ratings(plan, row, ratings.get(item, {}))
