"""Placing a model on the hardware there is (core.local_models.placement): decided from a described
machine (no GPU needed), and recorded with every local run."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest

from core.local_models.placement import (
    Gpu,
    Hardware,
    PlacementError,
    cpu_count,
    from_pretrained_kwargs,
    parameter_count,
    plan_placement,
)

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models

GIB = 2**30


def fake_weights(folder: Path, params: int) -> Path:
    """A safetensors header declaring ``params`` float32 parameters (no data: only the
    header is read)."""
    folder.mkdir(parents=True, exist_ok=True)
    header = json.dumps(
        {"w": {"dtype": "F32", "shape": [params], "data_offsets": [0, 4 * params]}}
    ).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)
    return folder


def h100(free_gib: float = 70, *, bf16: bool = True, bnb: bool = False, count: int = 1):
    gpus = tuple(Gpu(i, "NVIDIA H100", int(free_gib * GIB), 80 * GIB, bf16) for i in range(count))
    return Hardware(gpus=gpus, cpus=16, bitsandbytes=bnb, torch="test")


def test_parameter_count_reads_the_safetensors_headers(tmp_path: Path) -> None:
    assert parameter_count(fake_weights(tmp_path / "m", 123_456)) == 123_456


def test_cpu_uses_the_cpus_this_process_may_run_on(tmp_path: Path) -> None:
    placed = plan_placement(fake_weights(tmp_path / "m", 1000), hardware=Hardware(cpus=7))
    assert (placed.device, placed.dtype, placed.threads) == ("cpu", "float32", 7)
    assert placed.device_map is None and placed.quantization is None
    assert cpu_count() == len(os.sched_getaffinity(0))


def test_a_gpu_gets_bfloat16_where_supported_else_float16(tmp_path: Path) -> None:
    folder = fake_weights(tmp_path / "m", 1_000_000)
    placed = plan_placement(folder, hardware=h100())
    assert (placed.device, placed.dtype, placed.device_map) == ("cuda", "bfloat16", None)
    assert placed.model_bytes == 2_000_000 and placed.gpu == "NVIDIA H100"
    assert plan_placement(folder, hardware=h100(bf16=False)).dtype == "float16"
    assert plan_placement(folder, dtype="float32", hardware=h100()).dtype == "float32"


def test_a_model_larger_than_the_gpu_is_quantised_with_bitsandbytes_else_spread(
    tmp_path: Path,
) -> None:
    seventy_b = fake_weights(tmp_path / "70b", 70_000_000_000)  # 140 GB in bfloat16
    eight_bit = plan_placement(seventy_b, hardware=h100(free_gib=100, bnb=True))
    assert (eight_bit.quantization, eight_bit.device_map) == ("8bit", None)
    four_bit = plan_placement(seventy_b, hardware=h100(free_gib=60, bnb=True))
    assert (four_bit.quantization, four_bit.device_map) == ("4bit", None)
    spread = plan_placement(seventy_b, hardware=h100(free_gib=70, count=2))
    assert (spread.quantization, spread.device_map) == (None, "auto")
    assert "spread over 2 GPUs" in spread.reasons[-1]
    # Too large even in 4 bits: spread at full precision (bitsandbytes does not offload).
    too_big = plan_placement(seventy_b, hardware=h100(free_gib=20, bnb=True))
    assert (too_big.quantization, too_big.device_map) == (None, "auto")
    # Asked for outright.
    asked = plan_placement(seventy_b, quantize="none", hardware=h100(free_gib=100, bnb=True))
    assert (asked.quantization, asked.device_map) == (None, "auto")
    small = fake_weights(tmp_path / "small", 1000)
    assert plan_placement(small, quantize="4bit", hardware=h100(bnb=True)).quantization == "4bit"


def test_settings_this_machine_cannot_give_are_one_line_errors(tmp_path: Path) -> None:
    folder = fake_weights(tmp_path / "m", 1000)
    with pytest.raises(PlacementError, match="no CUDA GPU"):
        plan_placement(folder, device="cuda", hardware=Hardware())
    with pytest.raises(PlacementError, match="needs bitsandbytes"):
        plan_placement(folder, quantize="8bit", hardware=h100())
    with pytest.raises(PlacementError, match="needs a CUDA GPU"):
        plan_placement(folder, quantize="4bit", hardware=Hardware())
    with pytest.raises(PlacementError, match="unknown dtype"):
        plan_placement(folder, dtype="int3", hardware=Hardware())
    with pytest.raises(PlacementError, match="has 1 GPU"):
        plan_placement(folder, device="cuda:3", hardware=h100())


def test_from_pretrained_gets_dtype_and_device_map(tmp_path: Path) -> None:
    import torch

    folder = fake_weights(tmp_path / "70b", 70_000_000_000)
    kwargs = from_pretrained_kwargs(plan_placement(folder, hardware=h100(count=2)))
    assert kwargs == {"dtype": torch.bfloat16, "device_map": "auto"}
    cpu = from_pretrained_kwargs(plan_placement(folder, hardware=Hardware(cpus=2)))
    assert cpu == {"dtype": torch.float32}


def test_a_loaded_model_carries_its_placement(tiny_causal_lm: Path) -> None:
    from core.local_models.loader import load_model

    loaded = load_model(tiny_causal_lm, device="cpu")
    assert loaded.placement is not None
    placed = loaded.placement.as_dict()
    assert placed["device"] == "cpu" and placed["dtype"] == "float32"
    assert placed["threads"] == cpu_count()
    assert placed["model_bytes"] > 0


def test_accelerator_likely_asks_a_loaded_torch_and_else_the_device_nodes(monkeypatch) -> None:
    import sys
    import types

    from core.local_models.placement import accelerator_likely

    fake = types.SimpleNamespace(
        cuda=types.SimpleNamespace(is_available=lambda: True),
        backends=types.SimpleNamespace(),
    )
    monkeypatch.setitem(sys.modules, "torch", fake)
    assert accelerator_likely() is True
    fake.cuda.is_available = lambda: False
    assert accelerator_likely() is False
    monkeypatch.delitem(sys.modules, "torch")
    monkeypatch.setattr(sys, "platform", "linux")
    nodes = sorted(Path("/dev").glob("nvidia[0-9]*")) + [
        p for p in [Path("/dev/kfd")] if p.exists()
    ]
    assert accelerator_likely() is bool(nodes)
