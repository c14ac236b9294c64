"""``taillens gui [SESSION] [--screenshot PNG]``: open the main window."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "gui",
        help="open the main window (the default command)",
        description="Open the main window on SESSION, or on the default session.",
    )
    parser.add_argument("session", nargs="?", type=Path, help="session file to open")
    parser.add_argument(
        "--screenshot",
        type=Path,
        metavar="PNG",
        help="render the window offscreen to PNG and exit",
    )
    parser.add_argument(
        "--size",
        default="1280x800",
        metavar="WxH",
        help="window size for --screenshot (default 1280x800)",
    )
    parser.add_argument(
        "--show",
        action="append",
        default=[],
        metavar="PANEL",
        help="raise this panel's dock (browser, units, verbalise, scores, annotate, report; "
        "repeatable)",
    )
    parser.add_argument(
        "--wait-for-jobs",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="with --screenshot: wait up to SECONDS for start-up jobs (e.g. loading the "
        "demo data) to finish before the grab",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="with --screenshot: replace PNG even when it is a TailLens session (never the "
        "session opened)",
    )
    # For benchmarks/startup.py: print the wall-clock time of the first paint and exit.
    parser.add_argument("--report-first-paint", action="store_true", help=argparse.SUPPRESS)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from app.gui import end_process, launch

    width, _, height = args.size.partition("x")
    status = launch(
        session=args.session,
        screenshot=args.screenshot,
        size=(int(width), int(height)),
        report_first_paint=args.report_first_paint,
        show_panels=tuple(args.show),
        wait_for_jobs_s=args.wait_for_jobs,
        force=args.force,
    )
    end_process(status)  # the window is closed and everything saved: no slow teardown
