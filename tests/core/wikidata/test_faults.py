"""Endpoint faults become clear SourceErrors, after polite retries, and cache nothing."""

from __future__ import annotations

import json

import pytest

from core.jobs import CancelToken, JobFailed, JobWasCancelled, run_job
from core.store import SessionStore
from core.wikidata.cache import fetched_count
from core.wikidata.endpoint import SparqlEndpointSource, parse_retry_after
from core.wikidata.fetch import fetch_category_job
from core.wikidata.sources import SourceError
from tests.fixtures.fake_sparql_endpoint import (
    JSON_HEADERS,
    FakeEndpoint,
    FakeSleep,
    Reply,
    good_body,
    make_source,
)
from tests.fixtures.ports import free_port
from tests.fixtures.wikidata_graph import CITY


def test_retry_after_is_honoured(fake_endpoint: FakeEndpoint) -> None:
    fake_endpoint.replies = [
        Reply(429, b"slow down", {"Retry-After": "7"}),
        Reply(200, good_body(["Q1", "Q2"]), JSON_HEADERS),
    ]
    sleep = FakeSleep()
    waits: list[tuple[float, str]] = []
    source = make_source(fake_endpoint.url, sleep, on_wait=lambda s, r: waits.append((s, r)))
    page = source.members_page(CITY, 0, 10)
    assert [e.qid for e in page.entities] == ["Q1", "Q2"]
    assert sleep.total == pytest.approx(7.0)
    assert waits[0][0] == pytest.approx(7.0) and "429" in waits[0][1]
    assert len(fake_endpoint.requests) == 2


def test_retry_after_http_date() -> None:
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("120") == 120.0 and parse_retry_after("soon") is None


def test_cancel_during_a_wait(fake_endpoint: FakeEndpoint) -> None:
    fake_endpoint.replies = [Reply(503, b"", {"Retry-After": "30"})]
    token = CancelToken()
    sleep = FakeSleep()
    source = make_source(fake_endpoint.url, sleep, on_wait=lambda s, r: token.cancel())
    from core.jobs import JobCancelled

    with pytest.raises(JobCancelled):
        source.members_page(CITY, 0, 10, token=token)
    assert sleep.total < 1


def _failing_fetch(
    store: SessionStore, source: SparqlEndpointSource, endpoint: FakeEndpoint
) -> str:
    outcome = run_job(fetch_category_job(store, source, CITY, limit=10, page_size=5))
    assert isinstance(outcome, JobFailed) and isinstance(outcome.error, SourceError)
    assert fake_endpoint_named(outcome.message, endpoint)
    assert fetched_count(store, CITY.name) == 0  # nothing cached from the broken page
    return outcome.message


def fake_endpoint_named(message: str, endpoint: FakeEndpoint) -> bool:
    return endpoint.url in message


def test_503_forever(fake_endpoint: FakeEndpoint, session: SessionStore) -> None:
    fake_endpoint.replies = [Reply(503, b"busy")]
    sleep = FakeSleep()
    message = _failing_fetch(session, make_source(fake_endpoint.url, sleep), fake_endpoint)
    assert "503" in message and "3 attempts" in message
    assert len(fake_endpoint.requests) == 3
    assert sleep.total == pytest.approx(0.5 + 1.0)  # exponential backoff


def test_500_is_retried_then_reported(fake_endpoint: FakeEndpoint, session: SessionStore) -> None:
    fake_endpoint.replies = [Reply(500, b"oops")]
    message = _failing_fetch(session, make_source(fake_endpoint.url, FakeSleep()), fake_endpoint)
    assert "500" in message and len(fake_endpoint.requests) == 3


def test_other_status_is_not_retried(fake_endpoint: FakeEndpoint, session: SessionStore) -> None:
    fake_endpoint.replies = [Reply(403, b"go away")]
    message = _failing_fetch(session, make_source(fake_endpoint.url, FakeSleep()), fake_endpoint)
    assert "403" in message and len(fake_endpoint.requests) == 1


def test_html_page(fake_endpoint: FakeEndpoint, session: SessionStore) -> None:
    html = b"<!DOCTYPE html><html><body>Welcome to our portal</body></html>"
    fake_endpoint.replies = [Reply(200, html, {"Content-Type": "text/html"})]
    message = _failing_fetch(session, make_source(fake_endpoint.url, FakeSleep()), fake_endpoint)
    assert "web page" in message


def test_malformed_json(fake_endpoint: FakeEndpoint, session: SessionStore) -> None:
    fake_endpoint.replies = [Reply(200, b'{"results": {"bindings": [', JSON_HEADERS)]
    message = _failing_fetch(session, make_source(fake_endpoint.url, FakeSleep()), fake_endpoint)
    assert "malformed JSON" in message


@pytest.mark.parametrize(
    "mutate",
    [
        lambda b: b["results"]["bindings"][1].pop("item"),
        lambda b: b["results"]["bindings"][1].pop("wiki_it"),
        lambda b: b["results"]["bindings"][1]["statements"].update(value="many"),
        lambda b: b["results"]["bindings"][1]["item"].update(value="http://example.org/x"),
        lambda b: b.pop("results"),
    ],
)
def test_json_missing_fields(
    mutate: object, fake_endpoint: FakeEndpoint, session: SessionStore
) -> None:
    body = json.loads(good_body(["Q1", "Q2", "Q3"]))
    mutate(body)  # type: ignore[operator]
    fake_endpoint.replies = [Reply(200, json.dumps(body).encode(), JSON_HEADERS)]
    message = _failing_fetch(session, make_source(fake_endpoint.url, FakeSleep()), fake_endpoint)
    assert "unexpected results" in message


def test_slow_response_times_out(fake_endpoint: FakeEndpoint, session: SessionStore) -> None:
    fake_endpoint.replies = [Reply(200, good_body(["Q1"]), JSON_HEADERS, delay_s=0.8)]
    source = make_source(fake_endpoint.url, FakeSleep(), timeout_s=0.5, max_retries=1)
    message = _failing_fetch(session, source, fake_endpoint)
    assert "did not answer within 0.5 s" in message and len(fake_endpoint.requests) == 2


def test_connection_refused(session: SessionStore) -> None:
    url = f"http://127.0.0.1:{free_port()}/sparql"
    source = make_source(url, FakeSleep())
    outcome = run_job(fetch_category_job(session, source, CITY, limit=10, page_size=5))
    assert isinstance(outcome, JobFailed) and isinstance(outcome.error, SourceError)
    assert url in outcome.message and "cannot reach" in outcome.message
    assert fetched_count(session, CITY.name) == 0


def test_cancelled_fetch_outcome(fake_endpoint: FakeEndpoint, session: SessionStore) -> None:
    fake_endpoint.replies = [Reply(200, good_body(["Q1"]), JSON_HEADERS)]
    token = CancelToken()
    token.cancel()
    source = make_source(fake_endpoint.url, FakeSleep())
    outcome = run_job(fetch_category_job(session, source, CITY, limit=10), token=token)
    assert isinstance(outcome, JobWasCancelled) and fake_endpoint.requests == []
