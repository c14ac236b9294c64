"""What the Scores panel reads, off the UI thread: the filters' choices (``ScoresData``)
and one refresh's page, figures and summary (``ScoresView``), as the panel's rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.labels import plural
from core.metrics.score_pages import (
    ScoresFilter,
    ScoreSort,
    column_order,
    read_overview,
)
from widgets.scores import (
    ScoreTableRow,
    format_value,
)

if TYPE_CHECKING:
    from core.metrics.scoring import (
        CorpusScore,
        GroupScore,
        SentenceScoreRow,
    )
    from core.store import SessionStore


# The panel's own read jobs (quiet, writing nothing).
MORE_KIND = "panel.load-more"
MODELS_KIND = "models.discover"
LOAD_TITLE = "Load scores"
READ_KEY = "scores.view"  # the panel's view read (app.session_io.ViewReads)
MORE_TITLE = "Load more scores"


@dataclass(frozen=True)
class ScoresData:
    """What a refresh reads once per session change: the filters' choices and the corpus
    rows that say which BERTScore model and encoder were used."""

    store: SessionStore  # the session read (a result for another session is dropped)
    stored: list[CorpusScore]
    runs: list[tuple[int, str, int]]  # (run id, model, texts), by run id
    langs: list[str]
    tiers: list[str]
    total: int  # every text in the session


def load_scores(store: SessionStore) -> ScoresData:
    """The choices and notes of a refresh (run in a job, never on the UI thread): SQL
    aggregates, not the texts."""
    from core.metrics.scoring import corpus_scores

    overview = read_overview(store)
    return ScoresData(
        store=store,
        stored=corpus_scores(store, metrics=["bertscore", "similarity"]),
        runs=overview.runs,
        langs=overview.langs,
        tiers=overview.tiers,
        total=overview.total,
    )


@dataclass(frozen=True)
class ScoresView:
    """What one refresh hands the panel: the first page and the figures, read off the UI
    thread."""

    data: ScoresData
    rows: list[SentenceScoreRow]  # the page's texts (the detail looks them up)
    table: list[ScoreTableRow]  # the same, as table rows, sorted by ``sorted_by``
    columns: list[str]
    ranges: dict[str, tuple[float, float]]  # each column's colour scale (every text's)
    scored: int  # texts that pass the filters with a score
    matching: int  # texts that pass the filters (``rows`` are the first of them)
    tips: dict[str, str]
    summary: list[ScoreTableRow]
    summary_columns: list[str]
    notes: tuple[str, str]
    chosen: ScoresFilter = ScoresFilter()  # the filters read (choices gone: "All")
    sorted_by: ScoreSort | None = None  # None: the session's order


def table_row(row: SentenceScoreRow) -> ScoreTableRow:
    text = (row.text or "").replace("\n", " ")
    tier = row.sub_tier if row.sub_tier and row.sub_tier != row.tier else row.tier
    return ScoreTableRow(
        key=row.verbalisation_id,
        cells=(
            row.unit_uid,
            row.model,
            row.lang,
            row.candidate_index,
            tier or "",
            text if text else "(no parsed text)",
        ),
        scores=row.scores,
        tooltip=row.text or "",
    )


def summary_rows(groups: Sequence[GroupScore]) -> tuple[list[ScoreTableRow], list[str]]:
    by_group: dict[tuple[Any, ...], dict[str, Any]] = {}
    for g in groups:
        model, lang, tier = g.group
        column = f"{g.metric}:{g.quality}" if g.quality else g.metric
        entry = by_group.setdefault((model, lang, tier), {"scores": {}, "tips": {}, "n": 0})
        entry["scores"][column] = g.mean
        entry["n"] = max(entry["n"], g.n)
        median = format_value(column, g.median)
        entry["tips"][column] = (
            f"{column.replace(':', ' ')}: mean "
            f"{format_value(column, g.mean)}, median {median}, "
            f"{plural(g.n, 'text')}"
        )
    columns = sorted({c for e in by_group.values() for c in e["scores"]}, key=column_order)
    rows = [
        ScoreTableRow(
            key=key,
            cells=(key[0], key[1], key[2] or "", entry["n"]),
            scores=entry["scores"],
            score_tips=entry["tips"],
        )
        for key, entry in sorted(by_group.items(), key=lambda kv: tuple(str(k) for k in kv[0]))
    ]
    return rows, columns
