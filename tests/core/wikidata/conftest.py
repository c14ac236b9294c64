"""Fixtures: the small Wikidata-shaped graph (tests/fixtures/wikidata_graph.py) as a file,
a real Oxigraph server serving it, and a scriptable fake server
(tests/fixtures/fake_sparql_endpoint.py)."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.store import SessionStore

# Imported here, the fake endpoint is a fixture of every test in this folder.
from tests.fixtures.fake_sparql_endpoint import fake_endpoint  # noqa: F401
from tests.fixtures.ports import free_port
from tests.fixtures.wikidata_graph import build_graph


@pytest.fixture(scope="session")
def fixture_nt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wikidata")
    path = folder / "fixture.nt"
    path.write_text(build_graph(), encoding="utf-8")
    with gzip.open(folder / "fixture.nt.gz", "wb") as handle:
        handle.write(path.read_bytes())
    return path


def oxigraph_binary() -> str | None:
    """The oxigraph server of the running Python's environment (the dev extra installs it
    beside ``python``, whether or not that folder is on PATH), else one on PATH."""
    return shutil.which("oxigraph", path=str(Path(sys.executable).parent)) or shutil.which(
        "oxigraph"
    )


@pytest.fixture(scope="session")
def oxigraph_url(fixture_nt: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = oxigraph_binary()
    if binary is None:
        pytest.skip("the oxigraph server binary is not installed (pip install -e .[dev])")
    location = tmp_path_factory.mktemp("oxigraph-db")
    subprocess.run(
        [binary, "load", "--location", str(location), "--file", str(fixture_nt)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    port = free_port()
    process = subprocess.Popen(
        [binary, "serve-read-only", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/query"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                probe = urllib.request.Request(
                    url + "?query=ASK%7B%7D", headers={"Accept": "application/sparql-results+json"}
                )
                with urllib.request.urlopen(probe, timeout=1) as response:
                    response.read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"oxigraph serve did not start: {process.stderr.read()!r}"
                        if process.stderr
                        else "oxigraph serve did not start"
                    ) from None
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture
def session(tmp_path: Path) -> Iterator[SessionStore]:
    store = SessionStore.create(tmp_path / "s.taillens")
    try:
        yield store
    finally:
        store.close()
