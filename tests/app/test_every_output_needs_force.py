"""Every file a CLI command writes refuses to replace a file TailLens did not write unless
--force is given, and replaces TailLens's own earlier output without it.

The commands are found by walking the CLI's parser: every argument that names a path is
either an input (``INPUTS``), a new model folder that is never replaced (``NEW_FOLDERS``)
or an output with a recipe here, so a new output option fails this test until it is
added (and then must pass it)."""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.cli import build_parser
from app.cli import main as cli_main
from tests.fixtures.report_session import build_report_session

ROOT = Path(__file__).resolve().parents[2]

# Path arguments that are read, not written (a session is placed by core.store, which
# never replaces a file: tests/core/test_store_placing.py).
INPUTS = {"session", "file", "paths", "packs", "guidelines", "folder"}
# Training writes a new folder (or resumes its own): an existing model or any other file
# there is refused with or without --force (core.verbalise.training.folder.check_out,
# core.metrics.encoder_training).
NEW_FOLDERS = {("train-encoder", "out"), ("train-verbaliser", "out")}

FOREIGN = b"my own notes, not TailLens's\n"


@dataclass(frozen=True)
class Recipe:
    """How to run a command so it writes under ``target``: a file, or a folder of files."""

    args: Callable[[Path, Path], list[str]]
    name: str = "out.csv"  # the file (or folder) written
    folder: bool = False
    replaces_own: bool = True  # a pack is a session: replacing one needs --force anyway
    process: bool = False  # the window: a process of its own


RECIPES: dict[tuple[str, str], Recipe] = {
    ("export", "out"): Recipe(
        lambda s, t: ["export", "--session", str(s), "--format", "csv", str(t)]
    ),
    ("export", "texts"): Recipe(lambda s, t: ["export", "--session", str(s), "--texts", str(t)]),
    ("report", "html"): Recipe(
        lambda s, t: ["report", "--session", str(s), "--html", str(t)], "out.html"
    ),
    ("report", "csv"): Recipe(
        lambda s, t: ["report", "--session", str(s), "--csv", str(t)], "out", folder=True
    ),
    # One format is enough for the refusal of a folder's files (each format's writing is
    # tests/app/test_report_cli.py's); all three, at 300 dpi, drawn four times, were 20 s.
    ("report", "figures"): Recipe(
        lambda s, t: ["report", "--session", str(s), "--figures", str(t), "--figure-format", "svg"],
        "out",
        folder=True,
    ),
    ("annotations pack", "out"): Recipe(
        lambda s, t: (
            ["annotations", "pack", "--session", str(s), "--annotator", "ed"]
            + ["--lang", "en", "--out", str(t)]
        ),
        "out.taillens",
        replaces_own=False,
    ),
    ("gui", "screenshot"): Recipe(
        lambda s, t: ["gui", str(s), "--screenshot", str(t), "--size", "640x480"],
        "out.png",
        process=True,
    ),
}


def _leaves(parser: argparse.ArgumentParser, name: tuple[str, ...] = ()) -> Iterator:
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subparsers:
        yield " ".join(name), parser
    for action in subparsers:
        for command, child in action.choices.items():
            yield from _leaves(child, (*name, command))


def path_arguments() -> dict[tuple[str, str], bool]:
    """Every (command, argument) that names a path, and whether the command has --force."""
    found = {}
    for command, parser in _leaves(build_parser()):
        force = any("--force" in a.option_strings for a in parser._actions)
        for action in parser._actions:
            if action.type is Path and action.dest not in INPUTS:
                found[(command, action.dest)] = force
    return found


def test_every_output_argument_has_a_recipe_and_force() -> None:
    found = path_arguments()
    outputs = {key for key in found if key not in NEW_FOLDERS}
    assert outputs == set(RECIPES), "an output option needs a recipe in this test"
    assert all(found[key] for key in outputs), "an output option without --force"


def run(args: list[str], process: bool, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    if process:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
        done = subprocess.run(
            [sys.executable, "-m", "app", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        return done.returncode, done.stderr
    code = cli_main(args)
    return code, capsys.readouterr().err


def files_under(target: Path, folder: bool) -> list[Path]:
    if not folder:
        return [target]
    return sorted(p for p in target.iterdir() if p.is_file() and not p.name.startswith("."))


def digests(paths: list[Path]) -> list[str]:
    return [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(RECIPES), ids=lambda key: f"{key[0]}--{key[1]}")
def test_an_output_replaces_a_foreign_file_only_with_force(
    key: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recipe = RECIPES[key]
    session = build_report_session(tmp_path / "study.taillens").path
    target = tmp_path / recipe.name
    args = recipe.args(session, target)
    if recipe.folder:
        target.mkdir()
    # A first run writes into a free place; TailLens's own output is replaced by the next.
    code, said = run(args, recipe.process, capsys)
    assert code == 0, said
    written = files_under(target, recipe.folder)
    assert written, "the recipe wrote nothing to check"
    if recipe.replaces_own:
        code, said = run(args, recipe.process, capsys)
        assert code == 0, said
    # Someone else's file in each place (another program's, or the output edited since):
    # refused, each left byte for byte, nothing half-written beside it.
    for path in written:
        path.unlink()
        path.write_bytes(FOREIGN + path.name.encode())
    before = digests(written)
    code, said = run(args, recipe.process, capsys)
    assert code == 2, said
    assert "TailLens did not write" in said and "--force" in said, said
    assert "Traceback" not in said
    assert digests(written) == before
    assert not list(target.parent.rglob(".*.tmp"))
    # --force replaces them.
    code, said = run([*args, "--force"], recipe.process, capsys)
    assert code == 0, said
    assert all(not p.read_bytes().startswith(FOREIGN) for p in written)


def test_a_symbolic_link_is_not_followed_nor_replaced_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = build_report_session(tmp_path / "study.taillens").path
    victim = tmp_path / "victim.txt"
    victim.write_bytes(FOREIGN)
    link = tmp_path / "out.html"
    link.symlink_to(victim)
    code, said = run(["report", "--session", str(session), "--html", str(link)], False, capsys)
    assert code == 2 and "a symbolic link TailLens did not write" in said, said
    assert link.is_symlink() and victim.read_bytes() == FOREIGN
