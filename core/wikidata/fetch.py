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


@dataclass
class _CategoryFetch:
    """One category's fetch as it goes: where it started, where it is, what to say."""

    store: SessionStore
    source: WikidataSource
    category: Category
    limit: int
    page_size: int
    job: Job[FetchSummary] | None = None
    start: int = 0
    offset: int = 0
    pages: int = 0
    note: str | None = None

    def summary(self) -> FetchSummary:
        fetched = self.offset - self.start
        name = self.category.name
        return FetchSummary(name, fetched, self.offset, self.pages, self.start, self.note)

    def _report(self) -> None:
        if self.job is not None:
            self.job.partial = self.summary()

    def _status(self, status: str, note: str | None) -> None:
        set_fetch_status(self.store, self.category, status, note)

    def run(self, ctx: JobContext) -> FetchSummary:
        self.start = self.offset = fetched_count(self.store, self.category.name)
        self.pages, self.note = 0, None
        self._report()
        prepare = getattr(self.source, "prepare", None)
        if prepare is not None:  # the demo snapshot, loaded on first use: said first
            prepare(lambda note: ctx.progress(self.offset, self.limit, note))
        ctx.progress(self.offset, self.limit, "resuming" if self.start else "starting")
        if self.offset >= self.limit:
            self.note = incomplete_note(*fetch_status(self.store, self.category.name))
            return self.summary()
        self._status(FETCH_INCOMPLETE, "fetch in progress or interrupted")
        try:
            complete = self._pages(ctx)
        except JobCancelled:
            self._stopped(f"cancelled after {self.offset:,} members")
            raise
        except Exception as exc:
            self._stopped(f"stopped after {self.offset:,} members: {exc}")
            raise
        if complete:
            self.note = None
            self._status(FETCH_COMPLETE, None)
        else:
            self._status(FETCH_INCOMPLETE, self.note)
        return self.summary()

    def _stopped(self, note: str) -> None:
        self.note = note
        self._status(FETCH_INCOMPLETE, note)
        self._report()

    def _pages(self, ctx: JobContext) -> bool:
        """Fetch pages until the category's end (True: a short page with nothing left
        out), the limit, or a page that brings nothing new (False, the note says why)."""
        while self.offset < self.limit:
            ctx.check_cancelled()
            want = min(self.page_size, self.limit - self.offset)
            page = self.source.members_page(self.category, self.offset, want, token=ctx.token)
            limited = page.limited(want)
            store_members_page(self.store, self.category, limited, self.source.name)
            self.pages += 1
            before = self.offset
            # The session decides the offset: a page may repeat members already held.
            self.offset = fetched_count(self.store, self.category.name)
            if limited.overflow:
                self.note = _overflow_note(page, want)
            self._report()
            ctx.progress(self.offset, self.limit, f"page {self.pages}")
            if len(page.entities) < want:
                return not self.note  # a short page is the last one
            if self.offset == before:
                self.note = _join(
                    self.note,
                    (
                        f"page {self.pages} (offset {before:,}) brought no member the session "
                        "did not already hold; the source may ignore OFFSET, so paging stopped"
                    ),
                )
                return False
        self.note = self.note or (
            f"stopped at the limit of {self.limit:,} members; the category may have more"
        )
        return False


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
    fetch = _CategoryFetch(store, source, category, limit, page_size)
    job: Job[FetchSummary] = Job(
        title=f"Fetch {category.name} from {source.name}",
        run=fetch.run,
        kind="wikidata.fetch",
        writes=frozenset({Topic.MEMBERS, Topic.CATEGORIES}),
        params={
            "category": category.name,
            "source": source.name,
            "limit": limit,
            "page_size": page_size,
        },
    )
    fetch.job = job
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
