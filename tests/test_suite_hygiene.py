"""The suite's own rules: the leak check of tests/fixtures/leaks.py fails a run that
leaves a thread, a child process or a window behind, or whose pytest process grew past the
memory limit, and passes a clean one; in a parallel run a worker past its memory bound is
replaced, and a worker that loaded models runs no other test
(tests/fixtures/worker_memory.py)."""

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

# Each test appends the worker that ran it and its own file's name.
RECORDS = """
import os
from pathlib import Path

def _record():
    with open(os.environ["PLANTED_RAN_IN"], "a") as log:
        log.write(os.environ["PYTEST_XDIST_WORKER"] + " " + Path(__file__).name + "\\n")

"""


def _tests(count: int, prefix: str = "") -> str:
    """``count`` planted tests, each recording where it ran."""
    return "".join(f"def test_{prefix}{n}():\n    _record()\n\n\n" for n in range(count))


MODELS_MARK = "import pytest\n\npytestmark = pytest.mark.loads_models\n\n\n"
ENCODERS_MARK = 'import pytest\n\npytestmark = pytest.mark.loads_models("encoders")\n\n\n'


# The run's limit, and what would put the planted run's figures among this run's: its
# logs, and this worker's name (the planted run's one process would log as this worker).
_NOT_PASSED_ON = (
    "TAILLENS_TEST_RSS_LIMIT_MB",
    "TAILLENS_TEST_RSS_LOG",
    "TAILLENS_TEST_IMPORT_LOG",
    "TAILLENS_TEST_ORDINARY_MB",
    "TAILLENS_TEST_FRESH_MB",
    "TAILLENS_TEST_MODELS_MB",
    "TAILLENS_TEST_WITHIN_FILE_MB",
    "PYTEST_XDIST_WORKER",
    "PYTEST_XDIST_WORKER_COUNT",
)


def _run_suite(
    tmp_path: Path, body: str, *options: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(
        'pytest_plugins = ["tests.fixtures.leaks", "tests.fixtures.worker_memory"]\n'
    )
    (tmp_path / "test_planted.py").write_text(body)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, str(tmp_path)],
        cwd=tmp_path,
        env={
            **{k: v for k, v in os.environ.items() if k not in _NOT_PASSED_ON},
            "PYTHONPATH": str(ROOT),
            "TAILLENS_LEAK_GRACE_S": "1",
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


def test_a_test_that_loads_torch_in_an_unmarked_file_fails_the_run(tmp_path: Path) -> None:
    import importlib.util

    if importlib.util.find_spec("torch") is None:  # looked up, not imported: this process
        pytest.skip("torch is in the models extra")  # runs other tests
    body = "def test_loads_a_model():\n    import torch\n\n    assert torch.zeros(1).sum() == 0\n"
    done = _run_suite(tmp_path, body)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "FAILED: a test loaded models in a file not marked for them:" in done.stdout
    assert "test_loads_a_model loaded torch" in done.stdout
    clean = _run_suite(tmp_path, MODELS_MARK + body)
    assert clean.returncode == 0 and "loaded torch" not in clean.stdout, clean.stdout


@pytest.mark.parametrize("library", ["sentence_transformers", "bert_score"])
def test_a_sentence_encoder_in_a_file_not_marked_for_encoders_fails_the_run(
    tmp_path: Path, library: str
) -> None:
    """Such a file could go to a model worker that has loaded torch already, which the
    encoder's libraries then take past the limit. What is checked is the module's name
    among the loaded ones, so a stand-in module named like it does (and costs nothing)."""
    body = (
        "import sys, types\n\n\ndef test_loads_an_encoder():\n"
        f"    sys.modules[{library!r}] = types.ModuleType({library!r})\n"
    )
    for mark in ("", MODELS_MARK):
        done = _run_suite(tmp_path, mark + body)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "FAILED: a test loaded models in a file not marked for them:" in done.stdout
        named = f"test_loads_an_encoder loaded {library}, but its file is not marked"
        assert f'{named} loads_models("encoders")' in done.stdout, done.stdout
    clean = _run_suite(tmp_path, ENCODERS_MARK + body)
    assert clean.returncode == 0 and "not marked" not in clean.stdout, clean.stdout


def _workers(log: Path) -> dict[str, list[str]]:
    """Each worker's files, one per test, in the order it ran them."""
    ran: dict[str, list[str]] = {}
    for line in log.read_text().splitlines():
        worker, file = line.split()
        ran.setdefault(worker, []).append(file)
    return ran


def test_a_worker_past_its_bound_is_replaced_and_every_test_runs(tmp_path: Path) -> None:
    """With a bound below any process's size, each worker is told to stop after its first
    test and runs only the tests it already held (``AHEAD``): fresh workers take over."""
    from tests.fixtures.worker_memory import AHEAD

    log = tmp_path / "ran-in"
    body = RECORDS + _tests(10)
    done = _run_suite(
        tmp_path,
        body,
        "-n",
        "2",
        env={"PLANTED_RAN_IN": str(log), "TAILLENS_TEST_ORDINARY_MB": "1"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "10 passed" in done.stdout
    ran = _workers(log)
    assert sum(len(files) for files in ran.values()) == 10
    assert len(ran) >= 10 // (AHEAD + 1) and max(len(f) for f in ran.values()) <= AHEAD + 1
    # Every worker's peak is in the summary, the replacements' too.
    figures = re.search(r"peak RSS per pytest process \(MB\): (.*)$", done.stdout, re.M)
    assert figures and all(f"{worker} " in figures.group(1) for worker in ran), done.stdout


def test_an_encoder_file_starts_only_on_a_worker_that_ran_nothing(tmp_path: Path) -> None:
    """With the size of a fresh model worker set below any process's, an encoder file
    goes only to a worker that has run no test: each is the first file of its worker, and
    a worker runs one at most, also where the first is shorter than the tests a worker is
    sent ahead, and nothing after it."""
    log = tmp_path / "ran-in"
    for name, count in (("test_encoders_a.py", 1), ("test_encoders_b.py", 2)):
        (tmp_path / name).write_text(ENCODERS_MARK + RECORDS + _tests(count))
    (tmp_path / "test_encoders_c.py").write_text(ENCODERS_MARK + RECORDS + _tests(4))
    (tmp_path / "test_models.py").write_text(MODELS_MARK + RECORDS + _tests(4))
    done = _run_suite(
        tmp_path,
        RECORDS + _tests(6),
        "-n",
        "2",
        env={"PLANTED_RAN_IN": str(log), "TAILLENS_TEST_FRESH_MB": "1"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "17 passed" in done.stdout
    ran = _workers(log)
    for files in ran.values():
        if files[0].startswith("test_encoders_"):
            assert set(files) == {files[0]}, ran
        else:
            assert not any(file.startswith("test_encoders_") for file in files), ran
    assert sorted(f for files in ran.values() for f in files if "encoders" in f) == [
        "test_encoders_a.py",
        *["test_encoders_b.py"] * 2,
        *["test_encoders_c.py"] * 4,
    ]


@pytest.mark.parametrize("within_file_mb", ["100000", "1"], ids=["whole", "split"])
def test_a_model_worker_past_its_bound_ends_its_file_first(
    tmp_path: Path, within_file_mb: str
) -> None:
    """Past the model workers' bound a worker finishes the file it is in (a file split
    over two workers builds its models twice) and takes no other; past the bound within a
    file it stops at once."""
    from tests.fixtures.worker_memory import AHEAD

    log = tmp_path / "ran-in"
    # Fewer tests than a file needs to be shared with an idle worker at the end.
    count = 2 * (AHEAD + 1) - 1
    for name in ("test_models_a.py", "test_models_b.py"):
        (tmp_path / name).write_text(MODELS_MARK + RECORDS + _tests(count))
    done = _run_suite(
        tmp_path,
        RECORDS + _tests(2),
        "-n",
        "2",
        env={
            "PLANTED_RAN_IN": str(log),
            "TAILLENS_TEST_MODELS_MB": "1",
            "TAILLENS_TEST_WITHIN_FILE_MB": within_file_mb,
        },
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{2 * count + 2} passed" in done.stdout
    ran = {w: files for w, files in _workers(log).items() if "test_planted.py" not in files}
    if within_file_mb == "1":
        assert all(len(files) <= AHEAD + 1 for files in ran.values()), ran
        assert len(ran) >= 4, ran
    else:
        assert sorted(ran.values()) == [
            ["test_models_a.py"] * count,
            ["test_models_b.py"] * count,
        ], ran


def test_a_worker_that_loaded_models_runs_no_other_test(tmp_path: Path) -> None:
    """Model files go to a model worker, which collects only them; once a worker ran one,
    it runs nothing else, and ends when none is left while others are."""
    log = tmp_path / "ran-in"
    (tmp_path / "test_models.py").write_text(MODELS_MARK + RECORDS + _tests(4, "m"))
    imported_by = tmp_path / "imported-by"
    body = (
        RECORDS
        + f"with open({str(imported_by)!r}, 'a') as imported:\n"
        + "    imported.write(os.environ['PYTEST_XDIST_WORKER'] + '\\n')\n\n\n"
        + _tests(12)
    )
    done = _run_suite(tmp_path, body, "-n", "2", env={"PLANTED_RAN_IN": str(log)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "16 passed" in done.stdout
    ran = _workers(log)
    laden = {worker: files for worker, files in ran.items() if "test_models.py" in files}
    assert laden, ran
    for files in laden.values():
        first = files.index("test_models.py")
        assert set(files[first:]) == {"test_models.py"}, ran
    # A model worker collects only the model files: it never imported the other one.
    assert not set(laden) & set(imported_by.read_text().split()), ran


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


# A window whose model has no Qt parent, and a connection from that model back to the
# window: Qt holds the connection, so the window's Python side outlives it (the leak the
# check names); with the window as the model's parent, both go together.
WINDOW_HELD_BY_A_PARENTLESS_MODEL = """
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QMainWindow, QTableView
import pytest


@pytest.mark.parametrize("parented", [False, True], ids=["parentless", "parented"])
def test_a_window(qtbot, parented):
    from app.jobrunner import QtJobRunner

    window = QMainWindow()
    window.model = QStandardItemModel(0, 1, window if parented else None)
    window.model.modelReset.connect(lambda: window.setWindowTitle("reset"))
    view = QTableView(window)
    view.setModel(window.model)
    window.setCentralWidget(view)
    qtbot.addWidget(window)
    QtJobRunner()
"""


def test_a_deleted_window_still_held_is_named(tmp_path: Path) -> None:
    done = _run_suite(
        tmp_path, WINDOW_HELD_BY_A_PARENTLESS_MODEL, env={"QT_QPA_PLATFORM": "offscreen"}
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    assert "SAID: 1 test(s) left a deleted main window held:" in done.stdout
    assert (
        "test_a_window[parentless]: 1 deleted main window(s) still held after a full "
        "collection (QMainWindow)"
    ) in done.stdout
