"""Sentence encoders for retrieval: a model folder, its fingerprint (a hash of its files,
so a retrained model in the same folder is told apart) and the device it runs on."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core import heavy
from core.errors import UserFacingError
from core.metrics.similarity import load_encoder, resolve_encoder

# A folder's fingerprint, by its path and its files' names, sizes and modification times.
_FINGERPRINTS: dict[tuple[str, tuple[tuple[str, int, int], ...]], str] = {}
_FP_LOCK = threading.Lock()


def _model_files(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def check_model_folder(folder: Path) -> None:
    """Refuse a folder that is not a sentence-transformers / transformers model."""
    if not folder.is_dir():
        raise UserFacingError(f"{folder}: not a folder")
    if not (folder / "config.json").is_file() and not (folder / "modules.json").is_file():
        raise UserFacingError(
            f"{folder}: not a model folder (no config.json or modules.json in it)"
        )


def encoder_fingerprint(folder: Path) -> str:
    """SHA-256 (first 16 hex digits) over the folder's file names and contents; memoised
    per (folder, names, sizes, modification times) for the process."""
    files = _model_files(folder)
    stamp = tuple(
        (str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns) for p in files
    )
    key = (str(folder.resolve()), stamp)
    with _FP_LOCK:
        if key in _FINGERPRINTS:
            return _FINGERPRINTS[key]
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    value = digest.hexdigest()[:16]
    with _FP_LOCK:
        _FINGERPRINTS[key] = value
    return value


@dataclass(frozen=True)
class Encoder:
    """A resolved sentence encoder: folder, display name, fingerprint, loaded lazily."""

    path: Path
    name: str
    fingerprint: str
    device: str = "cpu"
    batch_size: int = 64

    def model(self) -> Any:
        return load_encoder(self.path, self.device)


@dataclass(frozen=True)
class LoadedEncoder(Encoder):
    """An encoder already in memory (e.g. a model being trained): ``fingerprint`` must
    name this state of the weights; use it without a session cache (store None)."""

    loaded: Any = None

    def model(self) -> Any:
        return self.loaded


def open_encoder(
    encoder: str | Path | None, *, device: str = "cpu", batch_size: int = 64
) -> Encoder:
    """The encoder for a folder or cached Hugging Face id (None: the packaged MiniLM);
    a folder that is not a model is refused before anything is loaded or stored."""
    if device == "auto":
        device = auto_device()
    path, name = resolve_encoder(encoder)
    check_model_folder(path)
    return Encoder(path, name, encoder_fingerprint(path), device, batch_size)


def auto_device() -> str:
    try:
        with heavy.lock():
            import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:  # pragma: no cover - torch is a dependency of the model stack
        return "cpu"
