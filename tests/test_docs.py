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
