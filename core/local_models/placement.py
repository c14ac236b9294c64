"""Where and how a local model runs: one decision for every model TailLens loads.

:func:`probe_hardware` reads the machine (GPUs with their free memory and bf16 support,
Apple's mps, the CPUs this process may use, whether ``bitsandbytes`` is installed);
:func:`plan_placement` decides from it and the model's size, without loading anything:

* **device**: ``auto`` is CUDA when there is a GPU, then mps, else CPU; a named device
  is checked (``--device cuda`` without a GPU is a clear error).
* **dtype**: ``auto`` is bfloat16 on GPUs that support it, else float16 on a GPU or mps,
  float32 on CPU.
* **GPU memory**: the weights at that dtype plus a fifth for activations and the KV
  cache are compared with the first GPU's free memory. A model that does not fit is
  loaded 8-bit (else 4-bit) where ``bitsandbytes`` is installed and that fits, else
  spread with ``device_map="auto"`` (accelerate: the other GPUs, then CPU memory).
  ``quantize`` may also ask for 8/4-bit outright.
* **CPU threads**: the CPUs this process may run on (``os.sched_getaffinity``, which
  honours taskset and container limits, unlike ``os.cpu_count``).

The batch size is found while running: the verbalise job halves it on an out-of-memory
error and goes on (``core.verbalise.job``); what it settled on is added to the run's
placement. :meth:`Placement.as_dict` is what a run records (``model_runs.parameters
["placement"]``), so a figure can always be traced to the hardware that made it.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import struct
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from core import heavy
from core.errors import UserFacingError
from core.io.bounded import loads_json

DTYPES = ("auto", "float32", "bfloat16", "float16")
QUANTIZE = ("auto", "none", "8bit", "4bit")
# Weights are not all a model needs on the device: activations and the KV cache too.
HEADROOM = 1.2
_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "8bit": 1, "4bit": 0.5}
_HEADER_CAP = 100 * 1024 * 1024  # the safetensors library refuses larger headers
_DISK_DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I8": 1, "U8": 1, "F8_E4M3": 1}


class PlacementError(UserFacingError):
    """A device or setting this machine cannot give."""


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    free_bytes: int
    total_bytes: int
    bf16: bool


@dataclass(frozen=True)
class Hardware:
    gpus: tuple[Gpu, ...] = ()
    mps: bool = False
    cpus: int = 1
    bitsandbytes: bool = False
    torch: str = ""


@dataclass
class Placement:
    """How one model is loaded and run (recorded with the run)."""

    device: str  # cuda | cuda:N | mps | cpu: where inputs go
    dtype: str
    device_map: str | None = None  # "auto": spread over GPUs (and CPU) by accelerate
    quantization: str | None = None  # "8bit" | "4bit"
    threads: int | None = None  # CPU threads torch uses
    gpu: str | None = None
    gpu_free_bytes: int | None = None
    model_bytes: int = 0  # the weights at the chosen dtype / quantization
    batch_size: int | None = None  # the batch size a run settled on (after OOM back-offs)
    oom_backoffs: int = 0
    reasons: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in (None, [])}

    def summary(self) -> str:
        """'cuda (NVIDIA H100) bfloat16, 8bit, device_map auto' / 'cpu float32, 16 threads'."""
        where = self.device + (f" ({self.gpu})" if self.gpu else "")
        parts = [f"{where} {self.dtype}"]
        if self.quantization:
            parts.append(self.quantization)
        if self.device_map:
            parts.append(f"device_map {self.device_map}")
        if self.threads:
            parts.append(f"{self.threads} threads")
        if self.oom_backoffs:
            parts.append(f"batch {self.batch_size} after {self.oom_backoffs} out-of-memory")
        return ", ".join(parts)


def cpu_count() -> int:
    """The CPUs this process may run on (affinity, cgroup-pinned), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def accelerator_likely() -> bool:
    """Whether this machine has a GPU torch could use, told without importing torch
    (a window's Score dialog asks; importing torch there would cost a second and
    hundreds of MB for a default). Where torch is loaded already it answers; else an
    NVIDIA or AMD device node (Linux) or Apple silicon (macOS, mps) says yes."""
    torch = sys.modules.get("torch")
    if torch is not None:
        backends_mps = getattr(torch.backends, "mps", None)
        return bool(torch.cuda.is_available()) or (
            backends_mps is not None and bool(backends_mps.is_available())
        )
    if sys.platform == "darwin":
        return platform.machine() == "arm64"
    dev = Path("/dev")
    return any(dev.glob("nvidia[0-9]*")) or (dev / "kfd").exists()


def probe_hardware() -> Hardware:
    """The machine as torch sees it (imports torch)."""
    with heavy.lock():
        import torch

    gpus: list[Gpu] = []
    if torch.cuda.is_available():
        for index in range(torch.cuda.device_count()):
            free, total = torch.cuda.mem_get_info(index)
            gpus.append(
                Gpu(
                    index,
                    torch.cuda.get_device_name(index),
                    int(free),
                    int(total),
                    bool(torch.cuda.is_bf16_supported()),
                )
            )
    backends_mps = getattr(torch.backends, "mps", None)
    mps = backends_mps is not None and bool(backends_mps.is_available())
    return Hardware(
        gpus=tuple(gpus),
        mps=mps,
        cpus=cpu_count(),
        bitsandbytes=importlib.util.find_spec("bitsandbytes") is not None,
        torch=str(torch.__version__),
    )


def parameter_count(folder: Path) -> int | None:
    """Parameters in a model folder's safetensors files (read from their headers), or None
    where the weights are not safetensors."""
    total = 0
    shards = sorted(Path(folder).glob("*.safetensors"))
    if not shards:
        return None
    for shard in shards:
        try:
            with shard.open("rb") as handle:
                (length,) = struct.unpack("<Q", handle.read(8))
                if length > _HEADER_CAP:
                    return None
                header = loads_json(handle.read(length), name=shard.name)
            if not isinstance(header, dict):
                return None
            for name, meta in header.items():
                if name == "__metadata__" or not isinstance(meta, dict):
                    continue
                count = 1
                for dim in meta.get("shape") or []:
                    count *= int(dim)
                total += count
        except (OSError, ValueError, TypeError, struct.error, UserFacingError):
            return None
    return total


def _weights_bytes(folder: Path) -> int:
    return sum(
        p.stat().st_size
        for p in Path(folder).iterdir()
        if p.suffix in (".safetensors", ".bin", ".pt", ".pth") and p.is_file()
    )


def _check_device(requested: str, hardware: Hardware) -> str:
    requested = (requested or "auto").lower()
    if requested == "auto":
        return "cuda" if hardware.gpus else "mps" if hardware.mps else "cpu"
    if requested.startswith("cuda"):
        if not hardware.gpus:
            raise PlacementError(
                "--device cuda was asked for, but torch sees no CUDA GPU "
                f"(torch {hardware.torch}); use --device auto or cpu"
            )
        return requested
    if requested == "mps":
        if not hardware.mps:
            raise PlacementError(
                "--device mps was asked for, but this machine has no usable mps device"
            )
        return requested
    if requested == "cpu":
        return requested
    raise PlacementError(f"unknown device {requested!r}: use auto, cpu, cuda or mps")


def _gpu_of(device: str, hardware: Hardware) -> Gpu:
    index = int(device.split(":", 1)[1]) if ":" in device else 0
    if index >= len(hardware.gpus):
        raise PlacementError(f"{device}: this machine has {len(hardware.gpus)} GPU(s)")
    return hardware.gpus[index]


def plan_placement(
    folder: Path | None,
    *,
    device: str = "auto",
    dtype: str = "auto",
    quantize: str = "auto",
    hardware: Hardware | None = None,
) -> Placement:
    """Decide how to load the model in ``folder`` on this machine (see the module doc)."""
    hardware = hardware if hardware is not None else probe_hardware()
    dtype = (dtype or "auto").lower()
    if dtype not in DTYPES:
        raise PlacementError(f"unknown dtype {dtype!r}: use {', '.join(DTYPES)}")
    quantize = (quantize or "auto").lower()
    if quantize not in QUANTIZE:
        raise PlacementError(f"unknown quantization {quantize!r}: use {', '.join(QUANTIZE)}")
    chosen = _check_device(device, hardware)
    reasons: list[str] = []
    gpu = _gpu_of(chosen, hardware) if chosen.startswith("cuda") else None
    if dtype == "auto":
        if gpu is not None:
            dtype = "bfloat16" if gpu.bf16 else "float16"
            reasons.append(f"{dtype}: the GPU {'supports' if gpu.bf16 else 'lacks'} bfloat16")
        elif chosen == "mps":
            dtype = "float16"
        else:
            dtype = "float32"
    params = parameter_count(folder) if folder is not None else None
    if params is None and folder is not None:
        params = _weights_bytes(folder) // 4
    params = params or 0
    placement = Placement(device=chosen, dtype=dtype, model_bytes=int(params * _BYTES[dtype]))
    if gpu is None:
        if chosen == "cpu":
            placement.threads = hardware.cpus
            reasons.append(f"{hardware.cpus} CPU threads (this process's CPU affinity)")
        if quantize in ("8bit", "4bit"):
            raise PlacementError(f"{quantize} loading needs a CUDA GPU (bitsandbytes)")
        placement.reasons = reasons
        return placement
    placement.gpu, placement.gpu_free_bytes = gpu.name, gpu.free_bytes
    if quantize in ("8bit", "4bit"):
        if not hardware.bitsandbytes:
            from core.desktop.install import pip_hint

            raise PlacementError(
                f"{quantize} loading needs bitsandbytes: {pip_hint('bitsandbytes')}"
            )
        placement.quantization = quantize
        placement.model_bytes = int(params * _BYTES[quantize])
        reasons.append(f"{quantize}: asked for")
    need = placement.model_bytes * HEADROOM
    if need > gpu.free_bytes and quantize == "auto" and hardware.bitsandbytes:
        for bits in ("8bit", "4bit"):
            if params * _BYTES[bits] * HEADROOM <= gpu.free_bytes:
                placement.quantization = bits
                placement.model_bytes = int(params * _BYTES[bits])
                reasons.append(
                    f"{bits}: {dtype} weights ({_gib(params * _BYTES[dtype])}) do not fit the "
                    f"GPU's {_gib(gpu.free_bytes)} free"
                )
                break
        need = placement.model_bytes * HEADROOM
    if need > gpu.free_bytes:
        placement.device_map = "auto"
        others = len(hardware.gpus) - 1
        reasons.append(
            f"device_map auto: {_gib(need)} needed, {_gib(gpu.free_bytes)} free on {gpu.name}"
            + (f"; spread over {others + 1} GPUs" if others else "; the rest in CPU memory")
        )
    placement.reasons = reasons
    return placement


def _gib(size: float) -> str:
    return f"{size / 2**30:.1f} GiB"


def from_pretrained_kwargs(placement: Placement) -> dict[str, Any]:
    """What ``AutoModel*.from_pretrained`` is given for ``placement`` (imports torch)."""
    with heavy.lock():
        import torch

    kwargs: dict[str, Any] = {"dtype": getattr(torch, placement.dtype)}
    if placement.quantization is not None:
        with heavy.lock():
            from transformers import BitsAndBytesConfig

        if placement.quantization == "8bit":
            kwargs["quantization_config"] = BitsAndBytesConfig(load_in_8bit=True)
        else:
            kwargs["quantization_config"] = BitsAndBytesConfig(
                load_in_4bit=True, bnb_4bit_compute_dtype=getattr(torch, placement.dtype)
            )
        kwargs["device_map"] = placement.device_map or {"": _device_index(placement.device)}
    elif placement.device_map is not None:
        kwargs["device_map"] = placement.device_map
    return kwargs


def _device_index(device: str) -> int:
    return int(device.split(":", 1)[1]) if ":" in device else 0


def moves_itself(placement: Placement) -> bool:
    """Whether from_pretrained placed the weights (no ``model.to(device)`` after it)."""
    return placement.device_map is not None or placement.quantization is not None


def apply_threads(placement: Placement) -> None:
    """Give torch the CPU threads the placement chose."""
    if placement.threads:
        with heavy.lock():
            import torch

        if torch.get_num_threads() != placement.threads:
            torch.set_num_threads(placement.threads)
