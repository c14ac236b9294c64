"""Turn what a user names ("embedded", "live", "cache", a URL) into a source."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from core.wikidata.sources import (
    DEFAULT_BUDGET_S,
    DEFAULT_CONTACT,
    DEFAULT_MAX_RESPONSE_BYTES,
    WIKIDATA_QUERY_SERVICE,
    EmbeddedSource,
    SourceError,
    SparqlEndpointSource,
    WikidataSource,
    check_header_value,
)
from resources import resource_path

if TYPE_CHECKING:
    from core.store import SessionStore

DEMO_SNAPSHOT = resource_path("demo", "wikidata-demo.nt.gz")
SOURCE_KINDS = ("embedded", "live", "cache")
EMBEDDED_NAME = "Demo data (embedded snapshot, synthetic)"


@lru_cache(maxsize=1)
def load_demo_source() -> EmbeddedSource:
    """The bundled demo snapshot in an in-process Oxigraph store (loaded once, in a few
    seconds; queries only read it, so one copy serves the whole process)."""
    if not DEMO_SNAPSHOT.exists():
        raise SourceError(
            f"The bundled demo snapshot {DEMO_SNAPSHOT} is missing. Reinstall TailLens, or use "
            "--source live or the URL of a SPARQL endpoint."
        )
    return EmbeddedSource.from_file(DEMO_SNAPSHOT, name=EMBEDDED_NAME)


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
    asks of every client; it defaults to the ``TAILLENS_CONTACT`` environment variable.
    ``budget_s`` bounds each request (its retries and waits included) and
    ``max_response_bytes`` the size of each answer."""
    kind = spec.strip()
    contact = check_header_value(
        contact or os.environ.get("TAILLENS_CONTACT") or DEFAULT_CONTACT, "The contact"
    )
    limits = {"on_wait": on_wait, "timeout_s": min(timeout_s, budget_s), "budget_s": budget_s,
              "max_response_bytes": max_response_bytes, "user_agent_contact": contact}
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
