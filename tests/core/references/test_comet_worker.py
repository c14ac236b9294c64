"""xCOMET in another environment's Python (``--qe-python``): the worker process, its
protocol and every way it can fail.

Each test makes a real separate environment (``python -m venv --without-pip``) and runs
``core/references/comet_worker.py`` in it, isolated (``-I``), exactly as TailLens does.
Its ``comet`` package is a TEST STUB written by the test (this machine's unbabel-comet
cannot share an environment with TailLens's transformers 5): it answers xCOMET-shaped
output, and behaves badly when its checkpoint's name says so (crash, hang, junk on
stdout, a wrong count, dying mid-batch, an endless reply).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from sqlalchemy import select

from core.jobs import CancelToken, JobFailed, JobSucceeded, run_job
from core.references.qe import CometScorer, QEError, QEInput, qe_job, qe_status
from core.references.translate import LocalTranslator, TranslateParams, translate_job
from core.store import SessionStore
from core.store.models import ReferenceDerivation
from tests.fixtures.gold_reference_session import seed_session

# Loads models (its session is translated by a tiny model in this process): in a parallel
# run its tests go to workers kept for them (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models

PARAMS = TranslateParams(num_beams=1, max_new_tokens=6, batch=4, device="cpu")

STUB_COMET = '''
"""TEST STUB of unbabel-comet (tests/core/references/test_comet_worker.py)."""
import os, sys, time
__version__ = "0.0-stub"


class _Output:
    def __init__(self, scores, spans):
        self.scores = scores
        self.metadata = type("Meta", (), {"error_spans": spans})()


class _Model:
    def __init__(self, path):
        self.path = path

    def predict(self, data, batch_size=8, gpus=0, progress_bar=False):
        name = os.path.basename(os.path.dirname(os.path.dirname(self.path)))
        print("predicting (a library's chatter on stdout)")
        if name == "hang":
            time.sleep(60)
        if name == "die":
            os._exit(3)
        if name == "native":  # a native library writing to file descriptor 1 itself
            os.write(1, b"native chatter, not JSON\\n")
        if name == "flood":  # a reply far longer than any batch's
            return _Output([0.5] * len(data), [[{"text": "x" * 5000}] for _ in data])
        scores = [min(1.0, len(d["mt"]) / 40) for d in data]
        spans = [
            [{"text": d["mt"][:2], "start": 0, "end": 2, "severity": "MAJOR"}] if s < 0.8 else []
            for d, s in zip(data, scores)
        ]
        if name == "short":
            scores = scores[:-1]
        if name == "nan":
            scores = [float("nan")] * len(data)
        return _Output(scores, spans)


def load_from_checkpoint(path):
    name = os.path.basename(os.path.dirname(os.path.dirname(path)))
    print("loading (a library's chatter on stdout)")
    if name == "crash":
        raise RuntimeError("the checkpoint is damaged")
    return _Model(path)
'''


def _checkpoint(root: Path, name: str) -> Path:
    folder = root / name
    (folder / "checkpoints").mkdir(parents=True)
    (folder / "checkpoints" / "model.ckpt").write_bytes(b"stub")
    return folder


@pytest.fixture(scope="module")
def comet_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The Python of a separate environment whose comet is the stub."""
    env = tmp_path_factory.mktemp("comet-env")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = subprocess.run(
        [str(python), "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(site) / "comet").mkdir(parents=True)
    (Path(site) / "comet" / "__init__.py").write_text(textwrap.dedent(STUB_COMET))
    return str(python)


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A separate environment without comet."""
    env = tmp_path_factory.mktemp("bare-env")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    return str(env / ("Scripts/python.exe" if os.name == "nt" else "bin/python"))


@pytest.fixture
def translated(tmp_path: Path, tiny_marian: Path) -> Path:
    session = seed_session(tmp_path / "s.taillens")
    with SessionStore.open(session) as store:
        outcome = run_job(
            translate_job(store, LocalTranslator(tiny_marian, PARAMS), "en", ["it"], PARAMS),
            CancelToken(),
            lambda progress: None,
        )
        assert isinstance(outcome, JobSucceeded)
    return session


def _derivations(session: Path) -> list[tuple[float | None, str | None, object]]:
    with SessionStore.open_read_only(session) as store, store.snapshot() as db:
        rows = db.scalars(select(ReferenceDerivation).order_by(ReferenceDerivation.id)).all()
        return [(r.qe_score, r.qe_band, r.qe_spans) for r in rows]


def test_the_worker_scores_in_its_own_environment_and_ends_with_the_job(
    translated: Path, comet_python: str, tmp_path: Path
) -> None:
    scorer = CometScorer(_checkpoint(tmp_path, "xcomet"), batch=2, python=comet_python)
    with SessionStore.open(translated) as store:
        outcome = run_job(qe_job(store, scorer, batch=2), CancelToken(), lambda progress: None)
    assert isinstance(outcome, JobSucceeded), outcome
    assert outcome.result.scored == 3
    rows = _derivations(translated)
    with SessionStore.open_read_only(translated) as store, store.snapshot() as db:
        texts = [r.mt_text for r in db.scalars(select(ReferenceDerivation).order_by("id"))]
    for (score, band, spans), text in zip(rows, texts, strict=True):
        assert score == pytest.approx(min(1.0, len(text) / 40))
        assert band is not None
        expected = (
            [] if score >= 0.8 else [{"text": text[:2], "start": 0, "end": 2, "severity": "major"}]
        )
        assert spans == {"spans": expected}
    worker = scorer._worker
    assert worker is not None and worker._process is None  # closed by the job
    assert sum(outcome.result.bands.values()) == 3


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("crash", "cannot load .*RuntimeError: the checkpoint is damaged"),
        ("die", r"ended \(exit 3\) while scoring"),
        ("short", "gave 1 scores and 2 span lists for 2 translations"),
        ("nan", "not a number"),
    ],
)
def test_a_failing_worker_fails_the_job_with_its_words_and_stores_nothing(
    translated: Path, comet_python: str, tmp_path: Path, name: str, said: str
) -> None:
    before = _derivations(translated)
    scorer = CometScorer(_checkpoint(tmp_path, name), batch=2, python=comet_python)
    with SessionStore.open(translated) as store:
        outcome = run_job(qe_job(store, scorer, batch=2), CancelToken(), lambda progress: None)
    assert isinstance(outcome, JobFailed)
    assert isinstance(outcome.error, QEError)
    assert re.search(said, str(outcome.error)), str(outcome.error)
    assert _derivations(translated) == before
    assert scorer._worker is not None and scorer._worker._process is None


def test_native_writes_to_stdout_do_not_reach_the_protocol(
    comet_python: str, tmp_path: Path
) -> None:
    scorer = CometScorer(_checkpoint(tmp_path, "native"), python=comet_python)
    try:
        [result] = scorer.score([QEInput("Paris is in France.", "Parigi è in Francia.")])
        assert 0.0 <= result.score <= 1.0
    finally:
        scorer.close()


def test_an_endless_reply_is_not_read_to_its_end(
    comet_python: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.references import qe

    monkeypatch.setattr(qe, "MAX_REPLY_CHARS", 1000)
    scorer = CometScorer(_checkpoint(tmp_path, "flood"), python=comet_python)
    with pytest.raises(QEError, match="answered a line over 1,000 characters while scoring"):
        scorer.score([QEInput("Paris is in France.", "Parigi è in Francia.")])
    assert scorer._worker is not None and scorer._worker._process is None


@pytest.mark.slow
def test_a_hanging_worker_is_stopped_at_its_deadline(comet_python: str, tmp_path: Path) -> None:
    scorer = CometScorer(_checkpoint(tmp_path, "hang"), batch=2, python=comet_python, timeout_s=3)
    # The message comes only from the deadline's path: a worker that never answers ends
    # there, and its process is gone (no other way out of a hang).
    with pytest.raises(QEError, match="gave no answer in 3 s while scoring 1 translations"):
        scorer.score([QEInput("Paris is in France.", "Parigi è in Francia.")])
    assert scorer._worker is not None and scorer._worker._process is None


def test_an_environment_without_comet_says_so(bare_python: str, tmp_path: Path) -> None:
    scorer = CometScorer(_checkpoint(tmp_path, "xcomet"), python=bare_python)
    with pytest.raises(QEError, match="unbabel-comet cannot be imported here"):
        scorer.score([QEInput("a", "b")])


def test_a_python_that_is_not_there_is_a_note_not_a_crash(tmp_path: Path) -> None:
    checkpoint = _checkpoint(tmp_path, "xcomet")
    note = qe_status(str(checkpoint), str(tmp_path / "no-python"))
    assert note is not None and "is not a Python interpreter" in note
    assert "post-editing" in note
    with pytest.raises(QEError, match="is not a Python interpreter"):
        CometScorer(checkpoint, python=str(tmp_path / "no-python"))


def test_without_comet_here_the_note_names_the_other_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from core.references import qe

    monkeypatch.setattr(qe, "comet_installed", lambda: False)
    note = qe_status(str(_checkpoint(tmp_path, "xcomet")))
    assert note is not None and "--qe-python" in note and "transformers<5" in note


def test_the_cli_scores_through_another_python_and_says_a_bad_one(
    translated: Path, comet_python: str, tmp_path: Path
) -> None:
    from tests.cli_process import taillens

    checkpoint = _checkpoint(tmp_path, "xcomet")
    common = ("references", "qe", "--session", translated, "--qe-model", checkpoint)
    done = taillens(*common, "--qe-python", comet_python, "--batch", "2", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "3 translations scored" in done.stdout
    assert all(score is not None for score, _band, _spans in _derivations(translated))
    crashed = taillens(
        "references", "qe", "--session", translated, "--qe-model",
        _checkpoint(tmp_path, "crash"), "--qe-python", comet_python, "--quiet",
    )  # fmt: skip
    assert crashed.returncode != 0
    assert "the checkpoint is damaged" in crashed.stderr
    assert "Traceback" not in crashed.stderr
