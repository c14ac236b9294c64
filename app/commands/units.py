"""``taillens units sample | list | override``: building data units from the command line."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from core.io import jsonio
from core.labels import plural
from core.vocab import LANGUAGES

TIER_CHOICES = ("head", "torso", "long_tail", "long_tail_en", "long_tail_it", "long_tail_es")


def register(subparsers: argparse._SubParsersAction) -> None:
    units = subparsers.add_parser("units", help="sample, search and list data units")
    actions = units.add_subparsers(dest="units_command", metavar="ACTION", required=True)
    _register_sample(actions)
    _register_search(actions)
    listing = actions.add_parser("list", help="the session's units")
    listing.add_argument("--session", type=Path, required=True)
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=run_list)
    _register_override(actions)


def _register_sample(actions: argparse._SubParsersAction) -> None:
    sample = actions.add_parser(
        "sample",
        help="sample units from a category's members held in a session",
        description="Build units of the requested shape and size from members' claims "
        "(METHODS §4–§5) and save them in the session. The same arguments and seed give "
        "the same units.",
    )
    sample.add_argument("category")
    sample.add_argument("--session", type=Path, required=True)
    sample.add_argument(
        "--tier",
        action="append",
        choices=TIER_CHOICES,
        help="only members of this tier or sub-tier (repeatable)",
    )
    sample.add_argument("--per-entity", type=int, default=1)
    sample.add_argument(
        "--shape",
        action="append",
        choices=("sibling", "chain", "mixed"),
        help="shape of the units (repeatable; default: all)",
    )
    sample.add_argument(
        "--size",
        action="append",
        type=int,
        help="number of triples, 1..7 (repeatable; default: all)",
    )
    sample.add_argument("--seed", type=int, default=0)
    sample.add_argument(
        "--source",
        default="cache",
        help="cache (the session only, the default), embedded, live or a "
        "SPARQL endpoint URL to fetch details the session lacks",
    )
    sample.add_argument("--contact", help="e-mail or URL for the User-Agent sent to endpoints")
    sample.add_argument("--limit-entities", type=int, help="at most this many members")
    sample.add_argument(
        "--parallel",
        action="store_true",
        help="only parallel units: every subject, predicate and object "
        "labelled in en, it and es (as TailNLG's units are)",
    )
    sample.add_argument("--json", action="store_true", help="print JSON")
    sample.add_argument("--quiet", action="store_true", help="no progress on stderr")
    sample.set_defaults(handler=run_sample)


def _register_search(actions: argparse._SubParsersAction) -> None:
    search = actions.add_parser(
        "search",
        help="find units by knowledge beam search (LINK), the model's likelihood as guide",
        description="Fill a unit template with variables one variable at a time from the "
        "source, so every triple is a real claim; at each step rerank the partial "
        "statements by the model's mean log-likelihood, lowest first for a tail set, "
        "highest first for a head set, keeping the top --keep at most --beam (METHODS §3). "
        "The final statements are saved as units; with both directions the template's "
        "delta = mean log-likelihood(head) - mean log-likelihood(tail) is printed.",
    )
    search.add_argument("--session", type=Path, required=True)
    search.add_argument(
        "--template",
        required=True,
        help="e.g. '?x P19 ?a . ?a P17 ?b' (the first subject is the root)",
    )
    root = search.add_mutually_exclusive_group(required=True)
    root.add_argument("--class", dest="class_qid", help="the root's class, e.g. Q515")
    root.add_argument("--category", help="the root's category, e.g. City")
    search.add_argument("--model", required=True, help="a local causal LM folder")
    search.add_argument("--direction", choices=("tail", "head", "both"), default="both")
    search.add_argument("--beam", type=int, default=200, help="beam width (LINK: 200)")
    search.add_argument(
        "--keep", type=float, default=0.75, help="share of each step's candidates kept (LINK: 0.75)"
    )
    search.add_argument("--units", type=int, default=20, help="units saved per direction")
    search.add_argument("--lang", default="en", help="language of the verbalisations")
    search.add_argument("--batch", type=int, default=16)
    search.add_argument("--device", default="cpu")
    search.add_argument(
        "--source",
        default="embedded",
        help="embedded (the default), cache (the session), live or a SPARQL endpoint URL",
    )
    search.add_argument("--contact", help="e-mail or URL for the User-Agent sent to endpoints")
    search.add_argument("--json", action="store_true", help="print JSON")
    search.add_argument("--quiet", action="store_true", help="no progress on stderr")
    search.set_defaults(handler=run_search)


def _register_override(actions: argparse._SubParsersAction) -> None:
    override = actions.add_parser(
        "override",
        help="a person's words for an entity in a saved unit",
        description="Set (or --clear) the words for the part of the triple at POSITION in "
        "LANG. They name that entity wherever it appears in the unit (subject or object of "
        "any triple; the property in any predicate); a literal value is only its own place. "
        "With --keep, units built later in the session use them too.",
    )
    override.add_argument("unit", type=int, help="unit id (see `taillens units list`)")
    override.add_argument("--session", type=Path, required=True)
    override.add_argument("--lang", required=True, choices=LANGUAGES)
    override.add_argument(
        "--position", type=int, required=True, help="the triple's position in the unit, from 0"
    )
    override.add_argument("--part", required=True, choices=("subject", "predicate", "object"))
    words = override.add_mutually_exclusive_group(required=True)
    words.add_argument("--text", help="the words to show")
    words.add_argument("--clear", action="store_true", help="back to the Wikidata label")
    override.add_argument(
        "--keep", action="store_true", help="keep the words for the session (new units use them)"
    )
    override.set_defaults(handler=run_override)


def run_sample(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.errors import UserFacingError
    from core.store import SessionStore
    from core.units.sampler import SHAPES, SIZES, SampleRequest, sample_request_job
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
            from app.commands.wikidata import say_contact_notice

            say_contact_notice(args.source, args.contact)
            source = open_source(args.source, store, contact=args.contact)
        request = SampleRequest(
            shapes=tuple(args.shape or SHAPES),
            sizes=sizes,
            per_entity=args.per_entity,
            seed=args.seed,
            tiers=tuple(args.tier) if args.tier else None,
            limit_entities=args.limit_entities,
            parallel=args.parallel,
        )
        job = sample_request_job(
            store, source, args.category, request, recorded_as="taillens units sample"
        )
        summary = run_in_terminal(job, quiet=args.quiet)
    if args.json:
        print(
            jsonio.dumps(
                {
                    "category": summary.category,
                    "entities": summary.entities,
                    "units": summary.units,
                    "unit_ids": list(summary.unit_ids),
                    "shapes": summary.shapes,
                    "skipped": summary.skipped,
                },
                indent=2,
            )
        )
        return 0
    print(
        f"{summary.category}: {plural(summary.units, 'unit')} built from "
        f"{plural(summary.entities, 'entity')}"
    )
    for shape, count in sorted(summary.shapes.items()):
        print(f"  {shape:<8} {count:>6,}")
    if summary.skipped:
        print("skipped:")
        for reason, count in sorted(summary.skipped.items(), key=lambda kv: -kv[1]):
            print(f"  {count:>6,}  {reason}")
    return 0


def run_search(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.store import SessionStore
    from core.units.beam_search import SearchRequest, search_job
    from core.wikidata.open_source import open_source

    request = SearchRequest(
        template=args.template,
        model=args.model,
        class_qid=args.class_qid,
        category=args.category,
        direction=args.direction,
        beam=args.beam,
        keep=args.keep,
        units=args.units,
        lang=args.lang,
        batch=args.batch,
        device=args.device,
    )
    with SessionStore.open(args.session) as store:
        source = open_source(args.source, store, contact=args.contact)
        summary = run_in_terminal(
            search_job(store, source, request, recorded_as="taillens units search"),
            quiet=args.quiet,
        )
    out = {
        "template": summary.template,
        "roots": summary.roots,
        "results": summary.results,
        "unit_ids": list(summary.unit_ids),
        "delta": summary.delta,
        "seconds": summary.seconds,
        "seconds_per_unit": summary.seconds_per_unit,
    }
    if args.json:
        print(jsonio.dumps(out, indent=2))
        return 0
    print(
        f"{summary.template}: {plural(len(summary.unit_ids), 'unit')} saved "
        f"({plural(summary.roots, 'root')})"
    )
    for direction, result in summary.results.items():
        mean = "-" if result["mean"] is None else f"{result['mean']:.4f}"
        steps = " -> ".join(f"{s['candidates']}/{s['kept']}" for s in result["steps"])
        print(
            f"  {direction}: {plural(result['units'], 'unit')}, mean log-likelihood {mean}; "
            f"candidates/kept per step {steps}"
        )
    if summary.delta is not None:
        print(f"  delta (head - tail) = {summary.delta:.4f}")
    if summary.seconds_per_unit is not None:
        print(f"  {summary.seconds_per_unit:.3f} s per unit")
    return 0


def _unit_json(unit: Any) -> dict[str, Any]:
    return {
        "id": unit.id,
        "uid": unit.uid,
        "root": unit.root_qid,
        "category": unit.category,
        "shape": unit.shape,
        "size": unit.size,
        "tier": unit.tier,
        "sub_tier": unit.sub_tier,
        "origin": unit.origin,
        "source": unit.source,
        "languages": list(unit.languages),
        "parallel": sorted(unit.parallel),
        "triples": {lang: [list(t.display) for t in rows] for lang, rows in unit.triples.items()},
    }


def run_list(args: argparse.Namespace) -> int:
    from core.store import SessionStore
    from core.units.builder.saved import list_units

    with SessionStore.open_read_only(args.session) as store:  # a snapshot; never waits
        units = [_unit_json(u) for u in list_units(store)]
    if args.json:
        print(jsonio.dumps(units, indent=2, ensure_ascii=False))
        return 0
    for unit in units:
        first: list[Any] = unit["triples"].get("en") or next(iter(unit["triples"].values()), [])
        text = "; ".join(" | ".join(t) for t in first)
        print(
            f"{unit['id']:>5} {unit['root'] or '':<12} {unit['shape'] or '-':<8} "
            f"{unit['size']} {','.join(unit['parallel']) or '-':<9} {text}"
        )
    print(plural(len(units), "unit"))
    return 0


def run_override(args: argparse.Namespace) -> int:
    from core.errors import UserFacingError
    from core.store import SessionStore
    from core.units.builder.saved import set_label_override

    text = None if args.clear else args.text.strip()
    if text == "":
        raise UserFacingError(
            "--text is empty: give the words, or --clear to go back to the Wikidata label"
        )
    with SessionStore.open(args.session) as store:
        changed = set_label_override(
            store,
            args.unit,
            args.lang,
            args.position,
            args.part,
            text,
            keep=args.keep,
            source="taillens units override",
        )
    what = "cleared" if text is None else f"set to {text!r}"
    print(
        f"unit {args.unit}: {args.lang} {args.part} {what} in {changed} place"
        f"{'' if changed == 1 else 's'}" + (" (kept for the session)" if args.keep else "")
    )
    return 0
