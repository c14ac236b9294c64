"""``taillens tiers CATEGORY``: set a category's tiers without the window (METHODS §3).

The same rule as a dragged line in the Browser (`core.tiers.cutoffs.tier_category`): the
settings are stored with the category and every member's tier and sub-tier written, so
`taillens units sample --tier ...` and the Browser then see the same split.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from core.io import jsonio

RULES = {"pareto": "pareto", "head-tail": "head_tail"}


def register(subparsers: argparse._SubParsersAction) -> None:
    tiers = subparsers.add_parser(
        "tiers",
        help="assign every member of a category its tier and sub-tier (as a drag does)",
        description="Split CATEGORY's members into head, torso and long tail by the Pareto "
        "cut-off (--share) or the head–tail threshold (--fraction), with an optional torso "
        "line, and write the settings and every member's tier and sub-tier to the session. "
        "Options not given keep the category's saved settings (defaults: pareto, 0.8, 0.2, "
        "no torso).",
    )
    tiers.add_argument("category")
    tiers.add_argument("--session", type=Path, required=True)
    tiers.add_argument("--rule", choices=tuple(RULES), help="which line splits head from tail")
    tiers.add_argument("--share", type=float, help="Pareto share of statements, in (0, 1]")
    tiers.add_argument("--fraction", type=float, help="head fraction of entities, in (0, 1]")
    torso = tiers.add_mutually_exclusive_group()
    torso.add_argument(
        "--torso",
        type=float,
        metavar="STATEMENTS",
        help="torso line: members below the head line with at least this many statements are torso",
    )
    torso.add_argument("--no-torso", action="store_true", help="remove the torso line")
    tiers.add_argument("--json", action="store_true", help="print JSON")
    tiers.set_defaults(handler=run_tiers)


def run_tiers(args: argparse.Namespace) -> int:
    from core.errors import UserFacingError
    from core.labels import plural
    from core.store import SessionStore
    from core.tiers.stored import load_tier_settings, retier_category
    from core.wikidata.category_store import find_category

    with SessionStore.open(args.session) as store:
        name = find_category(store, args.category).name
        settings = load_tier_settings(store, name)
        changes: dict[str, Any] = {}
        if args.rule is not None:
            changes["split_by"] = RULES[args.rule]
        if args.share is not None:
            changes["share"] = args.share
        if args.fraction is not None:
            changes["fraction"] = args.fraction
        if args.torso is not None:
            if not args.torso >= 0:
                raise UserFacingError(f"--torso must be a statement count >= 0, got {args.torso}")
            changes["torso_line"] = float(args.torso)
        if args.no_torso:
            changes["torso_line"] = None
        try:
            settings = replace(settings, **changes)
        except ValueError as error:
            raise UserFacingError(f"--share and --fraction must be in (0, 1]: {error}") from None
        result, written = retier_category(store, name, settings, source="taillens tiers")
    summary: dict[str, Any] = {
        "category": name,
        "settings": asdict(result.settings),
        "pareto_line": result.pareto_line,
        "head_tail_line": result.head_tail_line,
        "head_line": result.head_line,
        "torso_line": result.torso_line,
        "members_written": written,
        "tiers": {s.tier.value: s.size for s in result.summary.tiers},
    }
    if args.json:
        print(jsonio.dumps(summary, indent=2))
        return 0
    s = result.settings
    rule = (
        f"Pareto share {s.share:g}" if s.split_by == "pareto" else f"head fraction {s.fraction:g}"
    )
    torso = "" if result.torso_line is None else f", torso line {result.torso_line:g}"
    print(f"{name}: {rule} -> head line {result.head_line:,} statements{torso}")
    print("  " + " · ".join(f"{t.replace('_', ' ')} {n:,}" for t, n in summary["tiers"].items()))
    print(f"  tiers of {plural(written, 'member')} written to {args.session}")
    return 0
