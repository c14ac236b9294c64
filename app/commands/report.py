"""``taillens report``: the long-tail bias report (METHODS §8) from the command line."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from app.commands import add_output_arguments, csv_cells_line
from core.io import jsonio
from core.vocab import DEFAULT_QUALITY, QUALITIES

DIMENSIONS = ("tier", "subtier", "lang", "model", "quality", "category", "dataset", "model_tail")


def register(subparsers: argparse._SubParsersAction) -> None:
    report = subparsers.add_parser(
        "report",
        help="compare head and long tail (or languages, models, gold and silver references)",
        description="Compare groups of verbalisations on every metric scored in the session "
        "and on human ratings: n, median, IQR, mean, a two-sided Mann–Whitney U repeated on "
        "random samples with the p-values averaged (METHODS §8), rank-biserial effect size; "
        "and the TailNLG study table (model × type × language). Prints text tables unless "
        "--json; --csv and --html write files.",
    )
    report.add_argument("--session", type=Path, required=True)
    _add_comparison_arguments(report)
    _add_study_arguments(report)
    _add_protocol_arguments(report)
    _add_selection_arguments(report)
    _add_export_arguments(report)
    report.set_defaults(handler=run_report)


def _add_comparison_arguments(parser: argparse.ArgumentParser) -> None:
    """What to compare: the dimensions, the metrics, the two groups."""
    parser.add_argument(
        "--by",
        nargs="+",
        action="extend",
        choices=DIMENSIONS,
        help="what to compare (default: tier); several give one table each",
    )
    parser.add_argument(
        "--metrics",
        nargs="+",
        action="extend",
        help="only these metrics (names as stored, e.g. bleu chrf++ ppl "
        "human_fluency); default: every metric present",
    )
    parser.add_argument(
        "--groups",
        nargs=2,
        metavar=("A", "B"),
        help="compare only these two groups (e.g. head long_tail_it)",
    )


def _add_study_arguments(parser: argparse.ArgumentParser) -> None:
    """The study table's references and statistic."""
    parser.add_argument(
        "--quality",
        choices=QUALITIES,
        default=DEFAULT_QUALITY,
        help="references of the study table and plots (default gold)",
    )
    parser.add_argument(
        "--study-references",
        choices=("quality", "pooled", "split"),
        default="quality",
        help="the study table's references: quality = --quality's only "
        "(default); pooled = gold and silver together (TailNLG's Table 2); "
        "split = a row per quality (its Tables 7-10)",
    )
    parser.add_argument(
        "--statistic",
        choices=("mean", "median"),
        default="mean",
        help="statistic of the study table's cells (default mean)",
    )


def _add_protocol_arguments(parser: argparse.ArgumentParser) -> None:
    """The Mann–Whitney protocol, the correction and the bootstrap (METHODS §8)."""
    parser.add_argument(
        "--repetitions", type=int, default=10, help="Mann–Whitney repetitions (default 10)"
    )
    parser.add_argument(
        "--sample-size",
        type=int,
        default=500,
        help="items sampled per group in each repetition (default 500)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the samples (default 0)")
    parser.add_argument(
        "--alpha", type=float, default=0.05, help="significance level of the marks (default 0.05)"
    )
    parser.add_argument(
        "--correction",
        choices=("holm", "bh", "none"),
        default="holm",
        help="multiple-testing correction across every test of the report: "
        "holm (default, family-wise error), bh (Benjamini–Hochberg, false "
        "discovery rate) or none; the marks follow the corrected p-values",
    )
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        metavar="N",
        help="bootstrap resamples for the 95 %% intervals of the medians and "
        "their difference (default 1000, seeded by --seed; 0: none)",
    )


def _add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    """The runs compared and the metrics-against-humans table's subset."""
    parser.add_argument(
        "--runs",
        metavar="ID,...",
        help="compare these runs only (ids as the report's Runs table lists them); "
        "default: for each model its latest output per unit, language and "
        "candidate. Runs of one model that overlap count each item once, "
        "from the latest run.",
    )
    parser.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="FIELD OP VALUE",
        help="the metrics-against-humans table over the texts where this holds (as "
        "correlate --where: esa.undetected>=1, tier=long_tail; repeatable, all must hold)",
    )


def _add_export_arguments(parser: argparse.ArgumentParser) -> None:
    """JSON on stdout, CSV, HTML and figure files."""
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--csv", type=Path, metavar="DIR", help="write one CSV per table here")
    parser.add_argument(
        "--html", type=Path, metavar="FILE", help="write a self-contained HTML report"
    )
    add_output_arguments(parser, csv_option=True)
    parser.add_argument(
        "--figures",
        type=Path,
        metavar="DIR",
        help="write every plot of the report into DIR, as the Report panel's figure export",
    )
    parser.add_argument(
        "--figure-format",
        default="svg,pdf,png",
        metavar="FMT,...",
        help="formats of --figures: png, svg, pdf (default all three)",
    )


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e5):
            return f"{value:.3g}"
        return f"{value:.4f}" if abs(value) < 1 else f"{value:.2f}"
    return str(value)


def print_table(table: Any, mark: str = "*", max_width: int = 40) -> None:
    """A plain fixed-width rendering of a core.report Table (marked cells get ``mark``)."""
    cells = [
        [_text(v)[:max_width] + (mark if (r, c) in table.marked else "") for c, v in enumerate(row)]
        for r, row in enumerate(table.rows)
    ]
    widths = [
        max([len(str(h))] + [len(row[c]) for row in cells]) for c, h in enumerate(table.columns)
    ]
    print(f"== {table.title} ==")
    if table.note:
        print(f"   {table.note}")
    print("  ".join(str(h).ljust(w) for h, w in zip(table.columns, widths, strict=True)))
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)))
    if not cells:
        print("(no rows)")
    print()


def parse_runs(text: str | None) -> list[int] | None:
    """``--runs 3,5`` -> [3, 5]; None when not given."""
    from core.errors import UserFacingError

    if text is None:
        return None
    try:
        runs = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UserFacingError(
            f"--runs takes run ids separated by commas, e.g. 3,5; got {text!r}"
        ) from None
    if not runs:
        raise UserFacingError("--runs needs at least one run id, e.g. --runs 3,5")
    return runs


def run_report(args: argparse.Namespace) -> int:
    from core.io.output_guard import check_output_target
    from core.report import Settings, build_report, write_csv, write_html
    from core.report.render import headline_lines, report_json, report_tables
    from core.store import SessionStore
    from core.text_filters import check_conditions

    settings = Settings(
        repetitions=args.repetitions,
        sample_size=args.sample_size,
        seed=args.seed,
        alpha=args.alpha,
        study_quality=args.quality,
        statistic=args.statistic,
        correction=args.correction,
        bootstrap_resamples=args.bootstrap,
        study_references=args.study_references,
    )
    by = tuple(dict.fromkeys(args.by or ["tier"]))
    pairs = [tuple(args.groups)] if args.groups else None
    from core.report.figures import figure_suffixes  # a wrong --figure-format fails before any work

    suffixes = figure_suffixes(args.figure_format)
    with SessionStore.open_read_only(args.session) as store:  # a snapshot; never waits
        # Refused before the report is built (the writers check again).
        if args.html is not None:
            check_output_target(args.html, force=args.force)
        report = build_report(
            store,
            by=by,
            metrics=args.metrics,
            pairs=pairs,
            settings=settings,
            runs=parse_runs(args.runs),
            where=check_conditions(args.where),
        )
        # Written while the session is open, so the guard knows which file it is.
        if args.csv is not None:
            written = write_csv(report, args.csv, force=args.force, raw=args.raw_csv)
            print(f"wrote {len(written)} CSV files to {args.csv}")
            print(csv_cells_line(args.raw_csv))
        if args.html is not None:
            html = write_html(report, args.html, force=args.force)
            print(f"wrote {html.path} ({html.tables} tables, {html.plots} plots)")
        if args.figures is not None:
            from app.terminal import run_in_terminal
            from core.report import plot_specs
            from core.report.figures import export_figures_job

            job = export_figures_job(
                plot_specs(report), args.figures, suffixes=suffixes, force=args.force
            )
            print(f"wrote {len(run_in_terminal(job))} figures to {args.figures}")
    if args.json:
        print(jsonio.dumps(report_json(report), indent=2, ensure_ascii=False, default=str))
        return 0
    if args.csv is not None or args.html is not None or args.figures is not None:
        for note in report.notes:
            print(f"note: {note}")
        return 0
    if report.headlines:
        print("== Verdict: head vs long tail ==")
        for line in headline_lines(report):
            print(f"  {line}")
        print()
    for table in report_tables(report):
        if table.name in ("runs", "signatures"):
            continue  # long JSON cells: see --html or --csv
        print_table(table)
    for note in report.notes:
        print(f"note: {note}")
    return 0
