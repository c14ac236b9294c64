"""``taillens desktop install|uninstall``: the menu entry, icon and ``*.taillens`` type."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "desktop",
        help="add TailLens to the desktop's menu and open *.taillens files with it",
        description="Write (or remove) the XDG desktop entry, icon and the "
        "application/x-taillens-session file type under $XDG_DATA_HOME (default "
        "~/.local/share), pointing at this TailLens, so it appears in the menu and a "
        "double click on a session opens it. No root needed.",
    )
    actions = parser.add_subparsers(dest="desktop_command", metavar="ACTION", required=True)
    install = actions.add_parser("install", help="write the entry, icon and file type")
    install.set_defaults(handler=run_install)
    uninstall = actions.add_parser("uninstall", help="remove what 'install' wrote")
    uninstall.set_defaults(handler=run_uninstall)


def run_install(args: argparse.Namespace) -> int:
    from core.desktop.integration import install

    for line in install().lines():
        print(line)
    return 0


def run_uninstall(args: argparse.Namespace) -> int:
    from core.desktop.integration import uninstall

    report = uninstall()
    for line in report.lines() or ["nothing to remove"]:
        print(line)
    return 0
