"""Argument types the commands share (argparse ``type=`` callables)."""

from __future__ import annotations

import argparse


def comma_list(text: str) -> list[str]:
    """``"a, b,,c"`` -> ``["a", "b", "c"]``: a comma-separated option, blanks dropped."""
    return [part.strip() for part in text.split(",") if part.strip()]


def run_ids(text: str) -> list[int]:
    """``"1,2"`` -> ``[1, 2]``; anything else is argparse's one-line error."""
    try:
        return [int(part) for part in comma_list(text)]
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"run ids are numbers, e.g. 1,2 (got {text!r})") from error
