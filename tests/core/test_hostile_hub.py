"""A hostile model hub: names it sends never become paths outside the cache, and every
wait on it ends (a deadline, a cancel) with one line. The real ``huggingface_hub``
client talks to a local hub (``tests/fixtures/hub_server.py``) that lies."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.jobs import CancelToken, JobFailed, JobWasCancelled, run_job
from core.local_models import hub
from tests.fixtures.hub_server import FakeHub

REPO = "org/small"


def _files_outside(root: Path, cache: Path) -> set[Path]:
    return {
        p
        for p in root.rglob("*")
        if (p.is_file() or p.is_symlink()) and cache not in p.parents and p != cache
    }


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    from huggingface_hub import constants

    folder = tmp_path / "served"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "llama"}), encoding="utf-8")
    (folder / "README.md").write_text("---\nlanguage: en\n---\n# small\n", encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    with FakeHub() as server:
        server.add(REPO, folder)
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_HUB_CACHE", str(home / "cache"))
        monkeypatch.setenv("HF_HOME", str(home / "hf-home"))
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.delenv("HF_TOKEN", raising=False)
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        monkeypatch.setattr(hub, "METADATA_DEADLINE_S", 1.5, raising=False)
        monkeypatch.setattr(hub, "STALL_S", 1.5, raising=False)
        yield server


def _pull(revision: str | None = None) -> object:
    return run_job(hub.pull_job(REPO, revision), CancelToken(), lambda _p: None)


def _one_line_failure(outcome: object) -> str:
    assert isinstance(outcome, JobFailed), outcome
    assert isinstance(outcome.error, hub.PullError), repr(outcome.error)
    text = str(outcome.error)
    assert "\n" not in text and "Traceback" not in text
    return text


def test_the_honest_hub_still_pulls(hostile: FakeHub, tmp_path: Path) -> None:
    before = _files_outside(tmp_path, tmp_path / "home" / "cache")
    outcome = _pull()
    assert not isinstance(outcome, JobFailed), outcome
    snapshot = tmp_path / "home" / "cache" / "models--org--small" / "snapshots"
    (commit,) = [p.name for p in snapshot.iterdir()]
    assert json.loads((snapshot / commit / "config.json").read_text())["model_type"] == "llama"
    assert (snapshot / commit / "config.json").is_symlink()
    assert _files_outside(tmp_path, tmp_path / "home" / "cache") == before


@pytest.mark.parametrize(
    "etag",
    [
        "../../../x",
        "../../../../.profile",
        "/ABSOLUTE/.bashrc",
        "a/b",
        "..",
        "",
        "x\x00y",
        "\x1b[2J",
    ],
)
def test_an_etag_that_is_not_a_file_name_writes_nothing_outside_the_cache(
    hostile: FakeHub, tmp_path: Path, etag: str
) -> None:
    cache = tmp_path / "home" / "cache"
    hostile.etags["config.json"] = etag.replace("/ABSOLUTE", str(tmp_path / "home"))
    before = _files_outside(tmp_path, cache)
    text = _one_line_failure(_pull())
    assert "ETag" in text or "not" in text
    assert _files_outside(tmp_path, cache) == before
    assert not (tmp_path / "home" / ".bashrc").exists()
    assert not (tmp_path / "x").exists() and not (tmp_path / ".profile").exists()


@pytest.mark.parametrize("sha", ["../../x", "/etc", "abc", "A" * 40, "0" * 39 + "/"])
def test_a_commit_id_that_is_not_forty_hex_digits_is_refused(
    hostile: FakeHub, tmp_path: Path, sha: str
) -> None:
    hostile.repos[REPO].sha = sha
    text = _one_line_failure(_pull())
    assert "commit" in text
    assert not (tmp_path / "home" / "cache" / "models--org--small" / "snapshots").exists()


@pytest.mark.parametrize("name", ["/abs/file.json", "../escape.json", "a/../../b", "c\\d", "e\x07"])
def test_a_listed_file_name_that_is_not_a_relative_path_is_refused(
    hostile: FakeHub, tmp_path: Path, name: str
) -> None:
    hostile.extra_siblings.append(name)
    cache = tmp_path / "home" / "cache"
    before = _files_outside(tmp_path, cache)
    text = _one_line_failure(_pull())
    assert "file name" in text
    assert _files_outside(tmp_path, cache) == before


@pytest.mark.parametrize(
    "revision", ["../../../x", "../../../../../x", "/ABSOLUTE/x", "a/../../../../b", "..", "r\x07"]
)
def test_a_revision_that_is_not_a_relative_name_writes_no_ref(
    hostile: FakeHub, tmp_path: Path, revision: str
) -> None:
    cache = tmp_path / "home" / "cache"
    hostile.any_revision = True  # the server says every revision exists
    revision = revision.replace("/ABSOLUTE", str(tmp_path))
    before = _files_outside(tmp_path, cache)
    with pytest.raises(hub.PullError, match="revision"):
        hub.plan_pull(REPO, revision)
    text = _one_line_failure(_pull(revision))
    assert "revision" in text
    assert _files_outside(tmp_path, cache) == before
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("fault", "words"),
    [
        ("silent", "did not finish"),
        ("drip", "did not finish"),
        ("html", "not the Hugging Face hub"),
        ("redirect", "redirect"),
        ("short", ""),
    ],
)
def test_every_wait_on_the_hub_ends_in_one_line(hostile: FakeHub, fault: str, words: str) -> None:
    hostile.fault = fault
    hostile.drip_s = 0.2
    text = _one_line_failure(_pull())
    assert words in text


def test_a_cancel_while_the_hub_says_nothing_acts_at_once(
    hostile: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hub, "METADATA_DEADLINE_S", 60.0, raising=False)
    hostile.fault = "silent"
    token = CancelToken()
    threading.Timer(0.3, token.cancel).start()
    outcome = run_job(hub.pull_job(REPO), token, lambda _p: None)
    assert isinstance(outcome, JobWasCancelled), outcome
