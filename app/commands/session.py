"""``taillens session …``: create a session, or describe one without changing it."""

from __future__ import annotations

import argparse
from pathlib import Path

from core.io import jsonio


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("session", help="create or inspect session files")
    actions = parser.add_subparsers(dest="session_command", metavar="ACTION", required=True)

    info = actions.add_parser(
        "info",
        help="print schema revision and row counts as JSON (read-only)",
        description="Print the schema revision and the row count of every table as JSON. "
        "The file is opened read-only: an older session is described, not migrated.",
    )
    info.add_argument("session", type=Path)
    info.set_defaults(handler=run_info)

    check = actions.add_parser(
        "check",
        help="list the session's damaged rows and what a merge would refuse (read-only)",
        description="Check every row a reader decodes, as SQLite's integrity and "
        "foreign-key checks do: JSON columns that are not a JSON object, numbers that are "
        "not numbers, ratings outside their scale, cached encodings of the wrong size, "
        "rows that point at missing rows. Each damaged row is listed as TABLE id N: what "
        "is wrong. Reading commands skip these rows (and the rows that belong to them) "
        "and say so. Then what 'annotations merge' would refuse were the file merged as "
        "a pack (its pack description, each rating the app would not save), one line "
        "each. Nothing is changed. Exit status 0: none found, 1: some found.",
    )
    check.add_argument("session", type=Path)
    check.add_argument("--json", action="store_true", help="print JSON")
    check.set_defaults(handler=run_check)

    new = actions.add_parser("new", help="create an empty session file")
    new.add_argument("session", type=Path)
    new.set_defaults(handler=run_new)


def run_info(args: argparse.Namespace) -> int:
    from core.wikidata.cache import describe_session_file

    print(jsonio.dumps(describe_session_file(args.session), indent=2, sort_keys=True))
    return 0


def run_new(args: argparse.Namespace) -> int:
    from core.store import SessionStore

    with SessionStore.create(args.session) as store:
        print(jsonio.dumps(store.info(), indent=2, sort_keys=True))
    return 0


def run_check(args: argparse.Namespace) -> int:
    from core.annotation.packs import merge_refusals
    from core.store import SessionStore

    with SessionStore.open_read_only(args.session) as store:
        damaged = store.check()
        dependents = store.integrity.dependents()
        # What 'annotations merge' would leave out of this file as a pack: the merge's own
        # readers and validators, run on it.
        refused = merge_refusals(store.path)
    if args.json:
        rows = [{"table": r.table, "id": r.row_id, "problem": r.problem} for r in damaged]
        print(
            jsonio.dumps(
                {"damaged": rows, "dependent": dependents, "merge_refuses": refused}, indent=2
            )
        )
    else:
        for row in damaged:
            print(row)
        for table, count in dependents.items():
            print(
                f"{table}: {count} more {'row belongs' if count == 1 else 'rows belong'} "
                "to a damaged row (skipped with it)"
            )
        for line in refused:
            print(f"a merge would refuse {line}")
        if not damaged and not refused:
            print(f"{Path(args.session).name}: ok, no damaged rows, nothing a merge would refuse")
    return 1 if damaged or refused else 0
