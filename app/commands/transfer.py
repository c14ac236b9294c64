"""``taillens import | export``: WebNLG / TailNLG XML in and out of a session."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

MAX_LISTED_ERRORS = 20


def register(subparsers: argparse._SubParsersAction) -> None:
    importer = subparsers.add_parser(
        "import",
        help="import a WebNLG or TailNLG XML file into a session",
        description="Import FILE into the session in one transaction. Entries that break "
        "the format are skipped and listed; a file that is not well-formed changes nothing.",
    )
    importer.add_argument("file", type=Path)
    importer.add_argument("--session", type=Path, required=True,
                          help="session file (created if missing)")
    importer.add_argument("--format", dest="format", default="auto",
                          choices=("auto", "tailnlg", "webnlg"),
                          help="file format (default: auto, from the file's first bytes)")
    importer.add_argument("--quiet", action="store_true", help="no progress on stderr")
    importer.set_defaults(handler=run_import)

    exporter = subparsers.add_parser(
        "export",
        help="export a session's data units as WebNLG or TailNLG XML",
        description="Write every data unit of the session to OUT; imported entries come "
        "back as they were read, with the edits made since.",
    )
    exporter.add_argument("out", type=Path)
    exporter.add_argument("--session", type=Path, required=True)
    exporter.add_argument("--format", dest="format", required=True,
                          choices=("tailnlg", "webnlg"))
    exporter.add_argument("--quiet", action="store_true", help="no progress on stderr")
    exporter.set_defaults(handler=run_export)


def run_import(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.formats import detect_format, import_job
    from core.store import SessionStore

    # Detected here, before the session is created, so a foreign file is refused early.
    flavour = detect_format(args.file) if args.format == "auto" else args.format
    with SessionStore.open(args.session, create=True) as store:
        report = run_in_terminal(import_job(store, args.file, flavour=flavour),
                                 quiet=args.quiet)
    print(f"{args.file.name}: {report.summary_line()}")
    for error in report.errors[:MAX_LISTED_ERRORS]:
        print(f"  {error.where}: {error.reason}", file=sys.stderr)
    if len(report.errors) > MAX_LISTED_ERRORS:
        print(f"  … and {len(report.errors) - MAX_LISTED_ERRORS} more", file=sys.stderr)
    # Nothing imported from a file with entries is a failure a script should notice.
    return 0 if report.units or not report.entries else 2


def run_export(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.formats import export_job
    from core.store import SessionStore

    with SessionStore.open(args.session) as store:
        written = run_in_terminal(export_job(store, args.out, flavour=args.format),
                                  quiet=args.quiet)
    print(f"{args.out.name}: {written} entries written ({args.format})")
    return 0
