"""Finding, checking, fingerprinting and loading local models (tiny random ones)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.local_models.loader import (
    CAUSAL,
    SEQ2SEQ,
    ModelError,
    check_model_folder,
    configured_model_folders,
    discover_models,
    load_model,
    model_fingerprint,
    model_type_of,
    prompt_token_ids,
    prompts_token_ids,
    resolve_model,
    save_model_folders,
    select_device,
    select_dtype,
)

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models


def copy_model(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def make_hub_cache(cache: Path, repo_id: str, source: Path) -> Path:
    """The hub cache layout: blobs, a snapshot of symlinks, refs/main."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / "0123abcd"
    (repo / "blobs").mkdir(parents=True)
    snapshot.mkdir(parents=True)
    for i, file in enumerate(sorted(source.iterdir())):
        blob = repo / "blobs" / f"blob{i}"
        shutil.copy(file, blob)
        (snapshot / file.name).symlink_to(blob)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    return snapshot


def test_types_come_from_the_config() -> None:
    assert model_type_of({"architectures": ["LlamaForCausalLM"]}) == CAUSAL
    assert (
        model_type_of({"architectures": ["T5ForConditionalGeneration"], "is_encoder_decoder": True})
        == SEQ2SEQ
    )
    assert model_type_of({"model_type": "bart"}) == SEQ2SEQ
    # Gemma 3 is a decoder with a vision tower: generated with as a causal LM.
    assert model_type_of({"architectures": ["Gemma3ForConditionalGeneration"]}) == CAUSAL
    assert model_type_of({"architectures": ["BertModel"]}) == "unknown"


def test_tiny_models_check_and_load(tiny_causal_lm: Path, tiny_seq2seq: Path) -> None:
    assert check_model_folder(tiny_causal_lm) == CAUSAL
    assert check_model_folder(tiny_seq2seq) == SEQ2SEQ
    loaded = load_model(tiny_causal_lm, device="cpu")
    assert (loaded.type, loaded.device, loaded.dtype) == (CAUSAL, "cpu", "float32")
    assert loaded.has_chat_template
    assert type(loaded.model).__name__ == "LlamaForCausalLM"
    assert not loaded.model.training
    assert loaded.fingerprint == model_fingerprint(tiny_causal_lm)
    with pytest.raises(ModelError, match="is a seq2seq model; a causal model is needed"):
        load_model(tiny_seq2seq, expected_type=CAUSAL)


def test_hub_cache_models_are_discovered_and_loaded_by_id(
    tiny_causal_lm: Path, tiny_seq2seq: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "hub"
    snapshot = make_hub_cache(cache, "acme/tiny-llama", tiny_causal_lm)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("TAILLENS_MODEL_DIRS", str(tiny_seq2seq.parent))
    found = {m.name: m for m in discover_models()}
    assert found["acme/tiny-llama"].type == CAUSAL
    assert found["acme/tiny-llama"].source == "hf-cache"
    assert found["acme/tiny-llama"].path == snapshot
    size = sum(f.stat().st_size for f in tiny_causal_lm.iterdir())
    assert found["acme/tiny-llama"].size_bytes == size
    assert found["tiny-t5"].type == SEQ2SEQ and found["tiny-t5"].source == "folder"
    assert resolve_model("acme/tiny-llama") == snapshot
    assert load_model("acme/tiny-llama", device="cpu").type == CAUSAL
    with pytest.raises(ModelError, match="not in the Hugging Face cache.*taillens models pull"):
        resolve_model("acme/absent")


@pytest.mark.parametrize("ref", ["../../../elsewhere", "ABSOLUTE", "link"])
def test_a_cache_ref_never_leads_outside_the_snapshots(
    tiny_causal_lm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ref: str
) -> None:
    # Another program writes the hub cache: refs/main naming a path, or a snapshot that
    # is a link out of the cache, must not make a folder elsewhere a model of the cache.
    cache = tmp_path / "hub"
    snapshot = make_hub_cache(cache, "acme/tiny-llama", tiny_causal_lm)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(tiny_causal_lm, elsewhere)
    repo = snapshot.parent.parent
    if ref == "link":
        commit = "a" * 40
        (repo / "snapshots" / commit).symlink_to(elsewhere)
        (repo / "refs" / "main").write_text(commit)
    else:
        text = str(elsewhere) if ref == "ABSOLUTE" else ref
        (repo / "refs" / "main").write_text(text)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("TAILLENS_MODEL_DIRS", "")
    found = {m.name: m for m in discover_models()}
    assert found["acme/tiny-llama"].path == snapshot  # the real snapshot, not elsewhere
    assert resolve_model("acme/tiny-llama") == snapshot


def test_model_folders_are_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TAILLENS_MODEL_DIRS", raising=False)
    save_model_folders([tmp_path / "a", tmp_path / "b", tmp_path / "a"])
    assert configured_model_folders() == [tmp_path / "a", tmp_path / "b"]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("no-folder", "no model folder at"),
        ("no-config", "holds no config.json"),
        ("bad-config", "cannot be read as JSON"),
        ("no-weights", "holds no weights"),
        ("truncated-weights", "is truncated"),
        ("garbage-weights", "not a valid safetensors file"),
        ("missing-shard", "lacks weight shard"),
        ("no-tokenizer", "holds no tokenizer files"),
        ("not-generative", "is not a text generation model"),
    ],
)
def test_broken_folders_say_what_is_wrong(
    tiny_causal_lm: Path, tmp_path: Path, damage: str, message: str
) -> None:
    folder = copy_model(tiny_causal_lm, tmp_path / "model")
    weights = folder / "model.safetensors"
    if damage == "no-folder":
        folder = tmp_path / "absent"
    elif damage == "no-config":
        (folder / "config.json").unlink()
    elif damage == "bad-config":
        (folder / "config.json").write_text("{not json")
    elif damage == "no-weights":
        weights.unlink()
    elif damage == "truncated-weights":
        data = weights.read_bytes()
        weights.write_bytes(data[: len(data) // 2])
    elif damage == "garbage-weights":
        weights.write_bytes(b"\xff" * 64)
    elif damage == "missing-shard":
        weights.rename(folder / "model-00001-of-00002.safetensors")
        (folder / "model.safetensors.index.json").write_text(
            json.dumps(
                {
                    "weight_map": {
                        "a": "model-00001-of-00002.safetensors",
                        "b": "model-00002-of-00002.safetensors",
                    }
                }
            )
        )
    elif damage == "no-tokenizer":
        (folder / "tokenizer.json").unlink()
    elif damage == "not-generative":
        config = json.loads((folder / "config.json").read_text())
        config["architectures"] = ["BertModel"]
        (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match=message):
        load_model(folder)


def test_fingerprint_follows_config_and_weights_not_location(
    tiny_causal_lm: Path, tmp_path: Path
) -> None:
    copy = copy_model(tiny_causal_lm, tmp_path / "copy")
    original = model_fingerprint(tiny_causal_lm)
    assert model_fingerprint(copy) == original
    config = json.loads((copy / "config.json").read_text())
    config["rope_theta"] = 1234.0
    (copy / "config.json").write_text(json.dumps(config))
    changed_config = model_fingerprint(copy)
    assert changed_config != original
    # Same shapes, new values (retrained in place): the sampled bytes catch it.
    weights = copy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    assert model_fingerprint(copy) != changed_config


def test_device_and_dtype_selection(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert select_device("auto") in ("cpu", "mps")
    assert select_device("cpu") == "cpu"
    with pytest.raises(ModelError, match="torch sees no CUDA GPU"):
        select_device("cuda")
    with pytest.raises(ModelError, match="unknown device"):
        select_device("tpu")
    assert select_dtype("auto", "cpu") == "float32"
    assert select_dtype("float16", "cpu") == "float16"
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert select_dtype("auto", "cuda") == "bfloat16"
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    assert select_dtype("auto", "cuda") == "float16"
    from core.local_models import placement

    gpu = placement.Gpu(0, "a GPU", 2**30, 2**31, bf16=True)
    monkeypatch.setattr(placement, "probe_hardware", lambda: placement.Hardware(gpus=(gpu,)))
    assert select_device("auto") == "cuda"
    with pytest.raises(ModelError, match="unknown dtype"):
        select_dtype("int3", "cpu")


def test_prompt_ids_use_the_chat_template_when_there_is_one(
    tiny_causal_lm: Path, tmp_path: Path
) -> None:
    from tests.fixtures.tiny_models import build_tiny_causal_lm

    tokenizer = load_model(tiny_causal_lm, device="cpu").tokenizer
    chat = tokenizer.decode(prompt_token_ids(tokenizer, "Hello"))
    assert chat == "<|user|>\nHello\n<|assistant|>\n"
    plain_folder = build_tiny_causal_lm(tmp_path / "plain", chat_template=False)
    plain = load_model(plain_folder, device="cpu").tokenizer
    ids = prompt_token_ids(plain, "Hello")
    assert ids[0] == plain.bos_token_id and plain.decode(ids[1:]) == "Hello"


def test_prompts_encoded_together_are_each_encoded_as_alone(
    tiny_causal_lm: Path, tmp_path: Path
) -> None:
    """One tokenizer call for a batch (what the verbalise job and the references pipeline
    pad) gives every prompt exactly the ids it gets encoded by itself, chat or plain."""
    from tests.fixtures.tiny_models import build_tiny_causal_lm

    prompts = ["Hello", "", "[Paris, country, France] " * 7, "Anne Hidalgo\nwas born"]
    chat = load_model(tiny_causal_lm, device="cpu").tokenizer
    alone = [
        chat(
            chat.apply_chat_template(
                [{"role": "user", "content": p}], tokenize=False, add_generation_prompt=True
            ),
            add_special_tokens=False,
        )["input_ids"]
        for p in prompts
    ]
    assert prompts_token_ids(chat, prompts) == alone
    assert len({len(ids) for ids in alone}) == len(prompts)  # no padding crept in
    plain = load_model(
        build_tiny_causal_lm(tmp_path / "plain", chat_template=False), device="cpu"
    ).tokenizer
    assert prompts_token_ids(plain, prompts) == [
        plain(p, add_special_tokens=True)["input_ids"] for p in prompts
    ]
    assert prompts_token_ids(plain, []) == []


def test_freeing_device_memory_never_collects_garbage_in_a_worker_of_the_gui() -> None:
    """With automatic collection off (the GUI collects on its UI thread), a job's worker
    must not collect: that could destroy Qt objects off the UI thread."""
    import gc
    import threading

    from core.local_models.loader import free_device_memory

    collected_in: list[str] = []

    def record(phase: str, _info: dict) -> None:
        if phase == "start":
            collected_in.append(threading.current_thread().name)

    def in_worker() -> None:
        worker = threading.Thread(target=free_device_memory, args=("cpu",), name="worker")
        worker.start()
        worker.join()

    was_enabled = gc.isenabled()
    gc.callbacks.append(record)
    try:
        gc.disable()
        in_worker()
        assert collected_in == []
        free_device_memory("cpu")  # the UI thread itself may collect
        assert collected_in == [threading.main_thread().name]
        collected_in.clear()
        gc.enable()  # the command line: no GUI collector, collecting anywhere is fine
        in_worker()
        assert "worker" in collected_in
    finally:
        gc.callbacks.remove(record)
        if was_enabled:
            gc.enable()
        else:
            gc.disable()
