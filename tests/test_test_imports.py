"""Tests import no other test module: what tests share lives in ``tests/fixtures/``.

A test module, a conftest, a fixtures module (and a benchmark or packaging script) imports,
from the ``tests`` package, only ``tests.fixtures`` and its modules, ``tests.cli_process``
and ``tests.shared_data``. Importing a test module ties one test file to another's
internals (and loads that module, its fixtures and its module-level work, wherever it is
imported); importing a conftest's helper hides that the helper is shared. The scan reads
every file with ``ast``: imports at module level and inside functions, relative imports,
``pytest_plugins`` and ``importlib.import_module``. The only modules under ``tests/``
besides tests, conftests and packages are in ``tests/fixtures/`` and the two allowed helpers.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = ("tests.fixtures", "tests.cli_process", "tests.shared_data")
SCANNED = ("tests", "benchmarks", "packaging")  # every folder whose code imports from tests


def _module(root: Path, path: Path) -> tuple[str, str]:
    """A file's dotted module name and the package its relative imports start from."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        name = ".".join(parts[:-1])
        return name, name
    return ".".join(parts), ".".join(parts[:-1])


def _named_modules(tree: ast.AST, package: str) -> Iterator[tuple[int, str]]:
    """(line, module) for every module the file imports or asks pytest or importlib to."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            if base == "tests":  # ``from tests import x``: x is a module of the package
                for alias in node.names:
                    yield node.lineno, f"tests.{alias.name}"
            elif node.level and not node.module:  # ``from . import x``
                for alias in node.names:
                    yield node.lineno, f"{base}.{alias.name}"
            else:
                yield node.lineno, base
        elif isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytest_plugins"
            for target in node.targets
        ):
            values = (
                node.value.elts if isinstance(node.value, ast.List | ast.Tuple) else [node.value]
            )
            for value in values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    yield node.lineno, value.value
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (
                    isinstance(node.func, ast.Name)
                    and node.func.id in {"import_module", "__import__"}
                )
            )
        ):
            yield node.lineno, node.args[0].value


def _allowed(module: str) -> bool:
    if module != "tests" and not module.startswith("tests."):
        return True  # not the tests package: another rule's business
    return any(module == name or module.startswith(f"{name}.") for name in ALLOWED)


@functools.cache
def _imports(root: Path) -> tuple[tuple[Path, int, str], ...]:
    """(file, line, module) for every module each scanned file names (parsed once per tree)."""
    out = []
    for path in sorted(p for folder in SCANNED for p in (root / folder).rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "tests" not in text and "from ." not in text:
            continue  # names no module of the tests package (parsing is the slow part)
        tree = ast.parse(text, filename=str(path))
        out += [(path, line, name) for line, name in _named_modules(tree, _module(root, path)[1])]
    return tuple(out)


def bad_imports(root: Path = ROOT) -> list[str]:
    """Each import of a test module or conftest (or of the tests package beyond the allowed
    modules), as ``file:line imports module``."""
    return [
        f"{path.relative_to(root).as_posix()}:{line} imports {module}"
        for path, line, module in _imports(root)
        if not _allowed(module)
    ]


def stray_helpers(root: Path = ROOT) -> list[str]:
    """Modules under tests/ that are neither a test, a conftest, a package, a fixtures
    module nor one of the two allowed helpers."""
    stray = []
    for path in sorted((root / "tests").rglob("*.py")):
        name, _package = _module(root, path)
        if path.name.startswith("test_") or path.name in {"conftest.py", "__init__.py"}:
            continue
        if not _allowed(name):
            stray.append(path.relative_to(root).as_posix())
    return stray


def test_no_module_imports_a_test_module_or_a_conftest() -> None:
    found = bad_imports()
    assert found == [], (
        "move what is shared into a tests/fixtures/ module named for what it holds:\n"
        + "\n".join(found)
    )


def test_shared_helpers_live_in_tests_fixtures() -> None:
    stray = stray_helpers()
    assert stray == [], "move these into tests/fixtures/: " + ", ".join(stray)


def test_the_scan_reads_the_suite() -> None:
    """The scan sees the imports the suite has (so an empty answer is not a blind one)."""
    modules = {module for _path, _line, module in _imports(ROOT)}
    assert {"tests.fixtures.tiny_models", "tests.fixtures.hub_server"} <= modules  # plugins
    assert "tests.fixtures.wdv_records" in modules  # imported inside a function
    assert "tests.fixtures.report_session" in modules  # ``from tests.fixtures import x``
    assert "tests.shared_data" in modules and "tests.cli_process" in modules


CLEAN = {
    "tests/__init__.py": "",
    "tests/shared_data.py": "",
    "tests/cli_process.py": "",
    "tests/conftest.py": 'pytest_plugins = ["tests.fixtures.helper"]\n',
    "tests/fixtures/__init__.py": "",
    "tests/fixtures/helper.py": "from .other import y\nfrom tests.shared_data import DATA\n",
    "tests/fixtures/other.py": "import json\n",
    "tests/core/__init__.py": "",
    "tests/core/conftest.py": "from tests.fixtures.helper import fixture  # noqa: F401\n",
    "tests/core/test_a.py": (
        "import tests.cli_process\n"
        "from tests import shared_data\n"
        "from tests.fixtures import helper\n"
        "from tests.fixtures.helper import y\n"
        "from core.store import SessionStore\n"
        "def test_x():\n"
        "    from tests.fixtures.other import z\n"
    ),
    "tests/core/test_b.py": "X = 1\n",
    "benchmarks/run.py": "from tests.fixtures.helper import y\nfrom tests.shared_data import D\n",
}


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_a_clean_tree_passes(tmp_path: Path) -> None:
    root = _tree(tmp_path, CLEAN)
    assert bad_imports(root) == [] and stray_helpers(root) == []


@pytest.mark.parametrize(
    ("name", "text", "finding"),
    [
        (  # a test module's constant, at module level
            "tests/core/test_a.py",
            "from tests.core.test_b import X\n",
            "tests/core/test_a.py:1 imports tests.core.test_b",
        ),
        (  # inside a test function
            "tests/core/test_a.py",
            "import json\ndef test_x():\n    from tests.core.test_b import X\n",
            "tests/core/test_a.py:3 imports tests.core.test_b",
        ),
        (  # a conftest's helper
            "tests/core/test_a.py",
            "from tests.core.conftest import helper\n",
            "tests/core/test_a.py:1 imports tests.core.conftest",
        ),
        (  # ``import`` spelt out
            "tests/core/test_a.py",
            "import tests.core.test_b\n",
            "tests/core/test_a.py:1 imports tests.core.test_b",
        ),
        (  # relative, to a module
            "tests/core/test_a.py",
            "from .test_b import X\n",
            "tests/core/test_a.py:1 imports tests.core.test_b",
        ),
        (  # relative, the conftest as a name
            "tests/core/test_a.py",
            "from . import conftest\n",
            "tests/core/test_a.py:1 imports tests.core.conftest",
        ),
        (  # the root conftest through the package
            "tests/core/test_a.py",
            "from tests import conftest\n",
            "tests/core/test_a.py:1 imports tests.conftest",
        ),
        (  # a test package
            "tests/core/test_a.py",
            "from tests.core import test_b\n",
            "tests/core/test_a.py:1 imports tests.core",
        ),
        (  # a conftest registering a test module as a plugin
            "tests/conftest.py",
            'pytest_plugins = ("tests.fixtures.helper", "tests.core.test_b")\n',
            "tests/conftest.py:1 imports tests.core.test_b",
        ),
        (  # importlib
            "tests/core/conftest.py",
            'import importlib\nMOD = importlib.import_module("tests.core.test_b")\n',
            "tests/core/conftest.py:2 imports tests.core.test_b",
        ),
        (  # a fixtures module leaning on a test module
            "tests/fixtures/helper.py",
            "from tests.core.test_b import X\n",
            "tests/fixtures/helper.py:1 imports tests.core.test_b",
        ),
        (  # a benchmark
            "benchmarks/run.py",
            "from tests.core.conftest import helper\n",
            "benchmarks/run.py:1 imports tests.core.conftest",
        ),
    ],
)
def test_a_planted_bad_import_is_caught(tmp_path: Path, name: str, text: str, finding: str) -> None:
    root = _tree(tmp_path, {**CLEAN, name: text})
    assert bad_imports(root) == [finding]


def test_a_helper_module_beside_the_tests_is_caught(tmp_path: Path) -> None:
    root = _tree(tmp_path, {**CLEAN, "tests/core/sessions.py": "X = 1\n"})
    assert stray_helpers(root) == ["tests/core/sessions.py"]
