"""Turn what a user names ("embedded", "live", "cache", a URL) into a source."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from core.wikidata.sources import (
    DEFAULT_CONTACT,
    WIKIDATA_QUERY_SERVICE,
    EmbeddedSource,
    SourceError,
    SparqlEndpointSource,
    WikidataSource,
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
) -> WikidataSource:
    """``embedded`` (default demo data), ``live`` (query.wikidata.org), ``cache`` (the
    session's own copy, offline) or the http(s) URL of any SPARQL 1.1 endpoint.

    ``contact`` (an e-mail or URL) goes into the User-Agent, as the Wikidata Query Service
    asks of every client; it defaults to the ``TAILLENS_CONTACT`` environment variable."""
    kind = spec.strip()
    contact = contact or os.environ.get("TAILLENS_CONTACT") or DEFAULT_CONTACT
    if kind == "embedded":
        return load_demo_source()
    if kind == "live":
        return SparqlEndpointSource(WIKIDATA_QUERY_SERVICE, user_agent_contact=contact,
                                    on_wait=on_wait, timeout_s=timeout_s)
    if kind == "cache":
        if store is None:
            raise SourceError("--source cache needs a session (--session FILE)")
        from core.wikidata.cache import SessionCacheSource

        return SessionCacheSource(store)
    if kind.startswith(("http://", "https://")) and " " not in kind:
        return SparqlEndpointSource(kind, user_agent_contact=contact, on_wait=on_wait,
                                    timeout_s=timeout_s)
    raise SourceError(
        f"unknown source {spec!r}: use embedded, live, cache or the http(s) URL of a SPARQL "
        "endpoint"
    )
