"""``taillens import | export``: files in and out of a session, in any registered format.

The ``--format`` choices come from ``core.formats.IMPORT_FORMATS`` / ``EXPORT_FORMATS``, so
a format added there is on the command line at once. Importing ``core.formats`` here is
cheap (no SQLAlchemy, no rdflib: those load inside the functions).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

MAX_LISTED_ERRORS = 20


def register(subparsers: argparse._SubParsersAction) -> None:
    from core.formats import EXPORT_FORMATS, IMPORT_FORMATS

    importer = subparsers.add_parser(
        "import",
        help="import a WebNLG/TailNLG XML or WDV JSON file into a session",
        description="Import FILE into the session in one transaction. Entries that break "
        "the format are skipped and listed; a file that is not well-formed changes nothing.",
    )
    importer.add_argument("file", type=Path)
    importer.add_argument("--session", type=Path, required=True,
                          help="session file (created if missing)")
    importer.add_argument("--format", dest="format", default="auto",
                          choices=("auto", *IMPORT_FORMATS),
                          help="file format (default: auto, from the file's first bytes)")
    importer.add_argument("--quiet", action="store_true", help="no progress on stderr")
    importer.set_defaults(handler=run_import)

    exporter = subparsers.add_parser(
        "export",
        help="export a session's data units (XML, WDV JSON, Turtle, N-Triples, CSV)",
        description="Write every data unit of the session to OUT; imported entries come "
        "back as they were read, with the edits made since.",
    )
    exporter.add_argument("out", type=Path)
    exporter.add_argument("--session", type=Path, required=True)
    exporter.add_argument("--format", dest="format", required=True,
                          choices=tuple(EXPORT_FORMATS))
    exporter.add_argument("--quiet", action="store_true", help="no progress on stderr")
    exporter.set_defaults(handler=run_export)


def _list_errors(errors: Sequence[Any], label: str = "") -> None:
    """The first reasons on stderr, one a line, so stdout stays the summary alone."""
    for error in errors[:MAX_LISTED_ERRORS]:
        print(f"  {label}{error.where}: {error.reason}", file=sys.stderr)
    if len(errors) > MAX_LISTED_ERRORS:
        print(f"  … and {len(errors) - MAX_LISTED_ERRORS} more", file=sys.stderr)


def run_import(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.formats import IMPORT_FORMATS, detect_format
    from core.jobs import Job
    from core.store import SessionStore

    # Detected here, before the session is created, so a foreign file is refused early.
    name = detect_format(args.file) if args.format == "auto" else args.format
    function = IMPORT_FORMATS[name].function
    with SessionStore.open(args.session, create=True) as store:
        job = Job(title=f"Import {args.file.name}",
                  run=lambda ctx: function(store, args.file, ctx=ctx), kind="import",
                  params={"path": str(args.file), "format": name})
        report = run_in_terminal(job, quiet=args.quiet)
    print(f"{args.file.name}: {report.summary_line()}")
    _list_errors(report.errors)
    _list_errors(getattr(report, "warnings", []), "imported, but ")
    # Nothing imported from a file with entries is a failure a script should notice.
    return 0 if report.units or not report.entries else 2


def run_export(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.formats import EXPORT_FORMATS
    from core.jobs import Job
    from core.store import SessionStore

    function = EXPORT_FORMATS[args.format].function
    with SessionStore.open(args.session) as store:
        job = Job(title=f"Export {args.out.name}",
                  run=lambda ctx: function(store, args.out, ctx=ctx), kind="export",
                  params={"path": str(args.out), "format": args.format})
        report = run_in_terminal(job, quiet=args.quiet)
    print(f"{args.out.name}: {report.summary_line()} ({args.format})")
    # Units a format cannot hold (WDV: more than one triple) are listed, not an error.
    _list_errors(report.skipped, "skipped ")
    # A session with units of which none fits the format wrote an empty file: say so.
    return 0 if report.entries or not report.units else 2
