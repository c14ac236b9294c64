"""Where Wikidata records come from: the live service, another endpoint, the demo store.

All sources run the query texts of :mod:`core.wikidata.queries`. Results are first
turned into neutral rows (variable -> :class:`RdfTerm`), whatever their origin (SPARQL
JSON or pyoxigraph solutions), and one converter makes records from those rows, so two
sources over the same data return equal records.
"""

from __future__ import annotations

import email.utils
import gzip
import http.client
import re
import socket
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import core
from core.errors import UserFacingError
from core.io.bounded_read import (
    WORDS_BYTES,
    BrokenOff,
    OverCap,
    OverDeadline,
    Stalled,
    open_by,
    read_bounded,
    server_words,
)
from core.io.files import MB, check_readable
from core.jobs import CancelToken, JobCancelled
from core.vocab import LANGUAGES
from core.wikidata import queries
from core.wikidata.categories import PID_RE, QID_RE, Category
from core.wikidata.records import ClaimRecord, EntityDetails, EntityRecord, MembersPage, Term

if TYPE_CHECKING:
    import pyoxigraph

WIKIDATA_QUERY_SERVICE = "https://query.wikidata.org/sparql"
NO_CONTACT = "no contact given"  # said honestly in the User-Agent when the user gave none
CONTACT_WHY = (
    "The Wikidata Query Service asks every client to name a contact (an e-mail address or a "
    "web page) in its User-Agent, so its operators can reach you instead of blocking you "
    "(Wikimedia's User-Agent policy, https://meta.wikimedia.org/wiki/User-Agent_policy)."
)


def user_agent(contact: str | None, library: str = "") -> str:
    """``TailLens/VERSION (CONTACT)``, naming only a contact the user gave, else saying
    honestly that none was given; ``library`` (e.g. ``SPARQLWrapper/2.0``) is appended."""
    words = contact.strip() if contact and contact.strip() else NO_CONTACT
    agent = f"{core.APP_NAME}/{core.__version__} ({words})"
    return f"{agent} {library}" if library else agent


XSD = "http://www.w3.org/2001/XMLSchema#"
_INT_TYPES = {XSD + t for t in ("integer", "int", "long", "nonNegativeInteger", "decimal")}

WaitCallback = Callable[[float, str], None]


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


# -- neutral rows ---------------------------------------------------------------------


@dataclass(frozen=True)
class RdfTerm:
    kind: str  # "uri" | "literal" | "bnode"
    value: str
    lang: str | None = None
    datatype: str | None = None


Row = Mapping[str, RdfTerm]


class BadResults(ValueError):
    """Results that do not have the shape a query promises; the caller names the source."""


class Rows(list[dict[str, RdfTerm]]):
    """Neutral rows; ``dropped`` counts the rows past ``max_rows`` left unread."""

    dropped = 0


def rows_from_json(data: Any, max_rows: int | None = None) -> Rows:
    """SPARQL 1.1 JSON results -> neutral rows; any malformed part raises BadResults.
    Past ``max_rows`` rows are only counted (a server that ignores LIMIT)."""
    if not isinstance(data, dict):
        raise BadResults("the answer is not a JSON object")
    results = data.get("results")
    bindings = results.get("bindings") if isinstance(results, dict) else None
    if not isinstance(bindings, list):
        raise BadResults("the answer has no results.bindings list")
    rows = Rows()
    if max_rows is not None and len(bindings) > max_rows:
        rows.dropped = len(bindings) - max_rows
        bindings = bindings[:max_rows]
    for index, binding in enumerate(bindings):
        if not isinstance(binding, dict):
            raise BadResults(f"result {index} is not an object")
        row = {}
        for var, term in binding.items():
            if not isinstance(term, dict) or not isinstance(term.get("value"), str):
                raise BadResults(f"result {index} has a malformed value for ?{var}")
            kind = term.get("type")
            if kind == "typed-literal":  # the SPARQL XML-era spelling some servers use
                kind = "literal"
            if kind not in ("uri", "literal", "bnode"):
                raise BadResults(f"result {index} has an unknown term type {kind!r} for ?{var}")
            row[var] = RdfTerm(kind, term["value"], term.get("xml:lang"), term.get("datatype"))
        rows.append(row)
    return rows


def rows_from_oxigraph(solutions: Any) -> list[dict[str, RdfTerm]]:
    import pyoxigraph

    names = [v.value for v in solutions.variables]
    rows = []
    for solution in solutions:
        row = {}
        for name in names:
            term = solution[name]
            if term is None:
                continue
            if isinstance(term, pyoxigraph.NamedNode):
                row[name] = RdfTerm("uri", term.value)
            elif isinstance(term, pyoxigraph.BlankNode):
                row[name] = RdfTerm("bnode", term.value)
            else:
                datatype = term.datatype.value
                lang = term.language
                # JSON results omit xsd:string and rdf:langString; match them.
                if lang or datatype == XSD + "string":
                    datatype = None
                row[name] = RdfTerm("literal", term.value, lang, datatype)
        rows.append(row)
    return rows


# -- converters -----------------------------------------------------------------------


def _need(row: Row, var: str, index: int) -> RdfTerm:
    term = row.get(var)
    if term is None:
        raise BadResults(f"result {index} lacks ?{var}")
    return term


def _entity_id(term: RdfTerm, index: int, var: str) -> str:
    if term.kind != "uri" or not term.value.startswith(queries.ENTITY):
        raise BadResults(f"result {index}: ?{var} is not a Wikidata entity ({term.value!r})")
    local = term.value[len(queries.ENTITY) :]
    if not (QID_RE.match(local) or PID_RE.match(local)):
        raise BadResults(f"result {index}: ?{var} is not a Wikidata id ({term.value!r})")
    return local


def _count(row: Row, var: str, index: int) -> int:
    term = row.get(var)
    if term is None:
        return 0  # items without the count triple (rare) rank as having none
    try:
        value = int(term.value)
    except ValueError:
        raise BadResults(f"result {index}: ?{var} is not a number ({term.value!r})") from None
    if term.kind != "literal" or value < 0:
        raise BadResults(f"result {index}: ?{var} is not a count ({term.value!r})")
    return value


def _flag(row: Row, var: str, index: int) -> bool:
    term = _need(row, var, index)
    if term.kind != "literal" or term.value not in ("true", "false", "1", "0"):
        raise BadResults(f"result {index}: ?{var} is not a boolean ({term.value!r})")
    return term.value in ("true", "1")


def members_from_rows(category: Category, offset: int, rows: Iterable[Row]) -> MembersPage:
    records: dict[str, EntityRecord] = {}
    for index, row in enumerate(rows):
        qid = _entity_id(_need(row, "item", index), index, "item")
        if not QID_RE.match(qid):
            raise BadResults(f"result {index}: ?item {qid} is not an item")
        label = row.get("label")
        if label is not None and label.kind != "literal":
            raise BadResults(f"result {index}: ?label is not text")
        wikis = frozenset(lang for lang in LANGUAGES if _flag(row, f"wiki_{lang}", index))
        record = EntityRecord(
            qid,
            label.value if label is not None else None,
            _count(row, "statements", index),
            _count(row, "sitelinks", index),
            wikis,
        )
        # Two English labels would give two rows; the first one wins, deterministically
        # only because endpoints return them in a stable order, which is good enough.
        records.setdefault(qid, record)
    ordered = tuple(records[q] for q in sorted(records))
    return MembersPage(category.name, offset, ordered)


def _statement_id(term: RdfTerm, index: int) -> str | None:
    # wds:Q42-F078E5B3-... is the RDF form of the statement id Q42$F078E5B3-...
    if term.kind != "uri":
        return None
    local = term.value.rsplit("/", 1)[-1]
    head, sep, tail = local.partition("-")
    if not sep or not QID_RE.match(head):
        return local or None
    return f"{head}${tail}"


def terms_from_rows(qid: str, rows: Iterable[Row]) -> list[Term]:
    seen: dict[tuple[str, str], list[str]] = {}
    for index, row in enumerate(rows):
        kind = _need(row, "kind", index).value
        text = _need(row, "text", index)
        if kind not in ("label", "description", "alias") or text.lang not in LANGUAGES:
            raise BadResults(f"result {index}: unexpected term {kind!r}@{text.lang}")
        seen.setdefault((kind, text.lang), []).append(text.value)
    terms: list[Term] = []
    for (kind, lang), texts in seen.items():
        unique = sorted(set(texts))
        if kind != "alias":
            unique = unique[:1]  # one label/description per language
        terms.extend(Term(qid, lang, kind, text, i) for i, text in enumerate(unique))
    return terms


def details_from_rows(
    qid: str, term_rows: Iterable[Row], claim_rows: Iterable[Row]
) -> EntityDetails:
    terms = terms_from_rows(qid, term_rows)
    claims: dict[str, ClaimRecord] = {}
    property_types: dict[str, str] = {}
    labels: dict[tuple[str, str], str] = {}
    for index, row in enumerate(claim_rows):
        if "labelled" in row:
            item = _entity_id(row["labelled"], index, "labelled")
            text = _need(row, "ltext", index)
            if text.lang in LANGUAGES and item != qid:
                labels.setdefault((item, text.lang), text.value)
            continue
        st = _need(row, "st", index)
        pid = _entity_id(_need(row, "prop", index), index, "prop")
        ptype_iri = _need(row, "ptype", index).value
        local = ptype_iri.removeprefix(queries.WIKIBASE)
        datatype = queries.PROPERTY_TYPES.get(local, local.lower())
        rank_iri = _need(row, "rank", index).value
        if rank_iri not in queries.RANK_NAMES:
            raise BadResults(f"result {index}: unknown rank {rank_iri!r}")
        property_types[pid] = datatype
        statement_id = _statement_id(st, index)
        value_term = row.get("value")
        value: str | None = None
        value_json: dict[str, Any] | None = None
        if "novalue" in row:
            snak = "novalue"
        elif (
            value_term is None
            or value_term.kind == "bnode"
            or (value_term.value.startswith(queries.GENID))
        ):
            snak = "somevalue"
        else:
            snak = "value"
            if value_term.kind == "uri" and value_term.value.startswith(queries.ENTITY):
                value = value_term.value[len(queries.ENTITY) :]
            else:
                value = value_term.value
            extra: dict[str, Any] = {}
            if value_term.lang:
                extra["language"] = value_term.lang
            if "precision" in row:
                extra["precision"] = int(row["precision"].value)
            if "unit" in row:
                unit = row["unit"].value
                extra["unit"] = unit.removeprefix(queries.ENTITY) if unit != "1" else "1"
            value_json = extra or None
        key = statement_id or f"{pid}|{snak}|{value}|{index}"
        claims.setdefault(
            key,
            ClaimRecord(
                statement_id,
                qid,
                pid,
                value,
                datatype,
                queries.RANK_NAMES[rank_iri],
                snak,
                value_json,
            ),
        )
    terms.extend(Term(item, lang, "label", text) for (item, lang), text in labels.items())
    return canonical_details(qid, terms, claims.values(), property_types)


def canonical_details(
    qid: str, terms: Iterable[Term], claims: Iterable[ClaimRecord], property_types: dict[str, str]
) -> EntityDetails:
    """Details in one fixed order, so equal data gives equal records from any source."""

    def id_key(item_id: str) -> tuple[str, int]:
        return (item_id[:1], int(item_id[1:]) if item_id[1:].isdigit() else 0)

    kinds = {"label": 0, "description": 1, "alias": 2}
    return EntityDetails(
        qid,
        tuple(
            sorted(
                terms,
                key=lambda t: (
                    t.item_id != qid,
                    id_key(t.item_id),
                    kinds.get(t.kind, 3),
                    t.lang,
                    t.ordinal,
                ),
            )
        ),
        tuple(
            sorted(
                claims,
                key=lambda c: (
                    id_key(c.property_pid),
                    c.statement_id or "",
                    c.value or "",
                ),
            )
        ),
        dict(sorted(property_types.items(), key=lambda kv: id_key(kv[0]))),
    )


# -- the embedded store ---------------------------------------------------------------


# The most an embedded source reads (after decompression): the bundled demo data is 100 MB.
DEMO_DATA_LIMIT = 512 * MB


def _read_rdf(path: Path, compressed: bool) -> bytes:
    # Read (and decompressed) up to the limit only: a few kilobytes of gzip can stand for
    # gigabytes.
    with gzip.open(path, "rb") if compressed else path.open("rb") as handle:
        data = handle.read(DEMO_DATA_LIMIT + 1)
    if len(data) > DEMO_DATA_LIMIT:
        raise _too_large(path, compressed)
    return data


def _too_large(path: Path, compressed: bool) -> SourceError:
    return SourceError(
        f"{path.name}: the demo data holds more than {DEMO_DATA_LIMIT // MB:,} MB"
        + (" once decompressed" if compressed else "")
        + "; use a SPARQL endpoint for data this large"
    )


# N-Triples lines per bulk load into an on-disk store. Oxigraph's bulk loader holds what it
# is given several times over: the 95 MB demo data in one call peaked near 680 MB, in
# batches of this size about 110 MB.
_BATCH_LINES = 50_000


def _rdf_batches(path: Path, compressed: bool, rdf_format: Any) -> Iterator[bytes]:
    """The file's content in pieces Oxigraph can load one after another: N-Triples (one
    statement a line) in batches of lines; anything else whole. Within DEMO_DATA_LIMIT,
    a line without an end included."""
    import pyoxigraph

    if rdf_format != pyoxigraph.RdfFormat.N_TRIPLES:
        yield _read_rdf(path, compressed)
        return
    left = DEMO_DATA_LIMIT + 1
    with gzip.open(path, "rb") if compressed else path.open("rb") as handle:
        while True:
            lines = []
            for _ in range(_BATCH_LINES):
                line = handle.readline(left)
                left -= len(line)
                if not line:
                    break
                lines.append(line)
            if left <= 0:
                raise _too_large(path, compressed)
            if not lines:
                return
            yield b"".join(lines)


# Written last into a finished on-disk store: a folder without it is a build that stopped.
_STORE_DONE = "taillens-store-complete"


def _cached_store(
    path: Path, cache: Path, compressed: bool, rdf_format: Any
) -> pyoxigraph.Store | None:
    """``path``'s triples in an on-disk Oxigraph store under ``cache``, opened read-only;
    built first when no finished one is there. None when the folder cannot hold one (no
    space, read-only, a store Oxigraph refuses): the caller then loads into memory.

    The store's name is the file's SHA-256 and Oxigraph's version, so an edited snapshot
    or an upgraded Oxigraph gets its own. A build goes into a fresh folder beside it and
    is renamed into place only when finished, so two processes building at once (two
    windows, parallel commands) never read half a store: the second rename fails and
    its copy is dropped."""
    import hashlib
    import os
    import shutil
    import tempfile

    import pyoxigraph

    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    version = re.sub(r"[^0-9A-Za-z.]", "_", str(getattr(pyoxigraph, "__version__", "0")))
    final = cache / f"oxigraph-{version}-{digest.hexdigest()[:32]}"
    if not (final / _STORE_DONE).is_file():
        try:
            cache.mkdir(parents=True, exist_ok=True)
            building = Path(tempfile.mkdtemp(prefix=".building-", dir=cache))
        except OSError:
            return None
        try:
            store = pyoxigraph.Store(str(building))
            for batch in _rdf_batches(path, compressed, rdf_format):
                store.bulk_load(batch, format=rdf_format)
            store.flush()
            store.optimize()
            del store  # closes the database before its folder moves
            (building / _STORE_DONE).write_text(path.name + "\n", "utf-8")
            if final.exists():  # a stopped build (no completion mark): replaced
                shutil.rmtree(final, ignore_errors=True)
            os.rename(building, final)
        except (OSError, EOFError, zlib.error):
            shutil.rmtree(building, ignore_errors=True)
            if not (final / _STORE_DONE).is_file():  # else another process won the rename
                return None
        except SyntaxError as exc:
            shutil.rmtree(building, ignore_errors=True)
            raise SourceError(f"Cannot load the demo data {path}: {exc}") from exc
        except BaseException:  # too large, or stopped: no half-built folder stays behind
            shutil.rmtree(building, ignore_errors=True)
            raise
    try:
        return pyoxigraph.Store.read_only(str(final))
    except OSError:
        return None


class EmbeddedSource:
    """An in-memory Oxigraph store (the bundled demo snapshot), offline and instant."""

    kind = "embedded"

    def __init__(
        self, store: pyoxigraph.Store, name: str = "Demo data (embedded snapshot)"
    ) -> None:
        self.store = store
        self.name = name

    @classmethod
    def from_file(
        cls, path: Path | str, name: str | None = None, cache: Path | None = None
    ) -> EmbeddedSource:
        """Load an N-Triples or Turtle file (optionally gzip-compressed).

        Without ``cache`` the triples are held in memory (about 2.5 times the decompressed
        size: 250 MB for the bundled demo data, rebuilt in seconds of CPU by every process).
        With it, they go once into an on-disk store in that folder, named by the file's
        SHA-256 (:func:`_cached_store`), which every later process opens read-only at
        once, holding only the pages its queries read."""
        import pyoxigraph

        path = Path(path)
        suffixes = [s.lower() for s in path.suffixes]
        compressed = suffixes[-1:] == [".gz"]
        ext = suffixes[-2] if compressed and len(suffixes) > 1 else suffixes[-1:][0]
        formats = {".nt": pyoxigraph.RdfFormat.N_TRIPLES, ".ttl": pyoxigraph.RdfFormat.TURTLE}
        if ext not in formats:
            raise SourceError(f"{path.name}: demo data must be a .nt or .ttl file (optionally .gz)")
        check_readable(path, what="the demo data", error=SourceError)
        label = name or f"Demo data ({path.name})"
        if cache is not None:
            store = _cached_store(path, cache, compressed, formats[ext])
            if store is not None:
                return cls(store, label)
        try:
            store = pyoxigraph.Store()
            store.load(_read_rdf(path, compressed), format=formats[ext])
        except (OSError, SyntaxError, EOFError, zlib.error) as exc:
            raise SourceError(f"Cannot load the demo data {path}: {exc}") from exc
        return cls(store, label)

    def _select(self, query: str) -> list[dict[str, RdfTerm]]:
        try:
            # Oxigraph runs a SERVICE clause itself (over HTTP), so only checked texts.
            return rows_from_oxigraph(self.store.query(queries.outgoing(query)))
        except (SyntaxError, OSError) as exc:
            raise SourceError(f"{self.name}: the query failed: {exc}") from exc

    def select(self, query: str, token: CancelToken | None = None) -> list[dict[str, RdfTerm]]:
        """Run a SELECT built by :mod:`core.wikidata.queries`."""
        _check(token)
        return self._select(query)

    def members_page(
        self, category: Category, offset: int, limit: int, token: CancelToken | None = None
    ) -> MembersPage:
        query = queries.members_page(category, limit, offset)
        _check(token)
        try:
            return members_from_rows(category, offset, self._select(query))
        except BadResults as exc:
            raise SourceError(f"{self.name}: unexpected results: {exc}") from exc

    def entity(self, qid: str, token: CancelToken | None = None) -> EntityDetails:
        term_query, claim_query = queries.entity_terms(qid), queries.entity_claims(qid)
        _check(token)
        try:
            return details_from_rows(qid, self._select(term_query), self._select(claim_query))
        except BadResults as exc:
            raise SourceError(f"{self.name}: unexpected results: {exc}") from exc


def _check(token: CancelToken | None) -> None:
    if token is not None and token.cancelled:
        raise JobCancelled()


# -- HTTP endpoints -------------------------------------------------------------------

# Hard limits of one request (METHODS has no figure for these; they are settings: the
# CLI's --time-budget and --max-response-mb, SparqlEndpointSource's budget_s and
# max_response_bytes). A members page of 1,000 items is about 0.5 MB of JSON and the
# claims of a very large item a few MB, so 64 MB leaves room and still bounds memory.
DEFAULT_BUDGET_S = 60.0
DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024


_DIGITS = re.compile(r"[0-9]+")


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


class _OverBudget(Exception):
    """The request's time budget ran out while an answer was arriving."""


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if _DIGITS.fullmatch(value):  # ASCII digits only: str.isdigit() also takes "²"
        return float(value) if len(value) <= 12 else 1e12
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    try:
        stamp = when.timestamp()
    except (OverflowError, ValueError, OSError):
        return None
    return max(0.0, stamp - (time.time() if now is None else now))


def check_header_value(value: str, what: str) -> str:
    """Refuse what cannot go into an HTTP header unchanged: line breaks (which would
    start a header of their own), other control characters, and non-Latin-1 text."""
    bad = next((ch for ch in value if ord(ch) < 0x20 or ord(ch) == 0x7F), None)
    if bad is not None:
        raise SourceError(
            f"{what} {value!r} contains the control character {bad!r} (a line break or "
            "similar), which cannot go into an HTTP header; give an e-mail address or URL"
        )
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        raise SourceError(
            f"{what} {value!r} has characters an HTTP header cannot carry; "
            "give an e-mail address or URL in plain ASCII"
        ) from None
    return value


_USER_AGENT_FIX = (
    " The service refuses requests whose User-Agent does not name a contact: run again "
    "with --contact YOUR-EMAIL-OR-URL (or set TAILLENS_CONTACT)."
)


def _user_agent_refusal(words: str) -> bool:
    lowered = words.lower()
    return "user-agent" in lowered or "user agent" in lowered or "robot policy" in lowered


class SparqlEndpointSource:
    """A SPARQL 1.1 endpoint over HTTP, with polite retries and hard limits: every
    request (all its retries and waits included) ends within ``budget_s`` seconds and
    reads at most ``max_response_bytes``."""

    def __init__(
        self,
        url: str = WIKIDATA_QUERY_SERVICE,
        user_agent_contact: str | None = None,
        timeout_s: float = 60,
        max_retries: int = 4,
        backoff_s: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        on_wait: WaitCallback | None = None,
        method: str = "auto",
        max_wait_s: float = 300.0,
        name: str | None = None,
        budget_s: float = DEFAULT_BUDGET_S,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        import SPARQLWrapper

        if user_agent_contact:
            check_header_value(user_agent_contact, "The contact")
        check_header_value(url, "The endpoint address")
        if not budget_s > 0 or not max_response_bytes > 0:
            raise SourceError("the time budget and the response-size cap must be positive")
        self.url = url
        self.kind = "live" if url == WIKIDATA_QUERY_SERVICE else "endpoint"
        self.name = name or (
            "Wikidata Query Service" if self.kind == "live" else f"SPARQL endpoint {url}"
        )
        self.contact = user_agent_contact or None
        self.user_agent = user_agent(
            user_agent_contact, f"SPARQLWrapper/{SPARQLWrapper.__version__}"
        )
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.sleep = sleep
        self.on_wait = on_wait
        self.method = method
        self.max_wait_s = max_wait_s
        self.budget_s = budget_s
        self.max_response_bytes = max_response_bytes
        self.clock = clock
        self.requests = 0  # how many HTTP requests were made; handy for tests and logs

    # -- the protocol ---------------------------------------------------------------

    def members_page(
        self, category: Category, offset: int, limit: int, token: CancelToken | None = None
    ) -> MembersPage:
        query = queries.members_page(category, limit, offset)
        # One row per member is the rule (a second English label adds one); rows far past
        # LIMIT are only counted, so a server that ignores LIMIT costs no more than this.
        rows = self.select(query, token, max_rows=2 * limit + 10)
        try:
            page = members_from_rows(category, offset, rows)
        except BadResults as exc:
            raise SourceError(f"{self.name} sent unexpected results: {exc}") from exc
        page = page.limited(limit)
        if rows.dropped:
            page = MembersPage(
                page.category, page.offset, page.entities, page.overflow + rows.dropped
            )
        return page

    def entity(self, qid: str, token: CancelToken | None = None) -> EntityDetails:
        term_query, claim_query = queries.entity_terms(qid), queries.entity_claims(qid)
        term_rows = self.select(term_query, token)
        claim_rows = self.select(claim_query, token)
        try:
            return details_from_rows(qid, term_rows, claim_rows)
        except BadResults as exc:
            raise SourceError(f"{self.name} sent unexpected results: {exc}") from exc

    # -- requests -------------------------------------------------------------------

    def select(
        self, query: str, token: CancelToken | None = None, max_rows: int | None = None
    ) -> Rows:
        """Run a SELECT, retrying what may pass within the time budget; raise
        SourceError for the rest."""
        query = queries.outgoing(query)  # only texts core.wikidata.queries built and checked
        deadline = self.clock() + self.budget_s
        budget = f"the time budget of {self.budget_s:g} s per request"
        attempt = 0
        while True:
            _check(token)
            try:
                return self._attempt(query, deadline, max_rows)
            except _OverBudget as over:
                raise SourceError(
                    f"{self.name}: {over} within {budget}; stopped. Try again later, or "
                    "raise --time-budget."
                ) from None
            except _Retryable as fault:
                tries = attempt + 1
                gave_up = f"gave up after {tries} attempt{'s' if tries > 1 else ''}"
                if attempt >= self.max_retries:
                    raise SourceError(
                        f"{self.name}: {fault.message} ({gave_up}). Try again later."
                    ) from fault
                delay = self.backoff_s * (2**attempt)
                if fault.retry_after is not None:
                    delay = max(delay, fault.retry_after)
                delay = min(delay, self.max_wait_s)
                left = deadline - self.clock()
                if delay >= left:
                    asked = (
                        f"it asked to wait {fault.retry_after:,.0f} s"
                        if fault.retry_after is not None and fault.retry_after >= left
                        else f"a retry would wait {delay:g} s"
                    )
                    raise SourceError(
                        f"{self.name}: {fault.message}; {asked}, more than the "
                        f"{max(left, 0):.0f} s left of {budget} ({gave_up}). "
                        "Try again later, or raise --time-budget."
                    ) from fault
                reason = fault.message
                if fault.retry_after is not None:
                    reason += f"; the server asked to wait {fault.retry_after:,.0f} s"
                self._wait(delay, reason, token)
                attempt += 1

    def _wait(self, seconds: float, reason: str, token: CancelToken | None) -> None:
        # Slices, so a cancel is seen within a fraction of a second and a UI can count down.
        left = seconds
        while left > 0:
            _check(token)
            if self.on_wait is not None:
                self.on_wait(left, reason)
            step = min(0.25, left)
            self.sleep(step)
            left -= step
        _check(token)

    def _request(self, query: str) -> urllib.request.Request:
        from SPARQLWrapper import GET, JSON, POST, SPARQLWrapper

        wrapper = SPARQLWrapper(self.url, agent=self.user_agent)
        wrapper.setQuery(query)
        wrapper.setReturnFormat(JSON)
        # Only the Accept header asks for JSON: extra "format" parameters confuse some
        # servers, and the Query Service honours Accept.
        wrapper.setOnlyConneg(True)
        method = self.method
        if method == "auto":  # GET is cached by the Query Service; long texts need POST
            method = "GET" if len(query) < 6000 else "POST"
        wrapper.setMethod(POST if method == "POST" else GET)
        # SPARQLWrapper builds the request (URL, parameters, headers); we send it, so
        # that the time budget and the size cap apply while the answer is read.
        return wrapper._createRequest()

    def _timeout(self, deadline: float) -> float:
        left = deadline - self.clock()
        if left <= 0:
            raise _OverBudget("no answer arrived")
        return max(0.01, min(float(self.timeout_s), left))

    def _read(
        self, response: Any, deadline: float, cap: int, where: str, truncate: bool = False
    ) -> bytes:
        """The body, read by :func:`core.io.bounded_read.read_bounded` so that neither a slow
        drip nor a huge answer can outlast the budget or the cap (``truncate``: the first
        ``cap`` bytes suffice)."""
        try:
            return read_bounded(
                response,
                deadline=deadline,
                cap=cap,
                idle_timeout_s=float(self.timeout_s),
                clock=self.clock,
                truncate=truncate,
            )
        except OverDeadline as fault:
            raise _OverBudget(fault.message) from fault
        except OverCap as fault:
            raise SourceError(
                f"{self.name}: {where} {fault.message}. Raise --max-response-mb or ask for "
                "less (a smaller --page-size)."
            ) from None
        except (Stalled, BrokenOff) as fault:
            raise _Retryable(f"{where} {fault.message}") from fault

    def _refusal(self, exc: urllib.error.HTTPError, deadline: float) -> bytes:
        try:
            if exc.fp is None:
                return b""
            return self._read(exc, deadline, WORDS_BYTES, "", truncate=True)
        except (SourceError, _Retryable, _OverBudget, OSError, http.client.HTTPException):
            return b""

    def _attempt(self, query: str, deadline: float, max_rows: int | None = None) -> Rows:
        where = f"the endpoint {self.url}"
        self.requests += 1
        try:
            # open_by: dripped headers, which http.client reads itself, end at the budget too.
            with open_by(
                self._request(query),
                deadline=deadline,
                idle_timeout_s=self._timeout(deadline),
                clock=self.clock,
            ) as response:
                content_type = response.headers.get("Content-Type", "") or ""
                body = self._read(response, deadline, self.max_response_bytes, where)
        except urllib.error.HTTPError as exc:
            status = exc.code
            words = server_words(self._refusal(exc, deadline))
            said = f"; it said: {words!r}" if words else ""
            if status in (429, 503):
                wait = parse_retry_after(exc.headers.get("Retry-After") if exc.headers else None)
                why = "too many requests" if status == 429 else "service unavailable"
                raise _Retryable(f"{where} answered HTTP {status} ({why}){said}", wait) from exc
            if status >= 500:
                raise _Retryable(f"{where} answered HTTP {status} ({exc.reason}){said}") from exc
            fix = _USER_AGENT_FIX if status == 403 and _user_agent_refusal(words) else ""
            raise SourceError(
                f"{self.name}: {where} answered HTTP {status} ({exc.reason}){said}.{fix}"
            ) from exc
        except (_Retryable, _OverBudget, SourceError):
            raise
        except TimeoutError as exc:
            self._check_budget(deadline, exc)
            raise _Retryable(f"{where} did not answer within {self.timeout_s:g} s") from exc
        except urllib.error.URLError as exc:
            self._check_budget(deadline, exc)
            if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                raise _Retryable(f"{where} did not answer within {self.timeout_s:g} s") from exc
            raise SourceError(
                f"{self.name}: cannot reach {where} ({exc.reason}). "
                "Check the address and your network connection."
            ) from exc
        except http.client.HTTPException as exc:
            self._check_budget(deadline, exc)
            raise _Retryable(f"{where} broke off the answer ({type(exc).__name__})") from exc
        except (ConnectionError, OSError) as exc:
            self._check_budget(deadline, exc)
            raise SourceError(f"{self.name}: cannot reach {where} ({exc}).") from exc
        except ValueError as exc:  # an address urllib cannot use
            raise SourceError(f"{self.name}: cannot use the address {self.url} ({exc})") from exc
        return self._decode(body, content_type, where, max_rows)

    def _check_budget(self, deadline: float, exc: BaseException) -> None:
        """After a failed open: past the deadline, open_by shut the connection down."""
        if self.clock() >= deadline:
            raise _OverBudget("no answer arrived") from exc

    def _decode(
        self, body: bytes, content_type: str, where: str, max_rows: int | None = None
    ) -> Rows:
        head = body.lstrip()[:200].lower()
        words = server_words(body)
        fix = _USER_AGENT_FIX if _user_agent_refusal(words) else ""
        if "html" in content_type.lower() or head.startswith((b"<!doctype", b"<html", b"<")):
            raise SourceError(
                f"{self.name}: {where} sent a web page instead of SPARQL JSON results; "
                f"is the address a SPARQL endpoint? It said: {words!r}.{fix}"
            )
        from core.io.bounded import REPLY, BoundedTextError, loads_json

        try:
            data = loads_json(body, name="the answer", limits=REPLY)
        except BoundedTextError as exc:
            said = f"; it said: {words!r}" if fix or not head.startswith((b"{", b"[")) else ""
            raise SourceError(
                f"{self.name}: {where} sent malformed JSON ({exc}){said}.{fix}"
            ) from exc
        try:
            return rows_from_json(data, max_rows)
        except BadResults as exc:
            raise SourceError(f"{self.name}: {where} sent unexpected results: {exc}") from exc
