"""Whether BERTScore's default model is cached: one public function the app asks."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.metrics import bertscore
from core.metrics.bertscore import DEFAULT_MODEL, default_model_cached, resolve_model

# Loads models, sentence-transformers or bert-score among them: in a parallel run its tests
# go to workers kept for them, and start on one that has not loaded torch yet
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models("encoders")


def test_it_agrees_with_the_model_scoring_would_use() -> None:
    assert default_model_cached() == (resolve_model(None).name == DEFAULT_MODEL)


def test_either_hub_name_counts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asked: list[str] = []

    def cached(repo_id: str) -> Path | None:
        asked.append(repo_id)
        return tmp_path if repo_id.startswith("google-bert/") else None

    monkeypatch.setattr(bertscore, "cached_hub_model", cached)
    assert default_model_cached() is True
    assert asked[-1] == "google-bert/bert-base-multilingual-cased"
    monkeypatch.setattr(bertscore, "cached_hub_model", lambda repo_id: None)
    assert default_model_cached() is False


def _ask_in_a_fresh_process(hub: Path, repo_id: str) -> list[str]:
    import json
    import os
    import subprocess
    import sys

    code = (
        "import json, sys\n"
        "from core.metrics.bertscore import cached_hub_model\n"
        f"found = cached_hub_model({repo_id!r})\n"
        "print(json.dumps([str(found), 'huggingface_hub' in sys.modules]))\n"
    )
    env = dict(os.environ, HF_HUB_CACHE=str(hub), HF_HUB_OFFLINE="1")
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def test_a_model_absent_from_the_hub_cache_is_answered_without_huggingface_hub(
    tmp_path: Path,
) -> None:
    assert _ask_in_a_fresh_process(tmp_path, "org/absent-model") == ["None", False]


def test_a_model_in_the_hub_cache_is_found_through_huggingface_hub(tmp_path: Path) -> None:
    # The hub cache's own layout: refs/main names the snapshot folder.
    folder = tmp_path / "models--org--small-bert"
    snapshot = folder / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}", encoding="utf-8")
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text("a" * 40, encoding="utf-8")
    assert _ask_in_a_fresh_process(tmp_path, "org/small-bert") == [str(snapshot), True]
