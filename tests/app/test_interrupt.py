"""Ctrl+C ends a command with exit status 130 (SIGTERM: 143), as shells expect, with a
short message; a job it stops keeps what it finished, and the run resumes.

The long command is a real ``python -m app verbalise`` against a slow OpenAI-compatible
server on 127.0.0.1; the signal is sent once it has saved its first texts.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import types
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from app import cli
from app.terminal import run_in_terminal
from core.jobs import Job
from core.store import SessionStore
from tests.fixtures.local_http import LocalHTTPServer
from tests.fixtures.verbalise_units import add_units

ROOT = Path(__file__).resolve().parents[2]
UNITS = 40


class SlowServer:
    """An OpenAI-compatible server that takes ``delay`` seconds per completion."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def _reply(self, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # http.server's naming
                self._reply({"data": [{"id": "slow"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                time.sleep(owner.delay)
                content = "The final verbalization is: [Paris is in France.]"
                choices = [
                    {"index": i, "message": {"role": "assistant", "content": content}}
                    for i in range(body.get("n", 1))
                ]
                self._reply({"choices": choices, "usage": {"completion_tokens": 5}})

        self.httpd = LocalHTTPServer(Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[SlowServer]:
    slow = SlowServer(delay=0.2)
    yield slow
    slow.close()


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "s.taillens"
    with SessionStore.create(path) as store:
        add_units(store, UNITS, langs=("en",))
    return path


def verbalise(session: Path, server: SlowServer, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "app", "verbalise", "--session", str(session),
        "--model", server.url, "--server-model", "slow", "--langs", "en",
        "--batch-size", "1", *extra,
    ]  # fmt: skip


def rows(session: Path) -> tuple[list[tuple[int, str]], int]:
    """The runs (id, status) and how many units have texts, after an integrity check."""
    with sqlite3.connect(session) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        runs = connection.execute("SELECT id, status FROM model_runs").fetchall()
        units = connection.execute("SELECT count(DISTINCT unit_id) FROM verbalisations").fetchone()[
            0
        ]
    return runs, units


@pytest.mark.parametrize(
    ("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["INT", "TERM"]
)
def test_a_signal_stops_a_real_verbalise_which_keeps_its_texts_and_resumes(
    session: Path, server: SlowServer, taillens_home: Path, signum: int, status: int
) -> None:
    env = dict(os.environ, TAILLENS_HOME=str(taillens_home), PYTHONPATH=str(ROOT))
    process = subprocess.Popen(
        verbalise(session, server),
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(
        target=lambda: [lines.put(line) for line in iter(process.stderr.readline, "")],
        daemon=True,
    )
    reader.start()
    try:
        seen: list[str] = []
        while not any(re.search(rf" [1-9]\d*/{UNITS}\b", line) for line in seen):
            seen.append(lines.get(timeout=60))  # progress: "… 3/40 …" once texts are saved
        process.send_signal(signum)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    reader.join(timeout=10)
    err = "".join(seen) + "".join(lines.queue)
    assert process.returncode == status, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == (
        "taillens: Verbalise with slow: cancelled; what finished before is kept"
    ), err
    runs, units = rows(session)
    assert runs == [(1, "cancelled")] and 1 <= units < UNITS

    server.delay = 0.0
    again = subprocess.run(
        [*verbalise(session, server), "--json", "--quiet"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert summary["resumed"] and summary["skipped_done"] == units
    assert rows(session) == ([(1, "finished")], UNITS)


def _interrupt(*_args: Any) -> None:
    raise KeyboardInterrupt


def _job_interrupted(*_args: Any) -> None:
    run_in_terminal(Job("Work", _interrupt, uses_session=False), quiet=True)


def _worker_thread_interrupted(*_args: Any) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def work(_ctx: Any) -> None:
        with ThreadPoolExecutor(1) as pool:
            pool.submit(_interrupt).result()

    run_in_terminal(Job("Work", work, uses_session=False), quiet=True)


@pytest.mark.parametrize(
    "where",
    ["parsing", "handler", "job", "worker-thread"],
)
def test_keyboard_interrupt_anywhere_exits_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    if where == "parsing":
        monkeypatch.setattr(cli, "build_parser", _interrupt)
    else:
        handler = {
            "handler": _interrupt,
            "job": _job_interrupted,
            "worker-thread": _worker_thread_interrupted,
        }[where]
        parser = cli.build_parser()
        monkeypatch.setattr(parser, "parse_args", lambda _argv: types.SimpleNamespace(
            command="x", handler=handler
        ))  # fmt: skip
        monkeypatch.setattr(cli, "build_parser", lambda: parser)
    assert cli.main(["session", "info", "x"]) == 130
    assert capsys.readouterr().err == "taillens: interrupted\n"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_keyboard_interrupt_while_the_command_line_loads_exits_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import runpy

    class Loading(types.ModuleType):
        def __getattr__(self, name: str) -> Any:
            raise KeyboardInterrupt

    monkeypatch.setitem(sys.modules, "app.cli", Loading("app.cli"))
    with pytest.raises(SystemExit) as exit_:
        runpy.run_module("app", run_name="__main__")
    assert exit_.value.code == 130
    assert capsys.readouterr().err == "taillens: interrupted\n"
