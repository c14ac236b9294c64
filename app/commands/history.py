"""``taillens history --session S``: the session's edit history (who changed what, when,
from the window or which command, before and after), the CLI twin of the History view;
``--undo ID`` / ``--redo ID`` revert or re-apply one edit as the Edit menu does."""

from __future__ import annotations

import argparse
from pathlib import Path

from core.io import jsonio


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "history",
        help="list the session's edits (and undo or redo one)",
        description="List every edit made to the session, oldest first: its id, when, who, "
        "from where (gui or the command), its kind, what it did and whether it stands "
        "(applied, undone, redone). --json adds each edit's state before and after. "
        "--undo ID reverts an edit, --redo ID applies an undone one again; either is "
        "refused (exit 2, nothing changed) when another change overwrote what the edit "
        "wrote.",
    )
    parser.add_argument("--session", type=Path, required=True)
    parser.add_argument("--kind", action="append", help="only edits of this kind (repeatable)")
    parser.add_argument("--unit", type=int, help="only edits of this data unit (its id)")
    parser.add_argument("--annotator", help="only edits of this annotator (their name)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--undo", type=int, metavar="ID", help="undo the edit ID")
    action.add_argument("--redo", type=int, metavar="ID", help="redo the undone edit ID")
    parser.set_defaults(handler=run_history)


def run_history(args: argparse.Namespace) -> int:
    from core.edits import KINDS, history, redo_edit, undo_edit
    from core.errors import UserFacingError
    from core.store import SessionStore

    if args.kind:
        unknown = sorted(set(args.kind) - set(KINDS))
        if unknown:
            raise UserFacingError(
                f"--kind {', '.join(unknown)}: not an edit kind (kinds: {', '.join(sorted(KINDS))})"
            )
    if args.undo is not None or args.redo is not None:
        with SessionStore.open(args.session) as store:
            if args.undo is not None:
                entry = undo_edit(store, args.undo)
                verb = "undone"
            else:
                entry = redo_edit(store, args.redo)
                verb = "redone"
        if args.json:
            print(jsonio.dumps(entry.as_json(), indent=2, ensure_ascii=False))
        else:
            print(f"{verb}: {entry.description} (edit {entry.id})")
        return 0
    # Read-only: a WAL snapshot, so a running import or scoring never blocks it.
    with SessionStore.open_read_only(args.session) as store:
        entries = history(store, kinds=args.kind, unit_id=args.unit, annotator=args.annotator)
    if args.json:
        print(jsonio.dumps([e.as_json() for e in entries], indent=2, ensure_ascii=False))
        return 0
    if not entries:
        print("no edits recorded in this session")
        return 0
    print("id\twhen\twho\tsource\tkind\tstatus\twhat")
    for e in entries:
        print(f"{e.id}\t{e.created_at}\t{e.who}\t{e.source}\t{e.kind}\t{e.status}\t{e.description}")
    return 0
