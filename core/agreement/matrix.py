"""A metric × metric/criterion correlation matrix in the layout of the ESA paper's Table 3.

The ESA paper (§6, Table 3) correlates ESA, per text, with the other metrics
and with each human criterion over the **judged** texts (those with a human rating), and
over three subsets of them: all texts, texts with at least one and with at least two
entities ESA left undetected; Pearson in the body, Spearman and Kendall in its appendix.
:func:`correlation_matrix` computes exactly that grid for any row metrics (default ESA)
and any columns (default: every other sentence score column, then every human rating):
one block per coefficient, one line per row metric and subset, one cell per column, each
cell with its own n (a text counts where both sides have a value).

Metric against metric counts the judged texts only, as the paper's BLEU and chrF++ entries
do (n = 470 for every column of its ≥ 1 row); ``judged_only=False`` takes every text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.agreement.coefficients import MIN_PAIRS, coefficients
from core.agreement.human import WEBNLG_PREFIX
from core.agreement.reads import Reads, read_columns, read_humans, read_score_table
from core.errors import UserFacingError
from core.jobs import Job, JobContext
from core.tables import Table

if TYPE_CHECKING:
    from core.metrics.scoring.queries import SentenceScoreRow
    from core.store import SessionStore

COEFFICIENTS = ("pearson", "spearman", "kendall")
# The paper's three subsets: a label and the conditions (core.text_filters) that make it.
PAPER_SUBSETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("all texts", ()),
    ("≥1 undetected", ("esa.undetected>=1",)),
    ("≥2 undetected", ("esa.undetected>=2",)),
)
_CRITERIA = {
    "correctness": "Correctness",
    "data_coverage": "DataCoverage",
    "fluency": "Fluency",
    "relevance": "Relevance",
    "text_structure": "TextStructure",
}


def column_label(column: str) -> str:
    """A column as the paper's table heads it: ``bleu:gold`` → BLEU, ``webnlg:fluency`` →
    Fluency; a silver column keeps its quality."""
    if column.startswith(WEBNLG_PREFIX):
        name = column[len(WEBNLG_PREFIX) :]
        return _CRITERIA.get(name, name)
    metric, _, quality = column.partition(":")
    names = {"bleu": "BLEU", "chrf++": "chrF++", "ter": "TER", "meteor": "METEOR", "esa": "ESA"}
    label = names.get(metric, metric)
    return label if quality in ("", "gold") else f"{label} ({quality})"


@dataclass(frozen=True)
class MatrixRequest:
    rows: tuple[str, ...] = ("esa",)
    columns: tuple[str, ...] | None = None  # None: other metric columns, then ratings
    subsets: tuple[tuple[str, tuple[str, ...]], ...] = PAPER_SUBSETS
    judged_only: bool = True
    run_ids: tuple[int, ...] | None = None
    langs: tuple[str, ...] | None = None
    zscore: bool = False
    where: tuple[str, ...] = ()  # further conditions on every subset


@dataclass(frozen=True)
class MatrixCell:
    n: int
    pearson: float | None = None
    pearson_p: float | None = None
    spearman: float | None = None
    spearman_p: float | None = None
    kendall: float | None = None
    kendall_p: float | None = None
    note: str = ""


@dataclass
class MatrixResult:
    rows: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    subsets: list[str] = field(default_factory=list)
    # (row, subset label) -> texts of the subset with the row metric
    row_n: dict[tuple[str, str], int] = field(default_factory=dict)
    # (row, subset label, column) -> the cell
    cells: dict[tuple[str, str, str], MatrixCell] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def value(self, coefficient: str, row: str, subset: str, column: str) -> float | None:
        cell = self.cells.get((row, subset, column))
        return None if cell is None else getattr(cell, coefficient)

    def to_json(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "columns": self.columns,
            "subsets": self.subsets,
            "row_n": [{"row": r, "subset": s, "n": n} for (r, s), n in self.row_n.items()],
            "cells": [
                {"row": r, "subset": s, "column": c, **cell.__dict__}
                for (r, s, c), cell in self.cells.items()
            ],
            "notes": self.notes,
        }


def correlation_matrix(
    store: SessionStore,
    request: MatrixRequest | None = None,
    ctx: JobContext | None = None,
    *,
    reads: Reads | None = None,
) -> MatrixResult:
    """The matrix ``request`` asks for (``reads``: what earlier reads of the same state of
    the session kept, see :class:`core.agreement.reads.Reads`)."""
    from core.text_filters import filter_rows

    request = request or MatrixRequest()
    details = None if reads is None else reads.details
    humans = read_humans(store, zscore=request.zscore, reads=reads)
    table, columns = _matrix_texts(store, request, humans, reads)
    result = MatrixResult(
        rows=list(request.rows), columns=columns, subsets=[label for label, _ in request.subsets]
    )
    total = len(request.subsets) * len(request.rows) * len(columns)
    done = 0
    for label, conditions in request.subsets:
        subset = filter_rows(store, table, conditions, details=details) if conditions else table
        for row_metric in request.rows:
            having = [r for r in subset if r.scores.get(row_metric) is not None]
            result.row_n[(row_metric, label)] = len(having)
            for column in columns:
                if ctx is not None:
                    ctx.check_cancelled()
                    ctx.progress(done, total, f"{label} · {row_metric} · {column}")
                done += 1
                cell = _cell(having, row_metric, column, humans.get(column))
                result.cells[(row_metric, label, column)] = cell
    scope = "judged texts (with a human rating)" if request.judged_only else "every text"
    result.notes.append(
        f"per text, over the {scope}"
        + (f" where {' and '.join(request.where)}" if request.where else "")
        + f"; a cell needs {MIN_PAIRS} pairs; Pearson r, Spearman ρ, Kendall τ-b (scipy)"
    )
    if request.zscore:
        result.notes.append("WebNLG ratings z-scored per rater and criterion before averaging")
    return result


def _matrix_texts(
    store: SessionStore,
    request: MatrixRequest,
    humans: dict[str, dict[int, float]],
    reads: Reads | None,
) -> tuple[list[SentenceScoreRow], list[str]]:
    """The texts the matrix counts (judged ones only unless asked otherwise, where the
    request's conditions hold) and its columns; refused when a row or column is unknown."""
    from core.text_filters import filter_rows

    judged = set().union(*(set(v) for v in humans.values()))
    # Over the judged texts only those are read (a challenge session judges 2,848 of its
    # 28,464 texts; reading every text's scores was most of the matrix's time).
    table = read_score_table(
        store,
        run_ids=request.run_ids,
        langs=request.langs,
        verbalisation_ids=judged if request.judged_only and humans else None,
        reads=reads,
    )
    metric_columns = read_columns(store, run_ids=request.run_ids, langs=request.langs, reads=reads)
    missing = [m for m in request.rows if m not in metric_columns]
    if missing:
        raise UserFacingError(
            f"no sentence scores {', '.join(map(repr, missing))} in this session (score "
            f"columns here: {', '.join(metric_columns) or 'none'})"
        )
    if request.columns is None:
        columns = [c for c in metric_columns if c not in request.rows] + sorted(humans)
    else:
        unknown = [c for c in request.columns if c not in metric_columns and c not in humans]
        if unknown:
            raise UserFacingError(
                f"no score column or human rating {', '.join(map(repr, unknown))} (columns "
                f"here: {', '.join(metric_columns + sorted(humans)) or 'none'})"
            )
        columns = list(request.columns)
    if request.judged_only:
        if not humans:
            raise UserFacingError(
                "the session holds no human judgments: the matrix counts the judged texts "
                "(import them with taillens import-judgments), or ask for every text"
            )
        table = [r for r in table if r.verbalisation_id in judged]
    if request.where:
        details = None if reads is None else reads.details
        table = filter_rows(store, table, request.where, details=details)
    return table, columns


def _cell(
    having: list[SentenceScoreRow],
    row_metric: str,
    column: str,
    ratings: dict[int, float] | None,
) -> MatrixCell:
    """``row_metric`` against ``column`` (a human rating when ``ratings``, else a score
    column) over the texts where both have a value."""
    pairs: list[tuple[float, float]] = []
    for r in having:
        other = ratings.get(r.verbalisation_id) if ratings is not None else r.scores.get(column)
        if other is not None:
            pairs.append((float(r.scores[row_metric]), float(other)))  # type: ignore[arg-type]
    found = coefficients([x for x, _ in pairs], [y for _, y in pairs])
    return MatrixCell(len(pairs), **found)


def matrix_job(store: SessionStore, request: MatrixRequest) -> Job[MatrixResult]:
    return Job(
        title="Correlation matrix",
        run=lambda ctx: correlation_matrix(store, request, ctx),
        kind="correlate.matrix",
        params={"rows": list(request.rows), "subsets": [s for s, _ in request.subsets]},
    )


def matrix_lines(result: MatrixResult, coefficients_: Sequence[str] = COEFFICIENTS) -> list[str]:
    """The matrix as text, one block per coefficient: a line per row metric and subset,
    with its n, and a column per metric or criterion (Table 3's layout)."""
    heads = [column_label(c) for c in result.columns]
    width = max([8, *(len(h) for h in heads)])
    label_width = max(len(f"{column_label(r)} · {s}") for r in result.rows for s in result.subsets)
    lines: list[str] = []
    for coefficient in coefficients_:
        lines.append(coefficient.capitalize())
        lines.append(f"{'':<{label_width}} {'n':>6} " + " ".join(f"{h:>{width}}" for h in heads))
        for row in result.rows:
            for subset in result.subsets:
                values = []
                for column in result.columns:
                    cell = result.cells.get((row, subset, column))
                    value = None if cell is None else getattr(cell, coefficient)
                    values.append(f"{'—' if value is None else f'{value:.2f}':>{width}}")
                label = f"{column_label(row)} · {subset}"
                lines.append(
                    f"{label:<{label_width}} {result.row_n.get((row, subset), 0):>6,} "
                    + " ".join(values)
                )
        lines.append("")
    uneven = sorted(
        {
            (row, subset)
            for (row, subset, _c), cell in result.cells.items()
            if cell.n != result.row_n.get((row, subset))
        }
    )
    for row, subset in uneven:
        ns = [result.cells[(row, subset, c)].n for c in result.columns]
        lines.append(
            f"note: {column_label(row)} · {subset}: cells count {min(ns):,}–{max(ns):,} texts "
            "(a column without a value for some texts)"
        )
    lines.extend(f"note: {note}" for note in result.notes)
    return lines


def matrix_table(
    store: SessionStore,
    *,
    where: Sequence[str] = (),
    strict: bool = False,
    reads: Reads | None = None,
) -> Table | None:
    """The Report's "ESA matrix" table (a ``core.tables.Table``): the Table 3 layout of
    :func:`correlation_matrix` with ESA as the row, one line per coefficient and subset;
    None when the session has no ESA score or no human judgment (or, ``strict``, the
    reason raised)."""
    try:
        result = correlation_matrix(store, MatrixRequest(where=tuple(where)), reads=reads)
    except UserFacingError:
        if strict:
            raise
        return None
    if not result.columns or not any(cell.n for cell in result.cells.values()):
        return None
    rows = []
    for coefficient in COEFFICIENTS:
        for row in result.rows:
            for subset in result.subsets:
                values = [
                    None
                    if (v := result.value(coefficient, row, subset, c)) is None
                    else round(v, 3)
                    for c in result.columns
                ]
                rows.append(
                    (
                        coefficient.capitalize(),
                        column_label(row),
                        subset,
                        result.row_n.get((row, subset), 0),
                        *values,
                    )
                )
    return Table(
        "esa_matrix",
        "ESA against metrics and human criteria (ESA paper, Table 3)",
        ("coefficient", "metric", "texts", "n", *(column_label(c) for c in result.columns)),
        tuple(rows),
        note="; ".join(result.notes)
        + "; the ESA configuration is the one its signature names (Signatures tab)",
    )
