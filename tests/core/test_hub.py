"""Pulling, listing and removing models: the real ``huggingface_hub`` client against a hub
on 127.0.0.1 (``tests/fixtures/hub_server.py``) serving a tiny model this test built."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from core.jobs import CancelToken, Job, JobSucceeded, JobWasCancelled, Progress, run_job
from core.local_models import hub
from tests.fixtures.hub_server import REPO, FakeHub

ROOT = Path(__file__).resolve().parents[2]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _same_files(snapshot: Path, folder: Path) -> None:
    served = sorted(p.name for p in folder.iterdir() if p.is_file())
    assert sorted(p.name for p in snapshot.iterdir()) == served
    for name in served:
        assert _sha(snapshot / name) == _sha(folder / name), name


def _run(job: Job, token: CancelToken | None = None) -> tuple[object, list[Progress]]:
    seen: list[Progress] = []
    outcome = run_job(job, token, seen.append)
    return outcome, seen


def test_plan_says_the_size_before_downloading_and_the_pull_fills_the_standard_cache(
    fake_hub: FakeHub, served_model: Path, tmp_path: Path
) -> None:
    plan = hub.plan_pull(REPO)
    sizes = {p.name: p.stat().st_size for p in served_model.iterdir() if p.is_file()}
    assert {f.name: f.size for f in plan.files} == sizes
    assert plan.total_bytes == plan.missing_bytes == sum(sizes.values())
    assert plan.languages == ("en", "it", "es")
    assert not any(m == "GET" and "/resolve/" in p for m, p, _ in fake_hub.requests)

    result = hub.pull(plan)
    snapshot = tmp_path / "hub-cache" / "models--org--tiny" / "snapshots" / plan.commit
    assert result.path == snapshot
    _same_files(snapshot, served_model)
    # The hub's own layout: blobs named by ETag, snapshot links, refs/main.
    assert (snapshot.parent.parent / "refs" / "main").read_text() == plan.commit
    assert (snapshot / "model.safetensors").is_symlink()
    # huggingface_hub itself finds it offline, and TailLens loads it.
    from huggingface_hub import snapshot_download

    cache = str(tmp_path / "hub-cache")
    assert snapshot_download(REPO, local_files_only=True, cache_dir=cache) == str(snapshot)
    from core.local_models.loader import check_model_folder, resolve_model

    assert resolve_model(REPO) == snapshot
    assert check_model_folder(snapshot) == "causal"
    # Pulled again: nothing to download.
    assert hub.plan_pull(REPO).missing_bytes == 0
    before = len(fake_hub.gets("model.safetensors"))
    assert hub.pull(hub.plan_pull(REPO)).downloaded_bytes == 0
    assert len(fake_hub.gets("model.safetensors")) == before


def test_a_slow_server_reports_bytes_speed_and_time_left(fake_hub: FakeHub) -> None:
    fake_hub.delay_s = 0.01
    outcome, seen = _run(hub.pull_job(REPO))
    assert isinstance(outcome, JobSucceeded), outcome
    total = outcome.result.downloaded_bytes
    assert seen[-1].done == seen[-1].total == total
    mid = [p for p in seen if p.total and 0 < p.done < p.total]
    assert mid, "no progress reported while the file arrived"
    assert any("/s, " in p.message and " left" in p.message for p in mid), mid[-1].message


def test_a_dropped_connection_resumes_with_a_range_request(
    fake_hub: FakeHub, served_model: Path
) -> None:
    fake_hub.drop_after = 200_000  # three 64 KiB chunks arrive, then the socket closes
    result = hub.pull(hub.plan_pull(REPO))
    ranges = fake_hub.gets("model.safetensors")
    assert ranges == [None, f"bytes={3 * 64 * 1024}-"]
    _same_files(result.path, served_model)


def test_a_cancelled_pull_keeps_its_bytes_and_the_next_one_resumes(
    fake_hub: FakeHub, served_model: Path, tmp_path: Path
) -> None:
    token = CancelToken()
    weights = (served_model / "model.safetensors").stat().st_size
    fake_hub.delay_s = 0.02  # slower than the 20 reports/s a job's progress is throttled to

    def cancel_midway(progress: Progress) -> None:
        if progress.done > 300_000:
            token.cancel()

    outcome = run_job(hub.pull_job(REPO), token, cancel_midway)
    assert isinstance(outcome, JobWasCancelled)
    partial = list((tmp_path / "hub-cache").rglob("*" + hub.PARTIAL_SUFFIX))
    assert len(partial) == 1
    kept = partial[0].stat().st_size
    assert 0 < kept < weights
    plan = hub.plan_pull(REPO)
    assert plan.cached_bytes >= kept

    result = hub.pull(plan)
    assert result.resumed_bytes == kept
    assert fake_hub.gets("model.safetensors")[-1] == f"bytes={kept}-"
    _same_files(result.path, served_model)
    assert not list((tmp_path / "hub-cache").rglob("*" + hub.PARTIAL_SUFFIX))


def _cli_env(fake_hub: FakeHub, tmp_path: Path) -> dict[str, str]:
    # TRANSFORMERS_OFFLINE switches the hub off too (a model load in this process sets it).
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("HF_") and k != "TRANSFORMERS_OFFLINE"
    }
    env.update(
        PYTHONPATH=str(ROOT),
        HF_ENDPOINT=fake_hub.url,
        HF_HUB_CACHE=str(tmp_path / "hub-cache"),
        HF_HOME=str(tmp_path / "hf-home"),
    )
    return env


def test_a_killed_pull_resumes_where_it_stopped(
    fake_hub: FakeHub, served_model: Path, tmp_path: Path
) -> None:
    """``taillens models pull`` killed (SIGKILL) inside the weights, then run again."""
    env = _cli_env(fake_hub, tmp_path)
    fake_hub.stall_after = 1_100_000  # one 1 MiB chunk reaches the disk, then it hangs
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "models", "pull", REPO, "--quiet"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    partial: list[Path] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        partial = list((tmp_path / "hub-cache").rglob("*" + hub.PARTIAL_SUFFIX))
        if partial and partial[0].stat().st_size >= 1 << 20:
            break
        time.sleep(0.05)
    assert process.poll() is None, process.communicate()
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)
    kept = partial[0].stat().st_size
    assert kept == 1 << 20

    fake_hub.stall_after = None
    fake_hub.release.set()
    done = subprocess.run(
        [sys.executable, "-m", "app", "models", "pull", REPO, "--json", "--quiet"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert f'"resumed_bytes": {kept}' in done.stdout
    assert fake_hub.gets("model.safetensors")[-1] == f"bytes={kept}-"
    snapshot = next((tmp_path / "hub-cache" / "models--org--tiny" / "snapshots").iterdir())
    _same_files(snapshot, served_model)


def test_a_gated_repo_says_where_to_accept_the_licence_and_a_token_opens_it(
    fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch, served_model: Path
) -> None:
    plan = hub.plan_pull("org/gated")  # the model's page is public, as on the hub
    assert plan.gated
    with pytest.raises(hub.PullError) as refused:
        hub.pull(plan)
    message = str(refused.value)
    assert "\n" not in message
    assert f"accept its licence at {fake_hub.url}/org/gated" in message
    assert "HF_TOKEN" in message
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    _same_files(hub.pull(plan).path, served_model)


def test_missing_repo_revision_and_no_network_are_one_line_each(
    fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(hub.PullError, match=r"org/nothing was not found on .*check the name"):
        hub.plan_pull("org/nothing")
    with pytest.raises(hub.PullError, match=r"org/tiny has no revision 'v9'"):
        hub.plan_pull(REPO, "v9")
    with pytest.raises(hub.PullError, match=r"is not a model id"):
        hub.plan_pull("not a repo")
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    with pytest.raises(hub.PullError, match=r"cannot reach http://127.0.0.1:\d+ \(no network\?\)"):
        hub.plan_pull(REPO)
    from huggingface_hub import constants

    import core

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(core, "USER_HF_HUB_OFFLINE", "1")
    with pytest.raises(hub.PullError, match="HF_HUB_OFFLINE .or TRANSFORMERS_OFFLINE. is set"):
        hub.plan_pull(REPO)


def test_the_offline_switch_a_model_load_set_does_not_stop_a_pull(
    fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Verbalise (which loads a model: HF_HUB_OFFLINE=1 in this process), then pull."""
    from huggingface_hub import constants

    import core

    monkeypatch.setattr(core, "USER_HF_HUB_OFFLINE", None)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # as core.local_models.loader sets it when loading
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # hub imported after that
    chunk = constants.DOWNLOAD_CHUNK_SIZE
    result = hub.pull(hub.plan_pull(REPO))
    assert result.files and (result.path / "config.json").is_file()
    # Lifted for the pull's own calls only: what the load set holds again after it.
    assert constants.HF_HUB_OFFLINE is True
    assert constants.DOWNLOAD_CHUNK_SIZE == chunk != hub.CHUNK_BYTES


def test_a_pull_the_disk_cannot_hold_is_refused_before_any_byte(
    fake_hub: FakeHub, tmp_path: Path
) -> None:
    plan = replace(hub.plan_pull(REPO), free_bytes=1000)
    with pytest.raises(hub.PullError, match=r"needs .* more, and .* has 1000 B free"):
        hub.pull(plan)
    assert not any(m == "GET" and "/resolve/" in p for m, p, _ in fake_hub.requests)


def test_list_shows_kind_languages_size_and_place_and_remove_frees_it(
    fake_hub: FakeHub, tmp_path: Path
) -> None:
    result = hub.pull(hub.plan_pull(REPO))
    (listed,) = hub.list_models()
    assert (listed.name, listed.kind, listed.languages) == (REPO, "causal", ("en", "it", "es"))
    assert listed.size_bytes == result.downloaded_bytes
    assert listed.path == result.path
    assert hub.remove_model(REPO) == result.downloaded_bytes
    assert hub.list_models() == []
    assert not (tmp_path / "hub-cache" / "models--org--tiny").exists()
    with pytest.raises(hub.PullError, match="is not in the Hugging Face cache"):
        hub.remove_model(REPO)


@pytest.mark.parametrize(
    ("config", "card", "kind"),
    [
        ({"architectures": ["LlamaForCausalLM"]}, {}, "causal"),
        ({"architectures": ["T5ForConditionalGeneration"], "model_type": "t5"}, {}, "seq2seq"),
        ({"architectures": ["MarianMTModel"], "model_type": "marian"}, {}, "translation"),
        (
            {"architectures": ["M2M100ForConditionalGeneration"], "model_type": "m2m_100"},
            {"pipeline_tag": "translation"},
            "translation",
        ),
        ({"architectures": ["XLMRobertaModel"]}, {}, "encoder"),
        ({"architectures": ["BertModel"]}, {"tags": ["sentence-transformers"]}, "encoder"),
        (None, {"tags": ["translation", "quality-estimation"]}, "QE"),
        ({"architectures": ["XLMRobertaModel"]}, {"tags": ["cometkiwi"]}, "QE"),
    ],
)
def test_model_kind_comes_from_config_and_card(config: dict | None, card: dict, kind: str) -> None:
    assert hub.model_kind(config, card) == kind


def test_cli_pull_list_remove_and_a_gated_refusal(fake_hub: FakeHub, tmp_path: Path) -> None:
    env = _cli_env(fake_hub, tmp_path)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "app", "models", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    dry = cli("pull", REPO, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "files" in dry.stdout and "to download" in dry.stdout
    pulled = cli("pull", REPO, "--quiet")
    assert pulled.returncode == 0, pulled.stderr
    assert "downloaded" in pulled.stdout
    listed = cli("list")
    assert REPO in listed.stdout and "causal" in listed.stdout and "en,it,es" in listed.stdout
    gated = cli("pull", "org/gated", "--quiet")
    assert gated.returncode == 2
    assert gated.stderr.strip().splitlines()[-1].startswith("taillens: org/gated is gated")
    assert "Traceback" not in gated.stderr
    removed = cli("remove", REPO)
    assert removed.returncode == 0 and "freed" in removed.stdout
    shutil.rmtree(tmp_path / "hub-cache", ignore_errors=True)
