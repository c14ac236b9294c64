"""Fixtures: a small Wikidata-shaped graph, a real Oxigraph server, a scriptable fake server."""

from __future__ import annotations

import gzip
import http.server
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from core.store import SessionStore
from core.wikidata.categories import Category, default_pattern

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
P = "http://www.wikidata.org/prop/"
PS = "http://www.wikidata.org/prop/statement/"
PSV = "http://www.wikidata.org/prop/statement/value/"
WDNO = "http://www.wikidata.org/prop/novalue/"
WDS = "http://www.wikidata.org/entity/statement/"
WDV = "http://www.wikidata.org/value/"
WB = "http://wikiba.se/ontology#"
SCHEMA = "http://schema.org/"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
SKOS = "http://www.w3.org/2004/02/skos/core#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
XSD = "http://www.w3.org/2001/XMLSchema#"

CITY = Category("City", "Q515", "P31", default_pattern("Q515", "P31"))
ACTOR = Category("Actor", "Q33999", "P106", default_pattern("Q33999", "P106"))
CITY_QIDS = [f"Q{1000 + i}" for i in range(1, 16)]
ACTOR_QIDS = [f"Q{2000 + i}" for i in range(1, 16)]
STAR = "Q2001"  # the actor with every kind of statement

PROPERTIES = {
    "P31": ("WikibaseItem", "instance of", "istanza di", "instancia de"),
    "P279": ("WikibaseItem", "subclass of", "sottoclasse di", "subclase de"),
    "P106": ("WikibaseItem", "occupation", "occupazione", "ocupación"),
    "P19": ("WikibaseItem", "place of birth", "luogo di nascita", "lugar de nacimiento"),
    "P22": ("WikibaseItem", "father", "padre", "padre"),
    "P26": ("WikibaseItem", "spouse", "coniuge", "cónyuge"),
    "P569": ("Time", "date of birth", "data di nascita", "fecha de nacimiento"),
    "P2048": ("Quantity", "height", "altezza", "altura"),
    "P214": ("ExternalId", "VIAF ID", "identificativo VIAF", "identificador VIAF"),
    "P17": ("WikibaseItem", "country", "paese", "país"),
}


def _lit(text: str, lang: str | None = None, datatype: str | None = None) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    if lang:
        return f'"{escaped}"@{lang}'
    if datatype:
        return f'"{escaped}"^^<{datatype}>'
    return f'"{escaped}"'


class Graph:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.n = 0

    def add(self, s: str, p: str, o: str) -> None:
        s = s if s.startswith("_:") else f"<{s}>"
        o = o if o.startswith(('"', "_:", "<")) else f"<{o}>"
        self.lines.append(f"{s} <{p}> {o} .")

    def labels(self, qid: str, en: str | None, it: str | None, es: str | None) -> None:
        for lang, text in (("en", en), ("it", it), ("es", es)):
            if text:
                self.add(WD + qid, RDFS + "label", _lit(text, lang))

    def statement(
        self, subject: str, pid: str, value: str | None, rank: str = "Normal", truthy: bool = True
    ) -> str:
        self.n += 1
        st = f"{WDS}{subject}-{self.n:04d}-ABCD"
        self.add(WD + subject, P + pid, st)
        self.add(st, WB + "rank", WB + rank + "Rank")
        self.add(st, RDF_TYPE, WB + "Statement")
        if value is not None:
            self.add(st, PS + pid, value)
            if truthy and rank != "Deprecated":
                self.add(WD + subject, WDT + pid, value)
        return st

    def item(self, subject: str, pid: str, qid: str, rank: str = "Normal") -> str:
        return self.statement(subject, pid, WD + qid, rank)

    def counts(self, qid: str, statements: int, sitelinks: int, wikis: str) -> None:
        self.add(WD + qid, WB + "statements", _lit(str(statements), datatype=XSD + "integer"))
        self.add(WD + qid, WB + "sitelinks", _lit(str(sitelinks), datatype=XSD + "integer"))
        for lang in wikis.split():
            article = f"https://{lang}.wikipedia.org/wiki/{qid}"
            self.add(article, SCHEMA + "about", WD + qid)
            self.add(article, SCHEMA + "isPartOf", f"https://{lang}.wikipedia.org/")


def build_graph() -> str:
    g = Graph()
    for pid, (ptype, en, it, es) in PROPERTIES.items():
        g.add(WD + pid, WB + "claim", P + pid)
        g.add(WD + pid, WB + "statementProperty", PS + pid)
        g.add(WD + pid, WB + "statementValue", PSV + pid)
        g.add(WD + pid, WB + "novalue", WDNO + pid)
        g.add(WD + pid, WB + "directClaim", WDT + pid)
        g.add(WD + pid, WB + "propertyType", WB + ptype)
        g.labels(pid, en, it, es)
    classes = {
        "Q5": ("human", "essere umano", "ser humano"),
        "Q515": ("city", "città", "ciudad"),
        "Q1549591": ("big city", "grande città", "gran ciudad"),
        "Q33999": ("actor", "attore", "actor"),
        "Q10800557": ("film actor", "attore cinematografico", "actor de cine"),
        "Q11573": ("metre", "metro", "metro"),
        "Q38": ("Italy", "Italia", "Italia"),
    }
    for qid, names in classes.items():
        g.labels(qid, *names)
    g.item("Q1549591", "P279", "Q515")  # big city -> city (a P279 path)
    g.item("Q10800557", "P279", "Q33999")  # film actor -> actor
    wiki_sets = ["en it es", "en", "it", "", "en es", "es", "en it"]
    for i, qid in enumerate(CITY_QIDS):
        g.item(qid, "P31", "Q1549591" if i % 3 == 0 else "Q515")
        g.item(qid, "P17", "Q38")
        # Every fourth city has no English label (label None in the records).
        g.labels(qid, None if i % 4 == 3 else f"City {i}", f"Città {i}", f"Ciudad {i}")
        g.counts(qid, 10 + i * 7, (i * 5) % 17, wiki_sets[i % len(wiki_sets)])
    for i, qid in enumerate(ACTOR_QIDS):
        g.item(qid, "P31", "Q5")
        if qid != STAR:
            g.item(qid, "P106", "Q10800557" if i % 2 else "Q33999")
        g.labels(qid, f"Actor {i}", f"Attore {i}", None)
        g.counts(qid, 3 + i * 11, (i * 3) % 13, wiki_sets[(i + 2) % len(wiki_sets)])
    # The star: every rank, a time, a quantity, an external id, a chain, some/no value.
    g.add(WD + STAR, SCHEMA + "description", _lit("American actor", "en"))
    g.add(WD + STAR, SCHEMA + "description", _lit("attore statunitense", "it"))
    g.add(WD + STAR, SCHEMA + "description", _lit("actor estadounidense", "es"))
    g.add(WD + STAR, SKOS + "altLabel", _lit("The Star", "en"))
    g.add(WD + STAR, SKOS + "altLabel", _lit('Star "Q" \\ #1', "en"))
    g.add(WD + STAR, SKOS + "altLabel", _lit("La Stella", "it"))
    g.add(WD + STAR, SKOS + "altLabel", _lit("Sternchen", "de"))  # not a LANGUAGE: dropped
    g.item(STAR, "P106", "Q33999", "Preferred")
    g.item(STAR, "P106", "Q10800557", "Normal")
    g.item(STAR, "P106", "Q515", "Deprecated")
    g.item(STAR, "P19", CITY_QIDS[0])  # chain: actor -> city -> country
    st = g.statement(STAR, "P569", _lit("1950-05-17T00:00:00Z", datatype=XSD + "dateTime"))
    g.add(st, PSV + "P569", WDV + "t1")
    g.add(WDV + "t1", WB + "timePrecision", _lit("11", datatype=XSD + "integer"))
    st = g.statement(STAR, "P2048", _lit("+1.80", datatype=XSD + "decimal"))
    g.add(st, PSV + "P2048", WDV + "q1")
    g.add(WDV + "q1", WB + "quantityUnit", WD + "Q11573")
    g.statement(STAR, "P214", _lit("113230702"))
    g.statement(STAR, "P22", "_:unknownfather", truthy=False)  # somevalue, blank node form
    g.statement(
        STAR, "P22", "http://www.wikidata.org/.well-known/genid/0123abcd", truthy=False
    )  # somevalue, skolem IRI form
    st = g.statement(STAR, "P26", None)
    g.add(st, RDF_TYPE, WDNO + "P26")  # novalue
    return "\n".join(g.lines) + "\n"


@pytest.fixture(scope="session")
def fixture_nt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wikidata")
    path = folder / "fixture.nt"
    path.write_text(build_graph(), encoding="utf-8")
    with gzip.open(folder / "fixture.nt.gz", "wb") as handle:
        handle.write(path.read_bytes())
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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


# -- a scriptable fake endpoint ---------------------------------------------------------


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    # Faults: a Content-Length other than the body's (None: the true one; -1: none, the
    # end of the body is the connection's close), seconds of silence after the headers,
    # and seconds between single bytes of the body (a slow drip).
    content_length: int | None = None
    stall_s: float = 0.0
    drip_s: float = 0.0


@dataclass
class FakeEndpoint:
    url: str
    replies: list[Reply] = field(default_factory=list)  # consumed in order; the last repeats
    requests: list[str] = field(default_factory=list)

    def next_reply(self, path: str) -> Reply:
        self.requests.append(path)
        if len(self.replies) > 1:
            return self.replies.pop(0)
        return self.replies[0] if self.replies else Reply(500, b"no reply scripted")


@pytest.fixture
def fake_endpoint() -> Iterator[FakeEndpoint]:
    state = FakeEndpoint("")
    closing = threading.Event()  # ends stalls and drips when the test is over

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            reply = state.next_reply(self.path)
            if reply.delay_s:
                time.sleep(reply.delay_s)
            try:
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                declared = len(reply.body) if reply.content_length is None else reply.content_length
                if declared >= 0:
                    self.send_header("Content-Length", str(declared))
                else:
                    self.close_connection = True
                self.end_headers()
                self.wfile.flush()
                if reply.stall_s and closing.wait(reply.stall_s):
                    return
                if reply.drip_s:
                    for byte in range(len(reply.body)):
                        self.wfile.write(reply.body[byte : byte + 1])
                        self.wfile.flush()
                        if closing.wait(reply.drip_s):
                            return
                else:
                    self.wfile.write(reply.body)
                if declared >= 0 and declared != len(reply.body):
                    self.close_connection = True
            except OSError:
                pass  # the client gave up (timeout tests)

        do_GET = _answer
        do_POST = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/sparql"
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        closing.set()
        server.shutdown()
        server.server_close()


@pytest.fixture
def session(tmp_path: Path) -> Iterator[SessionStore]:
    store = SessionStore.create(tmp_path / "s.taillens")
    try:
        yield store
    finally:
        store.close()
