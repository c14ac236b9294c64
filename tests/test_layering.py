"""The layering rules of ARCHITECTURE.md, checked in fresh interpreters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QT_MODULES = ("PySide6", "PyQt5", "PyQt6", "PySide2", "shiboken6", "pyqtgraph")
HEAVY_MODULES = ("torch", "transformers", "sentence_transformers", "bert_score")


def _fresh_python(code: str) -> dict:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_core_imports_no_qt() -> None:
    found = _fresh_python(
        "import importlib, json, pkgutil, sys, core\n"
        "names = [m.name for m in pkgutil.walk_packages(core.__path__, 'core.')]\n"
        "for n in names:\n"
        "    if '.migrations.versions.' in n or n.endswith('.migrations.env'):\n"
        "        continue  # run by alembic, not importable on their own\n"
        "    importlib.import_module(n)\n"
        f"qt = sorted(m for m in sys.modules if m.split('.')[0] in {QT_MODULES!r})\n"
        "print(json.dumps({'modules': names, 'qt': qt}))\n"
    )
    assert len(found["modules"]) >= 5, found["modules"]
    assert found["qt"] == []


def test_opening_the_window_imports_no_model_library() -> None:
    found = _fresh_python(
        "import json, sys\n"
        "from app.gui import get_application, build_window\n"
        "app = get_application()\n"
        "window, controller = build_window()\n"
        "window.show(); app.processEvents()\n"
        f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY_MODULES!r})\n"
        "print(json.dumps({'heavy': heavy, 'shown': window.isVisible()}))\n"
    )
    assert found["shown"] is True
    assert found["heavy"] == []


def test_widgets_never_import_the_database_layer() -> None:
    """widgets/ shows state; opening databases and sockets is core's job, called by app/."""
    offenders = []
    for path in (ROOT / "widgets").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for banned in (
            "import sqlite3",
            "import sqlalchemy",
            "from sqlalchemy",
            "import socket",
            "from core.store",
            "import requests",
            "SPARQLWrapper",
        ):
            if banned in text:
                offenders.append(f"{path.relative_to(ROOT)}: {banned}")
    assert offenders == []


def _unlocked_heavy_imports(source: str) -> list[tuple[int, str]]:
    """Imports of a ``core.heavy.HEAVY`` library not inside ``with heavy.lock():`` (or an
    ``if TYPE_CHECKING:`` block); a function defined inside the block runs later, so its
    body is outside it."""
    import ast

    from core.heavy import HEAVY

    def is_lock(item: ast.withitem) -> bool:
        call = item.context_expr
        return (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "lock"
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id == "heavy"
        )

    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, locked: bool) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom) and not locked:
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                names = [node.module or ""] if node.level == 0 else []
            for name in names:
                if name.split(".")[0] in HEAVY:
                    found.append((node.lineno, name))
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child, locked)
            return
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                visit(child, False)
            elif isinstance(node, ast.With | ast.AsyncWith) and any(map(is_lock, node.items)):
                visit(child, True)
            else:
                visit(child, locked)

    visit(ast.parse(source), False)
    return found


def test_heavy_libraries_are_imported_under_the_one_lock() -> None:
    """torch, transformers, scipy, ... are imported only inside ``with heavy.lock():``
    (core/heavy.py): two jobs importing them at once broke each other."""
    offenders = []
    for package in ("core", "app", "widgets"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for line, name in _unlocked_heavy_imports(path.read_text(encoding="utf-8")):
                offenders.append(f"{path.relative_to(ROOT)}:{line}: import {name}")
    assert offenders == [], "import these inside `with heavy.lock():`\n" + "\n".join(offenders)


def test_the_heavy_import_scan_sees_what_it_is_for() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    import torch\n"  # fine: never runs
        "def a():\n"
        "    import torch\n"  # 5: bare
        "def b():\n"
        "    with heavy.lock():\n"
        "        import torch\n"
        "        from scipy.stats import rankdata\n"
        "        def later():\n"
        "            from transformers import AutoTokenizer\n"  # 11: runs outside the lock
        "def c():\n"
        "    with threading.Lock():\n"
        "        import sentence_transformers.util\n"  # 14: another lock
        "    import numpy, json\n"
        "from scipy import stats\n"  # 16: module level
    )
    assert _unlocked_heavy_imports(source) == [
        (5, "torch"),
        (11, "transformers"),
        (14, "sentence_transformers.util"),
        (16, "scipy"),
    ]


_ENGINE_CALLS = ("connect", "begin", "raw_connection")


def _session_opened_outside_store(source: str) -> list[tuple[int, str]]:
    """Calls that open a session's database without ``core.store``'s reads and writes:
    ``<…>.engine.connect()`` / ``.begin()`` / ``.raw_connection()``, ``Session(<…>.engine)``,
    ``create_engine(…)`` and ``sqlite3.connect(…)``."""
    import ast

    def is_engine(node: ast.expr) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "engine") or (
            isinstance(node, ast.Name) and node.id == "engine"
        )

    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        opens = (
            (
                isinstance(func, ast.Attribute)
                and func.attr in _ENGINE_CALLS
                and is_engine(func.value)
            )
            or (
                isinstance(func, ast.Attribute)
                and func.attr == "connect"
                and isinstance(func.value, ast.Name)
                and func.value.id == "sqlite3"
            )
            or (isinstance(func, ast.Name) and func.id == "create_engine")
            or (
                isinstance(func, ast.Name)
                and func.id == "Session"
                and any(is_engine(arg) for arg in [*node.args, *(k.value for k in node.keywords)])
            )
        )
        if opens:
            found.append((node.lineno, ast.unparse(func)))
    return sorted(found)


def test_the_session_is_read_and_written_only_through_core_store() -> None:
    """One read path: ``core.store``'s snapshots and units of work hide damaged rows
    (core/store/integrity.py); a connection opened around them would read those rows.
    Files from elsewhere (packs) are opened through ``core.store.fileinfo``'s bounded
    connections."""
    offenders = []
    for package in ("core", "app", "widgets"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.is_relative_to(ROOT / "core" / "store"):
                continue
            for line, call in _session_opened_outside_store(path.read_text(encoding="utf-8")):
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {call}(…)")
    assert offenders == [], "read through store.snapshot(), write through its edits\n" + (
        "\n".join(offenders)
    )


def test_the_session_opening_scan_sees_what_it_is_for() -> None:
    source = (
        "with store.engine.connect() as conn:\n"  # 1
        "    pass\n"
        "with self.store.engine.begin() as conn:\n"  # 3
        "    pass\n"
        "conn = sqlite3.connect(path)\n"  # 5
        "db = Session(store.engine)\n"  # 6
        "e = create_engine(url)\n"  # 7
        "raw = engine.raw_connection()\n"  # 8
        "with store.snapshot() as db:\n"
        "    db.connection()\n"
        "socket.connect(address)\n"
        "Session(bind=store.engine)\n"  # 12
    )
    assert [line for line, _call in _session_opened_outside_store(source)] == [
        1,
        3,
        5,
        6,
        7,
        8,
        12,
    ]
