"""``taillens distribution | fetch | entity``: the Browser's work from the command line."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.io import jsonio

if TYPE_CHECKING:
    from core.store import SessionStore
    from core.wikidata.sources import WikidataSource

SOURCE_HELP = (
    "embedded (bundled demo data, the default), live (query.wikidata.org), cache (the "
    "session's copy, offline) or the URL of a SPARQL endpoint"
)


def _add_source_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", default="embedded", help=SOURCE_HELP)
    parser.add_argument(
        "--contact",
        help="e-mail or URL for the User-Agent sent to endpoints (default: $TAILLENS_CONTACT)",
    )
    parser.add_argument(
        "--time-budget",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="most time one request to an endpoint may take, retries and "
        "waits (Retry-After) included (default 60)",
    )
    parser.add_argument(
        "--max-response-mb",
        type=float,
        default=64.0,
        metavar="MB",
        help="largest answer read from an endpoint (default 64 MB)",
    )


class _WaitReporter:
    """Says on stderr that a request waits before a retry, and why (then every 10 s)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.last: float | None = None

    def __call__(self, seconds: float, reason: str) -> None:
        import math
        import sys

        if self.quiet:
            return
        fresh = self.last is None or seconds > self.last
        if fresh or math.ceil(seconds) % 10 == 0 and math.ceil(self.last or 0) % 10 != 0:
            sys.stderr.write(f"{reason}: retrying in {math.ceil(seconds)} s\n")
            sys.stderr.flush()
        self.last = seconds


def _source(args: argparse.Namespace, store: SessionStore | None) -> WikidataSource:
    from core.wikidata.open_source import open_source
    from core.wikidata.queries import QueryError

    if not 0 < args.time_budget <= 86_400:
        raise QueryError(
            f"--time-budget must be more than 0 and at most 86400 s, not {args.time_budget:g}"
        )
    if not 0 < args.max_response_mb <= 1_000_000:
        raise QueryError(f"--max-response-mb must be more than 0, not {args.max_response_mb:g}")
    say_contact_notice(args.source, args.contact)
    return open_source(
        args.source,
        store,
        contact=args.contact,
        on_wait=_WaitReporter(getattr(args, "quiet", False)),
        budget_s=args.time_budget,
        max_response_bytes=int(args.max_response_mb * 1024 * 1024),
    )


def say_contact_notice(spec: str, contact: str | None) -> None:
    """On stderr, once per command: the public Wikidata service wants a contact (why, how)."""
    import sys

    from core.wikidata.open_source import cli_contact_notice

    notice = cli_contact_notice(spec, contact)
    if notice:
        sys.stderr.write(notice + "\n")


def register(subparsers: argparse._SubParsersAction) -> None:
    dist = subparsers.add_parser(
        "distribution",
        help="statement-count distribution of a category, its cut-offs and tiers",
        description="Read up to --limit members of CATEGORY and print the cut-offs of "
        "METHODS §3 (Pareto cut-off, head–tail threshold), tier sizes and shares.",
    )
    dist.add_argument("category")
    _add_source_arguments(dist)
    dist.add_argument("--session", type=Path, help="session file (for --source cache)")
    dist.add_argument("--limit", type=int, default=20_000)
    dist.add_argument("--share", type=float, default=0.8, help="Pareto share (default 0.8)")
    dist.add_argument(
        "--head-fraction",
        type=float,
        default=0.2,
        help="head–tail threshold fraction (default 0.2)",
    )
    dist.add_argument("--bins", type=int, default=30, help="log-spaced histogram bins")
    dist.add_argument(
        "--counts", action="store_true", help="include every entity's statement count in the JSON"
    )
    dist.add_argument("--json", action="store_true", help="print JSON")
    dist.add_argument("--quiet", action="store_true", help="no progress on stderr")
    dist.set_defaults(handler=run_distribution)

    fetch = subparsers.add_parser(
        "fetch",
        help="fetch a category's members into a session (resumes where it stopped)",
    )
    fetch.add_argument("category")
    fetch.add_argument("--session", type=Path, required=True)
    _add_source_arguments(fetch)
    fetch.add_argument("--limit", type=int, default=20_000)
    fetch.add_argument("--page-size", type=int, default=1000)
    fetch.add_argument("--quiet", action="store_true", help="no progress on stderr")
    fetch.set_defaults(handler=run_fetch)

    category = subparsers.add_parser(
        "category", help="list categories, or add / edit one (class and SPARQL pattern)"
    )
    actions = category.add_subparsers(dest="category_command", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="categories with their patterns and members held")
    listing.add_argument("--session", type=Path, help="include the session's own categories")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=run_category_list)
    add = actions.add_parser(
        "save", help="add a category or change its pattern (drops members of the old pattern)"
    )
    add.add_argument("name")
    add.add_argument("--session", type=Path, required=True)
    add.add_argument("--class", dest="class_qid", required=True, help="class item, e.g. Q39715")
    add.add_argument("--property", default="P31", help="P31 (things) or P106 (people)")
    add.add_argument(
        "--pattern",
        help="SPARQL group pattern binding ?item "
        "(default: ?item wdt:PROPERTY/wdt:P279* wd:CLASS .)",
    )
    add.add_argument(
        "--drop-members",
        action="store_true",
        help="confirm that members fetched with the old pattern are removed",
    )
    add.set_defaults(handler=run_category_save)

    entity = subparsers.add_parser("entity", help="an entity's labels and claims")
    entity.add_argument("qid")
    _add_source_arguments(entity)
    entity.add_argument(
        "--session",
        type=Path,
        help="session file: read from it (--source cache) or keep what is fetched",
    )
    entity.add_argument("--json", action="store_true", help="print JSON")
    entity.set_defaults(handler=run_entity)


def _open_session(path: Path | None) -> SessionStore | None:
    if path is None:
        return None
    from core.store import SessionStore

    return SessionStore.open(path)


def run_distribution(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.tiers.cutoffs import distribution_figures
    from core.wikidata.category_store import find_category
    from core.wikidata.fetch import collect_members_job
    from core.wikidata.queries import QueryError

    for value, name in ((args.share, "--share"), (args.head_fraction, "--head-fraction")):
        if not 0 < value <= 1:
            raise QueryError(f"{name} must be in (0, 1], got {value}")
    store = _open_session(args.session)
    try:
        category = find_category(store, args.category)
        source = _source(args, store)
        members = run_in_terminal(
            collect_members_job(source, category, args.limit), quiet=args.quiet
        )
        incomplete = getattr(members, "incomplete", None)
        if source.kind == "cache" and store is not None:
            from core.wikidata.cache import fetch_status, incomplete_note

            # What the session holds is as complete as the fetch that brought it.
            incomplete = incomplete_note(*fetch_status(store, category.name))
    finally:
        if store is not None:
            store.close()
    result: dict[str, Any] = {
        "category": category.name,
        "source": source.name,
        "n": len(members),
        "complete": incomplete is None,
        "incomplete": incomplete,
    }
    if members:
        counts = [m.statement_count for m in members]
        result.update(distribution_figures(counts, args.share, args.head_fraction, args.bins))
        if args.counts:
            result["counts"] = {m.qid: m.statement_count for m in members}
    if args.json:
        print(jsonio.dumps(result, indent=2))
    else:
        _print_distribution(result)
    return 0


def _print_distribution(result: dict[str, Any]) -> None:
    print(
        f"{result['category']} from {result['source']}: n = {result['n']:,}"
        + (f" (incomplete: {result['incomplete']})" if result["incomplete"] else "")
    )
    if not result["n"]:
        return
    cut = result["cutoffs"]
    print(f"statements: {result['total_statements']:,}")
    print(f"Pareto cut-off (share {cut['pareto_share']}): {cut['pareto_value']:,} statements")
    print(
        f"head–tail threshold (fraction {cut['head_fraction']}): "
        f"{cut['head_tail_value']:,} statements"
    )
    for rule, tiers in result["tiers"].items():
        print(f"\ntiers {rule.replace('_', ' ')}:")
        for tier, figures in tiers.items():
            print(
                f"  {tier:<10} {figures['size']:>8,} entities ({figures['entity_share']:6.1%})"
                f"  {figures['statement_share']:6.1%} of statements"
            )


def run_fetch(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.store import SessionStore
    from core.wikidata.category_store import find_category
    from core.wikidata.fetch import fetch_category_job
    from core.wikidata.queries import check_category

    with SessionStore.open(args.session, create=True) as store:
        category = find_category(store, args.category)
        check_category(category)  # before a source opens; every query checks it again
        source = _source(args, store)
        job = fetch_category_job(store, source, category, args.limit, args.page_size)
        summary = run_in_terminal(job, quiet=args.quiet)
    print(
        f"{summary.category}: fetched {summary.fetched:,} in {summary.pages} pages "
        f"(session had {summary.resumed_from:,}; now {summary.total_in_session:,})"
        + (f"; incomplete: {summary.incomplete}" if summary.incomplete else "; complete")
    )
    return 0


def run_entity(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from core.wikidata.queries import check_qid

    qid = check_qid(args.qid)
    from core.wikidata.fetch import fetch_entity

    store = _open_session(args.session)
    try:
        source = _source(args, store)
        if store is not None and source.kind != "cache":
            details = fetch_entity(store, source, qid)  # also keeps it in the session
        else:
            details = source.entity(qid)
    finally:
        if store is not None:
            store.close()
    data = asdict(details)
    if args.json:
        print(jsonio.dumps(data, indent=2, ensure_ascii=False, default=list))
        return 0
    print(f"{details.label(qid) or '(no label)'} ({qid})")
    for claim in details.claims:
        value = details.label(claim.value or "") if claim.value_type == "wikibase-item" else None
        print(
            f"  {details.label(claim.property_pid or '') or claim.property_pid} "
            f"({claim.property_pid}): {value or claim.value} [{claim.rank}]"
        )
    return 0


def run_category_list(args: argparse.Namespace) -> int:
    from core.wikidata.cache import fetched_count
    from core.wikidata.category_store import session_categories
    from core.wikidata.queries import pattern_problem

    store = _open_session(args.session)
    try:
        rows = [
            {
                "name": c.name,
                "class": c.class_qid,
                "property": c.membership_property,
                "pattern": c.pattern,
                "members": fetched_count(store, c.name) if store else None,
                # A session may carry a pattern no query will run (a shared file): say so.
                "refused": pattern_problem(c.pattern),
            }
            for c in session_categories(store)
        ]
    finally:
        if store is not None:
            store.close()
    if args.json:
        print(jsonio.dumps(rows, indent=2, ensure_ascii=False))
    else:
        for row in rows:
            held = f"{row['members']:>7,}" if row["members"] is not None else ""
            print(f"{row['name']:<22}{row['class']:<11}{held}  {row['pattern']}")
            if row["refused"]:
                print(f"{'':<22}refused: {row['refused']}")
    return 0


def run_category_save(args: argparse.Namespace) -> int:
    from core.store import SessionStore
    from core.wikidata.cache import fetched_count
    from core.wikidata.categories import Category, default_pattern
    from core.wikidata.category_store import find_category, save_category
    from core.wikidata.queries import QueryError

    pattern = args.pattern or default_pattern(args.class_qid, args.property)
    try:
        category = Category(args.name, args.class_qid, args.property, pattern)
    except ValueError as error:
        raise QueryError(str(error)) from error
    with SessionStore.open(args.session, create=True) as store:
        held = fetched_count(store, category.name)
        if held and not args.drop_members:
            current = find_category(store, category.name)
            if current.pattern != category.pattern:
                raise QueryError(
                    f"{category.name}: the session holds {held:,} members found with the old "
                    "pattern; saving the new one removes them. Add --drop-members to go ahead."
                )
        dropped = save_category(store, category, source="taillens category save")
    print(
        f"{category.name}: saved"
        + (f"; {dropped:,} members of the old pattern removed" if dropped else "")
    )
    return 0
