"""The session cache: pages and entities round-trip, and fetches resume without repeats."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from core.jobs import CancelToken, JobCancelled, JobContext, Progress, run_job
from core.store import SessionStore
from core.tiers.stored import load_member_tiers
from core.wikidata.cache import (
    SessionCacheSource,
    fetched_count,
    load_category,
    load_entity,
    store_entity,
    store_members_page,
)
from core.wikidata.categories import Category
from core.wikidata.fetch import (
    FetchSummary,
    fetch_categories_job,
    fetch_category_job,
    fetch_entity,
)
from core.wikidata.records import EntityDetails, MembersPage
from core.wikidata.sources import EmbeddedSource, SourceError
from tests.fixtures.wikidata_graph import ACTOR, ACTOR_QIDS, CITY, CITY_QIDS, STAR


@pytest.fixture(scope="module")
def embedded(fixture_nt: Path) -> EmbeddedSource:
    return EmbeddedSource.from_file(fixture_nt)


class CountingSource:
    """Wraps a source and records every page asked for."""

    def __init__(self, inner: EmbeddedSource) -> None:
        self.inner = inner
        self.name = inner.name
        self.kind = inner.kind
        self.calls: list[tuple[int, int]] = []

    def members_page(
        self, category: Category, offset: int, limit: int, token: CancelToken | None = None
    ) -> MembersPage:
        self.calls.append((offset, limit))
        return self.inner.members_page(category, offset, limit, token)

    def entity(self, qid: str, token: CancelToken | None = None) -> EntityDetails:
        return self.inner.entity(qid, token)


def test_members_page_to_arrays(session: SessionStore, embedded: EmbeddedSource) -> None:
    page = embedded.members_page(CITY, 0, 100)
    store_members_page(session, CITY, page, embedded.name)
    table = load_category(session, CITY.name)
    assert table.qids == [e.qid for e in page.entities] == sorted(CITY_QIDS)
    assert table.labels == [e.label for e in page.entities]
    assert table.statements.dtype == np.int64 and table.has_en.dtype == np.bool_
    assert table.statements.tolist() == [e.statement_count for e in page.entities]
    assert table.sitelinks.tolist() == [e.sitelink_count for e in page.entities]
    assert table.has_it.tolist() == ["it" in e.wikis for e in page.entities]
    assert fetched_count(session, CITY.name) == 15
    # Storing the same page again changes nothing.
    store_members_page(session, CITY, page, embedded.name)
    assert fetched_count(session, CITY.name) == 15
    empty = load_category(session, "Nothing")
    assert empty.qids == [] and empty.statements.dtype == np.int64


def test_a_damaged_entity_row_is_hidden_from_the_category(
    tmp_path: Path, embedded: EmbeddedSource
) -> None:
    """Another program wrote text where a count belongs: the category loads without the
    row (as every ORM read hides it), and so do its tiers and the cache's pages."""
    path = tmp_path / "damaged.taillens"
    with SessionStore.create(path) as store:
        store_members_page(store, CITY, embedded.members_page(CITY, 0, 100), "demo")
    damaged = sorted(CITY_QIDS)[2]
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE entities SET statement_count = 'abc' WHERE qid = ?", (damaged,))
    conn.close()
    with SessionStore.open_read_only(path) as store:
        table = load_category(store, CITY.name)
        assert table.qids == [q for q in sorted(CITY_QIDS) if q != damaged]
        assert table.statements.dtype == np.int64
        # The membership rows are whole: a fetch resumes past all of them.
        assert fetched_count(store, CITY.name) == len(CITY_QIDS)
        assert damaged not in load_member_tiers(store, CITY.name)
        page = SessionCacheSource(store).members_page(CITY, 0, 100)
        assert damaged not in [e.qid for e in page.entities]
        assert [str(r).split(":")[0] for r in store.damaged_rows] == [
            f"entities id {_entity_id(path, damaged)}"
        ]


def _entity_id(path: Path, qid: str) -> int:
    with sqlite3.connect(path) as conn:
        (row_id,) = conn.execute("SELECT id FROM entities WHERE qid = ?", (qid,)).fetchone()
    conn.close()
    return int(row_id)


def test_cache_source_matches_the_filling_source(
    session: SessionStore, embedded: EmbeddedSource
) -> None:
    for category in (CITY, ACTOR):
        store_members_page(session, category, embedded.members_page(category, 0, 100), "demo")
    cache = SessionCacheSource(session)
    assert cache.kind == "cache"
    for category in (CITY, ACTOR):
        assert cache.members_page(category, 0, 100) == embedded.members_page(category, 0, 100)
        assert cache.members_page(category, 3, 5) == embedded.members_page(category, 3, 5)
    for qid in (STAR, "Q1001"):
        fetch_entity(session, embedded, qid)
        assert cache.entity(qid) == embedded.entity(qid)
    with pytest.raises(SourceError):
        cache.entity("Q1002")  # only its label is known: never opened


def test_entity_round_trip_replaces(session: SessionStore, embedded: EmbeddedSource) -> None:
    details = embedded.entity(STAR)
    store_entity(session, details, embedded.name)
    store_entity(session, details, embedded.name)  # a refetch replaces, never duplicates
    assert load_entity(session, STAR) == details
    assert load_entity(session, "Q999") is None
    smaller = EntityDetails(STAR, details.terms[:2], details.claims[:1], details.property_types)
    store_entity(session, smaller, embedded.name)
    loaded = load_entity(session, STAR)
    assert loaded is not None and loaded.claims == smaller.claims
    assert [t for t in loaded.terms if t.item_id == STAR] == list(details.terms[:2])


def test_fetch_resumes_without_refetching(session: SessionStore, embedded: EmbeddedSource) -> None:
    source = CountingSource(embedded)
    token = CancelToken()
    reports: list[Progress] = []

    def on_progress(progress: Progress) -> None:
        reports.append(progress)
        # The UI reloads from the session on each report: it must already be there.
        assert len(load_category(session, CITY.name)) == progress.done
        if progress.message == "page 2":
            token.cancel()

    job = fetch_category_job(session, source, CITY, limit=100, page_size=4)
    with pytest.raises(JobCancelled):
        job.run(JobContext(token, on_progress, min_interval_s=0))
    assert source.calls == [(0, 4), (4, 4)]
    assert fetched_count(session, CITY.name) == 8
    assert isinstance(job.partial, FetchSummary) and job.partial.fetched == 8

    outcome = run_job(fetch_category_job(session, source, CITY, limit=100, page_size=4))
    summary = outcome.result  # type: ignore[union-attr]
    assert summary == FetchSummary(CITY.name, 7, 15, 2, 8)
    assert source.calls == [(0, 4), (4, 4), (8, 4), (12, 4)]  # nothing asked twice
    assert load_category(session, CITY.name).qids == sorted(CITY_QIDS)

    # A finished category asks for one (empty) page at most and stops.
    again = run_job(fetch_category_job(session, source, CITY, limit=15, page_size=4))
    assert again.result.fetched == 0 and len(source.calls) == 4  # type: ignore[union-attr]


def test_one_job_fetches_several_categories_and_a_cancel_keeps_them(
    session: SessionStore, embedded: EmbeddedSource
) -> None:
    token = CancelToken()
    reports: list[Progress] = []

    def on_progress(progress: Progress) -> None:
        reports.append(progress)
        if progress.message == ACTOR.name:  # the second category starts: stop
            token.cancel()

    job = fetch_categories_job(session, embedded, [CITY, ACTOR], limit=100)
    with pytest.raises(JobCancelled):
        job.run(JobContext(token, on_progress, min_interval_s=0))
    # Counted by category (the status bar's time left), the first one whole and kept.
    assert [(p.done, p.total, p.message) for p in reports] == [
        (0, 2, CITY.name),
        (1, 2, ACTOR.name),
    ]
    assert [s.category for s in job.partial] == [CITY.name]
    assert fetched_count(session, CITY.name) == 15 and fetched_count(session, ACTOR.name) == 0

    outcome = run_job(fetch_categories_job(session, embedded, [CITY, ACTOR], limit=100))
    summaries = outcome.result  # type: ignore[union-attr]
    # City resumes where it was (nothing new), Actor is fetched whole.
    assert [(s.category, s.fetched, s.total_in_session) for s in summaries] == [
        (CITY.name, 0, 15),
        (ACTOR.name, 15, 15),
    ]
    assert load_category(session, ACTOR.name).qids == sorted(ACTOR_QIDS)


def test_fetch_respects_limit(session: SessionStore, embedded: EmbeddedSource) -> None:
    outcome = run_job(fetch_category_job(session, embedded, ACTOR, limit=10, page_size=4))
    assert outcome.result.total_in_session == 10  # type: ignore[union-attr]
    assert fetched_count(session, ACTOR.name) == 10
