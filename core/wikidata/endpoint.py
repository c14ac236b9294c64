"""A SPARQL 1.1 endpoint over HTTP (the Wikidata Query Service or another), with polite
retries and hard limits, and the User-Agent contact the service asks for."""

from __future__ import annotations

import email.utils
import http.client
import re
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import core
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
from core.jobs import CancelToken
from core.wikidata import queries
from core.wikidata.categories import Category
from core.wikidata.records import EntityDetails, MembersPage
from core.wikidata.rows import (
    BadResults,
    Rows,
    details_from_rows,
    members_from_rows,
    rows_from_json,
)
from core.wikidata.sources import SourceError, check_cancelled

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


WaitCallback = Callable[[float, str], None]


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
            check_cancelled(token)
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
            check_cancelled(token)
            if self.on_wait is not None:
                self.on_wait(left, reason)
            step = min(0.25, left)
            self.sleep(step)
            left -= step
        check_cancelled(token)

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
