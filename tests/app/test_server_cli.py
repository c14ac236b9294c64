"""``taillens verbalise --model URL`` then ``taillens score --metrics ppl``: a server run's
perplexity from the log-probabilities the server returned, with no model named."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli import main
from core.store import SessionStore
from tests.fixtures.fake_openai_server import FakeServer, served_logprobs
from tests.fixtures.verbalise_units import add_units


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    yield fake
    fake.close()


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_ppl_of_a_server_run_from_the_cli(
    capsys: pytest.CaptureFixture[str], server: FakeServer, tmp_path: Path
) -> None:
    session = tmp_path / "s.taillens"
    with SessionStore.create(session) as store:
        add_units(store, 2, langs=("en",))
    status, out, err = run(
        capsys,
        "verbalise",
        "--session",
        str(session),
        "--model",
        server.url,
        "--server-model",
        "tiny-served",
        "--langs",
        "en",
        "--candidates",
        "2",
        "--json",
        "--quiet",
    )
    assert status == 0, err
    run_id = json.loads(out)["run_id"]
    status, out, err = run(
        capsys, "score", "--session", str(session), "--metrics", "ppl", "--json", "--quiet"
    )
    assert status == 0, err
    [corpus] = [c for c in json.loads(out)["corpus"] if c["metric"] == "ppl"]
    pooled = [v for index in (0, 1) for _ in range(2) for _, v in served_logprobs(index)]
    assert corpus["run"] == run_id and corpus["model"] == "tiny-served"
    assert "source:server-logprobs" in corpus["signature"]
    assert not any("--ppl-model" in note for note in json.loads(out)["notes"])
    assert corpus["value"] == pytest.approx(math.exp(-sum(pooled) / len(pooled)), rel=1e-12)
    assert corpus["n"] == 4
