"""``taillens gui [SESSION] [--screenshot PNG [--dialog NAME] [--size WxH]] [--theme T]``:
open the main window."""

from __future__ import annotations

import argparse
from pathlib import Path

# Kept here (app.dialogs imports the controller's world): a test holds it to app.dialogs.
DIALOG_NAMES = (
    "score",
    "import",
    "sample",
    "override",
    "preferences",
    "export",
    "category",
    "synonyms",
    "retrieval",
    "search",
    "statistics",
    "shortcuts",
    "guide",
    "about",
    "packs",
    "pack",
    "models",
    "train",
    "references",
    "golden",
)


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
        help="with --screenshot: the screen's size, which the window fills (default "
        "1280x800); a dialog is fitted to it",
    )
    parser.add_argument(
        "--dialog",
        metavar="NAME",
        help="with --screenshot: open this dialog over the window first ("
        + ", ".join(DIALOG_NAMES)
        + ")",
    )
    parser.add_argument(
        "--theme",
        choices=("system", "light", "dark"),
        help="this run's theme (default: the one chosen in Preferences)",
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
        help="with --screenshot: replace PNG even when TailLens did not write it, or it is "
        "a TailLens session (never the session opened)",
    )
    # For benchmarks/startup.py: print the wall-clock time of the first paint and exit.
    parser.add_argument("--report-first-paint", action="store_true", help=argparse.SUPPRESS)
    # For benchmarks/window_idle.py: the first paint, then when the window is idle and
    # the process's memory then; exit.
    parser.add_argument("--report-idle", action="store_true", help=argparse.SUPPRESS)
    parser.set_defaults(handler=run)


def _size(text: str) -> tuple[int, int]:
    from core.errors import UserFacingError

    width, _, height = text.lower().partition("x")
    try:
        size = (int(width), int(height))
    except ValueError:
        size = (0, 0)
    if not (320 <= size[0] <= 16384 and 240 <= size[1] <= 16384):
        raise UserFacingError(
            f"--size {text!r}: give WIDTHxHEIGHT in pixels, e.g. 1366x768 (320x240 to 16384x16384)"
        )
    return size


def run(args: argparse.Namespace) -> int:
    from app.gui import end_process, launch
    from core.errors import UserFacingError

    if args.dialog is not None:
        if args.dialog not in DIALOG_NAMES:
            raise UserFacingError(f"no dialog {args.dialog!r} (dialogs: {', '.join(DIALOG_NAMES)})")
        if args.screenshot is None:
            raise UserFacingError("--dialog goes with --screenshot PNG")
    size = _size(args.size)
    status = launch(
        session=args.session,
        screenshot=args.screenshot,
        size=size,
        dialog=args.dialog,
        theme=args.theme,
        report_first_paint=args.report_first_paint,
        report_idle=args.report_idle,
        show_panels=tuple(args.show),
        wait_for_jobs_s=args.wait_for_jobs,
        force=args.force,
    )
    end_process(status)  # the window is closed and everything saved: no slow teardown
