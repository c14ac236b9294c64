"""What a Wikidata source is: anything that gives members pages and entity details.

Three kinds: the live service or another SPARQL endpoint (:mod:`core.wikidata.endpoint`),
the bundled demo store (:mod:`core.wikidata.embedded`) and the session's copy
(:mod:`core.wikidata.cache`). All sources run the query texts of
:mod:`core.wikidata.queries`. Results are first turned into neutral rows (variable ->
:class:`~core.wikidata.rows.RdfTerm`), whatever their origin (SPARQL JSON or pyoxigraph
solutions), and one converter (:mod:`core.wikidata.rows`) makes records from those rows,
so two sources over the same data return equal records.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from core.errors import UserFacingError
from core.jobs import CancelToken, JobCancelled
from core.wikidata.categories import Category
from core.wikidata.records import EntityDetails, MembersPage


class SourceError(UserFacingError):
    """A source could not give an answer; the message names the source and the fault."""


@runtime_checkable
class WikidataSource(Protocol):
    name: str  # shown in the badge, e.g. "Wikidata Query Service"
    kind: str  # "live" | "endpoint" | "embedded" | "cache"

    def members_page(
        self, category: Category, offset: int, limit: int, token: CancelToken | None = None
    ) -> MembersPage: ...

    def entity(self, qid: str, token: CancelToken | None = None) -> EntityDetails: ...


def check_cancelled(token: CancelToken | None) -> None:
    if token is not None and token.cancelled:
        raise JobCancelled()
