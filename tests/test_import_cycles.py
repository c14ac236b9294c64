"""No import cycle in core, app or widgets: the graph of their imports,
read with ``ast``, has no cycle, and every core module imports on its own in a fresh
interpreter.

The graph counts every import statement: at module level, inside functions (a
function-level import is a cycle waiting for the first caller, or one dodged) and under
``if TYPE_CHECKING:`` (a cycle only the type checker sees is still two modules that
each need the other: the shared piece belongs in a lower module). Importing ``core.a.b``
counts as importing the package ``core.a`` too (its ``__init__`` runs first), and a
module importing its own package (``from pkg import sibling`` inside ``pkg``) counts.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIPPED = (".migrations.versions.", ".migrations.env")  # run by alembic, not imported
PACKAGES = ("core", "app", "widgets")  # the project's own layers (ARCHITECTURE.md)


def core_modules(root: Path = ROOT, packages: tuple[str, ...] = ("core",)) -> dict[str, Path]:
    """Dotted module name -> file, for every module of ``packages`` under ``root``."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def _imported_names(tree: ast.AST, package: str) -> list[str]:
    """Every module name an import statement in ``tree`` names (TYPE_CHECKING included)."""
    names: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            names.append(base)
            names.extend(f"{base}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return names


def import_graph(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """module -> the modules of ``packages`` it imports (and the packages those load first)."""
    modules = core_modules(root, packages)

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for name in _imported_names(ast.parse(path.read_text(encoding="utf-8")), package):
            target = resolve(name) if name.split(".")[0] in packages else None
            if target is None or target == module:
                continue
            graph[module].add(target)
            parts = target.split(".")
            for i in range(2, len(parts)):  # the packages importing ``target`` runs first
                parent = ".".join(parts[:i])
                if not f"{module}.".startswith(f"{parent}."):  # already loading
                    graph[module].add(parent)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path (first node repeated at the end), or None."""
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(graph, white)
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        colour[node] = grey
        stack.append(node)
        for nxt in sorted(graph[node]):
            if colour[nxt] == grey:
                return [*stack[stack.index(nxt) :], nxt]
            if colour[nxt] == white and (found := visit(nxt)):
                return found
        stack.pop()
        colour[node] = black
        return None

    for node in sorted(graph):
        if colour[node] == white and (found := visit(node)):
            return found
    return None


def test_the_graph_reads_module_function_and_type_checking_imports() -> None:
    graph = import_graph()
    assert "core.report.data" in graph["core.report.build"]  # module level
    assert "core.annotation" in graph["core.report.build"]  # inside a function
    assert "core.store" in graph["core.annotation.ratings"]  # core.store.models loads core.store
    assert "core.report.comparison" in graph["core.report.verdict"]  # under TYPE_CHECKING
    assert "app.context" in graph["app.browser"]  # app/ is in the graph (TYPE_CHECKING)
    assert "widgets.scores.ranking" in graph["widgets.scores.table"]  # and widgets/


def test_find_cycle_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_core_app_and_widgets_have_no_import_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


CLEAN = {
    "app/__init__.py": "",
    "app/context.py": "from core.jobs import Job\n",
    "app/panel.py": (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from app.context import PanelContext\n"
    ),
    "app/controller.py": "from app.context import PanelContext\nfrom app.panel import Panel\n",
    "core/__init__.py": "",
    "core/jobs.py": "import json\n",
    "widgets/__init__.py": "",
    "widgets/pkg/__init__.py": "from widgets.pkg.table import Table\n",
    "widgets/pkg/ranking.py": "",
    "widgets/pkg/table.py": "from widgets.pkg.ranking import order\n",
}


def test_a_clean_tree_passes(tmp_path: Path) -> None:
    assert find_cycle(import_graph(_package(tmp_path, CLEAN))) is None


@pytest.mark.parametrize(
    ("name", "text", "cycle"),
    [
        (  # the controller <-> sub-controller kind, seen only by the type checker
            "app/panel.py",
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n"
            "    from app.controller import AppController\n",
            {"app.controller", "app.panel"},
        ),
        (  # typing.TYPE_CHECKING spelt out
            "app/panel.py",
            "import typing\nif typing.TYPE_CHECKING:\n    from app.controller import X\n",
            {"app.controller", "app.panel"},
        ),
        (  # a function-level import that dodges the cycle at import time
            "core/jobs.py",
            "def run():\n    from app.controller import AppController\n",
            {"app.context", "app.controller", "core.jobs"},
        ),
        (  # a module that imports the package importing it
            "widgets/pkg/table.py",
            "from widgets.pkg import ranking\n",
            {"widgets.pkg", "widgets.pkg.table"},
        ),
        (  # a relative import, from another layer's package
            "widgets/pkg/ranking.py",
            "from . import table\n",
            {"widgets.pkg", "widgets.pkg.table", "widgets.pkg.ranking"},
        ),
    ],
)
def test_an_added_cycle_fails(tmp_path: Path, name: str, text: str, cycle: set[str]) -> None:
    """The check fails on a cycle added to a clean tree: each kind the rule names."""
    root = _package(tmp_path, {**CLEAN, name: text})
    found = find_cycle(import_graph(root))
    assert found is not None and found[0] == found[-1]
    assert set(found) == cycle


@pytest.mark.slow
def test_every_core_module_imports_on_its_own() -> None:
    """Each module first, in a fresh state of core (sys.modules cleared of core between
    them), so a module that works only when another was imported before it fails here."""
    names = [m for m in core_modules() if not any(s in m for s in SKIPPED)]
    code = (
        "import importlib, json, sys, traceback\n"
        f"names = {names!r}\n"
        "failed = {}\n"
        "for name in names:\n"
        "    for loaded in [m for m in sys.modules if m == 'core' or m.startswith('core.')]:\n"
        "        del sys.modules[loaded]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception:\n"
        "        failed[name] = traceback.format_exc(limit=3)\n"
        "print(json.dumps(failed))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    failed = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(names) > 50
    assert failed == {}
