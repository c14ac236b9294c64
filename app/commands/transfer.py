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

from app.commands import add_output_arguments, csv_cells_line

MAX_LISTED_ERRORS = 20


def register(subparsers: argparse._SubParsersAction) -> None:
    from core.formats import EXPORT_FORMATS, IMPORT_FORMATS

    importer = subparsers.add_parser(
        "import",
        help="import a WebNLG/TailNLG XML or WDV JSON file (or a folder of XML) into a session",
        description="Import FILE, or every .xml file under a folder, into the session in one "
        "transaction. Entries that break the format are skipped and listed; a file that is "
        "not well-formed changes nothing.",
    )
    importer.add_argument("file", type=Path, help="a file, or a folder of WebNLG XML files")
    importer.add_argument(
        "--session", type=Path, required=True, help="session file (created if missing)"
    )
    importer.add_argument(
        "--format",
        dest="format",
        default="auto",
        choices=("auto", *IMPORT_FORMATS),
        help="file format (default: auto, from the file's first bytes)",
    )
    importer.add_argument(
        "--lang",
        default=None,
        metavar="CODE",
        help="WebNLG/TailNLG: language of texts with no or an empty lang (default: the "
        "language in the file name, as in ...-en.xml or _ru_, else en)",
    )
    importer.add_argument("--quiet", action="store_true", help="no progress on stderr")
    importer.set_defaults(handler=run_import)

    exporter = subparsers.add_parser(
        "export",
        help="export a session's data units (XML, WDV JSON, Turtle, N-Triples, CSV) or its "
        "per-text table (--texts: CSV, JSON Lines, Parquet)",
        description="Write every data unit of the session to OUT in --format; imported "
        "entries come back as they were read, with the edits made since. Or, with --texts "
        "FILE, the per-text table: one row per text (runs' outputs, and reference texts "
        "with a score or a rating) with its unit, run, model, language, tier, category, "
        "every metric value, ESA's undetected entities, each annotator's ratings and their "
        "aggregates, in the format the file's suffix names (.csv, .jsonl, .parquet). Each "
        "metric's signature goes in the Parquet schema's metadata, or for CSV and JSON "
        "Lines in FILE.signatures.json beside it (with the column types for pandas).",
    )
    exporter.add_argument("out", type=Path, nargs="?", help="the units' file (with --format)")
    exporter.add_argument("--session", type=Path, required=True)
    exporter.add_argument("--format", dest="format", choices=tuple(EXPORT_FORMATS))
    exporter.add_argument(
        "--texts",
        type=Path,
        metavar="FILE",
        help="write the per-text table to FILE (.csv, .jsonl or .parquet) instead of units",
    )
    exporter.add_argument(
        "--runs", metavar="ID,...", help="--texts: only these runs' texts (no reference texts)"
    )
    exporter.add_argument(
        "--langs", metavar="CODE,...", help="--texts: only texts in these languages, e.g. en,it"
    )
    add_output_arguments(exporter, csv_option=True)
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
    from core.changes import IMPORT_WRITES
    from core.formats import IMPORT_FORMATS, FormatError, detect_format
    from core.formats.common import IMPORT_KEPT
    from core.formats.webnlg.importer import check_import_path, file_language
    from core.jobs import Job
    from core.store import SessionStore, discard_new_session, file_identity

    # Detected here, before the session is created, so a foreign file is refused early.
    name = detect_format(args.file) if args.format == "auto" else args.format
    function = IMPORT_FORMATS[name].function
    options: dict[str, Any] = {}
    if args.lang is not None:
        if name not in ("tailnlg", "webnlg"):
            raise FormatError(f"--lang applies to WebNLG/TailNLG XML, not to {name}.")
        file_language("", args.lang)  # refused before the session is created
        options["lang"] = args.lang
    if args.file.is_dir() and name not in ("tailnlg", "webnlg"):
        raise FormatError(f"Cannot import {args.file}: folders hold WebNLG/TailNLG XML only.")
    if name in ("tailnlg", "webnlg"):
        check_import_path(args.file)  # before the session is created
    # A session this command creates is removed again if the import fails or brings
    # nothing: a failed import leaves no empty session behind.
    new = not args.session.exists() and not args.session.is_symlink()
    created = None
    try:
        with SessionStore.open(args.session, create=True) as store:
            created = file_identity(store.path) if new else None
            job = Job(
                title=f"Import {args.file.name}",
                run=lambda ctx: function(store, args.file, ctx=ctx, **options),
                kind="import",
                params={"path": str(args.file), "format": name, **options},
                writes=IMPORT_WRITES,
                kept=lambda: IMPORT_KEPT,
            )
            report = run_in_terminal(job, quiet=args.quiet)
    except BaseException:
        if created is not None:
            discard_new_session(args.session, created)
        raise
    # Nothing imported from a file with entries is a failure a script should notice,
    # unless it was all there already (a re-run after a crash ends in the same state).
    rerun = report.already and not report.errors
    failed = not (report.units or rerun or not report.entries)
    if failed and created is not None and discard_new_session(args.session, created):
        print(f"{args.session} was not created: nothing was imported.", file=sys.stderr)
    # A folder: one line per file. A single file: its line only when it says how the
    # language of unmarked texts was decided.
    for file in getattr(report, "files", []):
        if args.file.is_dir() or file.unmarked:
            print(f"  {file.line()}")
    print(f"{args.file.name}: {report.summary_line()}")
    if getattr(report, "mentions", 0):
        print(f"  {report.mentions} entity mentions stored with their texts")
    _list_errors(report.errors)
    _list_errors(getattr(report, "warnings", []), "imported, but ")
    return 2 if failed else 0


def run_export(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.formats import EXPORT_FORMATS, FormatError
    from core.io.output_guard import check_output_target
    from core.jobs import Job
    from core.store import SessionStore

    if args.texts is not None:
        return run_export_texts(args)
    if args.runs is not None or args.langs is not None:
        raise FormatError("--runs and --langs apply to --texts (the per-text table).")
    if args.out is None or args.format is None:
        raise FormatError(
            "export needs OUT and --format (units), or --texts FILE (the per-text table)."
        )
    function = EXPORT_FORMATS[args.format].function
    options: dict[str, Any] = {"force": args.force}
    if args.raw_csv:
        if args.format != "csv":
            raise FormatError(f"--raw-csv applies to --format csv, not to {args.format}.")
        options["raw"] = True
    # Read-only: exports a WAL snapshot and never waits for an import or run writing.
    with SessionStore.open_read_only(args.session) as store:
        # Refused before any work (atomic_output checks again when it writes).
        check_output_target(args.out, force=args.force)
        job = Job(
            title=f"Export {args.out.name}",
            run=lambda ctx: function(store, args.out, ctx=ctx, **options),
            kind="export",
            params={"path": str(args.out), "format": args.format},
        )
        report = run_in_terminal(job, quiet=args.quiet)
    print(f"{args.out.name}: {report.summary_line()} ({args.format})")
    if args.format == "csv":
        print(csv_cells_line(args.raw_csv, report.neutralised))
    # Units a format cannot hold (WDV: more than one triple) are listed, not an error.
    _list_errors(report.skipped, "skipped ")
    # Nothing exported (a session without units, or units of which none fits the
    # format): the file holds no entry, and a script must be able to tell.
    if not report.entries:
        print(
            f"taillens: nothing exported: {args.out.name} holds no entry "
            + (
                f"(none of the {report.units} units fits {args.format})"
                if report.units
                else "(the session has no units)"
            ),
            file=sys.stderr,
        )
        return 2
    return 0


def run_export_texts(args: argparse.Namespace) -> int:
    """``export --texts FILE``: the per-text table (core.formats.texts_table)."""
    from app.commands.report import parse_runs
    from app.terminal import run_in_terminal
    from core.formats import FormatError
    from core.formats.texts_table import export_texts, sidecar_path, texts_format
    from core.io.output_guard import check_output_target
    from core.jobs import Job
    from core.store import SessionStore

    if args.out is not None or args.format is not None:
        raise FormatError(
            "--texts writes the format its file's suffix names (.csv, .jsonl, .parquet); "
            "give no OUT or --format with it."
        )
    fmt = texts_format(args.texts)
    if args.raw_csv and fmt != "csv":
        raise FormatError(f"--raw-csv applies to a .csv table, not to {args.texts.name}.")
    runs = parse_runs(args.runs)
    langs = None if args.langs is None else [x.strip() for x in args.langs.split(",") if x.strip()]
    if langs == []:
        raise FormatError("--langs needs at least one language code, e.g. --langs en,it")
    with SessionStore.open_read_only(args.session) as store:
        # Refused before any work (atomic_output checks again when it writes).
        check_output_target(args.texts, force=args.force)
        if fmt != "parquet":
            check_output_target(sidecar_path(args.texts), force=args.force)
        job = Job(
            title=f"Export texts to {args.texts.name}",
            run=lambda ctx: export_texts(
                store,
                args.texts,
                ctx=ctx,
                force=args.force,
                raw=args.raw_csv,
                runs=runs,
                langs=langs,
            ),
            kind="export",
            params={"path": str(args.texts), "format": fmt, "runs": runs, "langs": langs},
        )
        report = run_in_terminal(job, quiet=args.quiet)
    print(f"{args.texts.name}: {report.texts_line()} ({fmt})")
    for column, signatures in report.signatures.items():
        for signature in signatures:
            print(f"  signature {column}: {signature}")
    if report.sidecar:
        print(f"  signatures and column types: {Path(report.sidecar).name}")
    if fmt == "csv":
        print(csv_cells_line(args.raw_csv, report.neutralised))
    if not report.entries:
        chosen = " chosen by --runs/--langs" if runs is not None or langs is not None else ""
        print(
            f"taillens: nothing exported: {args.texts.name} holds no text (the session has "
            f"no texts{chosen})",
            file=sys.stderr,
        )
        return 2
    return 0
