"""Fetching is bounded: time budget, size cap, Retry-After, LIMIT, repeating pages, refusals.

Each case runs against the local fault server on 127.0.0.1 with small budgets, so every
test ends within a few seconds whatever the server does.
"""

from __future__ import annotations

import json

import pytest

from core.jobs import JobFailed, JobSucceeded, run_job
from core.store import SessionStore
from core.wikidata.cache import fetch_status, fetched_count, load_category
from core.wikidata.endpoint import check_header_value
from core.wikidata.fetch import collect_members_job, fetch_category_job
from core.wikidata.open_source import open_source
from core.wikidata.sources import SourceError
from tests.fixtures.fake_sparql_endpoint import (
    JSON_HEADERS,
    FakeEndpoint,
    FakeSleep,
    Reply,
    good_body,
    make_source,
)
from tests.fixtures.wikidata_graph import CITY

UA_REFUSAL = (
    b"Please set a user-agent and respect our robot policy https://w.wiki/4wJS. See also T400119."
)


def qids(start: int, count: int) -> list[str]:
    return [f"Q{start + i}" for i in range(count)]


def fetch(store: SessionStore, source: object, limit: int = 10, page_size: int = 5):  # noqa: ANN201
    return run_job(fetch_category_job(store, source, CITY, limit=limit, page_size=page_size))  # type: ignore[arg-type]


# -- time ------------------------------------------------------------------------------


def test_slow_drip_ends_at_the_budget(fake_endpoint: FakeEndpoint) -> None:
    # One byte every 0.2 s never trips a per-read timeout; the budget still ends it.
    fake_endpoint.replies = [Reply(200, good_body(["Q1"]), JSON_HEADERS, drip_s=0.2)]
    source = make_source(fake_endpoint.url, FakeSleep(), timeout_s=0.5, budget_s=1.0)
    with pytest.raises(SourceError) as caught:
        source.members_page(CITY, 0, 10)
    message = str(caught.value)
    assert "time budget of 1 s" in message and "bytes came" in message
    assert len(fake_endpoint.requests) == 1


def test_headers_then_silence_ends_at_the_budget(fake_endpoint: FakeEndpoint) -> None:
    fake_endpoint.replies = [Reply(200, good_body(["Q1"]), JSON_HEADERS, stall_s=30)]
    sleep = FakeSleep()
    source = make_source(fake_endpoint.url, sleep, timeout_s=0.3, budget_s=1.2, max_retries=10)
    with pytest.raises(SourceError) as caught:
        source.members_page(CITY, 0, 10)
    assert "time budget of 1.2 s" in str(caught.value)
    # Retries happen only while the budget lasts: far fewer than max_retries + 1.
    assert 1 <= len(fake_endpoint.requests) < 11


@pytest.mark.parametrize("retry_after", ["100000", "Fri, 01 Jan 2099 00:00:00 GMT"])
def test_retry_after_beyond_the_budget_is_not_waited_for(
    fake_endpoint: FakeEndpoint, retry_after: str
) -> None:
    fake_endpoint.replies = [Reply(429, b"slow down", {"Retry-After": retry_after})]
    sleep = FakeSleep()
    waits: list[tuple[float, str]] = []
    source = make_source(
        fake_endpoint.url, sleep, budget_s=5.0, on_wait=lambda s, r: waits.append((s, r))
    )
    with pytest.raises(SourceError) as caught:
        source.members_page(CITY, 0, 10)
    message = str(caught.value)
    assert "429" in message and "asked to wait" in message and "time budget of 5 s" in message
    assert "slow down" in message  # the server's own words
    assert sleep.total == 0 and waits == [] and len(fake_endpoint.requests) == 1


def test_retry_after_within_the_budget_is_reported_while_waiting(
    fake_endpoint: FakeEndpoint,
) -> None:
    fake_endpoint.replies = [
        Reply(503, b"busy", {"Retry-After": "3"}),
        Reply(200, good_body(["Q1"]), JSON_HEADERS),
    ]
    sleep = FakeSleep()
    waits: list[tuple[float, str]] = []
    source = make_source(
        fake_endpoint.url, sleep, budget_s=10.0, on_wait=lambda s, r: waits.append((s, r))
    )
    assert [e.qid for e in source.members_page(CITY, 0, 10).entities] == ["Q1"]
    assert sleep.total == pytest.approx(3.0)
    assert waits and "asked to wait 3 s" in waits[0][1] and "503" in waits[0][1]


# -- size ------------------------------------------------------------------------------


@pytest.mark.parametrize("declared", [None, -1], ids=["content-length", "until-close"])
def test_oversized_answer_is_cut_at_the_cap(
    fake_endpoint: FakeEndpoint, declared: int | None
) -> None:
    body = good_body(qids(1, 200))
    assert len(body) > 20_000
    fake_endpoint.replies = [Reply(200, body, JSON_HEADERS, content_length=declared)]
    source = make_source(fake_endpoint.url, FakeSleep(), max_response_bytes=10_000)
    with pytest.raises(SourceError) as caught:
        source.members_page(CITY, 0, 500)
    message = str(caught.value)
    assert "cap of 10,000 bytes" in message and "--max-response-mb" in message
    assert len(fake_endpoint.requests) == 1  # not retried: it would be as large again


def test_short_body_against_content_length_is_a_message(
    fake_endpoint: FakeEndpoint, session: SessionStore
) -> None:
    body = good_body(["Q1", "Q2"])
    fake_endpoint.replies = [Reply(200, body, JSON_HEADERS, content_length=len(body) + 100)]
    source = make_source(fake_endpoint.url, FakeSleep(), max_retries=1)
    outcome = fetch(session, source)
    assert isinstance(outcome, JobFailed) and isinstance(outcome.error, SourceError)
    assert f"after {len(body):,} of the {len(body) + 100:,} bytes" in outcome.message
    assert len(fake_endpoint.requests) == 2 and fetched_count(session, CITY.name) == 0


# -- paging ----------------------------------------------------------------------------


def test_server_ignoring_limit_never_stores_more_than_asked(
    fake_endpoint: FakeEndpoint, session: SessionStore
) -> None:
    fake_endpoint.replies = [Reply(200, good_body(qids(1, 60)), JSON_HEADERS)]
    source = make_source(fake_endpoint.url, FakeSleep())
    outcome = fetch(session, source, limit=12, page_size=5)
    assert isinstance(outcome, JobSucceeded)
    assert fetched_count(session, CITY.name) <= 12
    status, note = fetch_status(session, CITY.name)
    assert status == "incomplete" and "ignores LIMIT" in (note or "")
    collected = run_job(collect_members_job(source, CITY, limit=12, page_size=5))
    assert isinstance(collected, JobSucceeded) and len(collected.result) <= 12
    assert "ignores LIMIT" in (collected.result.incomplete or "")


def test_repeating_page_stops_paging(fake_endpoint: FakeEndpoint, session: SessionStore) -> None:
    # The same five members for every OFFSET: the second page brings nothing new.
    fake_endpoint.replies = [Reply(200, good_body(qids(1, 5)), JSON_HEADERS)]
    source = make_source(fake_endpoint.url, FakeSleep())
    outcome = fetch(session, source, limit=1000, page_size=5)
    assert isinstance(outcome, JobSucceeded)
    assert outcome.result.total_in_session == 5 and len(fake_endpoint.requests) == 2
    assert "no member the session did not already hold" in (outcome.result.incomplete or "")
    table = load_category(session, CITY.name)
    assert len(table) == 5 and "OFFSET" in (table.incomplete or "")
    fake_endpoint.requests.clear()
    collected = run_job(collect_members_job(source, CITY, limit=1000, page_size=5))
    assert isinstance(collected, JobSucceeded)
    assert sorted(e.qid for e in collected.result) == qids(1, 5)  # each member counted once
    assert "no new member" in (collected.result.incomplete or "")
    assert len(fake_endpoint.requests) == 2


def test_fetch_status_complete_then_incomplete_after_a_failure(
    fake_endpoint: FakeEndpoint, session: SessionStore
) -> None:
    fake_endpoint.replies = [
        Reply(200, good_body(qids(1, 5)), JSON_HEADERS),
        Reply(200, good_body(qids(6, 2)), JSON_HEADERS),
    ]
    source = make_source(fake_endpoint.url, FakeSleep())
    outcome = fetch(session, source, limit=100, page_size=5)
    assert isinstance(outcome, JobSucceeded) and outcome.result.incomplete is None
    assert fetch_status(session, CITY.name) == ("complete", None)
    assert load_category(session, CITY.name).incomplete is None
    # A later fetch (a larger limit) that fails keeps what it had and says so.
    fake_endpoint.replies = [Reply(403, b"denied")]
    outcome = fetch(session, source, limit=200, page_size=5)
    assert isinstance(outcome, JobFailed)
    status, note = fetch_status(session, CITY.name)
    assert status == "incomplete" and "403" in (note or "") and "denied" in (note or "")
    assert len(load_category(session, CITY.name)) == 7


def test_limit_reached_is_marked(fake_endpoint: FakeEndpoint, session: SessionStore) -> None:
    fake_endpoint.replies = [
        Reply(200, good_body(qids(1, 5)), JSON_HEADERS),
        Reply(200, good_body(qids(6, 5)), JSON_HEADERS),
    ]
    outcome = fetch(session, make_source(fake_endpoint.url, FakeSleep()), limit=10, page_size=5)
    assert isinstance(outcome, JobSucceeded) and outcome.result.total_in_session == 10
    assert "limit of 10 members" in (load_category(session, CITY.name).incomplete or "")


# -- refusals --------------------------------------------------------------------------


@pytest.mark.parametrize("status", [200, 403])
def test_user_agent_refusal_shows_the_servers_words_and_the_fix(
    fake_endpoint: FakeEndpoint, status: int
) -> None:
    fake_endpoint.replies = [
        Reply(status, UA_REFUSAL, {"Content-Type": "text/plain; charset=utf-8"})
    ]
    source = make_source(fake_endpoint.url, FakeSleep())
    with pytest.raises(SourceError) as caught:
        source.members_page(CITY, 0, 10)
    message = str(caught.value)
    assert "Please set a user-agent and respect our robot policy" in message
    assert "--contact" in message and len(fake_endpoint.requests) == 1


def test_refusal_web_page_is_quoted_without_tags(fake_endpoint: FakeEndpoint) -> None:
    page = b"<html><head><style>p{}</style></head><body><p>Quota &amp; limits hit</p></body>"
    fake_endpoint.replies = [Reply(403, page, {"Content-Type": "text/html"})]
    with pytest.raises(SourceError) as caught:
        make_source(fake_endpoint.url, FakeSleep()).members_page(CITY, 0, 10)
    assert "'Quota & limits hit'" in str(caught.value) and "--contact" not in str(caught.value)


@pytest.mark.parametrize("contact", ["a\r\nX: 1", "me\n", "tab\there", "名前@example.org"])
def test_header_values_are_checked(contact: str) -> None:
    with pytest.raises(SourceError, match="contact"):
        check_header_value(contact, "The contact")
    with pytest.raises(SourceError, match="contact"):
        open_source("http://127.0.0.1:9/sparql", contact=contact)
    assert check_header_value("me@example.org", "The contact") == "me@example.org"


def test_json_body_with_deep_nesting_is_a_message(fake_endpoint: FakeEndpoint) -> None:
    fake_endpoint.replies = [Reply(200, b"[" * 100_000, JSON_HEADERS)]
    with pytest.raises(SourceError, match="malformed JSON"):
        make_source(fake_endpoint.url, FakeSleep()).members_page(CITY, 0, 10)


def test_good_page_still_parses(fake_endpoint: FakeEndpoint) -> None:
    body = json.dumps(json.loads(good_body(["Q3", "Q1"]))).encode()
    fake_endpoint.replies = [Reply(200, body, JSON_HEADERS, content_length=-1)]
    page = make_source(fake_endpoint.url, FakeSleep()).members_page(CITY, 0, 10)
    assert [e.qid for e in page.entities] == ["Q1", "Q3"] and page.overflow == 0


def test_retry_after_odd_values() -> None:
    from core.wikidata.endpoint import parse_retry_after

    assert parse_retry_after("²") is None and parse_retry_after("١٢") is None
    assert parse_retry_after("9" * 5000) == 1e12  # no int() of 5,000 digits
    assert parse_retry_after("Fri, 99 Foo 99999 99:99:99 GMT") is None
