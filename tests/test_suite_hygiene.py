"""The suite's own rules: the leak check of tests/fixtures/leaks.py fails a run that
leaves a thread or a child process behind, and passes a clean one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CLEAN = """
import subprocess, sys, threading

def test_clean():
    t = threading.Thread(target=lambda: None)
    t.start()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
"""

LEAKY = """
import subprocess, sys, threading, time

def test_leaves_a_thread():
    threading.Thread(target=time.sleep, args=(30,), name="forgotten", daemon=True).start()

def test_leaves_a_child():
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
"""


def _run_suite(tmp_path: Path, body: str, *options: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["tests.fixtures.leaks"]\n')
    (tmp_path / "test_planted.py").write_text(body)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, str(tmp_path)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), "TAILLENS_LEAK_GRACE_S": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_clean_run_passes_and_prints_its_figures(tmp_path: Path) -> None:
    done = _run_suite(tmp_path, CLEAN)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "suite wall time:" in done.stdout and "peak RSS per pytest process (MB): main" in (
        done.stdout
    )


# With xdist the workers find the leaks and the controller reports them.
@pytest.mark.parametrize("options", [(), ("-n", "2")], ids=["one process", "xdist"])
def test_a_leaked_thread_or_child_fails_the_run(tmp_path: Path, options) -> None:
    done = _run_suite(tmp_path, LEAKY, *options)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 passed" in done.stdout  # the tests themselves pass: the run fails
    assert "test_leaves_a_thread: thread(s) still running: forgotten" in done.stdout
    assert "test_leaves_a_child: child process still running:" in done.stdout
