"""The suite's own rules: the leak check of tests/fixtures/leaks.py fails a run that
leaves a thread or a child process behind, or whose pytest process grew past the memory
limit, and passes a clean one; a file marked ``own_process`` runs in a pytest process of
its own whose outcomes, leaks and memory count as the run's."""

from __future__ import annotations

import os
import re
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


# Holds 400 MB (written, so resident) while it runs; pytest itself takes about 100 MB.
LARGE = """
def test_holds_400_mb():
    block = b"x" * (400 << 20)
    assert len(block) == 400 << 20
"""

# It writes which process ran it, that process's parent and command line.
OWN = """
import os, threading, time
from pathlib import Path
import pytest

pytestmark = pytest.mark.own_process

def test_passes():
    command = Path("/proc/self/cmdline").read_bytes().replace(b"\\0", b" ")
    Path(os.environ["PLANTED_RAN_IN"]).write_text(f"{os.getpid()} {os.getppid()} {command!r}")

def test_fails():
    assert 1 == 2, "planted failure"

def test_skips():
    pytest.skip("planted skip")

def test_leaves_a_thread():
    threading.Thread(target=time.sleep, args=(30,), name="forgotten", daemon=True).start()
"""


OWN_MARK = "import pytest\n\npytestmark = pytest.mark.own_process\n\n\n"


# The run's limit, and what would put the planted run's figures among this run's: its
# logs, and this worker's name (the planted run's one process would log as this worker).
_NOT_PASSED_ON = (
    "TAILLENS_TEST_RSS_LIMIT_MB",
    "TAILLENS_TEST_RSS_LOG",
    "TAILLENS_TEST_IMPORT_LOG",
    "PYTEST_XDIST_WORKER",
    "PYTEST_XDIST_WORKER_COUNT",
)


def _run_suite(
    tmp_path: Path, body: str, *options: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(
        'pytest_plugins = ["tests.fixtures.leaks", "tests.fixtures.own_process"]\n'
    )
    (tmp_path / "test_planted.py").write_text(body)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, str(tmp_path)],
        cwd=tmp_path,
        env={
            **{k: v for k, v in os.environ.items() if k not in _NOT_PASSED_ON},
            "PYTHONPATH": str(ROOT),
            "TAILLENS_LEAK_GRACE_S": "1",
            "TAILLENS_OWN_PROCESS": "1",  # the planted runs try the own-process mechanism
            **(env or {}),
        },
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


@pytest.mark.parametrize("options", [(), ("-n", "2")], ids=["one process", "xdist"])
def test_a_process_past_the_memory_limit_fails_the_run(tmp_path: Path, options) -> None:
    limit = {"TAILLENS_TEST_RSS_LIMIT_MB": "300"}
    clean = _run_suite(tmp_path, CLEAN, *options, env=limit)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "grew past" not in clean.stdout

    done = _run_suite(tmp_path, LARGE, *options, env=limit)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed" in done.stdout  # the test itself passes: the run fails
    who = r"gw\d" if options else "main"
    assert re.search(
        rf"FAILED: a pytest process grew past 300 MB \(TAILLENS_TEST_RSS_LIMIT_MB\): {who} \d+ MB",
        done.stdout,
    ), done.stdout


@pytest.mark.parametrize("options", [(), ("-n", "2")], ids=["one process", "xdist"])
def test_a_heavy_library_imported_at_collection_fails_the_run(tmp_path: Path, options) -> None:
    """Every worker collects every test module: one that imports matplotlib (or scipy.stats,
    pandas, torch...) at its top puts it into all of them."""
    done = _run_suite(tmp_path, "import matplotlib\n\n\ndef test_uses_it():\n    pass\n", *options)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "FAILED: collecting the tests imported a heavy library" in done.stdout
    assert "collection: matplotlib" in done.stdout
    lazy = "def test_uses_it():\n    import matplotlib\n\n    assert matplotlib\n"
    assert _run_suite(tmp_path, lazy, *options).returncode == 0


def test_a_test_that_loads_torch_outside_its_own_process_fails_the_run(tmp_path: Path) -> None:
    import importlib.util

    if importlib.util.find_spec("torch") is None:  # looked up, not imported: this process
        pytest.skip("torch is in the models extra")  # runs other tests
    body = "def test_loads_a_model():\n    import torch\n\n    assert torch.zeros(1).sum() == 0\n"
    limit = {"TAILLENS_TEST_RSS_LIMIT_MB": "4000"}
    done = _run_suite(tmp_path, body, env=limit)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "FAILED: a test loaded torch in a pytest process shared with other tests:" in (
        done.stdout
    )
    assert "test_loads_a_model loaded torch" in done.stdout
    said = _run_suite(tmp_path, body)  # no limit set: said, the run passes
    assert said.returncode == 0 and "SAID: a test loaded torch" in said.stdout, said.stdout
    marked = "import pytest\n\npytestmark = pytest.mark.own_process\n\n\n" + body
    clean = _run_suite(tmp_path, marked, env=limit)
    assert clean.returncode == 0 and "loaded torch" not in clean.stdout, clean.stdout


def test_the_test_after_an_own_process_file_in_another_folder_sets_up(tmp_path: Path) -> None:
    """A regular test, a marked file beside it (both under x/), then a test outside x/:
    x/ is torn down before that test sets up, as pytest does itself."""
    (tmp_path / "conftest.py").write_text(
        'pytest_plugins = ["tests.fixtures.leaks", "tests.fixtures.own_process"]\n'
    )
    for folder, head in (("x/a", ""), ("x/b", OWN_MARK), ("c", "")):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "__init__.py").write_text("")
        (tmp_path / folder.split("/")[0] / "__init__.py").write_text("")
        (tmp_path / folder / f"test_{folder[-1]}.py").write_text(
            head + f"def test_in_{folder[-1]}():\n    pass\n"
        )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "x/a", "x/b", "c"],
        cwd=tmp_path,
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "TAILLENS_LEAK_GRACE_S": "1",
            "TAILLENS_OWN_PROCESS": "1",
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout and "not torn down" not in done.stdout


# With xdist the file's tests stay on one worker (its group), which starts their process.
@pytest.mark.parametrize("options", [(), ("-n", "2")], ids=["one process", "xdist"])
def test_an_own_process_file_reports_its_outcomes_leaks_and_memory(tmp_path: Path, options) -> None:
    ran_in = tmp_path / "ran-in"
    done = _run_suite(tmp_path, OWN, *options, "-rA", env={"PLANTED_RAN_IN": str(ran_in)})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 2 passed, 1 skipped" in done.stdout
    assert "planted failure" in done.stdout and "planted skip" in done.stdout
    assert "test_leaves_a_thread: thread(s) still running: forgotten" in done.stdout
    # It ran in a pytest process of its own (an xdist worker is no "-m pytest"), not started
    # by this test (whose child is the run's process), and that process has ended.
    pid, parent, command = ran_in.read_text().split(" ", 2)
    assert int(parent) != os.getpid() and "-m pytest" in command
    assert not Path(f"/proc/{pid}").exists()
    who = r"(gw\d|main)/test_planted\.py"
    assert re.search(
        rf"own pytest processes \(own_process\): at most \d+ MB \({who}\)", done.stdout
    )

    large = OWN.split("def test_passes")[0] + LARGE
    limit = {"TAILLENS_TEST_RSS_LIMIT_MB": "300"}
    done = _run_suite(tmp_path, large, *options, env=limit)
    assert done.returncode == 1, done.stdout + done.stderr
    # Only the file's own process: the run's processes never held the 400 MB.
    assert re.search(
        rf"grew past 300 MB \(TAILLENS_TEST_RSS_LIMIT_MB\): {who} \d+ MB$", done.stdout, re.M
    )


# A window and a job runner in one test; the next finds neither: the widget deleted (not
# only closed) and garbage collection the interpreter's again.
WINDOW_THEN_NOTHING = """
import gc
from PySide6.QtWidgets import QApplication, QComboBox

def test_a_window_and_a_runner(qtbot):
    from app.jobrunner import QtJobRunner

    box = QComboBox()
    qtbot.addWidget(box)
    box.show()
    QtJobRunner()
    assert not gc.isenabled()  # collection moved to the UI thread's timer

def test_the_next_finds_neither():
    assert QApplication.allWidgets() == []
    assert gc.isenabled()
"""


def test_a_tests_window_is_deleted_and_collection_handed_back(tmp_path: Path) -> None:
    done = _run_suite(tmp_path, WINDOW_THEN_NOTHING, env={"QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def test_the_import_log_names_the_test_that_imported_a_library(tmp_path: Path) -> None:
    log = tmp_path / "imports.tsv"
    body = "def test_imports_it():\n    import sqlalchemy\n\n    assert sqlalchemy\n"
    done = _run_suite(tmp_path, body, env={"TAILLENS_TEST_IMPORT_LOG": str(log)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(
        r"^pid\d+\ttest\tsqlalchemy\t\d+\ttest_planted\.py::test_imports_it$",
        log.read_text(),
        re.M,
    ), log.read_text()
