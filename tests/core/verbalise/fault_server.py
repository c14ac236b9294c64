"""An OpenAI-compatible server on 127.0.0.1 that answers with one chosen fault.

Used by the tests of bounded server replies (``test_server_faults.py``) and by
``benchmarks/server_limits.py``. ``GET /v1/models`` lists one model; ``POST
/v1/chat/completions`` answers as ``case`` says (``script`` cases first, one per request):

* ``ok``: a good reply with ``n`` choices;
* ``endless``: a JSON reply that never ends (no Content-Length, streamed until the client
  goes away);
* ``drip``: a good reply sent one byte every ``drip_s`` seconds;
* ``drip-headers``: the status line and headers sent that way (then a good reply);
* ``huge``: a good reply whose content is ``huge_chars`` characters (ignores max_tokens);
* ``short``: a Content-Length larger than the body sent, then the connection closes;
* ``usage-na``, ``tokens-many``: ``"usage": "n/a"``, ``"completion_tokens": "many"``;
* ``surrogate``: a content with a lone ``\\ud800`` escape;
* ``no-choices``: ``{"choices": []}``; ``null-content``: a content that is a number;
* ``not-json``, ``html``, ``array``: not JSON, an HTML page, a JSON array (all HTTP 200);
* ``error-endless``: HTTP 500 with a body that never ends.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time
from typing import Any

GOOD = "Draft.\nThe final verbalization is: [Paris is in France.]"


def reply(n: int, content: str = GOOD, **extra: Any) -> bytes:
    choices = [{"index": i, "message": {"role": "assistant", "content": content}} for i in range(n)]
    return json.dumps({"choices": choices, "usage": {"completion_tokens": 9 * n}, **extra}).encode()


class FaultServer:
    def __init__(self, case: str = "ok", drip_s: float = 0.5, huge_chars: int = 10**6) -> None:
        self.case = case
        self.script: list[str] = []
        self.drip_s = drip_s
        self.huge_chars = huge_chars
        self.requests = 0
        self.first_request_at: float | None = None  # time.perf_counter() of the first POST
        self.closing = threading.Event()  # ends drips and endless replies
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                return None

            def do_GET(self) -> None:  # noqa: N802 - the http.server name
                self._send(200, json.dumps({"data": [{"id": "fault-model"}]}).encode())

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                outer.requests += 1
                if outer.first_request_at is None:
                    outer.first_request_at = time.perf_counter()
                case = outer.script.pop(0) if outer.script else outer.case
                with contextlib.suppress(OSError):  # the client gave up: fine
                    outer.answer(self, case, int(body.get("n", 1)))

            def _send(self, status: int, data: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    def answer(self, h: Any, case: str, n: int) -> None:
        send = h._send
        if case == "ok":
            send(200, reply(n))
        elif case in ("endless", "error-endless"):
            h.send_response(200 if case == "endless" else 500)
            h.send_header("Content-Type", "application/json")
            h.send_header("Connection", "close")  # no Content-Length: ends at the close
            h.end_headers()
            h.close_connection = True
            h.wfile.write(b'{"choices": [{"message": {"content": "')
            piece = b"a" * 65536
            while not self.closing.is_set():
                h.wfile.write(piece)
        elif case == "drip":
            data = reply(n)
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            for index in range(len(data)):
                h.wfile.write(data[index : index + 1])
                h.wfile.flush()
                if self.closing.wait(self.drip_s):
                    return
        elif case == "drip-headers":
            data = reply(n)
            head = (
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(data)}\r\n\r\n"
            ).encode()
            for index in range(len(head)):
                h.wfile.write(head[index : index + 1])
                h.wfile.flush()
                if self.closing.wait(self.drip_s):
                    return
            h.wfile.write(data)
        elif case == "huge":
            send(200, reply(n, "The final verbalization is: [" + "x" * self.huge_chars + "]"))
        elif case == "short":
            data = reply(n)
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data) + 500))
            h.end_headers()
            h.wfile.write(data)
            h.close_connection = True
        elif case == "usage-na":
            send(200, reply(n, usage="n/a"))
        elif case == "tokens-many":
            send(200, reply(n, usage={"completion_tokens": "many"}))
        elif case == "surrogate":
            data = reply(n).replace(b"Paris is", b"Paris \\ud800 is")
            send(200, data)
        elif case == "no-choices":
            send(200, b'{"choices": [], "usage": {"completion_tokens": 0}}')
        elif case == "null-content":
            send(200, b'{"choices": [{"message": {"content": 42}}]}')
        elif case == "not-json":
            send(200, b"{'choices': oops")
        elif case == "html":
            page = b"<html><head><title>Welcome</title></head><body><h1>Welcome to nginx!</h1>"
            send(200, page + b"</body></html>", "text/html")
        elif case == "array":
            send(200, b'[{"choices": []}]')
        else:
            raise ValueError(f"unknown case {case!r}")

    def close(self) -> None:
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()
