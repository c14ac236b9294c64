"""Long model work says what it is doing: a model load reports its stages
(resolving, tokenizer, weights, device, ready) as the verbalise job's progress, and a
prompt plus max_new_tokens past the model's context is a warning before the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.jobs import JobContext
from core.local_models.loader import LOAD_STAGES, context_length, context_warning, load_model
from core.verbalise import GenerationParams
from core.verbalise.local import CausalVerbaliser

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models

TRIPLES = [("Paris", "country", "France"), ("Paris", "mayor", "Anne Hidalgo")]


def test_loading_a_model_reports_each_stage_in_order(tiny_causal_lm: Path) -> None:
    stages: list[str] = []
    load_model(tiny_causal_lm, device="cpu", on_stage=stages.append)
    assert [s.split(" (")[0] for s in stages] == list(LOAD_STAGES)
    assert stages[3] == "moving the model to the device (cpu)"


def test_the_verbalise_job_passes_the_stages_on_as_progress(tiny_causal_lm: Path) -> None:
    seen: list[str] = []
    ctx = JobContext(on_progress=lambda p: seen.append(p.message), min_interval_s=0.0)
    verbaliser = CausalVerbaliser(tiny_causal_lm, device="cpu")
    verbaliser.on_stage = lambda words: ctx.progress(0, None, words)
    verbaliser.load()
    assert "reading the weights" in seen and "model ready" in seen


def test_context_length_is_read_from_the_config(tmp_path: Path, tiny_causal_lm: Path) -> None:
    limit = context_length(tiny_causal_lm)
    config = json.loads((tiny_causal_lm / "config.json").read_text())
    assert limit == config["max_position_embeddings"]
    (tmp_path / "config.json").write_text(json.dumps({"n_positions": 1024}))
    assert context_length(tmp_path) == 1024
    (tmp_path / "config.json").write_text("not json")
    assert context_length(tmp_path) is None


def test_a_prompt_past_the_context_is_a_warning(tiny_causal_lm: Path) -> None:
    assert context_warning(100, 156, 256) is None
    warning = context_warning(120, 256, 256)
    assert warning is not None and "376 in all" in warning and "takes 256" in warning
    limit = context_length(tiny_causal_lm)
    assert limit is not None
    fits = CausalVerbaliser(tiny_causal_lm, GenerationParams(max_new_tokens=1), device="cpu")
    assert fits.context_warning(TRIPLES, "en") is None
    too_long = CausalVerbaliser(
        tiny_causal_lm, GenerationParams(max_new_tokens=min(8192, limit)), device="cpu"
    )
    assert "Too long for this model" in (too_long.context_warning(TRIPLES, "en") or "")
