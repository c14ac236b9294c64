"""``taillens units sample | list``: building data units from the command line."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

TIER_CHOICES = ("head", "torso", "long_tail", "long_tail_en", "long_tail_it", "long_tail_es")


def register(subparsers: argparse._SubParsersAction) -> None:
    units = subparsers.add_parser("units", help="sample data units and list them")
    actions = units.add_subparsers(dest="units_command", metavar="ACTION", required=True)

    sample = actions.add_parser(
        "sample",
        help="sample units from a category's members held in a session",
        description="Build units of the requested shape and size from members' claims "
        "(METHODS §4–§5) and save them in the session. The same arguments and seed give "
        "the same units.",
    )
    sample.add_argument("category")
    sample.add_argument("--session", type=Path, required=True)
    sample.add_argument("--tier", action="append", choices=TIER_CHOICES,
                        help="only members of this tier or sub-tier (repeatable)")
    sample.add_argument("--per-entity", type=int, default=1)
    sample.add_argument("--shape", action="append", choices=("sibling", "chain", "mixed"),
                        help="shape of the units (repeatable; default: all)")
    sample.add_argument("--size", action="append", type=int,
                        help="number of triples, 1..7 (repeatable; default: all)")
    sample.add_argument("--seed", type=int, default=0)
    sample.add_argument("--source", default="cache",
                        help="cache (the session only, the default), embedded, live or a "
                        "SPARQL endpoint URL to fetch details the session lacks")
    sample.add_argument("--contact", help="e-mail or URL for the User-Agent sent to endpoints")
    sample.add_argument("--limit-entities", type=int, help="at most this many members")
    sample.add_argument("--parallel", action="store_true",
                        help="only parallel units: every subject, predicate and object "
                        "labelled in en, it and es (as TailNLG's units are)")
    sample.add_argument("--json", action="store_true", help="print JSON")
    sample.add_argument("--quiet", action="store_true", help="no progress on stderr")
    sample.set_defaults(handler=run_sample)

    listing = actions.add_parser("list", help="the session's units")
    listing.add_argument("--session", type=Path, required=True)
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=run_list)


def run_sample(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.errors import UserFacingError
    from core.sampler import SHAPES, SIZES, sample_job
    from core.store import SessionStore
    from core.wikidata.open_source import open_source

    sizes = tuple(args.size or SIZES)
    if any(not 1 <= s <= 7 for s in sizes):
        raise UserFacingError(f"--size must be 1..7, got {list(sizes)}")
    if args.per_entity < 1:
        raise UserFacingError("--per-entity must be at least 1")
    if args.limit_entities is not None and args.limit_entities < 1:
        raise UserFacingError("--limit-entities must be at least 1")
    with SessionStore.open(args.session) as store:
        from core.wikidata.cache import fetched_count

        if not fetched_count(store, args.category):
            raise UserFacingError(
                f"the session holds no members of {args.category!r}: fetch them first "
                f"(taillens fetch {args.category} --session {args.session})"
            )
        source = None
        if args.source != "cache":
            source = open_source(args.source, store, contact=args.contact)
        job = sample_job(
            store, source, args.category, tiers=args.tier, per_entity=args.per_entity,
            shapes=tuple(args.shape or SHAPES), sizes=sizes, seed=args.seed,
            limit_entities=args.limit_entities, parallel=args.parallel,
        )
        summary = run_in_terminal(job, quiet=args.quiet)
    if args.json:
        print(json.dumps({"category": summary.category, "entities": summary.entities,
                          "units": summary.units, "unit_ids": list(summary.unit_ids),
                          "shapes": summary.shapes, "skipped": summary.skipped}, indent=2))
        return 0
    print(f"{summary.category}: {summary.units:,} units built from {summary.entities:,} entities")
    for shape, count in sorted(summary.shapes.items()):
        print(f"  {shape:<8} {count:>6,}")
    if summary.skipped:
        print("skipped:")
        for reason, count in sorted(summary.skipped.items(), key=lambda kv: -kv[1]):
            print(f"  {count:>6,}  {reason}")
    return 0


def _unit_json(unit: Any) -> dict[str, Any]:
    return {
        "id": unit.id, "uid": unit.uid, "root": unit.root_qid, "category": unit.category,
        "shape": unit.shape, "size": unit.size, "tier": unit.tier, "sub_tier": unit.sub_tier,
        "origin": unit.origin, "source": unit.source,
        "languages": list(unit.languages), "parallel": sorted(unit.parallel),
        "triples": {lang: [list(t.display) for t in rows] for lang, rows in unit.triples.items()},
    }


def run_list(args: argparse.Namespace) -> int:
    from core.store import SessionStore
    from core.unit_builder import list_units

    with SessionStore.open_read_only(args.session) as store:  # a snapshot; never waits
        units = [_unit_json(u) for u in list_units(store)]
    if args.json:
        print(json.dumps(units, indent=2, ensure_ascii=False))
        return 0
    for unit in units:
        first: list[Any] = unit["triples"].get("en") or next(iter(unit["triples"].values()), [])
        text = "; ".join(" | ".join(t) for t in first)
        print(f"{unit['id']:>5} {unit['root'] or '':<12} {unit['shape'] or '-':<8} "
              f"{unit['size']} {','.join(unit['parallel']) or '-':<9} {text}")
    print(f"{len(units):,} units")
    return 0
