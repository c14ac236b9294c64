"""The bias report's "Metrics against human judgments" table: the correlations as rows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.agreement.correlate import CorrelationRequest, CorrelationResult, correlate
from core.agreement.reads import Reads
from core.errors import UserFacingError
from core.tables import Table

if TYPE_CHECKING:
    from core.store import SessionStore

TABLE_COLUMNS = (
    "level",
    "metric",
    "human rating",
    "n",
    "Pearson r",
    "p (Pearson)",
    "Spearman ρ",
    "p (Spearman)",
    "Kendall τ",
    "p (Kendall)",
    "note",
)


def table_rows(result: CorrelationResult) -> list[tuple[Any, ...]]:
    return [
        (
            r.level,
            r.metric,
            r.human,
            r.n,
            r.pearson,
            r.pearson_p,
            r.spearman,
            r.spearman_p,
            r.kendall,
            r.kendall_p,
            r.note,
        )
        for r in result.rows
    ]


def agreement_table(
    store: SessionStore,
    request: CorrelationRequest | None = None,
    *,
    strict: bool = False,
    reads: Reads | None = None,
) -> Table | None:
    """The Report's "Metrics against human judgments" table (a ``core.report`` Table), or
    None when the session has no text with both a human rating and a score. A request
    that cannot be honoured gives None too, or, ``strict``, raises its UserFacingError."""
    try:
        result = correlate(store, request, reads=reads)
    except UserFacingError:
        if strict:
            raise
        return None
    if not result.rows:
        return None
    return Table(
        "agreement",
        "Metrics against human judgments",
        TABLE_COLUMNS,
        tuple(table_rows(result)),
        note="Pearson r, Spearman ρ and Kendall τ-b with two-sided p-values; "
        + "; ".join(result.notes),
    )
