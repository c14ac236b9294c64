"""Verbalising through a real OpenAI-compatible server: ``transformers serve`` on 127.0.0.1
with a tiny random model, reached by the code path users take for vLLM
(``open_verbaliser("http://…")`` → :class:`OpenAIVerbaliser` → the verbalise job).

The server is a separate process: a free port, a start-up wait with a time limit (its
log is shown if it dies or never answers), killed at the end. The test is skipped only
when the serving extras (fastapi, uvicorn, openai, accelerate: the ``dev`` extra) are
not installed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select

from core.jobs import JobSucceeded, run_job
from core.metrics.scoring import ScoringRequest, score_job
from core.store import SessionStore
from core.store.models import ModelRun, Score, Verbalisation
from core.verbalise import GenerationParams, open_verbaliser
from core.verbalise.job import verbalise_job
from core.verbalise.openai import OpenAIVerbaliser
from core.verbalise.prompts import parse_reply
from tests.fixtures.verbalise_units import add_units

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = [pytest.mark.slow, pytest.mark.loads_models]

START_TIMEOUT_S = 180.0  # a loaded 2-core machine imports torch + transformers slowly
SERVING_MODULES = ("fastapi", "uvicorn", "openai", "accelerate")


@dataclass(frozen=True)
class Served:
    url: str
    model: str  # the name the server answers to (the folder it was started with)
    log: Path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as reply:
            return reply.status == 200
    except OSError:
        return False


def _start(model: Path, log: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    """Start the server on a free port and wait until it answers; retried on a port
    another process took meanwhile."""
    for _ in range(3):
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "transformers.cli.transformers",
                    "serve",
                    str(model),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--device",
                    "cpu",
                    "--log-level",
                    "info",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if _healthy(url):
                return process, url
            if process.poll() is not None:
                break
            time.sleep(0.25)
        text = log.read_text(errors="replace")
        _stop(process)
        if "address already in use" in text.lower():
            continue
        pytest.fail(
            f"transformers serve did not answer on {url} within {START_TIMEOUT_S:.0f} s "
            f"(exit code {process.returncode}); its log:\n{text[-3000:]}"
        )
    pytest.fail("transformers serve found no free port in three tries")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


@pytest.fixture(scope="module")
def served(tiny_causal_lm: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    missing = [name for name in SERVING_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"transformers serve needs {', '.join(missing)} (pip install -e '.[dev]')")
    if importlib.util.find_spec("transformers.cli.serve") is None:
        pytest.skip("this transformers has no `transformers serve` command")
    folder = tmp_path_factory.mktemp("transformers-serve")
    cache = folder / "hf-cache"
    cache.mkdir()
    # Offline, with an empty hub cache of its own (its /v1/models scans the cache), one
    # CPU thread (the machine is shared), and the worktree's modules importable.
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_CACHE": str(cache),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "OMP_NUM_THREADS": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    # Like instruction-tuned models (Llama 3's generation_config.json), the model samples
    # by default, so the request's temperature, top-p and seed are used.
    model = shutil.copytree(tiny_causal_lm, folder / "tiny-llama-sampling")
    config_file = model / "generation_config.json"
    config = json.loads(config_file.read_text())
    config_file.write_text(json.dumps({**config, "do_sample": True}))
    log = folder / "serve.log"
    process, url = _start(model, log, env)
    try:
        yield Served(url, str(model), log)
    finally:
        _stop(process)
    assert process.returncode is not None


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    with SessionStore.create(tmp_path / "served.taillens") as session:
        yield session


PARAMS = GenerationParams(candidates=2, max_new_tokens=12, seed=5)


def _verbalise(store: SessionStore, served: Served, **options: object) -> int:
    verbaliser = open_verbaliser(f"{served.url}/v1", PARAMS, server_model=served.model, **options)
    assert isinstance(verbaliser, OpenAIVerbaliser)  # the vLLM users' path
    outcome = run_job(verbalise_job(store, verbaliser, "all", ["en", "it"], resume=False))
    assert isinstance(outcome, JobSucceeded), getattr(outcome, "traceback", outcome)
    assert outcome.result.texts == 2 * 2 * PARAMS.candidates
    # usage.completion_tokens from the server: at most max_tokens per candidate.
    assert 0 < outcome.result.tokens <= 2 * 2 * PARAMS.candidates * PARAMS.max_new_tokens
    return outcome.result.run_id


def _rows(store: SessionStore, run_id: int) -> list[Verbalisation]:
    with store.unit_of_work() as db:
        rows = list(
            db.scalars(
                select(Verbalisation)
                .where(Verbalisation.run_id == run_id)
                .order_by(Verbalisation.unit_id, Verbalisation.lang, Verbalisation.candidate_index)
            )
        )
        db.expunge_all()
        return rows


def test_a_run_through_transformers_serve_stores_every_candidate(
    store: SessionStore, served: Served
) -> None:
    add_units(store, 2, langs=("en", "it"))
    run_id = _verbalise(store, served)
    with store.unit_of_work() as db:
        run = db.get(ModelRun, run_id)
        assert (run.kind, run.status) == ("openai", "finished")
        assert run.model_id == f"{served.url} {served.model}"
        assert run.parameters["max_new_tokens"] == PARAMS.max_new_tokens
    rows = _rows(store, run_id)
    # The server ignores n (it says so in its log): the missing candidates were asked for
    # again, so every (unit, language) still has both.
    assert [(r.lang, r.candidate_index) for r in rows] == [
        (lang, k) for _ in range(2) for lang in ("en", "it") for k in range(2)
    ]
    assert "Ignoring unsupported fields" in served.log.read_text(errors="replace")
    for row in rows:
        assert row.prompt and ("[Paris" in row.prompt or "[Parigi" in row.prompt)
        parsed = parse_reply(row.raw_output)
        # A random model writes no marker: the reply is kept raw and flagged, never
        # stored as a text.
        assert (row.text, row.parse_ok) == (parsed.text, parsed.ok)
        assert row.token_logprobs is None  # transformers serve returns no logprobs


def test_the_server_honours_the_seed_of_each_request(store: SessionStore, served: Served) -> None:
    add_units(store, 2, langs=("en", "it"))
    # transformers serve seeds torch's global generator per request, so requests in
    # flight together share it: one at a time, as a user wanting reproducible samples
    # from it would (vLLM keeps a generator per request).
    first = _verbalise(store, served, concurrency=1)
    second = _verbalise(store, served, concurrency=1)
    assert first != second
    raws = [r.raw_output for r in _rows(store, first)]
    # The same seeds give the same samples; the second candidate (seed + 1) differs.
    assert raws == [r.raw_output for r in _rows(store, second)]
    assert all(raws)
    assert raws[0::2] != raws[1::2]


def test_perplexity_of_a_server_run_without_logprobs_names_the_way_out(
    store: SessionStore, served: Served, tiny_causal_lm: Path
) -> None:
    from core.metrics import MetricOptions

    add_units(store, 1, langs=("en",))
    run_id = _verbalise_en(store, served)
    outcome = run_job(score_job(store, ScoringRequest(metrics=("ppl",))))
    assert isinstance(outcome, JobSucceeded)
    assert any(
        f"run {run_id} (openai) has no causal model of its own and its server "
        "returned no token log-probabilities; choose one with --ppl-model" in note
        for note in outcome.result.notes
    )
    # With the served model's local copy named, the same replies are scored by it.
    outcome = run_job(
        score_job(
            store,
            ScoringRequest(metrics=("ppl",), options=MetricOptions(ppl_model=str(tiny_causal_lm))),
        )
    )
    assert isinstance(outcome, JobSucceeded)
    with store.unit_of_work() as db:
        values = list(
            db.scalars(
                select(Score.value).where(
                    Score.metric == "ppl", Score.level == "sentence", Score.run_id == run_id
                )
            )
        )
    assert len(values) == PARAMS.candidates and all(v and v > 1 for v in values)


def _verbalise_en(store: SessionStore, served: Served) -> int:
    verbaliser = open_verbaliser(f"{served.url}/v1", PARAMS, server_model=served.model)
    outcome = run_job(verbalise_job(store, verbaliser, "all", ["en"], resume=False))
    assert isinstance(outcome, JobSucceeded), getattr(outcome, "traceback", outcome)
    return outcome.result.run_id
