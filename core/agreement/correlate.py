"""Metrics against human judgments: Pearson, Spearman and Kendall between each score
column and each human rating, at text level and system level (mean or corpus scores),
over a subset of the texts (see :mod:`core.agreement`)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from core.agreement.coefficients import coefficients
from core.agreement.corpus import CorpusForm
from core.agreement.judgments import system_key
from core.agreement.reads import (
    Reads,
    read_columns,
    read_humans,
    read_score_table,
    read_zscore_only,
)
from core.errors import UserFacingError
from core.jobs import Job, JobContext
from core.labels import plural

if TYPE_CHECKING:
    from core.metrics.scoring.queries import SentenceScoreRow
    from core.store import SessionStore

LEVELS = ("text", "system")
SYSTEM_SCORES = ("mean", "corpus")


@dataclass(frozen=True)
class CorrelationRequest:
    metrics: tuple[str, ...] | None = None  # score columns; None: every one with pairs
    humans: tuple[str, ...] | None = None  # rating names; None: every one in the session
    levels: tuple[str, ...] = LEVELS
    run_ids: tuple[int, ...] | None = None
    langs: tuple[str, ...] | None = None
    zscore: bool = False
    # The subset: texts of these tiers (tier or sub-tier) and systems (run system or model
    # name), where every condition holds (core.text_filters: "esa.undetected>=1").
    tiers: tuple[str, ...] | None = None
    systems: tuple[str, ...] | None = None
    where: tuple[str, ...] = ()
    # System level: "mean" (the mean of per-text scores) and "corpus" (the metric's corpus
    # form over the run's texts, as WebNLG's reports: BLEU, chrF++, TER).
    system_scores: tuple[str, ...] = SYSTEM_SCORES


@dataclass(frozen=True)
class CorrelationRow:
    level: str
    metric: str
    human: str
    n: int
    pearson: float | None = None
    pearson_p: float | None = None
    spearman: float | None = None
    spearman_p: float | None = None
    kendall: float | None = None
    kendall_p: float | None = None
    note: str = ""


@dataclass
class CorrelationResult:
    rows: list[CorrelationRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    humans: list[str] = field(default_factory=list)
    metrics: list[str] = field(default_factory=list)


def correlate(
    store: SessionStore,
    request: CorrelationRequest | None = None,
    ctx: JobContext | None = None,
    *,
    reads: Reads | None = None,
) -> CorrelationResult:
    """The correlations ``request`` asks for (``reads``: what earlier reads of the same
    state of the session kept, see :class:`Reads`)."""
    request = request or CorrelationRequest()
    unknown = [level for level in request.levels if level not in LEVELS]
    if unknown or not request.levels:
        raise UserFacingError(f"levels are {' and '.join(LEVELS)} (got {unknown or 'none'})")
    all_humans = read_humans(store, zscore=request.zscore, reads=reads)
    result = CorrelationResult(humans=sorted(all_humans))
    humans = _chosen_humans(all_humans, request)
    by_vid, columns, universe = _rated_texts(store, request, humans, result, reads)
    corpus = (
        CorpusForm(store, by_vid, reads=reads, universe=universe)
        if "corpus" in request.system_scores
        else None
    )
    total = len(columns) * len(humans)
    done = 0
    for human, values in sorted(humans.items()):
        for metric in columns:
            if ctx is not None:
                ctx.check_cancelled()
                ctx.progress(done, total, f"{metric} · {human}")
            done += 1
            result.rows += _pair_rows(request, metric, human, values, by_vid, corpus)
    result.notes += _method_notes(store, request, corpus, reads)
    return result


def _chosen_humans(
    humans: dict[str, dict[int, float]], request: CorrelationRequest
) -> dict[str, dict[int, float]]:
    """The ratings ``request`` names (every one when it names none); refused when one is
    missing or the session has none."""
    if request.humans is not None:
        missing = [h for h in request.humans if h not in humans]
        if missing:
            raise UserFacingError(
                f"no human rating {', '.join(map(repr, missing))} in this session (ratings "
                f"here: {', '.join(sorted(humans)) or 'none'})"
            )
        humans = {h: humans[h] for h in request.humans}
    if not humans:
        raise UserFacingError(
            "the session holds no human judgments: rate texts in the Annotate panel, import "
            "WDV JSON (taillens import FILE --format wdv) or WebNLG 2020 human-evaluation "
            "files (taillens import-judgments)"
        )
    return humans


def _rated_texts(
    store: SessionStore,
    request: CorrelationRequest,
    humans: dict[str, dict[int, float]],
    result: CorrelationResult,
    reads: Reads | None,
) -> tuple[dict[int, SentenceScoreRow], list[str], set[int]]:
    """The rated texts of the subset with their scores (by verbalisation id), the score
    columns to correlate, and every text read before the subset was taken; the session's
    score columns and the subset's filters go into ``result``."""
    rated = set().union(*(set(v) for v in humans.values()))
    # No text without a rating enters a correlation: only the rated ones are read, unless
    # tiers or systems are asked for (they are checked against the whole session's).
    rows = read_score_table(
        store,
        run_ids=request.run_ids,
        langs=request.langs,
        verbalisation_ids=rated if request.tiers is None and request.systems is None else None,
        reads=reads,
    )
    universe = {r.verbalisation_id for r in rows}
    columns = read_columns(store, run_ids=request.run_ids, langs=request.langs, reads=reads)
    result.metrics = list(columns)
    rows = _subset(store, rows, request, result, reads)
    if request.metrics is not None:
        missing = [m for m in request.metrics if m not in columns]
        if missing:
            raise UserFacingError(
                f"no sentence scores {', '.join(map(repr, missing))} in this session (score "
                f"columns here: {', '.join(columns) or 'none'}; reference-based ones are "
                "metric:quality, e.g. bleu:gold)"
            )
        columns = list(request.metrics)
    by_vid = {r.verbalisation_id: r for r in rows if r.verbalisation_id in rated}
    if not by_vid:
        raise UserFacingError(
            "no text has both a human rating and an automatic score"
            + (
                " in the subset asked for (" + "; ".join(result.notes) + ")"
                if result.notes
                else " (score the rated runs first: taillens score)"
            )
        )
    return by_vid, columns, universe


def _pair_rows(
    request: CorrelationRequest,
    metric: str,
    human: str,
    values: dict[int, float],
    by_vid: dict[int, SentenceScoreRow],
    corpus: CorpusForm | None,
) -> list[CorrelationRow]:
    """One metric against one rating, at each level asked for (none without a text
    that has both)."""
    pairs = [
        (cast(float, row.scores[metric]), values[vid], row.run_id, row.model)
        for vid, row in by_vid.items()
        if vid in values and row.scores.get(metric) is not None
    ]
    if not pairs:
        return []
    rows = []
    if "text" in request.levels:
        xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
        rows.append(CorrelationRow("text", metric, human, len(pairs), **coefficients(xs, ys)))
    if "system" not in request.levels:
        return rows
    runs: dict[int, list[tuple[int, float, float]]] = defaultdict(list)
    for vid, row in by_vid.items():
        if vid in values and row.scores.get(metric) is not None:
            runs[row.run_id].append((vid, cast(float, row.scores[metric]), values[vid]))
    ys = [sum(y for _, _, y in v) / len(v) for v in runs.values()]
    if "mean" in request.system_scores:
        xs = [sum(x for _, x, _ in v) / len(v) for v in runs.values()]
        rows.append(CorrelationRow("system", metric, human, len(runs), **coefficients(xs, ys)))
    if corpus is not None and corpus.has(metric):
        corpus_xs = [corpus.score(metric, [vid for vid, _, _ in v]) for v in runs.values()]
        kept = [(x, y) for x, y in zip(corpus_xs, ys, strict=True) if x is not None]
        rows.append(
            CorrelationRow(
                "system-corpus",
                metric,
                human,
                len(kept),
                **coefficients([x for x, _ in kept], [y for _, y in kept]),
            )
        )
    return rows


def _method_notes(
    store: SessionStore,
    request: CorrelationRequest,
    corpus: CorpusForm | None,
    reads: Reads | None,
) -> list[str]:
    """How the ratings were averaged, what each system level is, the coefficients."""
    notes = []
    if request.zscore:
        notes.append("WebNLG ratings z-scored per rater and criterion before averaging")
    else:
        z_only = read_zscore_only(store, reads)
        if z_only:
            notes.append(
                f"{plural(len(z_only), 'system')} rated only in the all-teams file (z-scores: "
                f"{', '.join(z_only[:5])}{', …' if len(z_only) > 5 else ''}) left out; "
                "--zscore takes them in"
            )
    if "system" in request.levels:
        if "mean" in request.system_scores:
            notes.append(
                "system level (system): per run, the means of the per-text metric and rating "
                "over its texts that have both"
            )
        if corpus is not None and corpus.used:
            notes.append(
                "system level (system-corpus): per run, the metric's corpus score over the "
                "same texts ("
                + "; ".join(f"{m}: {s}" for m, s in sorted(corpus.used.items()))
                + "), against the mean rating, as WebNLG's reports"
            )
        if corpus is not None:
            notes += corpus.notes()
    notes.append(
        "Pearson r; Spearman ρ on average ranks; Kendall τ-b (ties counted in both "
        "variables' corrections); two-sided p-values (scipy)"
    )
    return notes


def _subset(
    store: SessionStore,
    rows: list[SentenceScoreRow],
    request: CorrelationRequest,
    result: CorrelationResult,
    reads: Reads | None = None,
) -> list[SentenceScoreRow]:
    """The texts ``request``'s tiers, systems and conditions keep; each filter noted."""
    from core.text_filters import filter_rows

    if request.tiers is not None:
        wanted = set(request.tiers)
        present = {v for r in rows for v in (r.tier, r.sub_tier) if v}
        unknown = sorted(wanted - present)
        if unknown:
            raise UserFacingError(
                f"no text of tier {', '.join(map(repr, unknown))} (tiers here: "
                f"{', '.join(sorted(present)) or 'none'})"
            )
        rows = [r for r in rows if r.tier in wanted or r.sub_tier in wanted]
        result.notes.append(f"tiers: {', '.join(request.tiers)}")
    if request.systems is not None:
        present = {r.model for r in rows}
        by_key = {system_key(name): name for name in present}
        chosen = set()
        for system in request.systems:
            name = system if system in present else by_key.get(system_key(system))
            if name is None:
                raise UserFacingError(
                    f"no run of system {system!r} (systems here: "
                    f"{', '.join(sorted(present)) or 'none'})"
                )
            chosen.add(name)
        rows = [r for r in rows if r.model in chosen]
        result.notes.append(f"systems: {', '.join(sorted(chosen))}")
    if request.where:
        rows = filter_rows(
            store, rows, request.where, details=None if reads is None else reads.details
        )
        result.notes.append(f"where {' and '.join(request.where)}")
    return rows


def correlation_job(
    store: SessionStore, request: CorrelationRequest | None = None
) -> Job[CorrelationResult]:
    request = request or CorrelationRequest()
    return Job(
        title="Metrics against human judgments",
        run=lambda ctx: correlate(store, request, ctx),
        kind="report.correlate",
        params={"levels": list(request.levels), "zscore": request.zscore},
    )
