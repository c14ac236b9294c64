"""The bias report laid out: its :class:`Table` s (in reading order), the notes on the
protocol and the corrections, the headline sentences and the JSON form. What the Report
panel, ``taillens report`` and the CSV and HTML exports show, from a
:class:`~core.report.bias_report.BiasReport` that holds only the computed results."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from core.groups import metric_label, metric_order
from core.labels import plural
from core.report.bias_report import BiasReport
from core.report.comparison import Comparison
from core.report.study import StudyTable
from core.report.verdict import headlines_table_rows, verdict
from core.tables import Table

SIGNIFICANT_MARK = "*"

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
RUNS_COLUMNS = (
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
)
HEADLINE_COLUMNS = (
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


# -- notes and sentences ----------------------------------------------------------------------


def correction_note(report: BiasReport) -> str:
    s = report.settings
    names = {"holm": "Holm", "bh": "Benjamini–Hochberg"}
    if s.correction == "none":
        return f"{SIGNIFICANT_MARK} p < {s.alpha} (no multiple-testing correction)"
    return (
        f"{SIGNIFICANT_MARK} {names[s.correction]}-corrected p < {s.alpha} across "
        f"the {plural(report.tests_corrected, 'test')} of this report"
    )


def bootstrap_note(report: BiasReport) -> str:
    s = report.settings
    if not s.bootstrap_resamples:
        return "no bootstrap intervals"
    return (
        f"95 % percentile bootstrap intervals of the medians and of their difference "
        f"(a − b), {s.bootstrap_resamples:,} resamples per group, seed {s.seed}"
    )


def headline_lines(report: BiasReport) -> list[str]:
    """The head-against-long-tail verdicts, as the panel, the CLI and HTML say them."""
    return headlines_table_rows(report.headlines, report.settings.correction)


# -- tables -----------------------------------------------------------------------------------


def study_grid(study: StudyTable) -> Table:
    """The study table as a :class:`Table`: a column per metric, its marked cells the
    ones that differ from the head row (see :class:`StudyTable`)."""
    split = study.quality == "split"
    keys = ("model", "type", "lang", "refs") if split else ("model", "type", "lang")
    columns = (*keys, *(metric_label(m) for m in study.metrics))
    rows, marked = [], set()
    for r, row in enumerate(study.rows):
        values: list[Any] = [row.model, row.type, row.lang] + ([row.refs] if split else [])
        for c, metric in enumerate(study.metrics):
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
    }.get(study.quality, f"{study.quality} references")
    note = (
        f"{study.statistic} of per-item scores; reference-based metrics against "
        f"{against}; {SIGNIFICANT_MARK} p < alpha against head (same model and "
        "language" + (" and references)" if split else ")")
    )
    title = {
        "pooled": "gold and silver references pooled",
        "split": "gold and silver references split",
    }.get(study.quality, f"{study.quality} references")
    return Table(
        f"study_{study.quality}",
        f"Study table ({title})",
        columns,
        tuple(rows),
        frozenset(marked),
        note,
    )


def comparison_table(report: BiasReport, by: str) -> Table:
    rows = [comparison_row(c) for c in report.comparisons.get(by, [])]
    column = COMPARISON_COLUMNS.index(
        "p_value" if report.settings.correction == "none" else "p_adjusted"
    )
    marked = frozenset(
        (r, column) for r, c in enumerate(report.comparisons.get(by, [])) if c.significant
    )
    s = report.settings
    note = (
        f"two-sided Mann–Whitney U, {s.repetitions} repetitions on samples of "
        f"{s.sample_size} per group (all items when fewer), p-values averaged, seed "
        f"{s.seed}; effect size: rank-biserial correlation (a against b); "
        f"{bootstrap_note(report)}; {correction_note(report)}"
    )
    return Table(
        f"compare_{by}", f"Comparison by {by}", COMPARISON_COLUMNS, tuple(rows), marked, note
    )


def runs_table(report: BiasReport) -> Table:
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
        for r in report.frame.runs
    )
    return Table("runs", "Runs and their settings", RUNS_COLUMNS, rows)


def headline_table(report: BiasReport) -> Table:
    """Head against long tail per metric and model, languages pooled, with the verdict
    (core.report.verdict: the same words in the panel, the CLI and HTML)."""
    rows, marked = [], set()
    column = 8 if report.settings.correction != "none" else 7
    for r, c in enumerate(report.headlines):
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
        HEADLINE_COLUMNS,
        tuple(rows),
        frozenset(marked),
        "all languages pooled, per model; "
        + bootstrap_note(report)
        + "; "
        + correction_note(report),
    )


def runs_used_table(report: BiasReport) -> Table:
    """Which runs the report used and how many items (unit, language, candidate) of
    each; items another picked run of the same model also has count once."""
    frame = report.frame
    rows = tuple(
        (u.run_id, u.model, u.items, u.superseded, ", ".join(str(r) for r in u.superseded_by))
        for u in frame.run_use
    )
    choice = (
        f"runs picked: {', '.join(str(r) for r in frame.picked_runs)}"
        if frame.picked_runs is not None
        else "default: for each model, its latest output per unit, language and candidate"
    )
    return Table(
        "runs_used",
        "Runs used",
        ("run", "model", "items used", "items left to a later run", "later run"),
        rows,
        note=f"{choice}; {plural(sum(u.items for u in frame.run_use), 'item')} in all",
    )


def signatures_table(report: BiasReport) -> Table:
    return Table(
        "signatures", "Metric signatures", ("metric", "signature"), tuple(report.frame.signatures)
    )


def counts_table(report: BiasReport) -> Table:
    counts = report.frame.counts()
    return Table(
        "counts",
        "Per-item values by metric",
        ("metric", "items"),
        tuple((m, counts[m]) for m in sorted(counts, key=metric_order)),
    )


def report_tables(report: BiasReport) -> list[Table]:
    """Every table of the report, in reading order."""
    tables = [runs_used_table(report), counts_table(report)]
    if report.headlines:
        tables.append(headline_table(report))
    if report.study is not None:
        grid = study_grid(report.study)
        # The study note's "p < alpha" made precise: the correction the marks follow.
        correction = correction_note(report).removeprefix(f"{SIGNIFICANT_MARK} ")
        tables.append(replace(grid, note=grid.note.replace("p < alpha", correction)))
    tables += [comparison_table(report, by) for by in report.by]
    tables += [
        t
        for t in (report.annotation_table, report.agreement_table, report.matrix_table)
        if t is not None
    ]
    tables += [runs_table(report), signatures_table(report)]
    return tables


def report_json(report: BiasReport) -> dict[str, Any]:
    """A JSON-serialisable form (for ``taillens report --json``)."""
    frame = report.frame
    return {
        "session": report.session,
        "generated_at": report.generated_at,
        "by": list(report.by),
        "metrics": list(report.metrics),
        "settings": report.settings.__dict__,
        "runs": (None if frame.picked_runs is None else list(frame.picked_runs)),
        "notes": report.notes,
        "tables": [
            {
                "name": t.name,
                "title": t.title,
                "columns": list(t.columns),
                "rows": [list(r) for r in t.rows],
                "marked": sorted([list(c) for c in t.marked]),
                "note": t.note,
            }
            for t in report_tables(report)
        ],
    }
