"""What the per-text table holds, decided before its first row: the filters, the columns
(keys, score columns, ratings, aggregates) and each score column's signatures."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.formats.common import FormatError

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

OUTPUT, REFERENCE = "output", "reference"
ESA_UNDETECTED = "esa:undetected_entities"
DETAILS = "details"
RATING_SEPARATOR = "__"  # fluency__alice
AGGREGATE_COLUMNS = (
    ("ratings", "int"),
    ("fluency_mean", "float"),
    ("fluency_median", "float"),
    ("adequacy_majority_voted", "int"),
    ("adequacy_percentage", "float"),
)
KEY_COLUMNS = (
    ("kind", "string"),
    ("verbalisation_id", "int"),
    ("reference_id", "int"),
    ("unit", "string"),
    ("run", "int"),
    ("model", "string"),
    ("lang", "string"),
    ("candidate", "int"),
    ("tier", "string"),
    ("sub_tier", "string"),
    ("category", "string"),
    ("quality", "string"),
    ("text", "string"),
)
# What pandas should read each column type as (the sidecar's pandas_dtypes).
PANDAS_DTYPES = {"int": "Int64", "float": "float64", "string": "str", "list": "object"}


class TextsTableError(FormatError):
    """A per-text export that cannot be written as asked (the message says why)."""


@dataclass(frozen=True)
class Plan:
    """What the table holds, decided before the first row: filters, columns, signatures."""

    runs: tuple[int, ...] | None
    langs: tuple[str, ...] | None
    score_columns: tuple[str, ...]
    annotators: tuple[tuple[int, str], ...]
    signatures: dict[str, list[str]]
    categories: dict[int, str]
    # SQL keeping the rows readers may use (core.store.integrity.usable_rows), by alias:
    # v verbalisations, ur unit_references, s scores, n annotations. Damaged rows (and
    # those that belong to them) are left out, as every read of a session leaves them.
    kept: dict[str, str] = field(default_factory=dict)

    @property
    def references(self) -> bool:
        return self.runs is None  # reference texts belong to no run

    @property
    def columns(self) -> tuple[tuple[str, str], ...]:
        columns = list(KEY_COLUMNS)
        columns += [(c, "float") for c in self.score_columns]
        if "esa" in self.score_columns:
            columns.append((ESA_UNDETECTED, "list"))
        columns.append((DETAILS, "string"))
        for _id, name in self.annotators:
            columns += [
                (f"fluency{RATING_SEPARATOR}{name}", "int"),
                (f"adequacy{RATING_SEPARATOR}{name}", "int"),
            ]
        columns += AGGREGATE_COLUMNS
        return tuple(columns)


def score_column(metric: str, quality: Any) -> str:
    return f"{metric}:{quality}" if isinstance(quality, str) and quality else metric


def in_list(names: str, values: Sequence[Any], params: dict[str, Any]) -> str:
    keys = [f"{names}{i}" for i in range(len(values))]
    params.update(zip(keys, values, strict=True))
    return "(" + ", ".join(":" + k for k in keys) + ")"


_QUALITY = "json_extract(s.details, '$.quality')"
_RATED_REFERENCE = (
    "SELECT n.reference_id FROM annotations n WHERE n.reference_id IS NOT NULL "
    "AND n.verbalisation_id IS NULL AND n.is_golden = 0 AND {n}"
)
_SCORED_REFERENCE = (
    "SELECT s.reference_id FROM scores s WHERE s.level = 'sentence' "
    "AND s.verbalisation_id IS NULL AND s.reference_id IS NOT NULL AND {s}"
)


def output_where(plan: Plan, params: dict[str, Any]) -> str:
    clauses = [plan.kept["v"]]
    if plan.runs is not None:
        clauses.append(f"v.run_id IN {in_list('run', list(plan.runs), params)}")
    if plan.langs is not None:
        clauses.append(f"v.lang IN {in_list('lang', list(plan.langs), params)}")
    return " AND ".join(clauses)


def reference_where(plan: Plan, params: dict[str, Any]) -> str:
    scored = _SCORED_REFERENCE.format(s=plan.kept["s"])
    rated = _RATED_REFERENCE.format(n=plan.kept["n"])
    clauses = [plan.kept["ur"], f"(ur.id IN ({scored}) OR ur.id IN ({rated}))"]
    if plan.langs is not None:
        clauses.append(f"ur.lang IN {in_list('lang', list(plan.langs), params)}")
    return " AND ".join(clauses)


def _kept(db: Session) -> dict[str, str]:
    from core.store.integrity import usable_rows

    return {
        alias: usable_rows(db, table, alias)
        for alias, table in (
            ("v", "verbalisations"),
            ("ur", "unit_references"),
            ("s", "scores"),
            ("n", "annotations"),
        )
    }


def _check_runs(db: Session, runs: tuple[int, ...]) -> None:
    from sqlalchemy import text

    known = {int(r) for (r,) in db.execute(text("SELECT id FROM model_runs"))}
    missing = [r for r in runs if r not in known]
    if missing:
        raise TextsTableError(
            f"run {', '.join(map(str, missing))} is not in this session; its runs are: "
            f"{', '.join(map(str, sorted(known))) or 'none'}."
        )


def _score_signatures(db: Session, draft: Plan) -> dict[str, set[str]]:
    """Each score column the table's texts have (outputs, and references when the table
    holds them) and the signatures its scores were made with."""
    from sqlalchemy import text

    kept = draft.kept
    params: dict[str, Any] = {}
    where = output_where(draft, params)
    rows = list(
        db.execute(
            text(
                f"SELECT s.metric, {_QUALITY}, s.signature FROM scores s "
                "JOIN verbalisations v ON v.id = s.verbalisation_id "
                f"WHERE s.level = 'sentence' AND {kept['s']} AND {where} "
                f"GROUP BY s.metric, {_QUALITY}, s.signature"
            ),
            params,
        )
    )
    if draft.references:
        ref_params: dict[str, Any] = {}
        langs = draft.langs
        lang = "" if langs is None else f"AND s.lang IN {in_list('lang', list(langs), ref_params)}"
        rows += list(
            db.execute(
                text(
                    f"SELECT s.metric, {_QUALITY}, s.signature FROM scores s "
                    "WHERE s.level = 'sentence' AND s.verbalisation_id IS NULL "
                    f"AND s.reference_id IS NOT NULL AND {kept['s']} {lang} "
                    f"GROUP BY s.metric, {_QUALITY}, s.signature"
                ),
                ref_params,
            )
        )
    found: dict[str, set[str]] = defaultdict(set)
    for metric, quality, signature in rows:
        column = score_column(metric, quality)
        if signature:
            found[column].add(signature)
        else:
            found.setdefault(column, set())
    return found


def make_plan(db: Session, runs: Sequence[int] | None, langs: Sequence[str] | None) -> Plan:
    """The table's plan for ``runs`` and ``langs`` (None: all); an unknown run is refused."""
    from sqlalchemy import text

    from core.metrics.score_pages import column_order

    kept = _kept(db)
    runs_t = None if runs is None else tuple(sorted({int(r) for r in runs}))
    langs_t = None if langs is None else tuple(sorted(set(langs)))
    if runs_t is not None:
        _check_runs(db, runs_t)
    found = _score_signatures(db, Plan(runs_t, langs_t, (), (), {}, {}, kept))
    columns = tuple(sorted(found, key=column_order))
    annotators = tuple(
        (int(i), str(n))
        for i, n in db.execute(
            text(
                "SELECT a.id, a.name FROM annotators a WHERE EXISTS (SELECT 1 FROM annotations "
                f"n WHERE n.annotator_id = a.id AND n.is_golden = 0 AND {kept['n']}) "
                "ORDER BY a.name"
            )
        )
    )
    categories = {int(i): str(n) for i, n in db.execute(text("SELECT id, name FROM categories"))}
    return Plan(
        runs_t,
        langs_t,
        columns,
        annotators,
        {c: sorted(found[c]) for c in columns if found[c]},
        categories,
        kept,
    )
