"""The documentation the code points at exists: every "METHODS §N" a comment cites is a
section of docs/METHODS.md, every Markdown file named in the code is in the repository,
and every relative link of the docs resolves."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE_DIRS = ("app", "core", "widgets", "benchmarks", "tests", "packaging")
DOCS = ROOT / "docs"


def _code_files() -> list[Path]:
    return sorted(p for d in CODE_DIRS for p in (ROOT / d).rglob("*.py"))


def _sections() -> set[str]:
    text = (DOCS / "METHODS.md").read_text(encoding="utf-8")
    return set(re.findall(r"^## (\d+)\.", text, flags=re.M))


def test_every_cited_methods_section_exists() -> None:
    sections = _sections()
    assert sections >= {str(n) for n in range(1, 11)}
    missing = []
    for path in _code_files():
        for number in re.findall(r"METHODS(?:\.md)? §(\d+)", path.read_text(encoding="utf-8")):
            if number not in sections:
                missing.append(f"{path.relative_to(ROOT)}: §{number}")
    assert missing == []


def test_every_markdown_file_named_in_the_code_exists() -> None:
    known = {p.name for p in ROOT.glob("*.md")} | {p.name for p in DOCS.glob("*.md")}
    known |= {str(p.relative_to(ROOT)) for p in DOCS.glob("*.md")}
    missing = []
    for path in _code_files():
        for name in re.findall(r"[\w./-]*[A-Za-z]\.md\b", path.read_text(encoding="utf-8")):
            if name.startswith("../shared"):
                continue  # the methods reference beside the repository, read by tests
            if name not in known and Path(name).name not in known:
                missing.append(f"{path.relative_to(ROOT)}: {name}")
    assert missing == []


def test_relative_links_in_the_docs_resolve() -> None:
    broken = []
    for doc in [*ROOT.glob("*.md"), *DOCS.glob("*.md")]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", doc.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (doc.parent / target).exists():
                broken.append(f"{doc.relative_to(ROOT)} -> {target}")
    assert broken == []


# A path such as `core/tiers/cutoffs.py` or a module such as `core.tiers.cutoffs`: what the
# docs name must exist, or the map leads a newcomer to a file that moved.
_CODE_PATH = re.compile(r"(?<![\w/.])((?:app|core|widgets)/[\w/]+\.py)\b")
_MODULE = re.compile(r"(?<![\w./])((?:app|core|widgets)(?:\.[a-z_][a-z0-9_]*)+)")


def _names_module(dotted: str) -> bool:
    """Whether ``dotted`` is a module or package, or an attribute of one (a class or
    function named after its module, as ``core.state.State``)."""
    parts = dotted.split(".")
    for end in range(len(parts), 1, -1):
        base = ROOT.joinpath(*parts[:end])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return end >= len(parts) - 2  # at most a class and its member after the module
    return False


def test_code_named_in_the_docs_exists() -> None:
    missing = []
    for doc in [*ROOT.glob("*.md"), *DOCS.glob("*.md")]:
        text = doc.read_text(encoding="utf-8")
        for path in sorted(set(_CODE_PATH.findall(text))):
            if not (ROOT / path).is_file():
                missing.append(f"{doc.relative_to(ROOT)}: {path}")
        for dotted in sorted(set(_MODULE.findall(text))):
            if not _names_module(dotted.rstrip(".")):
                missing.append(f"{doc.relative_to(ROOT)}: {dotted}")
    assert missing == []
