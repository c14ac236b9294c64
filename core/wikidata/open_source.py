"""Turn what a user names ("embedded", "live", "cache", a URL) into a source."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from core.wikidata.sources import (
    CONTACT_WHY,
    DEFAULT_BUDGET_S,
    DEFAULT_MAX_RESPONSE_BYTES,
    NO_CONTACT,
    WIKIDATA_QUERY_SERVICE,
    EmbeddedSource,
    SourceError,
    SparqlEndpointSource,
    WikidataSource,
    check_header_value,
)
from resources import resource_path

if TYPE_CHECKING:
    from core.jobs import CancelToken
    from core.store import SessionStore
    from core.wikidata.categories import Category
    from core.wikidata.records import EntityDetails, MembersPage
    from core.wikidata.sources import RdfTerm

DEMO_SNAPSHOT = resource_path("demo", "wikidata-demo.nt.gz")
SOURCE_KINDS = ("embedded", "live", "cache")
EMBEDDED_NAME = "Demo data (embedded snapshot, synthetic)"


_demo_loading = threading.Lock()


def load_demo_source() -> EmbeddedSource:
    """The bundled demo snapshot in an Oxigraph store (opened once per process; queries
    only read it, so one serves the whole process; the first process on a machine builds
    its on-disk copy in seconds). Callers at the
    same time (the jobs of :class:`LazyDemoSource`, a CLI command) wait for the one load."""
    with _demo_loading:
        return _load_demo_source()


@lru_cache(maxsize=1)
def _load_demo_source() -> EmbeddedSource:
    if not DEMO_SNAPSHOT.exists():
        raise SourceError(
            f"The bundled demo snapshot {DEMO_SNAPSHOT} is missing. Reinstall TailLens, or use "
            "--source live or the URL of a SPARQL endpoint."
        )
    from core.desktop.paths import cache_dir

    # On disk in the cache folder, built by the first process that needs it: each later
    # one opens it at once and holds tens of MB instead of 250 (EmbeddedSource.from_file).
    return EmbeddedSource.from_file(
        DEMO_SNAPSHOT, name=EMBEDDED_NAME, cache=cache_dir(create=False) / "demo"
    )


class LazyDemoSource:
    """The demo snapshot as a source that loads it on first use, in whichever job asks
    first (a fetch, an entity's claims, a search): choosing the demo data costs nothing,
    and a window that only shows a saved session never pays its seconds of CPU and
    hundreds of MB. :func:`load_demo_source` loads it once per process."""

    kind = "embedded"
    name = EMBEDDED_NAME

    @property
    def loaded(self) -> bool:
        return _load_demo_source.cache_info().currsize > 0

    def prepare(self, note: Callable[[str], None]) -> None:
        """Load the snapshot now if it is not yet, saying so through ``note`` first."""
        if not self.loaded:
            note("loading the demo snapshot (once per run)")
            load_demo_source()

    def members_page(
        self, category: Category, offset: int, limit: int, token: CancelToken | None = None
    ) -> MembersPage:
        return load_demo_source().members_page(category, offset, limit, token)

    def entity(self, qid: str, token: CancelToken | None = None) -> EntityDetails:
        return load_demo_source().entity(qid, token)

    def select(self, query: str, token: CancelToken | None = None) -> list[dict[str, RdfTerm]]:
        return load_demo_source().select(query, token)


def contact_for(contact: str | None = None) -> str | None:
    """The contact the user gave (``contact``, else ``$TAILLENS_CONTACT``), checked for use
    in a header; None when there is none (never a made-up address)."""
    given = contact if contact and contact.strip() else os.environ.get("TAILLENS_CONTACT", "")
    if not given.strip():
        return None
    return check_header_value(given, "The contact").strip()  # a line break is refused


def needs_contact(spec: str, contact: str | None = None) -> bool:
    """True when ``spec`` is the public Wikidata service and no contact was given: the app
    then asks for one (GUI) or says how to give one (CLI), explaining why (CONTACT_WHY)."""
    kind = spec.strip()
    return (kind == "live" or kind == WIKIDATA_QUERY_SERVICE) and contact_for(contact) is None


def cli_contact_notice(spec: str, contact: str | None = None) -> str | None:
    """For the command line: what to tell a user who fetches from the public Wikidata
    service without a contact (None when there is nothing to say)."""
    if not needs_contact(spec, contact):
        return None
    return (
        f"note: no contact given, so the User-Agent says '{NO_CONTACT}'. {CONTACT_WHY} "
        "Give yours with --contact YOUR-EMAIL-OR-URL or by setting TAILLENS_CONTACT."
    )


def open_source(
    spec: str,
    store: SessionStore | None = None,
    on_wait: Callable[[float, str], None] | None = None,
    timeout_s: float = 60,
    contact: str | None = None,
    budget_s: float = DEFAULT_BUDGET_S,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
) -> WikidataSource:
    """``embedded`` (default demo data), ``live`` (query.wikidata.org), ``cache`` (the
    session's own copy, offline) or the http(s) URL of any SPARQL 1.1 endpoint.

    ``contact`` (an e-mail or URL) goes into the User-Agent, as the Wikidata Query Service
    asks of every client; it defaults to the ``TAILLENS_CONTACT`` environment variable, and
    with neither the User-Agent says that no contact was given (see ``contact_for``).
    ``budget_s`` bounds each request (its retries and waits included) and
    ``max_response_bytes`` the size of each answer."""
    kind = spec.strip()
    contact = contact_for(contact)
    limits = {
        "on_wait": on_wait,
        "timeout_s": min(timeout_s, budget_s),
        "budget_s": budget_s,
        "max_response_bytes": max_response_bytes,
        "user_agent_contact": contact,
    }
    if kind == "embedded":
        return load_demo_source()
    if kind == "live":
        return SparqlEndpointSource(WIKIDATA_QUERY_SERVICE, **limits)  # type: ignore[arg-type]
    if kind == "cache":
        if store is None:
            raise SourceError("--source cache needs a session (--session FILE)")
        from core.wikidata.cache import SessionCacheSource

        return SessionCacheSource(store)
    if kind.startswith(("http://", "https://")) and not any(ch.isspace() for ch in kind):
        return SparqlEndpointSource(kind, **limits)  # type: ignore[arg-type]
    raise SourceError(
        f"unknown source {spec!r}: use embedded, live, cache or the http(s) URL of a SPARQL "
        "endpoint"
    )
