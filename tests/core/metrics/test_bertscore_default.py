"""Whether BERTScore's default model is cached: one public function the app asks."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.metrics import bertscore
from core.metrics.bertscore import DEFAULT_MODEL, default_model_cached, resolve_model


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
