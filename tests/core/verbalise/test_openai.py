"""The OpenAI-compatible verbaliser against a small server on 127.0.0.1 started here."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from core.verbalise.base import GenerationParams, RequestFailure, VerbaliseRequest
from core.verbalise.openai import OpenAIVerbaliser, ServerError, normalise_base_url
from tests.fixtures.fake_openai_server import FakeServer, served_logprobs

TRIPLES = (("Paris", "country", "France"),)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    yield fake
    fake.close()


def make(server: FakeServer, waits: list[float], **options: Any) -> OpenAIVerbaliser:
    params = GenerationParams(candidates=3, temperature=0.5, top_p=0.8, max_new_tokens=64, seed=7)
    return OpenAIVerbaliser(
        server.url, options.pop("server_model", None), params, sleep=waits.append, **options
    )


def request(verbaliser: OpenAIVerbaliser, key: int = 0) -> VerbaliseRequest:
    return VerbaliseRequest((key, "en"), "en", TRIPLES, verbaliser.prompt_for(TRIPLES, "en"))


def test_candidates_and_parameters_go_in_one_request(server: FakeServer) -> None:
    waits: list[float] = []
    verbaliser = make(server, waits)
    [candidates] = verbaliser.verbalise([request(verbaliser)])
    # No model named: the first the server lists.
    assert server.paths == ["/v1/models", "/v1/chat/completions"]
    assert verbaliser.server_model == "tiny-served"
    body = server.bodies[0]
    assert {k: body[k] for k in ("model", "n", "temperature", "top_p", "max_tokens", "seed")} == {
        "model": "tiny-served",
        "n": 3,
        "temperature": 0.5,
        "top_p": 0.8,
        "max_tokens": 64,
        "seed": 7,
    }
    assert body["messages"] == [{"role": "user", "content": request(verbaliser).prompt}]
    assert [c.text for c in candidates] == [f"Paris is in France {i}." for i in range(3)]
    assert all(c.parse_ok for c in candidates)
    assert candidates[0].raw.startswith("Draft.")
    # Log-probabilities asked for and kept per candidate, token by token.
    assert body["logprobs"] is True
    for index, candidate in enumerate(candidates):
        assert candidate.token_logprobs == {
            "tokens": [t for t, _ in served_logprobs(index)],
            "logprobs": [v for _, v in served_logprobs(index)],
        }
        assert candidate.tokens == len(served_logprobs(index))


def test_without_logprobs_the_usage_counts_the_tokens(server: FakeServer) -> None:
    server.logprobs = False
    verbaliser = make(server, [], server_model="m")
    [candidates] = verbaliser.verbalise([request(verbaliser)])
    assert all(c.tokens == 10 and c.token_logprobs is None for c in candidates)


def test_a_server_refusing_logprobs_is_asked_again_without_them(server: FakeServer) -> None:
    server.refuse_logprobs = True
    verbaliser = make(server, [], server_model="m")
    [candidates] = verbaliser.verbalise([request(verbaliser)])
    assert [c.text for c in candidates] == [f"Paris is in France {i}." for i in range(3)]
    assert ["logprobs" in b for b in server.bodies] == [True, False]
    assert verbaliser.logprobs is False and verbaliser.describe()["logprobs"] is False
    verbaliser.verbalise([request(verbaliser)])  # not asked for again
    assert "logprobs" not in server.bodies[-1]


@pytest.mark.parametrize(
    "logprobs",
    [
        {"content": [{"token": "a", "logprob": 0.5}]},  # a probability above 1
        {"content": [{"token": "a", "logprob": "x"}]},
        {"content": [{"token": "a"}]},
        {"content": []},
        {"tokens": ["a"], "token_logprobs": [-1.0]},  # the completions format: not a chat one
        "junk",
    ],
)
def test_unusable_logprobs_are_dropped_not_stored(server: FakeServer, logprobs: Any) -> None:
    choice = {
        "index": 0,
        "logprobs": logprobs,
        "message": {"content": "The final verbalization is: [Paris.]"},
    }
    server.script = [(200, {}, json.dumps({"choices": [choice]}).encode())]
    verbaliser = OpenAIVerbaliser(server.url, "m", GenerationParams(candidates=1))
    [[candidate]] = verbaliser.verbalise([request(verbaliser)])
    assert candidate.text == "Paris." and candidate.token_logprobs is None


def test_429_with_retry_after_is_waited_out(server: FakeServer) -> None:
    server.script = [(429, {"Retry-After": "3"}, b'{"error": "slow down"}'), (503, {}, b"busy")]
    waits: list[float] = []
    verbaliser = make(server, waits, server_model="m", backoff_s=0.5)
    [candidates] = verbaliser.verbalise([request(verbaliser)])
    assert len(candidates) == 3
    assert waits == [3.0, 1.0]  # Retry-After honoured, then backoff 0.5 * 2**1
    assert verbaliser.retries == 2


def test_retries_give_up_with_the_status(server: FakeServer) -> None:
    server.script = [(429, {"Retry-After": "1"}, b"")] * 3
    verbaliser = make(server, [], server_model="m", max_retries=2)
    with pytest.raises(ServerError, match="HTTP 429"):
        verbaliser.verbalise([request(verbaliser)])


def test_malformed_json_is_a_clear_error(server: FakeServer) -> None:
    server.script = [(200, {"Content-Type": "application/json"}, b"{'choices': oops")]
    verbaliser = make(server, [], server_model="m")
    with pytest.raises(ServerError, match="not JSON: \"{'choices': oops\""):
        verbaliser.verbalise([request(verbaliser)])


def test_json_without_choices_fails_that_request_quoting_the_server(server: FakeServer) -> None:
    server.script = [(200, {}, b'{"object": "error"}')]
    verbaliser = make(server, [], server_model="m")
    [failure] = verbaliser.verbalise([request(verbaliser)])
    assert isinstance(failure, RequestFailure)
    assert "answered no choices" in failure.message and '{"object": "error"}' in failure.message


def test_a_server_ignoring_n_is_asked_again(server: FakeServer) -> None:
    server.choices_per_reply = 1
    verbaliser = make(server, [], server_model="m")
    results = verbaliser.verbalise([request(verbaliser, k) for k in range(4)])
    assert [len(r) for r in results] == [3, 3, 3, 3]
    assert sorted(b["n"] for b in server.bodies) == sorted([1, 2, 3] * 4)


def test_a_server_ignoring_n_gets_a_new_seed_per_request(server: FakeServer) -> None:
    # A server that ignores n and honours the seed would give the same text three times if
    # the missing candidates were asked again with the same seed.
    server.echo_seed = True
    verbaliser = make(server, [], server_model="m")
    [candidates] = verbaliser.verbalise([request(verbaliser)])
    assert [b["seed"] for b in server.bodies] == [7, 8, 9]
    assert [b["n"] for b in server.bodies] == [3, 2, 1]
    assert [c.text for c in candidates] == [f"Paris, sampled with seed {s}." for s in (7, 8, 9)]
    assert verbaliser.describe()["seed_per_request"] == "seed + k"


def test_unreachable_server() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    waits: list[float] = []
    verbaliser = OpenAIVerbaliser(f"http://127.0.0.1:{port}", "m", sleep=waits.append)
    with pytest.raises(ServerError, match=f"cannot reach the server at http://127.0.0.1:{port}"):
        verbaliser.verbalise([request(verbaliser)])
    assert waits == []  # refused: no pointless retries


def test_base_url_forms() -> None:
    assert normalise_base_url("http://h:8000/v1/") == "http://h:8000"
    assert normalise_base_url("https://h/v1/chat/completions") == "https://h"
    with pytest.raises(ServerError, match="not an http"):
        normalise_base_url("ftp://h")


def test_set_templates_changes_the_prompt_and_a_bad_one_changes_nothing() -> None:
    from core.verbalise.prompts import PromptError, default_template

    verbaliser = OpenAIVerbaliser("http://127.0.0.1:9/v1", "m")  # never contacted
    verbaliser.set_templates({"it": "Fatti:\n{triples}\nScrivi."})
    assert verbaliser.prompt_for(TRIPLES, "it") == "Fatti:\n[Paris, country, France]\nScrivi."
    assert verbaliser.templates["en"] == default_template("en")  # not overridden: bundled
    with pytest.raises(PromptError, match="exactly once"):
        verbaliser.set_templates({"it": "no placeholder"})
    assert verbaliser.templates["it"] == "Fatti:\n{triples}\nScrivi."
    verbaliser.set_templates(None)
    assert verbaliser.templates["it"] == default_template("it")
