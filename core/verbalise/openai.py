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

429 and 503 replies are retried with exponential backoff, honouring ``Retry-After``
(capped); other failures say what went wrong and where: an unreachable server, a reply
that is not JSON, a reply without choices. Only the standard library is used (urllib).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from core.errors import UserFacingError
from core.jobs import JobCancelled
from core.verbalise.base import Candidate, GenerationParams, ShouldStop, VerbaliseRequest
from core.verbalise.prompts import (
    DEFAULT_PRESET,
    LANGUAGES,
    check_preset,
    parse_reply,
    render_prompt,
    templates_for,
)

RETRY_STATUSES = frozenset({429, 502, 503, 504})


class ServerError(UserFacingError):
    """The server could not be reached, refused, or answered something unusable."""


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
        max_retries: int = 5,
        backoff_s: float = 1.0,
        max_wait_s: float = 60.0,
        concurrency: int = 8,
        api_key: str | None = None,
        logprobs: bool = True,
        sleep: Callable[[float], None] = time.sleep,
        prompt_preset: str = DEFAULT_PRESET,
    ) -> None:
        self.params = params or GenerationParams()
        self.params.check()
        self.base_url = normalise_base_url(base_url)
        self.server_model = server_model
        self.prompt_preset = check_preset(prompt_preset)
        self.templates = templates_for(LANGUAGES, templates, self.prompt_preset)
        self.timeout_s, self.max_retries = timeout_s, max_retries
        self.backoff_s, self.max_wait_s = backoff_s, max_wait_s
        self.concurrency = max(1, concurrency)
        self.api_key = api_key
        self.logprobs = logprobs  # ask for token log-probabilities (off once refused)
        self._sleep = sleep
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
        reply = self._request("GET", "/v1/models", None)
        try:
            self.server_model = str(reply["data"][0]["id"])
        except (KeyError, IndexError, TypeError):
            raise ServerError(
                f"{self.base_url}/v1/models lists no model; name one with --server-model"
            ) from None

    def close(self) -> None:
        return None

    # --- HTTP ------------------------------------------------------------------------

    def _request(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        url = self.base_url + path
        data = json.dumps(body).encode("utf-8") if body is not None else None
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        attempt = 0
        while True:
            request = urllib.request.Request(url, data=data, method=method, headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    payload = response.read()
                break
            except urllib.error.HTTPError as exc:
                detail = _excerpt(exc.read())
                if exc.code in RETRY_STATUSES and attempt < self.max_retries:
                    self._sleep(self._wait(attempt, exc.headers.get("Retry-After")))
                    attempt += 1
                    self.retries += 1
                    continue
                raise ServerError(
                    f"{url} answered HTTP {exc.code} {exc.reason}"
                    + (f": {detail}" if detail else "")
                ) from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                reason = getattr(exc, "reason", exc)
                # A refused connection is a server that is not there: say so at once.
                transient = isinstance(reason, TimeoutError | ConnectionResetError)
                if attempt < self.max_retries and transient:
                    self._sleep(self._wait(attempt, None))
                    attempt += 1
                    self.retries += 1
                    continue
                raise ServerError(
                    f"cannot reach the server at {self.base_url}: {reason} "
                    "(is it running, and is the URL right?)"
                ) from None
        try:
            return json.loads(payload)
        except ValueError:
            raise ServerError(
                f"{url} answered something that is not JSON: {_excerpt(payload)!r}"
            ) from None

    def _wait(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(max(float(retry_after), 0.0), self.max_wait_s)
            except ValueError:
                pass  # an HTTP date: fall back to backoff
        return min(self.backoff_s * (2**attempt), self.max_wait_s)

    def _complete(
        self, prompt: str, n: int, seed: int
    ) -> tuple[list[tuple[str, dict[str, list[Any]] | None]], int]:
        """(reply text, its token log-probabilities or None) per choice, and the tokens
        the server says it generated."""
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
        try:
            texts = [
                (str(c["message"]["content"] or ""), _token_logprobs(c)) for c in reply["choices"]
            ]
        except (KeyError, TypeError):
            raise ServerError(
                f"{self.base_url}/v1/chat/completions answered JSON without "
                f"choices[].message.content: {_excerpt(json.dumps(reply))!r}"
            ) from None
        usage = reply.get("usage") or {}
        tokens = int(usage.get("completion_tokens") or 0)
        return texts, tokens

    def _candidates(self, request: VerbaliseRequest) -> list[Candidate]:
        n = self.params.candidates
        texts: list[tuple[str, dict[str, list[Any]] | None]] = []
        tokens = 0
        # Some servers (llama.cpp) ignore n: ask again for what is missing. A server that
        # honours the seed would repeat the same candidates for the same seed, so the k-th
        # request sends seed + k (recorded as ``seed_per_request`` in describe()).
        for attempt in range(n):
            # Between requests: one in flight is waited for (the server is generating).
            should_stop = self.should_stop
            if should_stop is not None and should_stop():
                raise JobCancelled()
            got, used = self._complete(request.prompt, n - len(texts), self.params.seed + attempt)
            texts += got
            tokens += used
            if len(texts) >= n or not got:
                break
        texts = texts[:n]
        per = tokens // len(texts) if texts else 0
        result = []
        for raw, logprobs in texts:
            parsed = parse_reply(raw)
            used = len(logprobs["logprobs"]) if logprobs else per
            result.append(Candidate(raw.strip(), parsed.text, parsed.ok, used, logprobs))
        return result

    def verbalise(self, requests: Sequence[VerbaliseRequest]) -> list[list[Candidate]]:
        """Candidates per request. With ``self.should_stop`` set, a cancel raises
        :class:`JobCancelled` before the next HTTP request (requests already sent are
        waited for, their replies dropped)."""
        self.load()
        if len(requests) <= 1 or self.concurrency == 1:
            return [self._candidates(r) for r in requests]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(requests))) as pool:
            return list(pool.map(self._candidates, requests))


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
        tokens.append(str(entry.get("token", "")))
        values.append(float(value))
    return {"tokens": tokens, "logprobs": values}


def _excerpt(payload: bytes | str, limit: int = 200) -> str:
    text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"
