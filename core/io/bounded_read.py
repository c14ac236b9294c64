"""Reading an HTTP answer within hard limits: one deadline and a byte cap.

A socket timeout bounds one read, not a request: a server that sends a byte just before
each timeout (a drip) or an answer that never ends would hold a client forever and grow it
without bound. :func:`read_bounded` reads the body in chunks and, before each chunk, checks
the wall clock against the request's deadline and, after it, the bytes so far against the
cap; a body shorter than its Content-Length is reported rather than taken for a whole one.
:func:`open_by` bounds what comes before the body, which http.client reads on its own (the
connection, the status line and the headers, dripped as slowly as a body can be): the
request's sockets are shut down just after the deadline.

Shared by the SPARQL endpoint source (:mod:`core.wikidata.sources`) and the
OpenAI-compatible verbaliser (:mod:`core.verbalise.openai`). The faults are raised as
:class:`ReadFault` subclasses whose ``message`` is a phrase ("the answer did not finish
arriving (12 bytes came)"); each caller words the user's message and decides what may be
retried.
"""

from __future__ import annotations

import contextlib
import html
import http.client
import re
import socket
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

READ_CHUNK = 64 * 1024
WORDS_BYTES = 16 * 1024  # how much of a refusal is read to quote the server's words
_DIGITS = re.compile(r"[0-9]+")


class ReadFault(Exception):
    """The body could not be read whole within the limits; ``message`` says how."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class OverDeadline(ReadFault):
    """The deadline passed while the answer was arriving."""


class OverCap(ReadFault):
    """The answer announced (``declared``) or sent (``size``) more than ``cap`` bytes."""

    def __init__(self, message: str, cap: int, size: int, declared: int | None) -> None:
        super().__init__(message)
        self.cap, self.size, self.declared = cap, size, declared


class Stalled(ReadFault):
    """Nothing arrived for the idle timeout (the deadline still had time: retryable)."""


class BrokenOff(ReadFault):
    """The connection closed before the body was complete (retryable)."""


def declared_length(response: Any) -> int | None:
    """The Content-Length a response announced, or None (absent or not a number)."""
    headers = getattr(response, "headers", None)
    value = ((headers.get("Content-Length", "") if headers is not None else "") or "").strip()
    return int(value) if _DIGITS.fullmatch(value) and len(value) <= 18 else None


def set_socket_timeout(response: Any, seconds: float) -> None:
    """Best effort: bound the next read of ``response`` by ``seconds`` (urllib fixes
    the socket's timeout when it connects; the time left shrinks as the answer arrives)."""
    raw = getattr(getattr(response, "fp", None), "raw", None)
    sock = getattr(raw, "_sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.settimeout(seconds)


def server_words(body: bytes, limit: int = 300) -> str:
    """What a server said (a refusal, a page), as one short line: the first
    :data:`WORDS_BYTES` decoded, tags of a web page removed, at most ``limit`` characters."""
    text = body[:WORDS_BYTES].decode("utf-8", errors="replace")
    text = re.sub(r"(?is)<(script|style)\b.*?</\1\s*>", " ", text)
    text = re.sub(r"<[^>]*>", " ", text)
    text = html.unescape(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


# How long after the deadline open_by shuts the sockets down: read_bounded ends the body
# at the deadline itself; this only ends what it cannot see (a connect, dripped headers).
_SHUTDOWN_GRACE_S = 0.5


@contextlib.contextmanager
def open_by(
    request: urllib.request.Request,
    *,
    deadline: float,
    idle_timeout_s: float,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[Any]:
    """``urllib.request.urlopen(request)`` whose connection is shut down once
    ``deadline`` (a ``clock()`` time) has passed, however slowly the status line and
    headers arrive; each read still waits at most ``idle_timeout_s``. Read the body with
    :func:`read_bounded`. After a shutdown the open or a read fails with an OSError or
    ``http.client.HTTPException``: the caller, seeing its deadline passed, says so."""
    sockets: list[socket.socket] = []

    def shut_down() -> None:
        for sock in list(sockets):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    left = deadline - clock()
    timer = threading.Timer(max(0.0, left) + _SHUTDOWN_GRACE_S, shut_down)
    timer.daemon = True
    timer.start()
    try:
        opener = urllib.request.build_opener(_Http(sockets), _Https(sockets))
        timeout = max(0.01, min(float(idle_timeout_s), left))
        with opener.open(request, timeout=timeout) as response:
            yield response
    finally:
        timer.cancel()


def _recording(base: type[http.client.HTTPConnection], sockets: list[Any]) -> Any:
    class Recording(base):  # type: ignore[valid-type,misc]
        def connect(self) -> None:
            super().connect()
            sockets.append(self.sock)

    return Recording


class _Http(urllib.request.HTTPHandler):
    def __init__(self, sockets: list[Any]) -> None:
        super().__init__()
        self._sockets = sockets

    def http_open(self, req: Any) -> Any:
        return self.do_open(_recording(http.client.HTTPConnection, self._sockets), req)


class _Https(urllib.request.HTTPSHandler):
    def __init__(self, sockets: list[Any]) -> None:
        super().__init__()
        self._sockets = sockets

    def https_open(self, req: Any) -> Any:
        connection = _recording(http.client.HTTPSConnection, self._sockets)
        return self.do_open(connection, req, context=getattr(self, "_context", None))


def read_bounded(
    response: Any,
    *,
    deadline: float,
    cap: int,
    idle_timeout_s: float,
    clock: Callable[[], float] = time.monotonic,
    truncate: bool = False,
    check: Callable[[], None] | None = None,
) -> bytes:
    """The body of ``response`` (an ``http.client.HTTPResponse`` or urllib's
    ``HTTPError``), read in chunks of at most :data:`READ_CHUNK` bytes.

    ``deadline`` is a ``clock()`` time: past it :class:`OverDeadline` is raised, however
    the bytes trickle in. Each read waits at most ``idle_timeout_s`` (or what is left
    of the deadline) for data (:class:`Stalled`). More than ``cap`` bytes, announced or
    sent, raise :class:`OverCap`, unless ``truncate``: then the first ``cap`` bytes are
    returned (enough to quote a refusal). ``check`` is called before every chunk (a
    cancel raises from it). A body that ends short of its Content-Length raises
    :class:`BrokenOff`."""
    declared = declared_length(response)
    if declared is not None and declared > cap and not truncate:
        raise OverCap(
            f"announced an answer of {declared:,} bytes, more than the cap of {cap:,} bytes",
            cap,
            0,
            declared,
        )
    chunks: list[bytes] = []
    size = 0
    while True:
        if check is not None:
            check()
        left = deadline - clock()
        if left <= 0:
            raise OverDeadline(f"the answer did not finish arriving ({size:,} bytes came)")
        set_socket_timeout(response, min(float(idle_timeout_s), left))
        try:
            chunk = response.read1(READ_CHUNK)
        except TimeoutError as exc:
            if deadline - clock() <= 0:
                raise OverDeadline(
                    f"the answer did not finish arriving ({size:,} bytes came)"
                ) from exc
            raise Stalled(
                f"stopped sending for {idle_timeout_s:g} s ({size:,} bytes came)"
            ) from exc
        except http.client.IncompleteRead as exc:
            raise BrokenOff(
                "closed the connection before the answer was complete "
                f"({size + len(exc.partial):,} bytes came)"
            ) from exc
        if not chunk:
            break
        size += len(chunk)
        if size > cap:
            if truncate:
                chunks.append(chunk)
                return b"".join(chunks)[:cap]
            raise OverCap(
                f"sent more than the cap of {cap:,} bytes; stopped reading", cap, size, declared
            )
        chunks.append(chunk)
    remaining = getattr(response, "length", None)
    if declared is not None and (remaining or size < declared):
        raise BrokenOff(
            f"closed the connection after {size:,} of the {declared:,} bytes it announced"
        )
    return b"".join(chunks)


__all__ = [
    "READ_CHUNK",
    "WORDS_BYTES",
    "BrokenOff",
    "OverCap",
    "OverDeadline",
    "ReadFault",
    "Stalled",
    "declared_length",
    "open_by",
    "read_bounded",
    "server_words",
    "set_socket_timeout",
]
