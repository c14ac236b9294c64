"""The shape of the code, for a review of its structure: modules per ``core`` folder, the
longest files and functions, and the counts the design card's rules speak of.

    python3 benchmarks/house.py [FOLDER]        (default: this checkout)

Run it on ``git archive REV | tar -x -C DIR`` of two revisions to compare them. Lines are
file lines; a function's length is its ``def`` to its last line (``ast``). Migration
revisions are left out (each is a schema snapshot, long on purpose).
"""

from __future__ import annotations

import ast
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[1])


def pyfiles(folder: str) -> list[pathlib.Path]:
    return [p for p in (root / folder).rglob("*.py") if "migrations/versions" not in str(p)]


print("root:", root)
print(
    "core root modules (excl __init__):",
    len([p for p in (root / "core").glob("*.py") if p.name != "__init__.py"]),
)
folders = {}
for p in pyfiles("core"):
    rel = p.relative_to(root / "core")
    key = "core/" + (rel.parts[0] if len(rel.parts) > 1 else "(root)")
    folders[key] = folders.get(key, 0) + 1
print("modules per core folder:", dict(sorted(folders.items())))
for d in ("app", "widgets"):
    print(d, "modules:", len(pyfiles(d)))
sizes = sorted(
    (
        (len(p.read_text().splitlines()), str(p.relative_to(root)))
        for d in ("core", "app", "widgets")
        for p in pyfiles(d)
    ),
    reverse=True,
)
print(
    "modules >800:",
    sum(1 for s in sizes if s[0] > 800),
    ">600:",
    sum(1 for s in sizes if s[0] > 600),
)
print("longest:", sizes[:8])
fn = []
for d in ("core", "app", "widgets"):
    for p in pyfiles(d):
        for n in ast.walk(ast.parse(p.read_text())):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                fn.append((n.end_lineno - n.lineno + 1, f"{p.relative_to(root)}:{n.name}"))
fn.sort(reverse=True)
print("functions >80:", sum(1 for f in fn if f[0] > 80), ">100:", sum(1 for f in fn if f[0] > 100))
print("longest functions:", fn[:5])
print("ARCHITECTURE.md lines:", len((root / "ARCHITECTURE.md").read_text().splitlines()))
n = 0
for d in ("core", "app"):
    for p in pyfiles(d):
        if d == "core" and "store" in p.relative_to(root / "core").parts[:1]:
            continue
        n += len(re.findall(r"engine\.connect\(|engine\.begin\(", p.read_text()))
print("engine.connect/begin outside core/store:", n)
print(
    "blockSignals in widgets:",
    sum(p.read_text().count("blockSignals(") for p in pyfiles("widgets")),
)
