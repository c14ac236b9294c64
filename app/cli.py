"""The ``taillens`` command line.

Each sub-command lives in its own module under ``app/commands`` with two functions:
``register(subparsers)`` adds its parser and sets ``handler``; the handler takes the
parsed arguments and returns an exit status. Adding a command is one new module and
one line in :data:`COMMAND_MODULES`.

Command modules import heavy things (SQLAlchemy, Qt, models) inside their handlers,
so ``taillens --version`` and ``--help`` stay fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from typing import Any

from core import __version__
from core.errors import UserFacingError

COMMAND_MODULES: tuple[str, ...] = (
    "app.commands.gui",
    "app.commands.session",
    "app.commands.transfer",
    "app.commands.wikidata",
    "app.commands.tiers",
    "app.commands.units",
    "app.commands.annotations",
    "app.commands.report",
    "app.commands.verbalise",
    "app.commands.score",
    "app.commands.retrieve",
    "app.commands.stats",
    "app.commands.correlate",
    "app.commands.synonyms",
    "app.commands.history",
    "app.commands.likelihood",
    "app.commands.references",
    "app.commands.desktop",
    "app.commands.models",
    "app.commands.train",
)

EXIT_OK = 0
EXIT_USER_ERROR = 2  # bad input, unreadable file, unreachable service: the message says why
EXIT_CANCELLED = 130

# What ``taillens --help`` ends with; docs/cli.md lists the same codes (a test holds them
# to each other and to the commands' behaviour).
EXIT_CODES = """\
exit status:
  0    done; notes on stderr name anything left out (a model metric this install
       cannot compute while others were computed, units a format cannot hold)
  1    an unexpected error: a bug, with a traceback to report
  2    not done, one line on stderr says why: bad input or options, a file that
       cannot be read or written, a service or display that does not answer, a
       library this install lacks, or a request that produced nothing (no metric
       asked for could be computed, nothing to export)
  130  stopped by Ctrl+C (143: by SIGTERM); every unit of work cut short was
       rolled back
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="taillens",
        # Wrapped here: the raw formatter keeps the epilog's layout and this as written.
        description="TailLens: how language models verbalise knowledge-graph facts, head\n"
        "and long tail. With no command, opens the window; 'taillens FILE.taillens'\n"
        "opens that session in it.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"taillens {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


class _Stderr(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time (tests swap it)."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


def _show_store_notices() -> None:
    """What core.store says a user must know (an upgrade and where its backup is) goes to
    stderr, worded like every other message."""
    logger = logging.getLogger("core.store")
    if not any(isinstance(h, _Stderr) for h in logger.handlers):
        handler = _Stderr()
        handler.setFormatter(logging.Formatter("taillens: %(message)s"))
        logger.addHandler(handler)


def _opens_a_session(argv: Sequence[str]) -> bool:
    """``taillens PATH.taillens`` (a session file first, e.g. from a file manager): gui."""
    from core.desktop.paths import SESSION_SUFFIX

    return bool(argv) and not argv[0].startswith("-") and argv[0].endswith(SESSION_SUFFIX)


def _starts_with_a_window_option(parser: argparse.ArgumentParser, argv: Sequence[str]) -> bool:
    """``taillens --theme light`` (an option of the window, the default command, first):
    gui. An option of ``taillens`` itself (``--version``, ``--help``) stays its own."""
    if not argv or not argv[0].startswith("-"):
        return False
    first = argv[0].split("=", 1)[0]
    if first in {o for action in parser._actions for o in action.option_strings}:
        return False
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and "gui" in action.choices:
            window = action.choices["gui"]
            return first in {o for a in window._actions for o in a.option_strings}
    return False


class TerminalSafe:
    """A text stream (stdout) that writes every character a terminal would act on as its
    escape (:func:`core.io.safe_names.for_terminal`): a name read from a file (an annotator,
    a system, a category) holding ESC, BEL, CR or NUL is shown, never obeyed."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        from core.io.safe_names import for_terminal

        self.stream.write(for_terminal(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a command a closed pipe stops


def _quiet_after_broken_pipe() -> None:
    """The reader of stdout went away (``taillens … | head -1``): what is left to print
    goes nowhere, so neither this nor Python's flush at exit says anything."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ else 1)
    except (OSError, ValueError, AttributeError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit status: 0, 2 for a failure the message explains, 128 +
    the signal for a command Ctrl+C (130) or SIGTERM (143) stopped, as shells expect;
    141 (quietly) when the reader of its output closed the pipe."""
    stdout = sys.stdout
    if not isinstance(stdout, TerminalSafe):
        sys.stdout = TerminalSafe(stdout)
    try:
        return _main(argv)
    except BrokenPipeError:
        _quiet_after_broken_pipe()
        return EXIT_BROKEN_PIPE
    finally:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_after_broken_pipe()
        except (OSError, ValueError):
            pass
        sys.stdout = stdout


def _main(argv: Sequence[str] | None) -> int:
    try:
        _show_store_notices()
        parser = build_parser()
        argv = list(sys.argv[1:] if argv is None else argv)
        if _opens_a_session(argv) or _starts_with_a_window_option(parser, argv):
            argv = ["gui", *argv]
        args = parser.parse_args(argv)
        if args.command is None:
            args = parser.parse_args(["gui"])
        return int(args.handler(args) or EXIT_OK)
    except UserFacingError as error:
        from core.io.safe_names import for_terminal

        print(f"taillens: {for_terminal(str(error))}", file=sys.stderr)
        # A job Ctrl+C or SIGTERM stopped: 128 + the signal (app.terminal is imported by
        # then; not at start-up, which keeps --version fast).
        terminal = sys.modules.get("app.terminal")
        if terminal is not None and isinstance(error, terminal.JobCancelledByUser):
            return 128 + error.signum
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        # Ctrl+C outside a job (loading, parsing, opening), or a second one inside: each
        # unit of work it cut short was rolled back.
        print("taillens: interrupted", file=sys.stderr)
        return EXIT_CANCELLED
