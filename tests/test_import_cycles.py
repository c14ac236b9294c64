"""No import cycle in core (issue 12): the graph of core's imports, read with ``ast``, has
no cycle, and every core module imports on its own in a fresh interpreter.

The graph counts imports at module level and inside functions alike (a function-level
import is a cycle waiting for the first caller), and importing ``core.a.b`` counts as
importing the package ``core.a`` too (its ``__init__`` runs first). Imports under
``if TYPE_CHECKING:`` are left out: they never run.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIPPED = (".migrations.versions.", ".migrations.env")  # run by alembic, not imported


def core_modules(root: Path = ROOT) -> dict[str, Path]:
    modules = {}
    for path in sorted((root / "core").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported_names(tree: ast.AST, package: str) -> list[str]:
    """Every module name an import statement in ``tree`` may load (TYPE_CHECKING left out)."""
    names: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
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


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """module -> the core modules it imports (and the packages those load first)."""
    modules = core_modules(root)

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for name in _imported_names(ast.parse(path.read_text(encoding="utf-8")), package):
            target = resolve(name) if name.split(".")[0] == "core" else None
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


def test_the_graph_reads_module_and_function_level_imports() -> None:
    graph = import_graph()
    assert "core.report.data" in graph["core.report.compare"]  # module level
    assert "core.annotation" in graph["core.report.compare"]  # inside a function
    assert "core.store" in graph["core.annotation.ratings"]  # core.store.models loads core.store
    assert "core.formats.webnlg.entries" not in graph["core.formats.rerun"]  # TYPE_CHECKING only


def test_find_cycle_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_core_has_no_import_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle in core: " + " -> ".join(cycle or [])


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
