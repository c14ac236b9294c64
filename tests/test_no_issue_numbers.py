"""No code, comment, docstring or document cites an issue by its number: a reader
of the repository cannot look one up, so the text must say in words what it means.

The scanner takes a root folder, so it is also shown to fail on a tree with a planted
citation."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = (
    "app",
    "core",
    "widgets",
    "tests",
    "benchmarks",
    "packaging",
    "resources",
    "docs",
    "ARCHITECTURE.md",
    "README.md",
    "pyproject.toml",
)
SUFFIXES = (".py", ".md", ".toml", ".spec", ".cfg", ".ini", ".yml", ".yaml", ".sh")
CITATION = re.compile(r"[Ii]ssues? [0-9]+|[Ii]ssue #[0-9]+")
THIS_FILE = Path(__file__).resolve().relative_to(ROOT).as_posix()


def _files(root: Path) -> list[Path]:
    files = []
    for name in SCANNED:
        path = root / name
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files.extend(p for p in path.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
    return sorted(files)


def issue_citations(root: Path, skip: frozenset[str] = frozenset()) -> list[str]:
    """``file:line: text`` for every line under ``root``'s scanned paths that cites an issue
    number; ``skip`` holds paths relative to ``root`` (posix) left out."""
    found = []
    for path in _files(root):
        relative = path.relative_to(root).as_posix()
        if relative in skip:
            continue
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for number, line in enumerate(lines, start=1):
            if CITATION.search(line):
                found.append(f"{relative}:{number}: {line.strip()}")
    return found


def test_no_file_cites_an_issue_number() -> None:
    found = issue_citations(ROOT, frozenset({THIS_FILE}))
    assert found == [], "issue numbers cited; say what is meant instead:\n" + "\n".join(found)


def test_the_scanner_finds_a_planted_citation(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "core" / "clean.py").write_text('"""Nothing to see."""\n', encoding="utf-8")
    planted = "x = 1\n# saved as a share (" + "issue" + " 10): a dragged line moved\n"
    (tmp_path / "core" / "tiers.py").write_text(planted, encoding="utf-8")
    # The name is put together so that tests/test_docs.py does not look for it in docs/.
    planted_md = "a." + "md"
    (tmp_path / "docs" / planted_md).write_text("See " + "Issue" + " #7.\n", encoding="utf-8")
    (tmp_path / "docs" / "notes.txt").write_text("issue" + " 3\n", encoding="utf-8")
    (tmp_path / "README.md").write_text("As " + "issues" + " 12 and 19 said.\n", "utf-8")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x.py").write_text("# " + "issue" + " 5\n", encoding="utf-8")

    assert issue_citations(tmp_path) == [
        "README.md:1: As " + "issues" + " 12 and 19 said.",
        "core/tiers.py:2: # saved as a share (" + "issue" + " 10): a dragged line moved",
        f"docs/{planted_md}:1: See " + "Issue" + " #7.",
    ]
    assert issue_citations(tmp_path, frozenset({"core/tiers.py"})) == [
        "README.md:1: As " + "issues" + " 12 and 19 said.",
        f"docs/{planted_md}:1: See " + "Issue" + " #7.",
    ]
