"""Replies from model servers are bounded.

Each fault is played by a real server on 127.0.0.1 (``fault_server.py``). The ones that
used to hang or grow the process without bound (an endless reply, a drip) and the
per-text failure (``"choices": []``) run the real CLI in a subprocess; the others run
the verbalise job or the CLI in-process. Every test asserts the message, and that the
session is intact: the run is not marked finished, nothing partial is stored, and the
same command resumes it once the server behaves. Limits are small (1-2 s, 1 MB) so each
test ends in seconds; times and peak memory are measured by benchmarks/server_limits.py.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from core.jobs import JobFailed, JobSucceeded, run_job
from core.store import SessionStore
from core.verbalise.base import GenerationParams
from core.verbalise.job import IncompleteRun, verbalise_job
from core.verbalise.openai import OpenAIVerbaliser, ServerError
from tests.fixtures.faulty_openai_server import GOOD, FaultServer
from tests.fixtures.verbalise_units import add_units

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def fault() -> Iterator[FaultServer]:
    server = FaultServer(drip_s=0.5, huge_chars=200_000)
    yield server
    server.close()


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "s.taillens"
    with SessionStore.create(path) as store:
        add_units(store, 2, langs=("en",))
    return path


def cli_args(session: Path, url: str, *extra: str) -> list[str]:
    return [
        "verbalise",
        "--session",
        str(session),
        "--model",
        url,
        "--server-model",
        "fault-model",
        "--langs",
        "en",
        "--candidates",
        "1",
        "--quiet",
        *extra,
    ]


def run_cli(session: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """The real CLI in its own process (bounded by a generous timeout)."""
    return subprocess.run(
        [sys.executable, "-m", "app", *cli_args(session, url, *extra)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def runs(session: Path) -> list[tuple[int, str, int, Any]]:
    """(run id, status, texts stored, software["reply_notes"]) per run."""
    with sqlite3.connect(session) as conn:
        found = conn.execute(
            "SELECT r.id, r.status, (SELECT count(*) FROM verbalisations v WHERE v.run_id = r.id),"
            " r.software FROM model_runs r ORDER BY r.id"
        ).fetchall()
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    return [(i, s, n, json.loads(sw or "{}").get("reply_notes")) for i, s, n, sw in found]


def texts(session: Path) -> list[str]:
    with sqlite3.connect(session) as conn:
        return [r[0] for r in conn.execute("SELECT raw_output FROM verbalisations ORDER BY id")]


def assert_resumes(session: Path, fault: FaultServer, run_id: int) -> None:
    """The same command, once the server behaves, resumes the run and finishes it."""
    fault.case = "ok"
    fault.script = []
    done = run_cli(session, fault.url, "--timeout", "5", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["run_id"] == run_id and result["resumed"] is True
    assert runs(session)[-1][:3] == (run_id, "finished", 2)


# -- through the real CLI, in a subprocess ----------------------------------------------


def test_an_endless_reply_stops_at_the_byte_cap(session: Path, fault: FaultServer) -> None:
    fault.case = "endless"
    done = run_cli(session, fault.url, "--timeout", "20", "--max-response-mb", "1")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("taillens: ") and "Traceback" not in done.stderr
    assert "sent more than the cap of 1,048,576 bytes" in done.stderr
    assert "ignore max_tokens" in done.stderr and "--max-response-mb" in done.stderr
    [(run_id, status, stored, _)] = runs(session)
    assert (status, stored) == ("failed", 0)
    assert_resumes(session, fault, run_id)


def test_a_drip_stops_at_the_deadline(session: Path, fault: FaultServer) -> None:
    # One byte every 0.5 s never trips a per-read timeout of 1 s; the deadline ends it.
    fault.case = "drip"
    done = run_cli(session, fault.url, "--timeout", "1", "--batch-size", "1")
    assert done.returncode == 2, done.stderr
    assert "did not finish arriving" in done.stderr and "bytes came" in done.stderr
    assert "timeout of 1 s per request (--timeout)" in done.stderr
    assert "Traceback" not in done.stderr
    assert fault.requests == 1  # the deadline covers retries: none was made
    [(run_id, status, stored, _)] = runs(session)
    assert (status, stored) == ("failed", 0)
    assert_resumes(session, fault, run_id)


def test_dripped_headers_stop_at_the_deadline(session: Path, fault: FaultServer) -> None:
    # http.client reads the status line and headers itself, byte by byte as they come:
    # the connection is shut down at the deadline all the same.
    fault.case = "drip-headers"
    done = run_cli(session, fault.url, "--timeout", "1", "--batch-size", "1")
    assert done.returncode == 2, done.stderr
    assert "did not answer within the timeout of 1 s per request (--timeout)" in done.stderr
    assert "Traceback" not in done.stderr
    [(run_id, status, stored, _)] = runs(session)
    assert (status, stored) == ("failed", 0)
    assert_resumes(session, fault, run_id)


def test_no_choices_fails_that_text_and_the_run_is_not_finished(
    session: Path, fault: FaultServer
) -> None:
    # The first unit's reply has no choices, the second's is good.
    fault.script = ["no-choices"]
    done = run_cli(session, fault.url, "--timeout", "5", "--batch-size", "1")
    assert done.returncode == 2, done.stderr
    assert "1 of 2 unit-languages got no usable text" in done.stderr
    assert 'answered no choices: {"choices": []' in done.stderr
    assert "failed       1 unit-languages got no usable text" in done.stdout  # the summary
    [(run_id, status, stored, notes)] = runs(session)
    assert (status, stored) == ("failed", 1)  # the good text is kept
    assert notes["failed"] == 1 and "no choices" in notes["examples"][0]["failed"]
    assert_resumes(session, fault, run_id)


# -- the faults that stop the run (the server is unusable as it is) --------------------


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ("short", "closed the connection after"),  # retried, then reported
        ("not-json", "not JSON: \"{'choices': oops\""),
        ("html", "sent a web page instead of JSON"),
        ("array", 'answered JSON that is not an object ([{"choices": []}])'),
        ("error-endless", "answered HTTP 500"),
    ],
)
def test_an_unusable_reply_stops_the_run_with_a_message(
    session: Path,
    fault: FaultServer,
    capsys: pytest.CaptureFixture[str],
    case: str,
    said: str,
) -> None:
    fault.case = case
    status = main(cli_args(session, fault.url, "--timeout", "3"))
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.startswith("taillens: ") and said in err, err
    if case == "html":
        assert "Welcome to nginx!" in err  # the page's words, without its tags
    [(run_id, run_status, stored, _)] = runs(session)
    assert (run_status, stored) == ("failed", 0)
    assert_resumes(session, fault, run_id)


def test_a_short_body_is_retried_within_the_deadline(session: Path, fault: FaultServer) -> None:
    fault.script = ["short"]
    status = main(cli_args(session, fault.url, "--timeout", "5"))
    assert status == 0
    assert runs(session)[0][1:3] == ("finished", 2)


# -- the faults that change a text, noted -----------------------------------------------


def run_job_against(
    session: Path, fault: FaultServer, **options: Any
) -> tuple[Any, list[tuple[int, str, int, Any]]]:
    verbaliser = OpenAIVerbaliser(
        fault.url,
        "fault-model",
        GenerationParams(candidates=1, max_new_tokens=16),
        timeout_s=5,
        sleep=lambda s: None,
        **options,
    )
    with SessionStore.open(session) as store:
        outcome = run_job(verbalise_job(store, verbaliser, "all", ["en"]))
    return outcome, runs(session)


def test_a_server_ignoring_max_tokens_is_cut_and_the_cut_recorded(
    session: Path, fault: FaultServer
) -> None:
    fault.case = "huge"  # 200,000 characters per text; the cap is 32 per token: 512
    outcome, [(_, status, stored, notes)] = run_job_against(session, fault)
    assert isinstance(outcome, JobSucceeded), getattr(outcome, "traceback", "")
    assert (status, stored) == ("finished", 2)
    assert [len(t) for t in texts(session)] == [512, 512]
    assert outcome.result.truncated == 2
    assert notes["truncated"] == 2
    assert notes["examples"][0]["truncated_from_chars"] == 200_000 + len(
        "The final verbalization is: []"
    )


def test_max_reply_chars_is_a_setting(session: Path, fault: FaultServer) -> None:
    fault.case = "huge"
    outcome, _ = run_job_against(session, fault, max_reply_chars=100)
    assert isinstance(outcome, JobSucceeded)
    assert [len(t) for t in texts(session)] == [100, 100]


def test_a_lone_surrogate_is_replaced_not_the_batch_lost(session: Path, fault: FaultServer) -> None:
    fault.case = "surrogate"
    outcome, [(_, status, stored, notes)] = run_job_against(session, fault)
    assert isinstance(outcome, JobSucceeded), getattr(outcome, "traceback", "")
    assert (status, stored) == ("finished", 2)
    assert texts(session)[0] == GOOD.replace("Paris is", "Paris \ufffd is")
    assert notes["replaced_surrogates"] == 2 and outcome.result.replaced_surrogates == 2


@pytest.mark.parametrize(("case", "quoted"), [("usage-na", '"n/a"'), ("tokens-many", '"many"')])
def test_a_usage_that_is_not_a_count_is_a_warning(
    session: Path, fault: FaultServer, case: str, quoted: str
) -> None:
    fault.case = case
    outcome, [(_, status, stored, notes)] = run_job_against(session, fault)
    assert isinstance(outcome, JobSucceeded), getattr(outcome, "traceback", "")
    assert (status, stored) == ("finished", 2)
    assert outcome.result.usage_unusable == 2 and outcome.result.tokens == 0
    assert notes["usage_unusable"] == 2
    assert quoted in notes["examples"][0]["usage"] and "not" in notes["examples"][0]["usage"]


def test_a_content_that_is_not_text_fails_that_text(session: Path, fault: FaultServer) -> None:
    fault.case = "null-content"
    outcome, [(_, status, stored, notes)] = run_job_against(session, fault)
    assert isinstance(outcome, JobFailed) and isinstance(outcome.error, IncompleteRun)
    assert "2 of 2 unit-languages got no usable text" in str(outcome.error)
    assert "choices[0] without a text message.content" in str(outcome.error)
    assert (status, stored) == ("failed", 0) and notes["failed"] == 2


def test_a_server_answering_no_choices_to_everything_is_given_up(
    tmp_path: Path, fault: FaultServer
) -> None:
    path = tmp_path / "many.taillens"
    with SessionStore.create(path) as store:
        add_units(store, 30, langs=("en",))
    fault.case = "no-choices"
    outcome, [(_, status, stored, _)] = run_job_against(path, fault)
    assert isinstance(outcome, JobFailed)
    assert "the last 24 requests got no usable text" in str(outcome.error)  # 3 batches of 8
    assert fault.requests == 24 and (status, stored) == ("failed", 0)


# -- the client on its own --------------------------------------------------------------


def test_a_failing_request_stops_the_others_of_its_batch(fault: FaultServer) -> None:
    # Eight requests in flight against an endless reply: the first over the cap stops the
    # batch, and the others stop reading rather than each filling its own cap.
    fault.case = "endless"
    verbaliser = OpenAIVerbaliser(
        fault.url, "fault-model", GenerationParams(candidates=1), max_response_bytes=1 << 20
    )
    requests = [
        verbaliser_request(verbaliser, key) for key in range(8)
    ]  # all sent at once (concurrency 8)
    with pytest.raises(ServerError, match="cap of 1,048,576 bytes"):
        verbaliser.verbalise(requests)


def verbaliser_request(verbaliser: OpenAIVerbaliser, key: int) -> Any:
    from core.verbalise.base import VerbaliseRequest

    triples = (("Paris", "country", "France"),)
    return VerbaliseRequest((key, "en"), "en", triples, verbaliser.prompt_for(triples, "en"))


@pytest.mark.parametrize(
    "options",
    [{"timeout_s": 0}, {"timeout_s": float("nan")}, {"max_response_bytes": 0}],
)
def test_bad_limits_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ServerError):
        OpenAIVerbaliser("http://127.0.0.1:9/v1", "m", **options)


def test_a_server_error_is_not_taken_for_torch_out_of_memory_by_importing_torch() -> None:
    # The job asks is_out_of_memory about every error; on a server run torch was never
    # imported, and importing it to ask cost seconds and some 200 MB after the deadline.
    code = (
        "import sys\n"
        "from core.local_models.loader import is_out_of_memory\n"
        "from core.verbalise.openai import ServerError\n"
        "assert not is_out_of_memory(ServerError('x'))\n"
        "assert is_out_of_memory(RuntimeError('CUDA out of memory'))\n"
        "print('torch' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
