"""Tests that pass anywhere: no tracked file names a machine's layout, and
the one resolver (``tests/shared_data.py``) finds the real data or says how to get it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests import shared_data

ROOT = Path(__file__).resolve().parents[1]
TEXT_SUFFIXES = {".py", ".md", ".toml", ".spec", ".txt", ".sh", ".desktop", ".cfg", ".ini"}
RESOLVER = "tests/shared_data.py"

# Built from pieces so that this file does not match its own patterns.
_ROOT_FOLDER = "/" + "work"
MACHINE_PATHS = {
    "the build machine's folder": re.compile(r"(?<![\w.:/-])" + _ROOT_FOLDER + r"(?:/|\b)"),
    "an absolute path to the shared data": re.compile(
        r"['\"]/[^'\"\n]*/" + "shared" + r"/(?:data|docs)\b"
    ),
}
# Path arithmetic to the data beside the checkout belongs to the resolver alone.
DATA_BESIDE = re.compile(r"['\"]" + "shared" + r"['\"]\s*/\s*['\"]data['\"]")


def tracked_files() -> list[Path]:
    """The repository's text files: git's list where this is a checkout, else a walk."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
        ).stdout.decode()
        paths = [ROOT / name for name in listed.split("\0") if name]
    except (OSError, subprocess.SubprocessError):
        paths = [
            p
            for p in ROOT.rglob("*")
            if not any(part.startswith(".") or part == "__pycache__" for part in p.parts)
        ]
    return sorted(
        p for p in paths if p.is_file() and (p.suffix in TEXT_SUFFIXES or p.name in ("dev", "run"))
    )


def test_no_file_names_a_machine_path() -> None:
    found = []
    for path in tracked_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        name = path.relative_to(ROOT).as_posix()
        for what, pattern in MACHINE_PATHS.items():
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{name}:{line}: {what} ({match.group(0)!r})")
        if name != RESOLVER and path.suffix == ".py":
            for match in DATA_BESIDE.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{name}:{line}: finds the data itself; use {RESOLVER}")
    assert found == [], "\n".join(found)


def test_the_patterns_catch_what_they_are_for() -> None:
    machine = _ROOT_FOLDER + "/shared/data/tailnlg/x.xml"
    assert MACHINE_PATHS["the build machine's folder"].search(f'Path("{machine}")')
    assert MACHINE_PATHS["an absolute path to the shared data"].search(f'"/{machine[1:]}"')
    # (the samples are split so that this file's own text does not match)
    home = '"/home/a/' + 'shared/docs/"'
    assert MACHINE_PATHS["an absolute path to the shared data"].search(home)
    assert DATA_BESIDE.search('parents[3] / "shared"' + ' / "data" / "tailnlg"')
    assert DATA_BESIDE.search('/ ".."\n    / "shared"' + '\n    / "data"')
    for fine in ("../shared/data beside the checkout", "https://x.org/work/", "homework/a"):
        assert not any(p.search(fine) for p in MACHINE_PATHS.values()), fine


def test_the_data_folder_is_taillens_data_else_beside_the_checkout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(shared_data.ENV, raising=False)
    assert shared_data.data_root() == ROOT.parent.joinpath("shared", "data")
    monkeypatch.setenv(shared_data.ENV, str(tmp_path))
    (tmp_path / "tailnlg").mkdir()
    (tmp_path / "tailnlg" / "longTailWebNLG-v1.0.xml").write_text("<benchmark/>")
    assert shared_data.data_path(*shared_data.TAILNLG) == tmp_path / "tailnlg" / (
        "longTailWebNLG-v1.0.xml"
    )
    assert shared_data.require(*shared_data.TAILNLG).read_text() == "<benchmark/>"


def test_a_test_without_the_data_skips_saying_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(shared_data.ENV, str(tmp_path / "nowhere"))
    with pytest.raises(pytest.skip.Exception) as skipped:
        shared_data.require(*shared_data.ENRICHED_DEV)
    reason = str(skipped.value)
    assert "webnlg2017-enriched/en/dev" in reason
    assert (
        "set TAILLENS_DATA to the folder holding tailnlg/, webnlg2017-enriched/ and webnlg2020/, "
        "or put shared/data beside the checkout"
    ) in reason
    mark = shared_data.needs(*shared_data.TAILNLG)
    assert mark.args == (True,) and shared_data.HOW_TO_GET in mark.kwargs["reason"]
