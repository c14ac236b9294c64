"""A verbaliser over an OpenAI-compatible HTTP server (vLLM, TGI, llama.cpp server).

The way users verbalise at scale on a GPU cluster: the same prompts, candidates and
parameters as the local causal verbaliser, sent as ``POST {base}/v1/chat/completions``
with ``n``, ``temperature``, ``top_p``, ``max_tokens``, ``seed`` and ``logprobs``. The
server applies the model's chat template. The requests of a batch go out concurrently
(servers batch them on the GPU).

Where the server returns the generated tokens' log-probabilities (``choices[].logprobs
.content[].logprob``, as vLLM, llama.cpp and TGI do when asked), they are kept with each
candidate and stored, so the perplexity of a server run needs no local copy of the model.
A server that refuses the ``logprobs`` field is asked again without it.

Every request is bounded (docs/openai-server.md, "Limits"): one deadline of ``timeout_s``
for the whole request, its retries and waits included, checked while the body is read
in chunks (a drip or an endless reply ends there); a cap of ``max_response_bytes`` on the
body (:func:`core.io.bounded_read.read_bounded`, shared with the SPARQL client); a cap of
``max_reply_chars`` on each stored text (the truncation is noted on the candidate). Every
field of the reply is checked for its type, and a message quotes what the server sent.

What stops the run (:class:`ServerError`: the server is unusable as it is) and what fails
one request only (a :class:`RequestFailure`, asked again on resume) is listed in
docs/openai-server.md. 429, 502, 503, 504, a stall and a body cut short are retried with
exponential backoff, honouring ``Retry-After`` (capped), while the deadline allows. Only
the standard library is used (urllib).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import math
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from core.errors import UserFacingError
from core.io.bounded_read import (
    WORDS_BYTES,
    BrokenOff,
    OverCap,
    OverDeadline,
    ReadFault,
    Stalled,
    open_by,
    read_bounded,
    server_words,
)
from core.jobs import JobCancelled
from core.labels import plural
from core.verbalise.base import (
    Candidate,
    GenerationParams,
    RequestFailure,
    Result,
    ShouldStop,
    VerbaliseRequest,
)
from core.verbalise.prompts import (
    DEFAULT_PRESET,
    check_preset,
    parse_reply,
    render_prompt,
    templates_for,
)
from core.vocab import LANGUAGES

RETRY_STATUSES = frozenset({429, 502, 503, 504})
# The cap on one reply's body (--max-response-mb). A reply of 3 candidates of 256 tokens
# with their log-probabilities is about 100 KB, and 32 candidates of 8,192 tokens about
# 25 MB; 16 MB bounds the memory of 8 requests in flight to about 128 MB.
DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024
# The cap on one stored text (None: CHARS_PER_TOKEN characters per --max-new-tokens). A
# server that honours max_tokens never comes near it; one that ignores it is cut here.
CHARS_PER_TOKEN = 32
_SURROGATE = re.compile("[\ud800-\udfff]")


class ServerError(UserFacingError):
    """The server could not be reached, refused, or answered something unusable."""


class _Unanswered(Exception):
    """One request got no usable text (no choices, a content that is not text)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _Aborted(Exception):
    """Another request of the batch stopped it: this one gives up too."""


def normalise_base_url(url: str) -> str:
    """``http://host:8000/v1/`` and ``http://host:8000`` both give ``http://host:8000``."""
    base = url.strip().rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise ServerError(f"{url!r} is not an http(s) URL")
    for suffix in ("/chat/completions", "/v1"):
        if base.endswith(suffix):
            base = base[: -len(suffix)].rstrip("/")
    return base


class OpenAIVerbaliser:
    """Chat completions from an OpenAI-compatible server."""

    kind = "openai"

    def __init__(
        self,
        base_url: str,
        server_model: str | None = None,
        params: GenerationParams | None = None,
        templates: Mapping[str, str] | None = None,
        *,
        timeout_s: float = 120.0,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_reply_chars: int | None = None,
        max_retries: int = 5,
        backoff_s: float = 1.0,
        max_wait_s: float = 60.0,
        concurrency: int = 8,
        api_key: str | None = None,
        logprobs: bool = True,
        sleep: Callable[[float], None] = time.sleep,
        prompt_preset: str = DEFAULT_PRESET,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.params = params or GenerationParams()
        self.params.check()
        if not (isinstance(timeout_s, int | float) and math.isfinite(timeout_s) and timeout_s > 0):
            raise ServerError(f"the timeout must be a positive number of seconds, not {timeout_s}")
        if max_response_bytes < 1:
            raise ServerError(f"the reply size cap must be positive, not {max_response_bytes}")
        if max_reply_chars is not None and max_reply_chars < 1:
            raise ServerError(
                f"the cap on a reply's length must be positive, not {max_reply_chars}"
            )
        self.base_url = normalise_base_url(base_url)
        self.server_model = server_model
        self.prompt_preset = check_preset(prompt_preset)
        self.templates = templates_for(LANGUAGES, templates, self.prompt_preset)
        self.timeout_s, self.max_retries = float(timeout_s), max_retries
        self.max_response_bytes = max_response_bytes
        self.max_reply_chars = max_reply_chars or CHARS_PER_TOKEN * self.params.max_new_tokens
        self.backoff_s, self.max_wait_s = backoff_s, max_wait_s
        self.concurrency = max(1, concurrency)
        self.api_key = api_key
        self.logprobs = logprobs  # ask for token log-probabilities (off once refused)
        self._sleep = sleep
        self._clock = clock
        self._abort = threading.Event()  # set when one request of a batch stops the batch
        self._lock = threading.Lock()
        self._failure: BaseException | None = None  # the first error of the batch
        self.retries = 0  # how many retries this verbaliser made (reported)
        self.should_stop: ShouldStop | None = None  # the job's cancel, asked between requests

    @property
    def model_id(self) -> str:
        return f"{self.base_url} {self.server_model or ''}".strip()

    @property
    def system_name(self) -> str:
        return self.server_model or self.base_url

    def fingerprint(self) -> str | None:
        # No weights to hash: the identity is the server and the model it names.
        if self.server_model is None:
            return None
        return hashlib.sha256(f"openai|{self.base_url}|{self.server_model}".encode()).hexdigest()

    def describe(self) -> dict[str, Any]:
        # seed_per_request: the k-th request for one prompt (k = 0 first, k > 0 when the
        # server ignored ``n`` and the missing candidates are asked again) sends seed + k.
        return {
            "base_url": self.base_url,
            "server_model": self.server_model,
            "timeout_s": self.timeout_s,
            "max_response_bytes": self.max_response_bytes,
            "max_reply_chars": self.max_reply_chars,
            "max_retries": self.max_retries,
            "seed_per_request": "seed + k",
            "logprobs": self.logprobs,
            "prompt_preset": self.prompt_preset,
        }

    def set_templates(
        self, overrides: Mapping[str, str] | None, prompt_preset: str | None = None
    ) -> None:
        """Use the preset's bundled templates with ``overrides`` (lang -> template) from now
        on (the panel's live preview; ``prompt_preset`` None keeps the preset). A bad
        template raises ``PromptError`` and leaves the templates in use unchanged."""
        preset = self.prompt_preset if prompt_preset is None else check_preset(prompt_preset)
        self.templates = templates_for(LANGUAGES, overrides, preset)
        self.prompt_preset = preset

    def prompt_for(self, triples: Sequence[tuple[str, str, str]], lang: str) -> str:
        return render_prompt(self.templates[lang], triples, lang)

    def load(self) -> None:
        """Reach the server; when no model was named, take the first it serves."""
        if self.server_model is not None:
            return
        where = f"{self.base_url}/v1/models"
        reply = self._request("GET", "/v1/models", None)
        data = reply.get("data") if isinstance(reply, dict) else None
        first = data[0] if isinstance(data, list) and data else None
        name = first.get("id") if isinstance(first, dict) else None
        if not isinstance(name, str) or not name.strip():
            raise ServerError(
                f"{where} lists no model ({_quote(reply)}); name one with --server-model"
            )
        self.server_model = _clean(name)[0]

    def close(self) -> None:
        return None

    # --- HTTP ------------------------------------------------------------------------

    def _check(self) -> None:
        """Raise if this request should stop: another of the batch failed, or a cancel."""
        if self._abort.is_set():
            raise _Aborted()
        should_stop = self.should_stop
        if should_stop is not None and should_stop():
            raise JobCancelled()

    def _request(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        """The JSON the server answered, within one deadline of ``timeout_s`` for the
        request, its retries and its waits, and at most ``max_response_bytes`` read."""
        url = self.base_url + path
        data = json.dumps(body).encode("utf-8") if body is not None else None
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        deadline = self._clock() + self.timeout_s
        timeout = f"the timeout of {self.timeout_s:g} s per request (--timeout)"
        attempt = 0
        while True:
            self._check()
            left = deadline - self._clock()
            if left <= 0:
                raise ServerError(f"{url} did not answer within {timeout}")
            request = urllib.request.Request(url, data=data, method=method, headers=headers)
            retry_after: str | None = None
            try:
                with open_by(
                    request, deadline=deadline, idle_timeout_s=self.timeout_s, clock=self._clock
                ) as response:
                    content_type = str(response.headers.get("Content-Type", "") or "")
                    payload = read_bounded(
                        response,
                        deadline=deadline,
                        cap=self.max_response_bytes,
                        idle_timeout_s=self.timeout_s,
                        clock=self._clock,
                        check=self._check,
                    )
                break
            except urllib.error.HTTPError as exc:
                detail = server_words(self._refusal(exc, deadline))
                problem = f"{url} answered HTTP {exc.code} {exc.reason}" + (
                    f": {detail}" if detail else ""
                )
                if exc.code not in RETRY_STATUSES:
                    raise ServerError(problem) from None
                retry_after = exc.headers.get("Retry-After") if exc.headers else None
            except OverDeadline as fault:
                raise ServerError(
                    f"{url}: {fault.message} within {timeout}; stopped. Is the server "
                    "overloaded, or sending its reply byte by byte?"
                ) from None
            except OverCap as fault:
                asked = plural(self.params.candidates, "candidate")
                raise ServerError(
                    f"{url} {fault.message}. A reply of {asked} of at most "
                    f"{self.params.max_new_tokens} tokens is far smaller: does the "
                    "server ignore max_tokens? (--max-response-mb raises the cap)"
                ) from None
            except (Stalled, BrokenOff) as fault:
                problem = f"{url} {fault.message}"
            except http.client.HTTPException as exc:
                problem = f"{url} broke off the reply ({type(exc).__name__})"
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                reason = getattr(exc, "reason", exc)
                # A refused connection is a server that is not there: say so at once.
                if self._clock() >= deadline:
                    raise ServerError(f"{url} did not answer within {timeout}") from None
                if not isinstance(reason, TimeoutError | ConnectionResetError):
                    raise ServerError(
                        f"cannot reach the server at {self.base_url}: {reason} "
                        "(is it running, and is the URL right?)"
                    ) from None
                problem = f"cannot reach the server at {self.base_url}: {reason}"
            except OSError as exc:
                if self._clock() >= deadline:
                    raise ServerError(f"{url} did not answer within {timeout}") from None
                raise ServerError(f"cannot reach the server at {self.base_url}: {exc}") from None
            except ValueError as exc:  # an address urllib cannot use
                raise ServerError(f"cannot use the address {url} ({exc})") from None
            if self._clock() >= deadline:  # open_by shut the connection at the deadline
                raise ServerError(f"{url} did not answer within {timeout}; stopped")
            # A fault that may pass: wait and try again while the deadline allows.
            tries = attempt + 1
            gave_up = f"gave up after {tries} attempt{'s' if tries > 1 else ''}"
            if attempt >= self.max_retries:
                raise ServerError(f"{problem} ({gave_up})")
            wait = self._wait(attempt, retry_after)
            left = deadline - self._clock()
            if wait >= left:
                raise ServerError(
                    f"{problem}; a retry would wait {wait:g} s, more than the "
                    f"{max(left, 0):.1f} s left of {timeout} ({gave_up})"
                )
            self._sleep(wait)
            attempt += 1
            self.retries += 1
        return self._decode(payload, content_type, url)

    def _refusal(self, exc: urllib.error.HTTPError, deadline: float) -> bytes:
        """The first bytes of an error reply, to quote (b"" where none could be read)."""
        try:
            if exc.fp is None:
                return b""
            return read_bounded(
                exc,
                deadline=min(deadline, self._clock() + 5.0),
                cap=WORDS_BYTES,
                idle_timeout_s=min(self.timeout_s, 5.0),
                clock=self._clock,
                truncate=True,
            )
        except (ReadFault, OSError, http.client.HTTPException):
            return b""

    def _decode(self, payload: bytes, content_type: str, url: str) -> Any:
        head = payload.lstrip()[:200].lower()
        if "html" in content_type.lower() or head.startswith(b"<"):
            raise ServerError(
                f"{url} sent a web page instead of JSON; is the URL an OpenAI-compatible "
                f"server? It said: {server_words(payload)!r}"
            )
        from core.io.bounded import REPLY, BoundedTextError, loads_json

        try:
            return loads_json(payload, name="its answer", limits=REPLY)
        except BoundedTextError:
            raise ServerError(
                f"{url} answered something that is not JSON: {_excerpt(payload)!r}"
            ) from None

    def _wait(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                seconds = float(retry_after)
            except ValueError:
                seconds = math.nan  # an HTTP date: fall back to backoff
            if math.isfinite(seconds):
                return min(max(seconds, 0.0), self.max_wait_s)
        return min(self.backoff_s * (2**attempt), self.max_wait_s)

    def _complete(self, prompt: str, n: int, seed: int) -> tuple[list[Candidate], int | None]:
        """Up to ``n`` candidates, each with its own token count where the server gave
        log-probabilities (else 0), and the tokens its usage says it generated (None: no
        usable count). A reply without usable text raises :class:`_Unanswered`."""
        body: dict[str, Any] = {
            "model": self.server_model,
            "messages": [{"role": "user", "content": prompt}],
            "n": n,
            "temperature": self.params.temperature,
            "top_p": self.params.top_p,
            "max_tokens": self.params.max_new_tokens,
            "seed": seed,
        }
        if self.logprobs:
            body["logprobs"] = True
        try:
            reply = self._request("POST", "/v1/chat/completions", body)
        except ServerError as error:
            # A server that does not know the field (HTTP 400/422 naming it): ask without.
            if not self.logprobs or "logprob" not in str(error).lower():
                raise
            self.logprobs = False
            body.pop("logprobs")
            reply = self._request("POST", "/v1/chat/completions", body)
        where = f"{self.base_url}/v1/chat/completions"
        if not isinstance(reply, dict):
            raise ServerError(
                f"{where} answered JSON that is not an object ({_quote(reply)}); "
                "is the URL an OpenAI-compatible server?"
            )
        choices = reply.get("choices")
        if not isinstance(choices, list) or not choices:
            raise _Unanswered(f"{where} answered no choices: {_quote(reply)}")
        usage_note, tokens = _completion_tokens(reply.get("usage"))
        candidates = []
        for index, choice in enumerate(choices):
            message = choice.get("message") if isinstance(choice, dict) else None
            content = message.get("content", ...) if isinstance(message, dict) else ...
            if content is None:
                content = ""  # a refusal or a tool call: stored as an empty reply
            if not isinstance(content, str):
                raise _Unanswered(
                    f"{where} answered choices[{index}] without a text "
                    f"message.content: {_quote(choice)}"
                )
            candidates.append(self._candidate(content, choice, usage_note))
        return candidates, tokens

    def complete(self, prompt: str, seed: int | None = None) -> str:
        """The server's reply to one free-form ``prompt`` (the references pipeline's
        translation and post-editing prompts), with the same retries, caps and cleaning as
        a verbalisation; a reply without usable text raises :class:`ServerError`."""
        self._check()
        try:
            candidates, _ = self._complete(prompt, 1, self.params.seed if seed is None else seed)
        except _Unanswered as error:
            raise ServerError(str(error)) from None
        return candidates[0].raw

    def _candidate(
        self, content: str, choice: Mapping[str, Any], usage_note: str | None
    ) -> Candidate:
        """One choice as stored: lone surrogates replaced, cut at ``max_reply_chars``,
        each change noted."""
        notes: dict[str, Any] = {}
        logprobs = _token_logprobs(choice)
        if len(content) > self.max_reply_chars:  # cut first: the rest is never copied
            notes["truncated_from_chars"] = len(content)
            content = content[: self.max_reply_chars]
            logprobs = None  # they describe the whole reply, not the text kept
        raw, replaced = _clean(content)
        if replaced:
            notes["replaced_surrogates"] = replaced
        if usage_note:
            notes["usage"] = usage_note
        parsed = parse_reply(raw)
        tokens = len(logprobs["logprobs"]) if logprobs else 0
        return Candidate(raw.strip(), parsed.text, parsed.ok, tokens, logprobs, notes or None)

    def _candidates(self, request: VerbaliseRequest) -> list[Candidate]:
        n = self.params.candidates
        got: list[Candidate] = []
        counted: list[tuple[int, int | None]] = []  # (candidates, usage tokens) per reply
        # Some servers (llama.cpp) ignore n: ask again for what is missing. A server that
        # honours the seed would repeat the same candidates for the same seed, so the k-th
        # request sends seed + k (recorded as ``seed_per_request`` in describe()).
        for attempt in range(n):
            # Between requests: one in flight is waited for (the server is generating).
            self._check()
            try:
                more, used = self._complete(
                    request.prompt, n - len(got), self.params.seed + attempt
                )
            except _Unanswered:
                if got:
                    break  # keep what the earlier replies gave
                raise
            got += more
            counted.append((len(more), used))
            if len(got) >= n:
                break
        result = []
        position = 0
        for size, used in counted:
            # Without log-probabilities, a reply's usage is shared among its candidates.
            per = (used or 0) // size if size else 0
            for candidate in got[position : position + size]:
                if candidate.token_logprobs is None:
                    candidate = Candidate(
                        candidate.raw,
                        candidate.text,
                        candidate.parse_ok,
                        per,
                        None,
                        candidate.notes,
                    )
                result.append(candidate)
            position += size
        return result[:n]

    def _one(self, request: VerbaliseRequest) -> Result:
        try:
            return self._candidates(request)
        except _Unanswered as unanswered:
            return RequestFailure(unanswered.message)
        except BaseException as exc:
            with self._lock:
                if self._failure is None and not isinstance(exc, _Aborted):
                    self._failure = exc
            self._abort.set()  # the batch stops: the others stop reading at once
            raise

    def verbalise(self, requests: Sequence[VerbaliseRequest]) -> list[Result]:
        """Candidates per request, or a :class:`RequestFailure` for a request whose reply
        held no usable text. A :class:`ServerError` of any request stops the batch: the
        requests in flight stop reading and the error is raised. With
        ``self.should_stop`` set, a cancel raises :class:`JobCancelled` before the next
        HTTP request and while a reply is read (its reply is dropped)."""
        self.load()
        self._abort.clear()
        self._failure = None
        try:
            if len(requests) <= 1 or self.concurrency == 1:
                return [self._one(r) for r in requests]
            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(requests))) as pool:
                futures = [pool.submit(self._one, r) for r in requests]
                try:
                    return [future.result() for future in futures]
                except BaseException:
                    pool.shutdown(wait=True, cancel_futures=True)
                    raise
        except BaseException:
            if self._failure is not None:
                raise self._failure from None
            raise


def _completion_tokens(usage: Any) -> tuple[str | None, int | None]:
    """(a note when the usage field is unusable, the completion tokens it gives)."""
    if usage is None:
        return None, None
    if not isinstance(usage, dict):
        return f"usage was {_quote(usage, 80)}, not an object: tokens not counted", None
    value = usage.get("completion_tokens")
    if value is None:
        return None, None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return (
            f"usage.completion_tokens was {_quote(value, 80)}, not a count: tokens not counted",
            None,
        )
    return None, value


def _clean(text: str) -> tuple[str, int]:
    """``text`` with lone UTF-16 surrogates (a JSON ``\\ud800`` escape without its pair,
    which no file or database can store) replaced by U+FFFD, and how many there were."""
    return _SURROGATE.subn("\ufffd", text)


def _token_logprobs(choice: Mapping[str, Any]) -> dict[str, list[Any]] | None:
    """``{"tokens": [...], "logprobs": [...]}`` from a choice's ``logprobs.content`` (the
    OpenAI chat format), None when the server sent none or something unusable."""
    logprobs = choice.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, Mapping) else None
    if not isinstance(content, list) or not content:
        return None
    tokens, values = [], []
    for entry in content:
        value = entry.get("logprob") if isinstance(entry, Mapping) else None
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value > 0
        ):
            return None  # a malformed list is worse than none: perplexity would be wrong
        token = entry.get("token", "")
        tokens.append(_clean(token if isinstance(token, str) else str(token))[0])
        values.append(float(value))
    return {"tokens": tokens, "logprobs": values}


def _excerpt(payload: bytes | str, limit: int = 200) -> str:
    """The start of ``payload`` as one line of at most ``limit`` characters (only the
    first bytes are decoded: a reply may be megabytes)."""
    if isinstance(payload, bytes):
        text = payload[: 8 * limit].decode("utf-8", "replace")
    else:
        text = payload[: 8 * limit]
    text = _clean(" ".join(text.split()))[0]
    return text if len(text) <= limit else text[:limit] + "…"


def _quote(value: Any, limit: int = 200) -> str:
    """A bounded excerpt of a JSON value the server sent, as JSON."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return _excerpt(text, limit)
