"""Fetching a category into the session, page by page, resumable.

Each page is committed as it arrives: the UI reloads from the session on every progress
report, and a cancelled (or failed, or crashed) fetch keeps what arrived. The next fetch
starts at the number of members the session already holds, so nothing is fetched twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.changes import Topic
from core.jobs import Job, JobContext
from core.store import SessionStore
from core.wikidata.cache import fetched_count, store_entity, store_members_page
from core.wikidata.categories import DEFAULT_LIMIT, Category
from core.wikidata.queries import check_int
from core.wikidata.records import EntityDetails, EntityRecord
from core.wikidata.sources import WikidataSource


@dataclass(frozen=True)
class FetchSummary:
    category: str
    fetched: int  # members fetched by this run
    total_in_session: int
    pages: int
    resumed_from: int  # members the session held before this run


def fetch_category_job(
    store: SessionStore,
    source: WikidataSource,
    category: Category,
    limit: int = DEFAULT_LIMIT,
    page_size: int = 1000,
) -> Job[FetchSummary]:
    """A job that fetches up to ``limit`` members of ``category`` into ``store``."""
    check_int(limit, "limit", 1, 10_000_000)
    check_int(page_size, "page size", 1, 50_000)

    def run(ctx: JobContext) -> FetchSummary:
        start = fetched_count(store, category.name)
        offset = start
        pages = 0

        def summary() -> FetchSummary:
            return FetchSummary(category.name, offset - start, offset, pages, start)

        job.partial = summary()
        ctx.progress(offset, limit, "resuming" if start else "starting")
        while offset < limit:
            ctx.check_cancelled()
            want = min(page_size, limit - offset)
            page = source.members_page(category, offset, want, token=ctx.token)
            store_members_page(store, category, page, source.name)
            pages += 1
            # The session decides the offset: a page may repeat members already held.
            offset = fetched_count(store, category.name)
            job.partial = summary()
            ctx.progress(offset, limit, f"page {pages}")
            if len(page.entities) < want:
                break  # a short page is the last one
        return summary()

    job: Job[FetchSummary] = Job(
        title=f"Fetch {category.name} from {source.name}",
        run=run,
        kind="wikidata.fetch",
        writes=frozenset({Topic.MEMBERS, Topic.CATEGORIES}),
        params={
            "category": category.name,
            "source": source.name,
            "limit": limit,
            "page_size": page_size,
        },
    )
    return job


def fetch_entity(store: SessionStore, source: WikidataSource, qid: str) -> EntityDetails:
    """Fetch one entity's details and keep them in the session."""
    details = source.entity(qid)
    store_entity(store, details, source.name)
    return details


def collect_members_job(
    source: WikidataSource,
    category: Category,
    limit: int = DEFAULT_LIMIT,
    page_size: int = 1000,
) -> Job[list[EntityRecord]]:
    """A job that pages through a category's members without a session (for a quick
    look at a distribution). Cancelled, it hands back the members that arrived."""
    check_int(limit, "limit", 1, 10_000_000)
    check_int(page_size, "page size", 1, 50_000)

    def run(ctx: JobContext) -> list[EntityRecord]:
        members: list[EntityRecord] = []
        job.partial = members
        while len(members) < limit:
            ctx.check_cancelled()
            want = min(page_size, limit - len(members))
            page = source.members_page(category, len(members), want, token=ctx.token)
            members.extend(page.entities)
            ctx.progress(len(members), limit, f"{len(members):,} members")
            if len(page.entities) < want:
                break
        return members

    job: Job[list[EntityRecord]] = Job(
        title=f"Read {category.name} from {source.name}",
        run=run,
        kind="wikidata.collect",
        params={"category": category.name, "source": source.name, "limit": limit},
    )
    return job
