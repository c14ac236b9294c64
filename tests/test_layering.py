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
