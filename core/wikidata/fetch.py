"""Fetching a category into the session, page by page, resumable.

Each page is committed as it arrives: the UI reloads from the session on every progress
report, and a cancelled (or failed, or crashed) fetch keeps what arrived. The next fetch
starts at the number of members the session already holds, so nothing is fetched twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.changes import Topic
from core.jobs import Job, JobCancelled, JobContext
from core.store import SessionStore
from core.wikidata.cache import (
    FETCH_COMPLETE,
    FETCH_INCOMPLETE,
    fetch_status,
    fetched_count,
    incomplete_note,
    set_fetch_status,
    store_entity,
    store_members_page,
)
from core.wikidata.categories import DEFAULT_LIMIT, Category
from core.wikidata.queries import check_int
from core.wikidata.records import EntityDetails, EntityRecord, MembersPage
from core.wikidata.sources import WikidataSource


@dataclass(frozen=True)
class FetchSummary:
    category: str
    fetched: int  # members fetched by this run
    total_in_session: int
    pages: int
    resumed_from: int  # members the session held before this run
    incomplete: str | None = None  # why the fetch stopped before the category's end


def _overflow_note(page: MembersPage, want: int) -> str:
    return (
        f"the source sent {len(page.entities) + page.overflow:,} rows for a page of "
        f"{want:,} members (it ignores LIMIT); only {want:,} members were kept"
    )


def _join(first: str | None, second: str) -> str:
    return f"{first}; {second}" if first else second


def fetch_category_job(
    store: SessionStore,
    source: WikidataSource,
    category: Category,
    limit: int = DEFAULT_LIMIT,
    page_size: int = 1000,
) -> Job[FetchSummary]:
    """A job that fetches up to ``limit`` members of ``category`` into ``store``.

    Paging stops at a short page (the category's end: the fetch is complete), at
    ``limit``, or when a page brings no member the session does not hold (an endpoint
    that ignores OFFSET). The category's fetch status records how it ended; it reads
    "incomplete" while the fetch runs, so a killed fetch is never taken for a whole one.
    """
    check_int(limit, "limit", 1, 10_000_000)
    check_int(page_size, "page size", 1, 50_000)

    def run(ctx: JobContext) -> FetchSummary:
        start = fetched_count(store, category.name)
        offset = start
        pages = 0
        note: str | None = None

        def summary() -> FetchSummary:
            return FetchSummary(category.name, offset - start, offset, pages, start, note)

        job.partial = summary()
        prepare = getattr(source, "prepare", None)
        if prepare is not None:  # the demo snapshot, loaded on first use: said first
            prepare(lambda note: ctx.progress(offset, limit, note))
        ctx.progress(offset, limit, "resuming" if start else "starting")
        if offset >= limit:
            note = incomplete_note(*fetch_status(store, category.name))
            return summary()
        set_fetch_status(store, category, FETCH_INCOMPLETE, "fetch in progress or interrupted")
        complete = False
        try:
            while offset < limit:
                ctx.check_cancelled()
                want = min(page_size, limit - offset)
                page = source.members_page(category, offset, want, token=ctx.token)
                limited = page.limited(want)
                store_members_page(store, category, limited, source.name)
                pages += 1
                before = offset
                # The session decides the offset: a page may repeat members already held.
                offset = fetched_count(store, category.name)
                if limited.overflow:
                    note = _overflow_note(page, want)
                job.partial = summary()
                ctx.progress(offset, limit, f"page {pages}")
                if len(page.entities) < want:
                    complete = not note
                    break  # a short page is the last one
                if offset == before:
                    note = _join(
                        note,
                        (
                            f"page {pages} (offset {before:,}) brought no member the session "
                            "did not already hold; the source may ignore OFFSET, so paging stopped"
                        ),
                    )
                    break
            else:
                note = note or (
                    f"stopped at the limit of {limit:,} members; the category may have more"
                )
        except JobCancelled:
            note = f"cancelled after {offset:,} members"
            set_fetch_status(store, category, FETCH_INCOMPLETE, note)
            job.partial = summary()
            raise
        except Exception as exc:
            note = f"stopped after {offset:,} members: {exc}"
            set_fetch_status(store, category, FETCH_INCOMPLETE, note)
            job.partial = summary()
            raise
        if complete:
            note = None
            set_fetch_status(store, category, FETCH_COMPLETE, None)
        else:
            set_fetch_status(store, category, FETCH_INCOMPLETE, note)
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


def fetch_categories_job(
    store: SessionStore,
    source: WikidataSource,
    categories: Sequence[Category],
    limit: int = DEFAULT_LIMIT,
    title: str = "",
) -> Job[list[FetchSummary]]:
    """One job that fetches each of ``categories`` in turn, as :func:`fetch_category_job`
    does (pages committed as they arrive, resumed where the session stopped, each
    category's fetch status recorded). Progress counts the categories, so the status
    bar can say how long the rest will take. Cancelled (or failed), it keeps every
    category fetched so far and the pages of the one it was in; ``job.partial`` lists
    the summaries of those finished."""
    check_int(limit, "limit", 1, 10_000_000)
    todo = list(categories)

    def run(ctx: JobContext) -> list[FetchSummary]:
        done: list[FetchSummary] = []
        job.partial = done
        for number, category in enumerate(todo):
            ctx.check_cancelled()
            ctx.progress(number, len(todo), category.name)
            inner = fetch_category_job(store, source, category, limit=limit)
            # The category's own reports (its pages) only pass on the cancel token.
            done.append(inner.run(JobContext(ctx.token)))
        ctx.progress(len(todo), len(todo), "done")
        return done

    job: Job[list[FetchSummary]] = Job(
        title=title or f"Fetch {len(todo)} categories from {source.name}",
        run=run,
        kind="wikidata.fetch_many",
        writes=frozenset({Topic.MEMBERS, Topic.CATEGORIES}),
        params={"categories": [c.name for c in todo], "source": source.name, "limit": limit},
    )
    return job


def fetch_entity(store: SessionStore, source: WikidataSource, qid: str) -> EntityDetails:
    """Fetch one entity's details and keep them in the session."""
    details = source.entity(qid)
    store_entity(store, details, source.name)
    return details


class Members(list[EntityRecord]):
    """Members read without a session; ``incomplete`` says why reading stopped early."""

    incomplete: str | None = None


def collect_members_job(
    source: WikidataSource,
    category: Category,
    limit: int = DEFAULT_LIMIT,
    page_size: int = 1000,
) -> Job[list[EntityRecord]]:
    """A job that pages through a category's members without a session (for a quick
    look at a distribution). Cancelled, it hands back the members that arrived. Each
    member counts once; paging stops when a page brings nothing new."""
    check_int(limit, "limit", 1, 10_000_000)
    check_int(page_size, "page size", 1, 50_000)

    def run(ctx: JobContext) -> list[EntityRecord]:
        members = Members()
        seen: set[str] = set()
        offset = 0
        job.partial = members
        while len(members) < limit:
            ctx.check_cancelled()
            want = min(page_size, limit - len(members))
            page = source.members_page(category, offset, want, token=ctx.token)
            limited = page.limited(want)
            offset += len(limited.entities)
            new = [e for e in limited.entities if e.qid not in seen]
            seen.update(e.qid for e in new)
            members.extend(new)
            if limited.overflow:
                members.incomplete = _overflow_note(page, want)
            ctx.progress(len(members), limit, f"{len(members):,} members")
            if len(page.entities) < want:
                break
            if not new:
                members.incomplete = _join(
                    members.incomplete,
                    (
                        f"a page at offset {offset - len(limited.entities):,} brought no new "
                        "member; the source may ignore OFFSET, so paging stopped"
                    ),
                )
                break
        else:
            members.incomplete = members.incomplete or (
                f"stopped at the limit of {limit:,} members; the category may have more"
            )
        return members

    job: Job[list[EntityRecord]] = Job(
        title=f"Read {category.name} from {source.name}",
        run=run,
        kind="wikidata.collect",
        params={"category": category.name, "source": source.name, "limit": limit},
    )
    return job
