"""Reading the fields of an OpenAI-compatible server's reply that it may send malformed:
the usage count, token log-probabilities, text with lone surrogates, and bounded
excerpts of what it sent, to quote in a message."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def completion_tokens(usage: Any) -> tuple[str | None, int | None]:
    """(a note when the usage field is unusable, the completion tokens it gives)."""
    if usage is None:
        return None, None
    if not isinstance(usage, dict):
        return f"usage was {quote(usage, 80)}, not an object: tokens not counted", None
    value = usage.get("completion_tokens")
    if value is None:
        return None, None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return (
            f"usage.completion_tokens was {quote(value, 80)}, not a count: tokens not counted",
            None,
        )
    return None, value


def clean(text: str) -> tuple[str, int]:
    """``text`` with lone UTF-16 surrogates (a JSON ``\\ud800`` escape without its pair,
    which no file or database can store) replaced by U+FFFD, and how many there were."""
    return _SURROGATE.subn("\ufffd", text)


def token_logprobs(choice: Mapping[str, Any]) -> dict[str, list[Any]] | None:
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
        tokens.append(clean(token if isinstance(token, str) else str(token))[0])
        values.append(float(value))
    return {"tokens": tokens, "logprobs": values}


def excerpt(payload: bytes | str, limit: int = 200) -> str:
    """The start of ``payload`` as one line of at most ``limit`` characters (only the
    first bytes are decoded: a reply may be megabytes)."""
    if isinstance(payload, bytes):
        text = payload[: 8 * limit].decode("utf-8", "replace")
    else:
        text = payload[: 8 * limit]
    text = clean(" ".join(text.split()))[0]
    return text if len(text) <= limit else text[:limit] + "…"


def quote(value: Any, limit: int = 200) -> str:
    """A bounded excerpt of a JSON value the server sent, as JSON."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return excerpt(text, limit)
