"""Group comparisons and the study table of the bias report (METHODS §8), as plain data.

A comparison puts two groups of one dimension (tier, sub-tier, language, model, quality,
category) side by side on one metric, **within** a stratum of the other dimensions:
per-item scores of the same model (METHODS §8), the same language, and the same
reference quality (gold and silver are never mixed). Comparing languages therefore
happens within each model and quality; comparing models within each language; and so on.

Every result is a frozen dataclass or a :class:`Table` of plain values, so the Report
panel shows them as they are and the exports write them without knowing their meaning.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from itertools import combinations
from typing import Any

import numpy as np

from core.errors import UserFacingError
from core.groups import (
    DIMENSIONS,
    STUDY_METRICS,
    UNKNOWN,
    metric_label,
    metric_order,
    order_key,
)
from core.jobs import Job, JobContext
from core.labels import plural
from core.report.comparison import Comparison
from core.report.data import Observation, ScoreFrame, load_frame
from core.report.statistics import (
    CORRECTIONS,
    DEFAULT_ALPHA,
    DEFAULT_CORRECTION,
    DEFAULT_REPETITIONS,
    DEFAULT_RESAMPLES,
    DEFAULT_SAMPLE_SIZE,
    DEFAULT_SEED,
    adjust_p_values,
    bootstrap_medians_cis,
    finite,
    mann_whitney_protocol,
    summarise,
)
from core.report.verdict import headlines_table_rows, verdict
from core.tables import Table
from core.vocab import DEFAULT_QUALITY

STRATA = ("model", "lang", "quality")
SIGNIFICANT_MARK = "*"
# Dimensions whose first group (in canonical order) is the baseline every other is
# compared with; the others compare every pair when there are few groups.
BASELINE_DIMENSIONS = frozenset({"tier", "subtier"})
STUDY_REFERENCES = ("quality", "pooled", "split")
ALL_PAIRS_UP_TO = 4
# The headlines: head against long tail, languages pooled (core.report.verdict words them).
ALL_LANGUAGES = "all languages"
HEADLINE_PAIR = ("head", "long_tail")


class NothingToCompareError(UserFacingError):
    """The session holds nothing the report could compare."""


@dataclass(frozen=True)
class Settings:
    repetitions: int = DEFAULT_REPETITIONS
    sample_size: int = DEFAULT_SAMPLE_SIZE
    seed: int = DEFAULT_SEED
    alpha: float = DEFAULT_ALPHA
    study_quality: str = DEFAULT_QUALITY
    statistic: str = "mean"  # of the study table's cells: "mean" or "median"
    # The study table's references: "quality" (study_quality's only), "pooled" (gold and
    # silver together, TailNLG's Table 2) or "split" (a row per quality, its Tables 7-10).
    study_references: str = "quality"
    correction: str = DEFAULT_CORRECTION  # across every test of one report
    bootstrap_resamples: int = DEFAULT_RESAMPLES  # 0: no confidence intervals

    def check(self) -> None:
        if self.correction not in CORRECTIONS:
            raise UserFacingError(
                f"the multiple-testing correction is one of "
                f"{', '.join(CORRECTIONS)}, not {self.correction!r}"
            )
        if self.bootstrap_resamples < 0:
            raise UserFacingError("--bootstrap must be 0 (no intervals) or more resamples")
        if self.repetitions < 1:
            raise UserFacingError("--repetitions must be at least 1")
        if self.sample_size < 2:
            raise UserFacingError("--sample-size must be at least 2")
        if not 0 < self.alpha < 1:
            raise UserFacingError("--alpha must lie between 0 and 1 (e.g. 0.05)")
        if self.statistic not in ("mean", "median"):
            raise UserFacingError("the study table's statistic is 'mean' or 'median'")
        if self.study_references not in STUDY_REFERENCES:
            raise UserFacingError(
                f"the study table's references are {', '.join(map(repr, STUDY_REFERENCES))}"
            )


@dataclass(frozen=True)
class ReportRequest:
    """What to build, as the Report panel (or a script) asks for it: the dimensions to
    compare by, the metrics (None: every metric the session holds), the protocol's
    settings and the runs (None: for each model its latest output per item)."""

    by: tuple[str, ...] = ("tier",)
    metrics: tuple[str, ...] | None = None
    settings: Settings = Settings()
    runs: tuple[int, ...] | None = None
    # The metrics-against-humans table's subset: texts where every condition holds
    # (core.text_filters, as ``correlate --where``: "esa.undetected>=1", "tier=long_tail").
    where: tuple[str, ...] = ()

    def job(self, store: Any, cache: ReportCache | None = None) -> Job[BiasReport]:
        """:func:`report_job` for this request (``cache``: see :class:`ReportCache`)."""
        return report_job(
            store,
            by=self.by,
            metrics=self.metrics,
            settings=self.settings,
            runs=self.runs,
            where=self.where,
            cache=cache,
        )


COMPARISON_COLUMNS = (
    "metric",
    "model",
    "lang",
    "quality",
    "group_a",
    "group_b",
    "n_a",
    "median_a",
    "median_a_ci_low",
    "median_a_ci_high",
    "iqr_a",
    "mean_a",
    "n_b",
    "median_b",
    "median_b_ci_low",
    "median_b_ci_high",
    "iqr_b",
    "mean_b",
    "median_diff",
    "median_diff_ci_low",
    "median_diff_ci_high",
    "p_value",
    "p_adjusted",
    "effect_size",
    "significant",
)


def comparison_row(c: Comparison) -> tuple[Any, ...]:
    ci = c.ci
    a_ci, b_ci, d_ci = (ci.a, ci.b, ci.difference) if ci else ((None, None),) * 3
    diff = c.a.median - c.b.median if c.a.median is not None and c.b.median is not None else None
    return (
        c.metric,
        c.stratum_value("model"),
        c.stratum_value("lang"),
        c.stratum_value("quality"),
        c.group_a,
        c.group_b,
        c.a.n,
        c.a.median,
        *a_ci,
        c.a.iqr,
        c.a.mean,
        c.b.n,
        c.b.median,
        *b_ci,
        c.b.iqr,
        c.b.mean,
        diff,
        *d_ci,
        c.p_value,
        c.p_adjusted,
        c.effect_size,
        c.significant,
    )


def _bootstrap_seed(seed: int, *key: str) -> list[int]:
    """A comparison's own seed: the report's seed and a stable digest of what it compares,
    so its intervals do not change when other comparisons are added or left out."""
    import hashlib

    digest = hashlib.sha256("\x1f".join(key).encode()).digest()
    return [seed, int.from_bytes(digest[:8], "big")]


def default_pairs(dimension: str, values: Sequence[str]) -> list[tuple[str, str]]:
    """Which groups to compare when the user named none (see module constants)."""
    ordered = sorted(
        (v for v in set(values) if v != UNKNOWN), key=lambda v: order_key(dimension, v)
    )
    if len(ordered) < 2:
        return []
    if dimension in BASELINE_DIMENSIONS or len(ordered) > ALL_PAIRS_UP_TO:
        return [(ordered[0], other) for other in ordered[1:]]
    return list(combinations(ordered, 2))


def compare(
    frame: ScoreFrame,
    by: str,
    *,
    metrics: Sequence[str] | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    settings: Settings = Settings(),
) -> list[Comparison]:
    """Every comparison of ``by``'s groups on each metric, within each stratum."""
    if by not in DIMENSIONS:
        raise UserFacingError(f"Cannot compare by {by!r}: choose from {', '.join(DIMENSIONS)}.")
    wanted = set(metrics) if metrics else None
    strata = tuple(d for d in STRATA if d != by)
    buckets: dict[tuple[str, tuple[str, ...]], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    if not pairs and by != "quality":
        # Nothing to compare where the items have fewer than two known groups (a
        # session without tiers, say): told before every value is sorted into buckets.
        items = {id(o.item): o.item for o in frame.observations}.values()
        if len({getattr(item, by) for item in items} - {None, UNKNOWN}) < 2:
            return []
    # An item's group and stratum are the same for all its values of one quality: made
    # once per item and quality (the frame keeps its items alive, so ids stay unique).
    # A stratum key is the item's fields of STRATA, the quality in its place, None as "".
    by_quality = by == "quality"
    fields = [d for d in strata if d != "quality"]
    quality_at = strata.index("quality") if "quality" in strata else None
    placed: dict[tuple[int, str | None], tuple[str | None, tuple[str, ...]]] = {}
    for o in frame.observations:
        metric = o.metric
        if wanted is not None and metric not in wanted:
            continue
        item, quality = o.item, o.quality
        where = placed.get((id(item), quality))
        if where is None:
            parts = [getattr(item, d) for d in fields]
            if quality_at is not None:
                parts.insert(quality_at, quality)
            where = placed[(id(item), quality)] = (
                quality if by_quality else getattr(item, by),
                tuple([part or "" for part in parts]),
            )
        group, key = where
        if group is None:  # e.g. quality of a metric that has none
            continue
        buckets[(metric, key)][group].append(o.value)
    results: list[Comparison] = []
    bootstrap: list[tuple[np.ndarray, np.ndarray, list[int]]] = []
    for metric, key in sorted(buckets, key=lambda k: (metric_order(k[0]), k[1])):
        groups = buckets[(metric, key)]
        chosen = pairs if pairs else default_pairs(by, list(groups))
        stratum = tuple((d, v) for d, v in zip(strata, key, strict=True) if v)
        # A group compared with several others (a baseline) is made an array and
        # summarised once.
        arrays: dict[str, np.ndarray] = {}
        summaries: dict[str, Any] = {}
        for a, b in chosen:
            if a not in groups or b not in groups:
                continue
            for g in (a, b):
                if g not in arrays:
                    arrays[g] = finite(groups[g])
                    summaries[g] = summarise(arrays[g])
            if settings.bootstrap_resamples:
                bootstrap.append(
                    (
                        arrays[a],
                        arrays[b],
                        _bootstrap_seed(settings.seed, by, metric, repr(stratum), a, b),
                    )
                )
            results.append(
                Comparison(
                    by=by,
                    metric=metric,
                    stratum=stratum,
                    group_a=a,
                    group_b=b,
                    a=summaries[a],
                    b=summaries[b],
                    test=mann_whitney_protocol(
                        arrays[a],
                        arrays[b],
                        repetitions=settings.repetitions,
                        sample_size=settings.sample_size,
                        seed=settings.seed,
                        alpha=settings.alpha,
                    ),
                )
            )
    if bootstrap:  # every interval in one go: the same numbers as one call per pair
        intervals = bootstrap_medians_cis(bootstrap, resamples=settings.bootstrap_resamples)
        results = [replace(c, ci=ci) for c, ci in zip(results, intervals, strict=True)]
    return results


# -- the study table --------------------------------------------------------------------------


@dataclass(frozen=True)
class StudyCell:
    value: float | None
    n: int
    significant: bool = False  # head against this row's type, same model and language
    p_value: float | None = None
    p_adjusted: float | None = None  # across the report's tests (Settings.correction)


@dataclass(frozen=True)
class StudyRow:
    model: str
    type: str  # tier group: head / torso / long_tail
    lang: str
    cells: dict[str, StudyCell]
    refs: str = ""  # split tables: the references' quality (gold / silver)


@dataclass(frozen=True)
class StudyTable:
    """Rows model × type × language; columns the study's metrics present in the session.

    A cell is the mean (or median) of the per-item scores; reference-based metrics use
    references of ``quality`` only. A non-head row's cell is marked when it differs from
    the head row of the same model and language (the METHODS §8 protocol, p < alpha).
    """

    quality: str  # gold / silver, "pooled" or "split"
    statistic: str
    metrics: tuple[str, ...]
    rows: list[StudyRow]

    def table(self) -> Table:
        split = self.quality == "split"
        keys = ("model", "type", "lang", "refs") if split else ("model", "type", "lang")
        columns = (*keys, *(metric_label(m) for m in self.metrics))
        rows, marked = [], set()
        for r, row in enumerate(self.rows):
            values: list[Any] = [row.model, row.type, row.lang] + ([row.refs] if split else [])
            for c, metric in enumerate(self.metrics):
                cell = row.cells.get(metric)
                values.append(None if cell is None else cell.value)
                if cell is not None and cell.significant:
                    marked.add((r, len(keys) + c))
            rows.append(tuple(values))
        against = {
            "pooled": "gold and silver references pooled (an item scored against "
            "both counts once, their mean)",
            "split": "gold and silver references in separate rows (other metrics "
            "over the items that have references of the row's quality)",
        }.get(self.quality, f"{self.quality} references")
        note = (
            f"{self.statistic} of per-item scores; reference-based metrics against "
            f"{against}; {SIGNIFICANT_MARK} p < alpha against head (same model and "
            "language" + (" and references)" if split else ")")
        )
        title = {
            "pooled": "gold and silver references pooled",
            "split": "gold and silver references split",
        }.get(self.quality, f"{self.quality} references")
        return Table(
            f"study_{self.quality}",
            f"Study table ({title})",
            columns,
            tuple(rows),
            frozenset(marked),
            note,
        )


def study_table(
    frame: ScoreFrame, *, settings: Settings = Settings(), metrics: Sequence[str] | None = None
) -> StudyTable | None:
    """The TailNLG study layout (None when no study metric has scores)."""
    import numpy as np

    present = {o.metric for o in frame.observations}
    columns = tuple(m for m in (metrics or STUDY_METRICS) if m in present)
    if not columns:
        return None
    mode = settings.study_references
    # (model, tier, lang, refs, metric) -> per-item values; refs "" unless split.
    values: dict[tuple[str, str, str, str, str], list[float]] = defaultdict(list)
    if mode == "quality":
        for o in frame.observations:
            if o.metric not in columns or o.item.is_reference:
                continue
            if o.quality is not None and o.quality != settings.study_quality:
                continue
            values[(o.model, o.tier, o.lang, "", o.metric)].append(o.value)
    else:
        for (model, tier, lang, refs, metric), value in _study_items(
            frame, columns, split=mode == "split"
        ):
            values[(model, tier, lang, refs, metric)].append(value)
    keys = sorted(
        {k[:4] for k in values},
        key=lambda k: (
            k[0],
            order_key("tier", k[1]),
            order_key("lang", k[2]),
            order_key("quality", k[3]),
        ),
    )
    statistic = np.median if settings.statistic == "median" else np.mean
    rows = []
    for model, tier, lang, refs in keys:
        cells = {}
        for metric in columns:
            data = values.get((model, tier, lang, refs, metric))
            if not data:
                continue
            test = None
            head = values.get((model, "head", lang, refs, metric))
            if tier != "head" and head:
                test = mann_whitney_protocol(
                    head,
                    data,
                    repetitions=settings.repetitions,
                    sample_size=settings.sample_size,
                    seed=settings.seed,
                    alpha=settings.alpha,
                )
            cells[metric] = StudyCell(
                float(statistic(data)),
                len(data),
                test is not None and test.significant,
                None if test is None else test.p_value,
            )
        rows.append(StudyRow(model, tier, lang, cells, refs))
    quality = settings.study_quality if mode == "quality" else mode
    return StudyTable(quality, settings.statistic, columns, rows)


def _study_items(
    frame: ScoreFrame, columns: Sequence[str], *, split: bool
) -> list[tuple[tuple[str, str, str, str, str], float]]:
    """Per-item study values when gold and silver references are pooled or split.

    Pooled: an item scored against both qualities counts once, with the mean of its
    values. Split: a reference-based value goes to the row of its quality; a metric with
    no references (PPL) goes to the row of each quality the item has references of."""
    import numpy as np

    by_item: dict[tuple[int, str], dict[str | None, float]] = defaultdict(dict)
    contexts: dict[int, Any] = {}
    qualities: dict[int, set[str]] = defaultdict(set)
    for o in frame.observations:
        if o.metric not in columns or o.item.is_reference:
            continue
        key = id(o.item)
        contexts[key] = o.item
        by_item[(key, o.metric)][o.quality] = o.value
        if o.quality is not None:
            qualities[key].add(o.quality)
    out: list[tuple[tuple[Any, ...], float]] = []
    for (key, metric), per_quality in by_item.items():
        item = contexts[key]
        head = (item.model, item.tier, item.lang)
        if not split:
            out.append(((*head, "", metric), float(np.mean(list(per_quality.values())))))
        elif None in per_quality:
            out += [((*head, q, metric), per_quality[None]) for q in sorted(qualities[key])]
        else:
            out += [((*head, q, metric), v) for q, v in per_quality.items()]
    return out


# -- the report ---------------------------------------------------------------------------------


@dataclass
class BiasReport:
    """Everything the Report panel shows and the exports write."""

    session: str
    generated_at: str
    by: tuple[str, ...]
    metrics: tuple[str, ...]
    settings: Settings
    comparisons: dict[str, list[Comparison]]
    study: StudyTable | None
    frame: ScoreFrame
    annotation_table: Table | None = None
    notes: list[str] = field(default_factory=list)
    agreement_table: Table | None = None  # metrics against human judgments (core.correlate)
    # ESA against the other metrics and the human criteria, Table 3's layout
    # (core.correlate_matrix)
    matrix_table: Table | None = None
    headlines: list[Comparison] = field(default_factory=list)  # head vs long tail, pooled
    tests_corrected: int = 0  # the family the correction ran over

    def correction_note(self) -> str:
        s = self.settings
        names = {"holm": "Holm", "bh": "Benjamini–Hochberg"}
        if s.correction == "none":
            return f"{SIGNIFICANT_MARK} p < {s.alpha} (no multiple-testing correction)"
        return (
            f"{SIGNIFICANT_MARK} {names[s.correction]}-corrected p < {s.alpha} across "
            f"the {plural(self.tests_corrected, 'test')} of this report"
        )

    def bootstrap_note(self) -> str:
        s = self.settings
        if not s.bootstrap_resamples:
            return "no bootstrap intervals"
        return (
            f"95 % percentile bootstrap intervals of the medians and of their difference "
            f"(a − b), {s.bootstrap_resamples:,} resamples per group, seed {s.seed}"
        )

    def headline_lines(self) -> list[str]:
        """The head-against-long-tail verdicts, as the panel, the CLI and HTML say them."""
        return headlines_table_rows(self.headlines, self.settings.correction)

    def comparison_table(self, by: str) -> Table:
        rows = [comparison_row(c) for c in self.comparisons.get(by, [])]
        column = COMPARISON_COLUMNS.index(
            "p_value" if self.settings.correction == "none" else "p_adjusted"
        )
        marked = frozenset(
            (r, column) for r, c in enumerate(self.comparisons.get(by, [])) if c.significant
        )
        s = self.settings
        note = (
            f"two-sided Mann–Whitney U, {s.repetitions} repetitions on samples of "
            f"{s.sample_size} per group (all items when fewer), p-values averaged, seed "
            f"{s.seed}; effect size: rank-biserial correlation (a against b); "
            f"{self.bootstrap_note()}; {self.correction_note()}"
        )
        return Table(
            f"compare_{by}", f"Comparison by {by}", COMPARISON_COLUMNS, tuple(rows), marked, note
        )

    def runs_table(self) -> Table:
        import json

        rows = tuple(
            (
                r.id,
                r.name,
                r.kind,
                r.model_id,
                r.status,
                r.seed,
                r.fingerprint,
                json.dumps(r.parameters, sort_keys=True, ensure_ascii=False),
                json.dumps(r.prompt_templates, ensure_ascii=False),
                json.dumps(r.software, sort_keys=True),
            )
            for r in self.frame.runs
        )
        return Table(
            "runs",
            "Runs and their settings",
            (
                "id",
                "name",
                "kind",
                "model_id",
                "status",
                "seed",
                "fingerprint",
                "parameters",
                "prompt_templates",
                "software",
            ),
            rows,
        )

    def headline_table(self) -> Table:
        """Head against long tail per metric and model, languages pooled, with the verdict
        (core.report.verdict: the same words in the panel, the CLI and HTML)."""
        rows, marked = [], set()
        column = 8 if self.settings.correction != "none" else 7
        for r, c in enumerate(self.headlines):
            d = c.ci.difference if c.ci is not None else (None, None)
            rows.append(
                (
                    c.metric,
                    c.stratum_value("model"),
                    c.stratum_value("quality"),
                    c.a.median,
                    c.b.median,
                    *d,
                    c.p_value,
                    c.p_adjusted,
                    c.effect_size,
                    str(verdict(c)),
                )
            )
            if c.significant:
                marked.add((r, column))
        return Table(
            "headlines",
            "Head vs long tail",
            (
                "metric",
                "model",
                "quality",
                "median_head",
                "median_long_tail",
                "median_diff_ci_low",
                "median_diff_ci_high",
                "p_value",
                "p_adjusted",
                "effect_size",
                "verdict",
            ),
            tuple(rows),
            frozenset(marked),
            "all languages pooled, per model; "
            + self.bootstrap_note()
            + "; "
            + self.correction_note(),
        )

    def runs_used_table(self) -> Table:
        """Which runs the report used and how many items (unit, language, candidate) of
        each; items another picked run of the same model also has count once."""
        picked = self.frame.picked_runs
        rows = tuple(
            (u.run_id, u.model, u.items, u.superseded, ", ".join(str(r) for r in u.superseded_by))
            for u in self.frame.run_use
        )
        choice = (
            f"runs picked: {', '.join(str(r) for r in picked)}"
            if picked is not None
            else "default: for each model, its latest output per unit, language and candidate"
        )
        return Table(
            "runs_used",
            "Runs used",
            ("run", "model", "items used", "items left to a later run", "later run"),
            rows,
            note=f"{choice}; {plural(sum(u.items for u in self.frame.run_use), 'item')} in all",
        )

    def signatures_table(self) -> Table:
        return Table(
            "signatures", "Metric signatures", ("metric", "signature"), tuple(self.frame.signatures)
        )

    def counts_table(self) -> Table:
        counts = self.frame.counts()
        return Table(
            "counts",
            "Per-item values by metric",
            ("metric", "items"),
            tuple((m, counts[m]) for m in sorted(counts, key=metric_order)),
        )

    def tables(self) -> list[Table]:
        """Every table of the report, in reading order."""
        tables = [self.runs_used_table(), self.counts_table()]
        if self.headlines:
            tables.append(self.headline_table())
        if self.study is not None:
            tables.append(
                replace(
                    self.study.table(),
                    note=self.study.table().note.replace(
                        "p < alpha", self.correction_note().removeprefix(f"{SIGNIFICANT_MARK} ")
                    ),
                )
            )
        tables += [self.comparison_table(by) for by in self.by]
        if self.annotation_table is not None:
            tables.append(self.annotation_table)
        if self.agreement_table is not None:
            tables.append(self.agreement_table)
        if self.matrix_table is not None:
            tables.append(self.matrix_table)
        tables += [self.runs_table(), self.signatures_table()]
        return tables

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable form (for ``taillens report --json``)."""
        return {
            "session": self.session,
            "generated_at": self.generated_at,
            "by": list(self.by),
            "metrics": list(self.metrics),
            "settings": self.settings.__dict__,
            "runs": (None if self.frame.picked_runs is None else list(self.frame.picked_runs)),
            "notes": self.notes,
            "tables": [
                {
                    "name": t.name,
                    "title": t.title,
                    "columns": list(t.columns),
                    "rows": [list(r) for r in t.rows],
                    "marked": sorted([list(c) for c in t.marked]),
                    "note": t.note,
                }
                for t in self.tables()
            ],
        }


def _annotation_table(store: Any) -> Table | None:
    from core.annotation import aggregate_annotations

    summary = aggregate_annotations(store, by=("model", "tier"), agreement=True)
    if not summary.items:
        return None
    return Table(
        "annotations",
        "Human ratings by model and tier",
        summary.columns,
        tuple(tuple(r) for r in summary.rows()),
        note="figures average per-item aggregates (each item once); pooled_* pool "
        "every rating; alpha: Krippendorff, interval (fluency), nominal "
        "(adequacy)",
    )


def _tier_change_notes(store: Any, frame: ScoreFrame) -> list[str]:
    """A note when units of the report were built under another tier than their root's
    current one (the report groups by the tier a unit recorded when it was built)."""
    from core.tiers.stored import unit_tier_changes

    if not hasattr(store, "engine"):
        return []
    changes = unit_tier_changes(store)
    units = {o.item.unit_id for o in frame.observations} & set(changes)
    if not units:
        return []
    example = changes[min(units)]
    return [
        f"{len(units):,} of the report's units were built when their root entity had "
        f"another tier than it has now (e.g. unit {example.unit_id}: "
        f"{example.describe()}); the report groups each unit by the tier it was built "
        "with."
    ]


class ReportCache:
    """The parts of bias reports already built on one state of a session, by what each
    depends on (the per-item values on the runs; a comparison on its dimension, metrics
    and protocol settings; the metrics-against-humans table on its condition), so that a
    build with other options computes only the parts those options change. Whoever holds
    one drops it when the session is written (the Report panel does on every change of
    scores, ratings, runs or units). A part is never changed once stored: what a build
    corrects or narrows it copies first. One build at a time may use it (the panel's
    builds run one after the other); reads and stores are locked all the same."""

    def __init__(self) -> None:
        import threading

        self._parts: dict[tuple[Any, ...], Any] = {}
        self._lock = threading.Lock()
        self.built: list[str] = []  # the kinds of part computed, in order (not reused)

    def get(self, key: tuple[Any, ...], make: Any) -> Any:
        with self._lock:
            if key in self._parts:
                return self._parts[key]
        value = make()
        with self._lock:
            self.built.append(str(key[0]))
            return self._parts.setdefault(key, value)


def _with_alpha(results: list[Comparison], alpha: float) -> list[Comparison]:
    """Comparisons computed at another significance level, at ``alpha``: the p-values
    do not depend on it, only the marks."""
    return [
        c
        if c.test is None or c.test.alpha == alpha
        else replace(c, test=replace(c.test, alpha=alpha, significant=c.test.p_value < alpha))
        for c in results
    ]


def _fresh_study(study: StudyTable | None) -> StudyTable | None:
    """A copy whose cells :func:`correct` may replace (the cached one stays as built)."""
    if study is None:
        return None
    return replace(study, rows=[replace(row, cells=dict(row.cells)) for row in study.rows])


def _agreement(
    store: Any, where: Sequence[str], reads: Any = None
) -> tuple[Table | None, str | None]:
    """The metrics-against-humans table over the texts ``where`` holds, or a note on why
    it could not be made (an unknown field, say: said, not dropped). ``reads``: a
    ``core.correlate.Reads`` of the session's current state."""
    from core.correlate import CorrelationRequest, agreement_table

    if not where:
        return agreement_table(store, reads=reads), None
    try:
        request = CorrelationRequest(where=tuple(where))
        return agreement_table(store, request, strict=True, reads=reads), None
    except UserFacingError as error:
        return None, f"metrics against human judgments not computed: {error}"


def _esa_matrix(
    store: Any, where: Sequence[str], reads: Any = None
) -> tuple[Table | None, str | None]:
    """ESA against every other score column and human criterion in the ESA paper's Table 3
    layout (core.correlate_matrix), or a note on why it could not be made."""
    from core.correlate_matrix import matrix_table

    try:
        return matrix_table(store, where=tuple(where), strict=bool(where), reads=reads), None
    except UserFacingError as error:
        return None, f"the ESA matrix (Table 3's layout) not computed: {error}"


def build_report(
    store: Any,
    *,
    by: Sequence[str] = ("tier",),
    metrics: Sequence[str] | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    settings: Settings = Settings(),
    frame: ScoreFrame | None = None,
    ctx: JobContext | None = None,
    runs: Sequence[int] | None = None,
    where: Sequence[str] = (),
    cache: ReportCache | None = None,
) -> BiasReport:
    """Compare groups on every metric in the session (or ``metrics``) and human ratings.

    Raises :class:`NothingToCompareError` when the session holds no per-item scores and
    no ratings; a dimension with fewer than two groups gives a note instead of rows.
    With ``ctx`` (a job), progress is reported per step and a cancel stops between steps.
    With ``cache`` (kept for the session's current state), every part already built with
    the same inputs is taken from it, and what is built is kept there.
    """
    steps = len(by) + 3

    def step(done: int, message: str) -> None:
        if ctx is not None:
            ctx.check_cancelled()
            ctx.progress(done, steps, message)

    settings.check()
    for dimension in by:
        if dimension not in DIMENSIONS:
            raise UserFacingError(
                f"Cannot compare by {dimension!r}: choose from {', '.join(DIMENSIONS)}."
            )
    # A frame given is not necessarily the session's: its parts are not shared.
    cache = cache if cache is not None and frame is None else ReportCache()
    picked = None if runs is None else tuple(sorted(set(runs)))
    step(0, "reading scores and ratings")
    if frame is None:
        frame = cache.get(("frame", picked), lambda: load_frame(store, runs=runs))
    if not frame:
        raise NothingToCompareError(
            "Nothing to compare: the session holds no per-item scores and no human ratings. "
            "Verbalise and score some units first, or rate verbalisations in the Annotate "
            "panel."
        )
    present = frame.metrics
    if metrics:
        unknown = [m for m in metrics if m not in present]
        if unknown:
            raise UserFacingError(
                f"The session has no scores for {', '.join(unknown)}; it has {', '.join(present)}."
            )
    chosen = tuple(metrics) if metrics else tuple(present)
    if metrics:  # every table follows the choice: counts, study table, signatures, plots
        whole = frame
        frame = cache.get(
            ("frame", picked, chosen),
            lambda: replace(
                whole,
                observations=[o for o in whole.observations if o.metric in chosen],
                signatures=[s for s in whole.signatures if s[0] in chosen],
            ),
        )
    # What the Mann–Whitney protocol's numbers depend on (alpha and the correction only
    # decide the marks, made afresh below).
    protocol = (
        picked,
        chosen,
        settings.repetitions,
        settings.sample_size,
        settings.seed,
        settings.bootstrap_resamples,
    )
    step(1, "study table and human ratings")
    report = BiasReport(
        session=str(getattr(store, "path", "")),
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        by=tuple(by),
        metrics=chosen,
        settings=settings,
        comparisons={},
        study=_fresh_study(
            cache.get(
                (
                    "study",
                    *protocol,
                    settings.study_quality,
                    settings.statistic,
                    settings.study_references,
                ),
                lambda: study_table(frame, settings=settings),
            )
        ),
        frame=frame,
        annotation_table=cache.get(("annotations",), lambda: _annotation_table(store)),
        notes=list(frame.notes),
    )
    report.notes += cache.get(("tier notes", picked), lambda: _tier_change_notes(store, frame))
    # What both human-judgment tables read, for every subset asked for on this state.
    from core.correlate import Reads

    reads = cache.get(("reads",), Reads)
    table, problem = cache.get(("agreement", tuple(where)), lambda: _agreement(store, where, reads))
    if problem:
        report.notes.append(problem)
    report.agreement_table = table
    if metrics is None or "esa" in chosen:
        matrix, problem = cache.get(
            ("esa matrix", tuple(where)), lambda: _esa_matrix(store, where, reads)
        )
        if problem:
            report.notes.append(problem)
        report.matrix_table = matrix
    if metrics and table is not None and "metric" in table.columns:
        at = table.columns.index("metric")  # "bleu:gold" is bleu against gold references
        report.agreement_table = replace(
            table, rows=tuple(row for row in table.rows if str(row[at]).split(":")[0] in chosen)
        )
    for done, dimension in enumerate(by, start=2):
        step(done, f"comparing by {dimension}")
        results = _with_alpha(
            cache.get(
                ("compare", dimension, *protocol, None if pairs is None else tuple(pairs)),
                lambda dimension=dimension: compare(
                    frame, dimension, metrics=chosen, pairs=pairs, settings=settings
                ),
            ),
            settings.alpha,
        )
        report.comparisons[dimension] = results
        if not results:
            seen = cache.get(
                ("groups seen", dimension, picked, chosen),
                lambda dimension=dimension: sorted(
                    {
                        str(o.group(dimension))
                        for o in frame.observations
                        if o.metric in chosen and o.group(dimension) is not None
                    },
                    key=lambda v: order_key(dimension, v),
                ),
            )
            report.notes.append(
                f"by {dimension}: nothing to compare; the session has "
                + (f"only {', '.join(seen)}" if seen else "no values")
                + (f" (asked for {', '.join(f'{a} vs {b}' for a, b in pairs)})" if pairs else "")
                + "."
            )
    report.headlines = _with_alpha(
        cache.get(
            ("headlines", *protocol, settings.study_quality),
            lambda: headline_comparisons(frame, chosen, settings),
        ),
        settings.alpha,
    )
    correct(report)
    step(steps, "done")
    return report


def headline_comparisons(
    frame: ScoreFrame, metrics: tuple[str, ...] | list[str], settings: Settings
) -> list[Comparison]:
    """Head against long tail on each metric, per model, languages pooled.

    Reference-based metrics use the study table's reference quality only (gold and silver
    are never mixed); reference texts' own scores stay out (they are not a model's).
    """
    quality = settings.study_quality
    pooled_items: dict[int, Any] = {}
    observations = []
    for o in frame.observations:
        if o.metric not in metrics or o.item.is_reference:
            continue
        if o.quality is not None and o.quality != quality:
            continue
        if o.item.tier not in HEADLINE_PAIR:  # no other tier enters these comparisons
            continue
        item = pooled_items.get(id(o.item))
        if item is None:
            item = pooled_items[id(o.item)] = replace(o.item, lang=ALL_LANGUAGES)
        observations.append(Observation(o.metric, o.value, o.quality, item))
    return compare(
        ScoreFrame(observations=observations),
        "tier",
        metrics=list(metrics),
        pairs=[HEADLINE_PAIR],
        settings=settings,
    )


def correct(report: BiasReport) -> None:
    """Adjust every p-value of the report as one family (Settings.correction): the
    comparisons of every dimension, the study table's cells and the headlines; the
    significance marks then follow the corrected p-values."""
    raw: list[float] = []
    for results in report.comparisons.values():
        raw += [c.p_value for c in results if c.p_value is not None]
    cells = [
        cell
        for row in (report.study.rows if report.study else [])
        for cell in row.cells.values()
        if cell.p_value is not None
    ]
    raw += [cell.p_value for cell in cells]  # type: ignore[misc]
    raw += [c.p_value for c in report.headlines if c.p_value is not None]
    adjusted = iter(adjust_p_values(raw, report.settings.correction).tolist())
    report.tests_corrected = len(raw)
    alpha = report.settings.alpha

    def fixed(results: list[Comparison]) -> list[Comparison]:
        return [
            replace(c, p_adjusted=next(adjusted)) if c.p_value is not None else c for c in results
        ]

    for by, results in report.comparisons.items():
        report.comparisons[by] = fixed(results)
    for row in report.study.rows if report.study else []:
        for metric, cell in row.cells.items():
            if cell.p_value is not None:
                p = next(adjusted)
                row.cells[metric] = replace(cell, p_adjusted=p, significant=p < alpha)
    report.headlines = fixed(report.headlines)


def report_job(
    store: Any,
    *,
    by: Sequence[str] = ("tier",),
    metrics: Sequence[str] | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    settings: Settings = Settings(),
    runs: Sequence[int] | None = None,
    where: Sequence[str] = (),
    cache: ReportCache | None = None,
) -> Job[BiasReport]:
    """:func:`build_report` as a job (seconds at the scale of the TailNLG study)."""
    return Job(
        title="Bias report",
        kind="report",
        run=lambda ctx: build_report(
            store,
            by=by,
            metrics=metrics,
            pairs=pairs,
            settings=settings,
            ctx=ctx,
            runs=runs,
            where=where,
            cache=cache,
        ),
        params={
            "by": list(by),
            "metrics": list(metrics or []),
            "pairs": [list(p) for p in pairs or []],
            "runs": None if runs is None else list(runs),
            "where": list(where),
            **settings.__dict__,
        },
    )
