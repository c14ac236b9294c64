"""Fetching against hostile endpoints: time and peak memory of `taillens fetch`.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/fetch_limits.py [--budget 60] [--only NAME]

A local fault server on 127.0.0.1 plays each endpoint; every case runs the real CLI
(`python -m app fetch City --source URL --limit 20000 --page-size 1000`) in a fresh
process and reports its exit status, wall time, peak RSS (VmHWM), requests the
server saw and members stored, with the default limits (time budget 60 s per request,
64 MB per answer) unless --budget says otherwise:

* stall: headers, then silence;
* slow-drip: a valid answer sent one byte every 2 s;
* repeating-page: the same 1,000 members for every OFFSET;
* ignores-limit: 100,000 members (about 40 MB) whatever LIMIT asks;
* oversized: a 1.5 GB answer (streamed by the server, never held by it);
* retry-after: HTTP 429 with Retry-After: 100000.
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import json
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from measure import run_measured

ROOT = Path(__file__).resolve().parents[1]
FLAG = {"type": "literal", "datatype": "http://www.w3.org/2001/XMLSchema#boolean"}


def binding(number: int) -> dict[str, object]:
    return {
        "item": {"type": "uri", "value": f"http://www.wikidata.org/entity/Q{number}"},
        "statements": {"type": "literal", "value": str(number % 97)},
        "sitelinks": {"type": "literal", "value": "2"},
        "label": {"type": "literal", "value": f"Item {number}", "xml:lang": "en"},
        "wiki_en": {**FLAG, "value": "true"},
        "wiki_it": {**FLAG, "value": "false"},
        "wiki_es": {**FLAG, "value": "false"},
    }


def page(first: int, count: int) -> bytes:
    rows = [binding(first + i) for i in range(count)]
    return json.dumps({"head": {"vars": []}, "results": {"bindings": rows}}).encode()


def huge_body(total: int) -> Iterator[bytes]:
    """About ``total`` bytes of valid SPARQL JSON, generated piece by piece."""
    yield b'{"head": {"vars": []}, "results": {"bindings": ['
    chunk_rows = [json.dumps(binding(i + 1)) for i in range(2000)]
    chunk = ", ".join(chunk_rows).encode()
    sent = 0
    first = True
    while sent < total:
        yield (b"" if first else b", ") + chunk
        first = False
        sent += len(chunk) + 2
    yield b"]}}"


class Server:
    def __init__(self) -> None:
        self.case = ""
        self.requests = 0
        self.closing = threading.Event()
        outer = self
        repeated = page(1, 1000)
        flood = page(1, 100_000)

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 - the http.server name
                outer.requests += 1
                with contextlib.suppress(OSError):  # the client gave up
                    outer.answer(self, repeated, flood)

            do_POST = do_GET

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/sparql"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def answer(self, h: http.server.BaseHTTPRequestHandler, repeated: bytes, flood: bytes) -> None:
        json_type = ("Content-Type", "application/sparql-results+json")
        if self.case == "retry-after":
            h.send_response(429)
            h.send_header("Retry-After", "100000")
            h.send_header("Content-Length", "9")
            h.end_headers()
            h.wfile.write(b"slow down")
            return
        h.send_response(200)
        h.send_header(*json_type)
        if self.case == "stall":
            h.send_header("Content-Length", str(len(repeated)))
            h.end_headers()
            h.wfile.flush()
            self.closing.wait(3600)
        elif self.case == "slow-drip":
            h.send_header("Content-Length", str(len(repeated)))
            h.end_headers()
            for index in range(len(repeated)):
                h.wfile.write(repeated[index : index + 1])
                h.wfile.flush()
                if self.closing.wait(2.0):
                    return
        elif self.case == "repeating-page":
            h.send_header("Content-Length", str(len(repeated)))
            h.end_headers()
            h.wfile.write(repeated)
        elif self.case == "ignores-limit":
            h.send_header("Content-Length", str(len(flood)))
            h.end_headers()
            h.wfile.write(flood)
        elif self.case == "oversized":
            h.send_header("Connection", "close")  # no Content-Length: ends at the close
            h.end_headers()
            h.close_connection = True
            for piece in huge_body(1_500_000_000):
                h.wfile.write(piece)

    def close(self) -> None:
        self.closing.set()
        self.httpd.shutdown()


CASES = ("stall", "slow-drip", "repeating-page", "ignores-limit", "oversized", "retry-after")


def run_case(server: Server, case: str, budget: float, folder: Path) -> dict[str, object]:
    server.case = case
    server.requests = 0
    session = folder / f"{case}.taillens"
    command = [
        sys.executable,
        "-m",
        "app",
        "fetch",
        "City",
        "--session",
        str(session),
        "--source",
        server.url,
        "--limit",
        "20000",
        "--page-size",
        "1000",
        "--quiet",
        "--contact",
        "benchmark@example.org",
        "--time-budget",
        f"{budget:g}",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryFile() as out_file, tempfile.TemporaryFile() as err_file:
        code, elapsed, peak = run_measured(command, ROOT, env, 900, out_file, err_file)
        out_file.seek(0)
        err_file.seek(0)
        out, err = out_file.read(), err_file.read()
    stored = None
    if session.exists():
        import sqlite3

        with sqlite3.connect(session) as conn:
            stored = conn.execute("SELECT count(*) FROM category_members").fetchone()[0]
    message = (out.decode() + err.decode()).strip().splitlines()
    return {
        "case": case,
        "exit": code,
        "seconds": round(elapsed, 1),
        "peak_rss_mb": round(peak, 1),
        "requests": server.requests,
        "stored": stored,
        "said": message[-1][:220] if message else "",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=60.0, help="--time-budget passed on")
    parser.add_argument("--only", choices=CASES, action="append")
    args = parser.parse_args()
    server = Server()
    print(
        f"# PYTHONPATH=$PWD {Path(sys.executable).name} benchmarks/fetch_limits.py "
        f"--budget {args.budget:g}" + "".join(f" --only {c}" for c in args.only or ())
    )
    try:
        with tempfile.TemporaryDirectory() as folder:
            for case in args.only or CASES:
                row = run_case(server, case, args.budget, Path(folder))
                print(
                    f"{row['case']:<15} exit {row['exit']}  {row['seconds']:>6.1f} s  "
                    f"peak RSS {row['peak_rss_mb']:>7.1f} MB  requests {row['requests']:>3}  "
                    f"stored {row['stored']}\n    {row['said']}",
                    flush=True,
                )
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
