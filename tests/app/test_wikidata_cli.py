"""distribution, fetch and entity on the command line, over the bundled demo snapshot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from core.store import SessionStore
from core.wikidata.cache import load_category
from tests.fixtures.fake_sparql_endpoint import (  # noqa: F401
    JSON_HEADERS,
    FakeEndpoint,
    Reply,
    fake_endpoint,
    good_body,
)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_distribution_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "distribution", "River", "--limit", "600", "--json", "--counts")
    assert status == 0
    result = json.loads(out)
    assert result["category"] == "River" and 0 < result["n"] <= 600
    counts = sorted(result["counts"].values(), reverse=True)
    assert len(counts) == result["n"]
    cut = result["cutoffs"]
    # Recompute METHODS §3 by hand from the printed counts.
    total, running = sum(counts), 0
    for value in counts:
        running += value
        if running / total >= 0.8:
            break
    assert cut["pareto_value"] == value
    rank = -(-result["n"] * 2 // 10)  # ceil(0.2 n)
    assert cut["head_tail_value"] == counts[rank - 1]
    head = result["tiers"]["by_pareto_cutoff"]["head"]
    assert head["size"] == sum(1 for c in counts if c >= value)
    assert sum(result["histogram"]["counts"]) + result["histogram"]["zero_count"] == result["n"]


def test_distribution_text_and_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "distribution", "Airport", "--limit", "300", "--quiet")
    assert status == 0 and "Pareto cut-off (share 0.8)" in out
    status, _, err = run(capsys, "distribution", "Nowhere")
    assert status == 2 and "no category named 'Nowhere'" in err
    status, _, err = run(capsys, "distribution", "City", "--share", "1.5")
    assert status == 2 and "--share must be in (0, 1]" in err
    status, _, err = run(capsys, "distribution", "City", "--source", "ftp://x")
    assert status == 2 and "unknown source" in err


def test_fetch_resumes_and_entity_reads_the_cache(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    session = tmp_path / "s.taillens"
    status, out, _ = run(
        capsys,
        "fetch",
        "River",
        "--session",
        str(session),
        "--limit",
        "250",
        "--page-size",
        "100",
        "--quiet",
    )
    assert status == 0 and "fetched 250 in 3 pages (session had 0; now 250)" in out
    status, out, _ = run(
        capsys,
        "fetch",
        "River",
        "--session",
        str(session),
        "--limit",
        "400",
        "--page-size",
        "100",
        "--quiet",
    )
    assert "session had 250; now 400" in out
    with SessionStore.open(session) as store:
        table = load_category(store, "River")
    assert len(table) == 400 and len(set(table.qids)) == 400
    qid = table.qids[int(table.statements.argmax())]

    status, out, _ = run(capsys, "entity", qid, "--json")
    assert status == 0
    details = json.loads(out)
    assert details["qid"] == qid and details["claims"]
    status, _, err = run(capsys, "entity", qid, "--source", "cache", "--session", str(session))
    assert status == 2 and qid in err  # never opened: not in the cache yet, and it says so
    status, _, _ = run(capsys, "entity", qid, "--session", str(session), "--json")
    assert status == 0  # fetched from the demo data and kept in the session
    status, out, _ = run(
        capsys, "entity", qid, "--source", "cache", "--session", str(session), "--json"
    )
    assert status == 0 and json.loads(out) == details
    status, _, err = run(capsys, "entity", "Q1'}", "--json")
    assert status == 2 and "not a Wikidata item id" in err


def test_category_save_list_and_use(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    session = tmp_path / "c.taillens"
    status, out, _ = run(
        capsys,
        "category",
        "save",
        "Capital",
        "--session",
        str(session),
        "--class",
        "Q515",
        "--pattern",
        "?item wdt:P31 wd:Q515 .",
    )
    assert status == 0 and "Capital: saved" in out
    status, out, _ = run(capsys, "category", "list", "--session", str(session), "--json")
    rows = {row["name"]: row for row in json.loads(out)}
    assert rows["Capital"]["pattern"] == "?item wdt:P31 wd:Q515 ." and len(rows) == 24
    status, out, _ = run(
        capsys, "fetch", "Capital", "--session", str(session), "--limit", "50", "--quiet"
    )
    assert status == 0 and "now 50" in out
    narrower = (
        "category",
        "save",
        "Capital",
        "--session",
        str(session),
        "--class",
        "Q515",
        "--pattern",
        "?item wdt:P31 wd:Q515 ; wdt:P17 ?country .",
    )
    status, _, err = run(capsys, *narrower)
    assert status == 2 and "--drop-members" in err  # 50 members would go: refused
    status, out, _ = run(capsys, *narrower, "--drop-members")
    assert status == 0 and "50 members of the old pattern removed" in out
    status, _, err = run(
        capsys,
        "category",
        "save",
        "Evil",
        "--session",
        str(session),
        "--class",
        "Q515",
        "--pattern",
        "?item ?p ?o } DELETE WHERE { ?s ?p ?o",
    )
    assert status == 2 and "Evil" not in json.dumps(rows)
    status, _, err = run(
        capsys, "category", "save", "Bad", "--session", str(session), "--class", "515"
    )
    assert status == 2 and "not a Wikidata item id" in err


def test_incomplete_fetch_is_shown_everywhere(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    fake_endpoint: FakeEndpoint,  # noqa: F811
) -> None:
    # An endpoint that returns the same page for every OFFSET: paging stops at page 2 and
    # the category is marked incomplete in fetch, distribution --source cache, session info.
    fake_endpoint.replies = [Reply(200, good_body(["Q1", "Q2", "Q3"]), JSON_HEADERS)]
    session = str(tmp_path / "s.taillens")
    status, out, _ = run(
        capsys,
        "fetch",
        "City",
        "--session",
        session,
        "--source",
        fake_endpoint.url,
        "--limit",
        "50",
        "--page-size",
        "3",
        "--quiet",
        "--contact",
        "tests@example.org",
    )
    assert status == 0 and "now 3)" in out and "incomplete" in out and "OFFSET" in out
    assert len(fake_endpoint.requests) == 2
    status, out, _ = run(
        capsys,
        "distribution",
        "City",
        "--source",
        "cache",
        "--session",
        session,
        "--json",
        "--quiet",
    )
    result = json.loads(out)
    assert status == 0 and result["n"] == 3 and not result["complete"]
    assert "OFFSET" in result["incomplete"]
    status, out, _ = run(
        capsys, "distribution", "City", "--source", "cache", "--session", session, "--quiet"
    )
    assert status == 0 and "n = 3 (incomplete:" in out
    status, out, _ = run(capsys, "session", "info", session)
    city = next(c for c in json.loads(out)["categories"] if c["name"] == "City")
    assert city["members"] == 3 and city["fetch_status"] == "incomplete"
    assert "OFFSET" in city["incomplete"]
    # Straight from the endpoint: one short page is the whole category.
    status, out, _ = run(
        capsys,
        "distribution",
        "City",
        "--source",
        fake_endpoint.url,
        "--limit",
        "50",
        "--json",
        "--quiet",
    )
    result = json.loads(out)
    assert status == 0 and result["n"] == 3 and result["complete"]


def test_refusals_and_bad_headers_exit_2(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    fake_endpoint: FakeEndpoint,  # noqa: F811
) -> None:
    fake_endpoint.replies = [
        Reply(
            403,
            b"Please set a user-agent and respect our robot policy",
            {"Content-Type": "text/plain"},
        )
    ]
    status, _, err = run(capsys, "distribution", "City", "--source", fake_endpoint.url, "--quiet")
    assert status == 2 and "Please set a user-agent" in err and "--contact" in err
    assert "Traceback" not in err
    status, _, err = run(
        capsys,
        "distribution",
        "City",
        "--source",
        fake_endpoint.url,
        "--contact",
        "a\r\nX: 1",
        "--quiet",
    )
    assert status == 2 and "control character" in err and "Traceback" not in err
    status, _, err = run(
        capsys,
        "fetch",
        "City",
        "--session",
        str(tmp_path / "t.taillens"),
        "--source",
        fake_endpoint.url,
        "--time-budget",
        "0",
        "--quiet",
    )
    assert status == 2 and "--time-budget" in err


@pytest.mark.parametrize("qid", ["Q990000116\n", "Q42\r", "Q42 "])
def test_entity_with_a_trailing_newline_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, qid: str
) -> None:
    session = tmp_path / "s.taillens"
    status, _, err = run(capsys, "entity", qid, "--session", str(session))
    assert status == 2 and "is not a Wikidata item id" in err and "Traceback" not in err
    assert not session.exists()  # refused before anything was opened or written


def test_retry_after_wait_is_reported_on_stderr(
    capsys: pytest.CaptureFixture[str],
    fake_endpoint: FakeEndpoint,  # noqa: F811
) -> None:
    fake_endpoint.replies = [
        Reply(503, b"busy", {"Retry-After": "1"}),
        Reply(200, good_body(["Q1", "Q2"]), JSON_HEADERS),
    ]
    status, out, err = run(
        capsys, "distribution", "City", "--source", fake_endpoint.url, "--time-budget", "10"
    )
    assert status == 0 and "n = 2" in out
    assert "HTTP 503" in err and "asked to wait 1 s" in err and "retrying in 1 s" in err
