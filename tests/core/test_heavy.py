"""Heavy libraries are imported under one lock (core/heavy.py): the bias report
and a tokenizer load started together in fresh interpreters, many times, never fail.

The defect: the report job imported scipy while the prompt-preview job imported torch,
and failed with "partially initialized module 'torch' has no attribute 'Tensor'" (scipy's
array-API dispatch looks up ``sys.modules["torch"].Tensor`` at import and on each call).
Each run below is a new interpreter, so every import is cold, and pins one interleaving
instead of hoping for it: one job waits until the other is inside a given module's
import, then starts.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core import heavy

ROOT = Path(__file__).resolve().parents[2]

# The two jobs of one run, in one fresh interpreter. "scipy-first": the report starts
# and the tokenizer load waits until the report's scipy import reached TRIGGER (so torch
# is half imported when scipy.stats finishes its own). "torch-first": the report
# imports scipy, the tokenizer load starts, and the report's statistics wait until
# torch's import reached TRIGGER (so they run while torch is half imported).
CHILD = r"""
import sys, threading, time

scenario, trigger, model = sys.argv[1:4]
errors = []
scipy_ready = threading.Event()


def wait_for(module):
    deadline = time.monotonic() + 60
    while module not in sys.modules and time.monotonic() < deadline:
        time.sleep(0.0005)


def report():
    try:
        if scenario == "scipy-first":
            # The report's own statistics no longer import scipy.stats; what still does
            # (core.agreement.coefficients' fallback, core.tiers.likelihood) takes the lock as here.
            from core import heavy

            with heavy.lock():
                import scipy.stats  # noqa: F401
        import numpy as np

        from core.agreement.coefficients import coefficients
        from core.report.statistics import mann_whitney_protocol, rank_biserial

        if scenario == "torch-first":
            rank_biserial([1.0, 2.0, 3.0], [2.0, 5.0])  # scipy.stats imported
            scipy_ready.set()
            wait_for(trigger)
        mann_whitney_protocol(np.arange(30.0), np.arange(5.0, 40.0))
        coefficients([1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 1.0, 4.0, 3.0, 5.0])
    except BaseException as exc:
        errors.append(f"report: {exc!r}")
    finally:
        scipy_ready.set()


def tokenizer():
    try:
        if scenario == "scipy-first":
            import transformers  # as an earlier job left it (it imports no torch)

            wait_for(trigger)
        else:
            scipy_ready.wait(60)
        from core.local_models.loader import load_tokenizer

        load_tokenizer(model)
    except BaseException as exc:
        errors.append(f"tokenizer: {exc!r}")


threads = [threading.Thread(target=report), threading.Thread(target=tokenizer)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join(150)
print("RESULT", "ok" if not errors else " | ".join(errors))
"""

# On the code before core/heavy.py every torch-first run failed with the message above;
# the scipy-first order passed there too (the check of scipy.stats' import came before
# torch's), and is kept for the lock's other direction.
RUNS = (
    ("torch-first", "torch"),
    ("torch-first", "torch._utils"),
    ("torch-first", "torch.version"),
    ("scipy-first", "scipy.stats._distribution_infrastructure"),
)


def start_child(scenario: str, trigger: str, model: Path) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, scenario, trigger, str(model)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def outcome(child: subprocess.Popen[str]) -> str:
    try:
        out, err = child.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    if child.returncode != 0 or not lines:
        return f"exit {child.returncode}: {err[-800:]}"
    return lines[-1].removeprefix("RESULT ")


@pytest.mark.slow
def test_the_report_and_a_tokenizer_load_started_together_never_fail(
    tiny_causal_lm: Path,
) -> None:
    children = {run: start_child(*run, tiny_causal_lm) for run in RUNS}  # at once
    outcomes = {
        f"{scenario} at {trigger}": outcome(c) for (scenario, trigger), c in children.items()
    }
    assert {run: text for run, text in outcomes.items() if text != "ok"} == {}


def test_the_lock_is_one_per_process_and_reentrant() -> None:
    """A heavy import inside another (transformers imports torch) takes the lock again
    in the same thread; another thread waits until the outer import is done."""
    order: list[str] = []
    inside = threading.Event()

    def other() -> None:
        inside.wait(10)
        with heavy.lock():
            order.append("other")

    thread = threading.Thread(target=other)
    thread.start()
    with heavy.lock(), heavy.lock():
        inside.set()
        thread.join(0.2)  # it cannot get in while this thread holds the lock
        order.append("outer")
    thread.join(10)
    assert order == ["outer", "other"]


# In a fresh interpreter: ROUGE scored through the metric, then what it imported.
ROUGE_THEN_MODULES = r"""
import sys
from core.metrics.base import ScoringItem
from core.metrics.reference import Rouge

value = Rouge().sentence_scores([ScoringItem("the cat sat", "en", ("the cat sat down",))])
print(round(value[0].value, 4), "nltk" in sys.modules, "sklearn" in sys.modules,
      "pandas" in sys.modules)
import sklearn.feature_extraction  # scikit-learn itself still imports afterwards
print(sklearn.feature_extraction.__name__)
"""


def test_rouge_imports_nltk_without_scikit_learn() -> None:
    """nltk's own __init__ imports scikit-learn (and so pandas: about 90 MB) for a
    classifier wrapper no metric uses: the metric imports nltk without it."""
    from tests.cli_process import python_script

    done = python_script(ROUGE_THEN_MODULES)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "85.7143",
        "True",
        "False",
        "False",
        "sklearn.feature_extraction",
    ]
