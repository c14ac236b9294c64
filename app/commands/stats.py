"""``taillens stats``: the session's dataset figures (per tier, sub-tier, size, shape,
language, gold/silver) and the checks that flag suspect entries (core.report.dataset_stats)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from core.io import jsonio
from core.labels import plural


def register(subparsers: argparse._SubParsersAction) -> None:
    stats = subparsers.add_parser(
        "stats",
        help="dataset statistics and checks of a session's data units",
        description="Print the figures a paper's data table gives (units per dataset, tier, "
        "sub-tier, size, shape and language; reference texts per language and quality) and "
        "list suspect units: a shape label that contradicts the triples, an Italian or "
        "Spanish object copied from the subject, a missing language.",
    )
    stats.add_argument("--session", type=Path, required=True)
    stats.add_argument("--no-checks", action="store_true", help="figures only")
    stats.add_argument(
        "--list",
        type=int,
        default=20,
        metavar="N",
        help="findings listed per check (default 20; 0: counts only)",
    )
    stats.add_argument(
        "--json", action="store_true", help="everything as JSON on stdout (all findings)"
    )
    stats.set_defaults(handler=run_stats)


def render_table(title: str, headers: tuple[str, ...], rows: tuple[tuple[str, ...], ...]) -> str:
    """A plain-text table: first column left-aligned, figures right-aligned."""
    widths = (
        [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=False)]
        if rows
        else [len(h) for h in headers]
    )
    lines = [title]
    for index, row in enumerate((headers, *rows)):
        cells = [
            str(cell).ljust(widths[0]) if i == 0 else str(cell).rjust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append("  " + "  ".join(cells).rstrip())
        if index == 0:
            lines.append("  " + "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def run_stats(args: argparse.Namespace) -> int:
    from core.report.dataset_stats import CHECKS, dataset_checks, dataset_statistics
    from core.store import SessionStore

    with SessionStore.open(args.session) as store:
        stats = dataset_statistics(store)
        findings = [] if args.no_checks else dataset_checks(store)
    if args.json:
        payload: dict[str, Any] = {
            "statistics": asdict(stats),
            "findings": [asdict(f) for f in findings],
        }
        jsonio.dump(payload, sys.stdout, ensure_ascii=False, indent=2)
        print()
        return 0
    print("\n\n".join(render_table(t.title, t.headers, t.rows) for t in stats.tables()))
    if args.no_checks:
        return 0
    print()
    print(
        f"Checks: {plural(len(findings), 'finding')} in "
        f"{len({f.uid for f in findings})} of {plural(stats.units, 'unit')}"
    )
    for check in CHECKS:
        mine = [f for f in findings if f.check == check]
        print(f"  {check}: {len(mine)}")
        for finding in mine[: max(args.list, 0)]:
            print(f"    {finding.uid}: {finding.reason}")
        if 0 < args.list < len(mine):
            print(f"    … and {len(mine) - args.list} more (--list N, or --json for all)")
    return 0
