"""The report's plots (as data; drawn by ``core.report.figures``) and its exports: one CSV
per table, and a self-contained HTML file (tables, inline SVG figures, the runs' settings, metric
signatures).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from core.groups import metric_label, order_key
from core.metrics.info import metric_info
from core.report.bias_report import BiasReport
from core.report.render import (
    SIGNIFICANT_MARK,
    bootstrap_note,
    correction_note,
    headline_lines,
    report_tables,
)
from core.tables import Table


@dataclass(frozen=True)
class PlotSpec:
    """What a plot shows, as plain data: the Report panel draws it with pyqtgraph, the
    exports and the HTML report with matplotlib (``core.report.figures.spec_figure``) from the same
    data. ``groups`` for box and distribution plots, ``x``/``y`` for scatter."""

    kind: str  # "box" | "distribution" | "scatter"
    title: str
    metric: str
    log10: bool = False
    groups: tuple[tuple[str, tuple[float, ...]], ...] = ()
    x: tuple[float, ...] = ()
    y: tuple[float, ...] = ()
    xlabel: str = ""
    ylabel: str = ""
    log_x: bool = False

    def figure(self, size_in: tuple[float, float] | None = None) -> Any:
        """This plot as a matplotlib ``Figure`` (see ``core.report.figures``)."""
        from core.report.figures import DEFAULT_SIZE_IN, spec_figure

        return spec_figure(self, size_in=size_in or DEFAULT_SIZE_IN)

    def svg(self, prefix: str = "") -> str:
        """This plot as one inline ``<svg>`` element for the HTML report, written directly
        (``core.report.svg_figures``; ``prefix``: of its ids, so they are unique on a
        page)."""
        from core.report.svg_figures import spec_svg

        return spec_svg(self, prefix=prefix)


def plot_specs(report: BiasReport) -> list[PlotSpec]:
    """Box plots per model and tier, head-against-tail distributions, and entity
    perplexity against statement count, for the report's metrics.

    Only the models' own texts enter these plots. Scores of the reference texts themselves
    (the ``(references)`` pseudo-model, e.g. ESA of a gold and a silver reference) carry
    the text's own quality, not "scored against gold references": pooling them with model
    outputs would mix two kinds of text under a misleading title, so they get a plot of
    their own, by reference quality and tier.
    """
    quality = report.settings.study_quality
    specs: list[PlotSpec] = []
    by_metric: dict[str, list[Any]] = defaultdict(list)
    for o in report.frame.observations:  # one pass over every value, not one per metric
        by_metric[o.metric].append(o)
    for metric in report.metrics:
        of_metric = by_metric.get(metric, [])
        rows = [
            o
            for o in of_metric
            if not o.item.is_reference and (o.quality is None or o.quality == quality)
        ]
        log = metric_info(metric).log_axis
        label = metric_label(metric)
        if rows:
            specs.extend(_model_plots(rows, metric, label, log, quality))
        # A reference text's own score (reference-free metric): the loader gives it the
        # text's quality. Scores of a reference against other references are left out.
        references = [
            o for o in of_metric if o.item.is_reference and o.quality == o.item.reference_quality
        ]
        if references:
            by_group: dict[tuple[str, str], list[float]] = defaultdict(list)
            for o in references:
                by_group[(o.quality or "", o.tier)].append(o.value)
            keys = sorted(by_group, key=lambda k: (k[0], order_key("tier", k[1])))
            specs.append(
                PlotSpec(
                    "box",
                    f"{label} of reference texts by reference quality and tier",
                    metric,
                    log,
                    groups=tuple(
                        (f"{q} references · {t}", tuple(by_group[(q, t)])) for q, t in keys
                    ),
                    ylabel=label,
                )
            )
    return specs


def _model_plots(
    rows: list[Any], metric: str, label: str, log: bool, quality: str
) -> list[PlotSpec]:
    """The plots of the models' texts for one metric (``rows`` hold no reference texts)."""
    # Reference-based metrics carry the quality of the references scored against.
    suffix = f", against {quality} references" if any(o.quality for o in rows) else ""
    specs: list[PlotSpec] = []
    by_group: dict[tuple[str, str], list[float]] = defaultdict(list)
    by_tier: dict[str, list[float]] = defaultdict(list)
    for o in rows:
        by_group[(o.model, o.tier)].append(o.value)
        by_tier[o.tier].append(o.value)
    keys = sorted(by_group, key=lambda k: (k[0], order_key("tier", k[1])))
    specs.append(
        PlotSpec(
            "box",
            f"{label} by model and tier{suffix}",
            metric,
            log,
            groups=tuple((f"{m} · {t}", tuple(by_group[(m, t)])) for m, t in keys),
            ylabel=label,
        )
    )
    if len(by_tier) >= 2:
        tiers = sorted(by_tier, key=lambda t: order_key("tier", t))
        specs.append(
            PlotSpec(
                "distribution",
                f"{label}: distribution by tier (all models' texts){suffix}",
                metric,
                log,
                groups=tuple((t, tuple(by_tier[t])) for t in tiers),
                xlabel=label,
            )
        )
    if metric == "entity_ppl":
        points = [(o.statement_count, o.value) for o in rows if o.statement_count]
        if points:
            specs.append(
                PlotSpec(
                    "scatter",
                    "Entity perplexity against statement count",
                    metric,
                    True,
                    x=tuple(float(p[0]) for p in points),
                    y=tuple(p[1] for p in points),
                    xlabel="statements of the entity",
                    ylabel=label,
                    log_x=True,
                )
            )
    return specs


# -- CSV ---------------------------------------------------------------------------------------


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    return value


def write_csv(
    report: BiasReport, folder: Path | str, *, force: bool = False, raw: bool = False
) -> list[Path]:
    """One UTF-8 CSV per table of the report in ``folder`` (:func:`write_tables_csv`)."""
    return write_tables_csv(report_tables(report), folder, force=force, raw=raw)


def write_tables_csv(
    tables: Sequence[Table], folder: Path | str, *, force: bool = False, raw: bool = False
) -> list[Path]:
    """One UTF-8 CSV per table (``<table name>.csv``) in ``folder``; returns the paths.

    Significant cells carry no mark in CSV (a number stays a number): comparison tables
    have a ``significant`` column, and the study table is followed by ``<name>_marks.csv``
    listing the marked cells. Text cells a spreadsheet would run as formulas (group,
    model or metric names from imported data) get a leading ``'`` unless ``raw``; numbers
    the report computed are written as numbers (``files.CsvWriter``). ``force`` lets a
    table's file replace a TailLens session or a file TailLens did not write of that name
    (never the open session); without it, every name is checked before any file is written.
    """
    from core.formats.common import CsvWriter, FormatError, atomic_output

    folder = Path(folder).expanduser()
    if folder.exists() and not folder.is_dir():
        raise FormatError(f"Cannot write CSV files into {folder}: it is a file, not a folder.")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FormatError(f"Cannot create the folder {folder}: {exc.strerror or exc}.") from exc
    from core.io.output_guard import check_output_target

    # Every file is checked before the first is written: a refusal leaves the folder as it was.
    for table in tables:
        check_output_target(folder / f"{table.name}.csv", force=force)
        if table.marked and not table.name.startswith("compare_"):
            check_output_target(folder / f"{table.name}_marks.csv", force=force)
    written = []
    for table in tables:
        path = folder / f"{table.name}.csv"
        with atomic_output(path, newline="", force=force) as handle:
            writer = CsvWriter(handle, raw=raw, convert=_csv_value)
            writer.writerow(table.columns)
            writer.writerows(table.rows)
        written.append(path)
        if table.marked and not table.name.startswith("compare_"):
            marks = folder / f"{table.name}_marks.csv"
            with atomic_output(marks, newline="", force=force) as handle:
                writer = CsvWriter(handle, raw=raw)
                writer.writerow(("row", "column", "column_name"))
                for r, c in sorted(table.marked):
                    writer.writerow((r, c, table.columns[c]))
            written.append(marks)
    return written


# -- HTML --------------------------------------------------------------------------------------

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1200px}
table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}
th{background:#f3f3f3}td.text{text-align:left}
td.sig{background:#fff3c4;font-weight:bold}
p.note{font-size:12px;color:#555}pre{font-size:12px;background:#f7f7f7;padding:6px;
white-space:pre-wrap}figure{display:inline-block;margin:0.5em}
"""


def _cell(value: Any) -> tuple[str, bool]:
    """Text of a cell and whether it is text (left-aligned)."""
    if value is None:
        return "", True
    if isinstance(value, bool):
        return ("yes" if value else ""), True
    if isinstance(value, float):
        if math.isnan(value):
            return "", True
        if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e5):
            return f"{value:.3g}", False
        return f"{value:.4g}" if abs(value) < 1 else f"{value:.2f}", False
    if isinstance(value, int):
        return str(value), False
    return str(value), True


def table_html(table: Table) -> str:
    parts = [f"<h2 id='{escape(table.name, True)}'>{escape(table.title)}</h2>"]
    if table.note:
        parts.append(f"<p class='note'>{escape(table.note)}</p>")
    if not table.rows:
        parts.append("<p>No rows.</p>")
        return "".join(parts)
    parts.append("<table><thead><tr>")
    parts += [f"<th>{escape(str(c))}</th>" for c in table.columns]
    parts.append("</tr></thead><tbody>")
    for r, row in enumerate(table.rows):
        parts.append("<tr>")
        for c, value in enumerate(row):
            text, is_text = _cell(value)
            marked = (r, c) in table.marked
            classes = " ".join(n for n, on in (("text", is_text), ("sig", marked)) if on)
            mark = SIGNIFICANT_MARK if marked else ""
            attribute = f" class='{classes}'" if classes else ""
            parts.append(f"<td{attribute}>{escape(text)}{mark}</td>")
        parts.append("</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def render_html(report: BiasReport) -> str:
    """The whole report as one HTML document with everything inline."""
    s = report.settings
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>TailLens bias report — {escape(Path(report.session).name)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>Long-tail bias report</h1>",
        f"<p>Session <code>{escape(report.session)}</code>, generated "
        f"{escape(report.generated_at)}."
        f" Compared by {escape(', '.join(report.by))}; Mann–Whitney protocol: "
        f"{s.repetitions} repetitions, samples of {s.sample_size}, seed {s.seed}, "
        f"alpha {s.alpha}; {escape(correction_note(report))}; "
        f"{escape(bootstrap_note(report))}.</p>",
    ]
    for note in report.notes:
        parts.append(f"<p class='note'>{escape(note)}</p>")
    if report.headlines:  # the verdicts, worded as in the panel and `taillens report`
        parts.append("<h2 id='verdicts'>Head vs long tail: verdicts</h2><ul>")
        parts += [f"<li>{escape(line)}</li>" for line in headline_lines(report)]
        parts.append("</ul>")
    tables = report_tables(report)
    runs = next(t for t in tables if t.name == "runs")
    for table in tables:
        if table is runs:
            continue
        parts.append(table_html(table))
    specs = plot_specs(report)
    if specs:
        parts.append("<h2 id='plots'>Plots</h2>")
        for i, spec in enumerate(specs):
            parts.append(f"<figure>{spec.svg(prefix=f'plot{i}')}</figure>")
    parts.append("<h2 id='runs'>Runs and their settings</h2>")
    for run in report.frame.runs:
        settings = {
            "kind": run.kind,
            "model_id": run.model_id,
            "status": run.status,
            "seed": run.seed,
            "fingerprint": run.fingerprint,
            "parameters": run.parameters,
            "prompt_templates": run.prompt_templates,
            "software": run.software,
            "started_at": run.started_at,
        }
        parts.append(
            f"<h3>{escape(run.name)} (run {run.id})</h3><pre>"
            f"{escape(json.dumps(settings, indent=2, ensure_ascii=False))}</pre>"
        )
    parts.append("</body></html>\n")
    return "".join(parts)


@dataclass
class HtmlWritten:
    path: Path
    tables: int
    plots: int
    notes: list[str] = field(default_factory=list)


def write_html(report: BiasReport, path: Path | str, *, force: bool = False) -> HtmlWritten:
    """Write the self-contained HTML report to ``path`` (atomically; ``force``: even over
    a TailLens session that is not the open one)."""
    from core.formats.common import atomic_output

    document = render_html(report)
    path = Path(path).expanduser()
    with atomic_output(path, force=force) as handle:
        handle.write(document)
    return HtmlWritten(path, document.count("<table>"), document.count("<svg "), list(report.notes))
