"""``taillens session …``: create a session, or describe one without changing it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


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

    new = actions.add_parser("new", help="create an empty session file")
    new.add_argument("session", type=Path)
    new.set_defaults(handler=run_new)


def run_info(args: argparse.Namespace) -> int:
    from core.wikidata.cache import describe_session_file

    print(json.dumps(describe_session_file(args.session), indent=2, sort_keys=True))
    return 0


def run_new(args: argparse.Namespace) -> int:
    from core.store import SessionStore

    with SessionStore.create(args.session) as store:
        print(json.dumps(store.info(), indent=2, sort_keys=True))
    return 0
