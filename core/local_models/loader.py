"""Local language models: finding them, checking them, fingerprinting and loading them.

Models come from two places: the Hugging Face hub cache (``models--org--name`` folders
with ``snapshots/<revision>``) and folders the user names (``TAILLENS_MODEL_DIRS``, or
the ``folders`` list in ``<config dir>/models.json``). Loading never downloads: it is
``local_files_only`` with the hub switched offline; models are fetched only when the
user asks (``taillens models pull``, the Models dialog: :mod:`core.local_models.hub`). How a model
is placed on the hardware (device, dtype, device_map, 8/4-bit, threads) is decided in
:mod:`core.local_models.placement`.

A folder is checked before any work starts (:func:`check_model_folder`): a missing
``config.json``, unreadable weights, a shard the index names but the folder lacks, or no
tokenizer give a :class:`ModelError` whose message says which. The fingerprint hashes
``config.json``, the weight index and each safetensors header (names, shapes, dtypes,
offsets) with the files' sizes: it changes when the weights are replaced, and costs a
few hundred kilobytes of reading instead of gigabytes; 64 KiB from each end of each
weight file are hashed too, so weights retrained in place (same shapes) change it.

torch and transformers are imported inside the functions that need them.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core import heavy
from core.errors import UserFacingError
from core.io import bounded, files
from core.local_models import placement
from core.local_models.placement import Placement
from core.vocab import hub_folder_name, repo_id_of_hub_folder

CAUSAL, SEQ2SEQ, UNKNOWN = "causal", "seq2seq", "unknown"
MODEL_DIRS_ENV = "TAILLENS_MODEL_DIRS"
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer.model",
    "spiece.model",
    "vocab.json",
    "vocab.txt",
    "sentencepiece.bpe.model",
)
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
# A safetensors header larger than this is not a header: the file is damaged.
_MAX_HEADER_BYTES = 100_000_000
_SAMPLE_BYTES = 1 << 16  # read from each end of each weight file for the fingerprint


class ModelError(UserFacingError):
    """A model that cannot be found, checked or loaded, with the reason."""


@dataclass(frozen=True)
class ModelInfo:
    """A model found on this machine (what the model picker lists)."""

    name: str  # the HF id ("org/name") for cached models, the folder name otherwise
    path: Path  # the folder holding config.json (a snapshot for cached models)
    type: str  # "causal" | "seq2seq" | "unknown"
    size_bytes: int
    source: str  # "hf-cache" | "folder"
    architectures: tuple[str, ...] = ()


@dataclass
class LoadedModel:
    """A model and its tokenizer on a device, ready to generate or score."""

    model: Any
    tokenizer: Any
    path: Path
    type: str
    device: str
    dtype: str
    fingerprint: str
    placement: Placement | None = None  # how it was placed (recorded by runs)

    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))


# --- where models live --------------------------------------------------------------------


def hf_cache_dir() -> Path:
    """The hub cache folder, read from the environment at call time (tests move it)."""
    for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        value = os.environ.get(variable)
        if value:
            return Path(value).expanduser()
    hf_home = os.environ.get("HF_HOME")
    if hf_home:
        return Path(hf_home).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "huggingface" / "hub"


def _settings_file() -> Path:
    from core.desktop.paths import config_dir

    return config_dir() / "models.json"


def configured_model_folders() -> list[Path]:
    """Folders the user asked TailLens to look in for models (env first, then settings)."""
    folders: list[Path] = []
    env = os.environ.get(MODEL_DIRS_ENV)
    if env:
        folders += [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    settings = _settings_file()
    if settings.exists():
        try:
            data = bounded.read_json(settings, limit=files.SETTINGS_LIMIT, limits=bounded.SMALL)
            folders += [Path(p).expanduser() for p in data.get("folders", [])]
        except (UserFacingError, ValueError, AttributeError, TypeError):
            pass  # a damaged settings file must not hide the cache's models
    return list(dict.fromkeys(folders))


def save_model_folders(folders: Sequence[Path]) -> None:
    """Remember the user's model folders (the model picker's "add folder")."""
    path = _settings_file()
    data = {"folders": [str(Path(f)) for f in dict.fromkeys(folders)]}
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def remember_model_folder(folder: Path) -> bool:
    """Add ``folder`` to the folders saved in the settings (not those of the environment),
    unless it is listed already, so the model picker lists the model in it (a model
    ``train-verbaliser`` wrote). Returns whether it was added."""
    folder = Path(folder).expanduser().resolve()
    if any(Path(f).expanduser().resolve() == folder for f in configured_model_folders()):
        return False
    saved: list[Path] = []
    settings = _settings_file()
    if settings.exists():
        try:
            data = bounded.read_json(settings, limit=files.SETTINGS_LIMIT, limits=bounded.SMALL)
            saved = [Path(p) for p in data.get("folders", [])]
        except (UserFacingError, ValueError, AttributeError, TypeError):
            return False  # never overwrite a settings file that cannot be read
    settings.parent.mkdir(parents=True, exist_ok=True)
    save_model_folders([*saved, folder])
    return True


def read_config(folder: Path) -> dict[str, Any]:
    path = folder / "config.json"
    if not path.is_file():
        raise ModelError(f"{folder} holds no config.json: it is not a transformers model folder")
    try:
        config = bounded.read_json(path, limit=files.CONFIG_LIMIT, what="the model's config")
    except (UserFacingError, ValueError) as exc:
        raise ModelError(
            f"{path} cannot be read as JSON ({exc}): the model folder is "
            "damaged; download or copy it again"
        ) from None
    if not isinstance(config, dict):
        raise ModelError(f"{path} is not a JSON object: the model folder is damaged")
    return config


def model_type_of(config: dict[str, Any]) -> str:
    """causal / seq2seq / unknown from a config's ``is_encoder_decoder`` and architectures."""
    architectures = [str(a) for a in config.get("architectures") or []]
    if config.get("is_encoder_decoder") is True or config.get("model_type") in _SEQ2SEQ_TYPES:
        return SEQ2SEQ
    if any("Seq2SeqLM" in a for a in architectures):
        return SEQ2SEQ
    if any("CausalLM" in a or "LMHeadModel" in a for a in architectures):
        return CAUSAL
    if any("ForConditionalGeneration" in a for a in architectures):
        # Not an encoder-decoder (checked above): a decoder with e.g. a vision tower
        # (Gemma 3), which generates text as a causal LM.
        return CAUSAL
    return UNKNOWN


_SEQ2SEQ_TYPES = frozenset({"t5", "mt5", "umt5", "longt5", "bart", "mbart", "pegasus", "marian"})


def _folder_size(folder: Path) -> int:
    total = 0
    for path in folder.rglob("*"):
        try:
            if path.is_file():
                total += path.stat().st_size  # follows the cache's symlinks into blobs/
        except OSError:
            continue
    return total


def _ref_commit(ref: Path) -> str | None:
    """The commit id a hub cache's ref file names, or None. Other programs write the
    cache: its text becomes part of a path only when it is a commit id."""
    from core.io.safe_names import UnsafeNameError, commit_id

    if not ref.is_file():  # not a pipe or a device: reading those could wait or never end
        return None
    try:
        with ref.open("rb") as handle:
            return commit_id(handle.read(128).decode("ascii").strip())
    except (OSError, UnicodeDecodeError, UnsafeNameError):
        return None


def _snapshot_of(repo_folder: Path) -> Path | None:
    """The snapshot ``refs/main`` points at, else the newest snapshot; only a folder that
    is inside ``snapshots/`` with its links resolved."""
    from core.io.safe_names import UnsafeNameError, inside

    snapshots = repo_folder / "snapshots"

    def within(path: Path) -> bool:
        try:
            inside(snapshots, path, what="the snapshot")
        except UnsafeNameError:
            return False
        return path.is_dir()

    commit = _ref_commit(repo_folder / "refs" / "main")
    if commit is not None and within(snapshots / commit):
        return snapshots / commit
    if not snapshots.is_dir():
        return None
    found = [p for p in snapshots.iterdir() if within(p)]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def _info(folder: Path, name: str, source: str) -> ModelInfo | None:
    try:
        config = read_config(folder)
    except ModelError:
        return None
    return ModelInfo(
        name=name,
        path=folder,
        type=model_type_of(config),
        size_bytes=_folder_size(folder),
        source=source,
        architectures=tuple(str(a) for a in config.get("architectures") or []),
    )


def discover_models(
    folders: Iterable[Path] | None = None, *, include_cache: bool = True
) -> list[ModelInfo]:
    """Every model folder in the hub cache and in ``folders`` (default: the configured
    folders). A folder counts when it, or one of its children, holds a config.json.
    Sentence encoders and other non-generative models are listed with type "unknown"."""
    found: list[ModelInfo] = []
    if include_cache:
        cache = hf_cache_dir()
        if cache.is_dir():
            for repo in sorted(cache.glob(hub_folder_name("*"))):
                snapshot = _snapshot_of(repo)
                if snapshot is not None:
                    info = _info(snapshot, repo_id_of_hub_folder(repo.name), "hf-cache")
                    if info is not None:
                        found.append(info)
    for candidate in model_folders_in(folders):
        info = _info(candidate, candidate.name, "folder")
        if info is not None:
            found.append(info)
    return found


def model_folders_in(folders: Iterable[Path | str] | None = None) -> Iterator[Path]:
    """The model folders in ``folders`` (default: the user's, :func:`configured_model_folders`):
    a folder holding a config.json is one; else each of its children that holds one."""
    for folder in configured_model_folders() if folders is None else folders:
        folder = Path(folder)
        if not folder.is_dir():
            continue
        if (folder / "config.json").is_file():
            yield folder
        else:
            yield from sorted(p for p in folder.iterdir() if (p / "config.json").is_file())


def resolve_model(name_or_path: str | Path) -> Path:
    """The local folder for a path or a hub id present in the cache; never downloads."""
    text = str(name_or_path).strip()
    if not text:
        raise ModelError("no model named")
    path = Path(text).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelError(f"{path} is a file; name the folder that holds config.json")
        return path
    parts = text.split("/")
    if len(parts) == 2 and all(parts) and not text.startswith((".", "~")):
        repo = hf_cache_dir() / hub_folder_name(text)
        snapshot = _snapshot_of(repo) if repo.is_dir() else None
        if snapshot is not None:
            return snapshot
        raise ModelError(
            f"{text} is not in the Hugging Face cache ({hf_cache_dir()}): pull it first "
            f"(taillens models pull {text}, or File > Models…) or name a folder"
        )
    raise ModelError(f"no model folder at {path}")


# --- checking and fingerprinting ----------------------------------------------------------


def _safetensors_header(path: Path) -> bytes:
    """The JSON header of a safetensors file, checked against the file's size."""
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            prefix = handle.read(8)
            if len(prefix) < 8:
                raise ModelError(f"{path.name} is truncated (shorter than a safetensors header)")
            (length,) = struct.unpack("<Q", prefix)
            if length <= 0 or length > _MAX_HEADER_BYTES or 8 + length > size:
                raise ModelError(
                    f"{path.name} is not a valid safetensors file (header length "
                    f"{length} for a file of {size} bytes)"
                )
            header = handle.read(length)
    except OSError as exc:
        raise ModelError(f"{path} cannot be read: {exc.strerror or exc}") from None
    try:
        meta = bounded.loads_json(header, name=path.name)
        if not isinstance(meta, dict):
            raise ValueError("not an object")
    except (UserFacingError, ValueError):
        raise ModelError(f"{path.name} has a damaged header: download it again") from None
    try:
        ends = [
            int(v["data_offsets"][1])
            for k, v in meta.items()
            if k != "__metadata__" and isinstance(v, dict) and "data_offsets" in v
        ]
    except (ValueError, TypeError, IndexError, KeyError):
        raise ModelError(f"{path.name} has a damaged header: download it again") from None
    if ends and 8 + length + max(ends) > size:
        raise ModelError(
            f"{path.name} is truncated: its header describes "
            f"{8 + length + max(ends)} bytes, the file has {size}"
        )
    return header


def _weight_files(folder: Path) -> list[Path]:
    """The weight files a model loads, following an index when there is one."""
    for index_name in ("model.safetensors.index.json", "pytorch_model.bin.index.json"):
        index = folder / index_name
        if index.is_file():
            try:
                weight_map = bounded.read_json(index, limit=files.CONFIG_LIMIT)["weight_map"]
                shards = sorted(set(weight_map.values()))
            except (UserFacingError, ValueError, KeyError, TypeError, AttributeError):
                raise ModelError(f"{index} is damaged (no readable weight_map)") from None
            missing = [s for s in shards if not (folder / s).is_file()]
            if missing:
                raise ModelError(
                    f"{folder} lacks weight shard(s) its index names: " + ", ".join(missing[:5])
                )
            return [folder / s for s in shards]
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (folder / name).is_file():
            return [folder / name]
    found = sorted(p for p in folder.iterdir() if p.suffix in WEIGHT_SUFFIXES and p.is_file())
    if not found:
        raise ModelError(
            f"{folder} holds no weights (model.safetensors or pytorch_model.bin): "
            "the download is incomplete"
        )
    return found


def check_model_folder(folder: Path) -> str:
    """Check a model folder without loading it; returns its type (causal / seq2seq).

    Raises :class:`ModelError` saying what is wrong: cheap file checks, so a broken
    folder is reported before a run creates anything."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ModelError(f"no model folder at {folder}")
    config = read_config(folder)
    kind = model_type_of(config)
    if kind == UNKNOWN:
        names = ", ".join(config.get("architectures") or []) or "none given"
        raise ModelError(
            f"{folder} is not a text generation model (architectures: {names}); "
            "choose a causal LM or a seq2seq model"
        )
    for path in _weight_files(folder):
        if path.suffix == ".safetensors":
            _safetensors_header(path)
        elif path.stat().st_size == 0:
            raise ModelError(f"{path.name} is empty: the download is incomplete")
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        raise ModelError(
            f"{folder} holds no tokenizer files ({', '.join(TOKENIZER_FILES[:3])}"
            ", ...): copy the tokenizer beside the weights"
        )
    return kind


def model_fingerprint(folder: Path) -> str:
    """sha256 of config.json, the weight index, every weight file's header and size, and
    64 KiB from each end of each weight file (never the whole file)."""
    folder = Path(folder)
    digest = hashlib.sha256()
    for name in ("config.json", "model.safetensors.index.json", "pytorch_model.bin.index.json"):
        path = folder / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    for path in _weight_files(folder):
        size = path.stat().st_size
        digest.update(path.name.encode() + b"\0" + str(size).encode() + b"\0")
        if path.suffix == ".safetensors":
            digest.update(_safetensors_header(path))
        # A sample of the data itself: weights retrained in place keep the header and
        # the size, but not these bytes.
        with path.open("rb") as handle:
            if size <= 2 * _SAMPLE_BYTES:
                digest.update(handle.read())
            else:
                digest.update(handle.read(_SAMPLE_BYTES))
                handle.seek(size - _SAMPLE_BYTES)
                digest.update(handle.read(_SAMPLE_BYTES))
    return digest.hexdigest()


# --- devices and loading ------------------------------------------------------------------


def select_device(requested: str = "auto") -> str:
    """cuda when there is a GPU, then Apple's mps, else cpu; a named device is checked
    (:func:`core.local_models.placement.plan_placement` decides; this is its device alone)."""
    return _placement(None, device=requested).device


DTYPES = placement.DTYPES


def select_dtype(requested: str, device: str) -> str:
    """bfloat16 on GPUs that support it, float16 on other GPUs and mps, float32 otherwise."""
    requested = (requested or "auto").lower()
    if requested not in DTYPES:
        raise ModelError(f"unknown dtype {requested!r}: use {', '.join(DTYPES)}")
    if requested != "auto":
        return requested
    if device.startswith("cuda"):
        with heavy.lock():
            import torch

        return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    return "float16" if device == "mps" else "float32"


def _placement(
    folder: Path | None, device: str = "auto", dtype: str = "auto", quantize: str = "auto"
) -> Placement:
    try:
        return placement.plan_placement(folder, device=device, dtype=dtype, quantize=quantize)
    except placement.PlacementError as error:
        raise ModelError(str(error)) from None


def _offline() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


def load_model(
    name_or_path: str | Path,
    *,
    device: str = "auto",
    dtype: str = "auto",
    expected_type: str | None = None,
    quantize: str = "auto",
    on_stage: Callable[[str], None] | None = None,
) -> LoadedModel:
    """Load a causal LM or seq2seq model and its tokenizer from a local folder (or a hub id
    in the cache), placed on this machine by :func:`core.local_models.placement.plan_placement`
    (device, dtype, device_map, 8/4-bit, CPU threads), in eval mode. Checks the folder
    first; the placement is on the result (``LoadedModel.placement``). ``on_stage`` is
    told each stage as it begins (:data:`LOAD_STAGES`' words), so a window says what a
    long load is doing rather than "starting 0%"."""
    stage = on_stage or (lambda _words: None)
    stage(LOAD_STAGES[0])
    folder = resolve_model(name_or_path)
    kind = check_model_folder(folder)
    if expected_type is not None and kind != expected_type:
        raise ModelError(f"{folder} is a {kind} model; a {expected_type} model is needed here")
    fingerprint = model_fingerprint(folder)
    placed = _placement(folder, device=device, dtype=dtype, quantize=quantize)
    _offline()
    with heavy.lock():
        import transformers
        from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    transformers.utils.logging.disable_progress_bar()
    auto = AutoModelForSeq2SeqLM if kind == SEQ2SEQ else AutoModelForCausalLM
    try:
        stage(LOAD_STAGES[1])
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        stage(LOAD_STAGES[2])
        model = auto.from_pretrained(
            folder, local_files_only=True, **placement.from_pretrained_kwargs(placed)
        )
    except (OSError, ValueError, KeyError, RuntimeError, ImportError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelError(f"cannot load the model in {folder}: {first}") from exc
    stage(f"{LOAD_STAGES[3]} ({placed.device})")
    if not placement.moves_itself(placed):
        model.to(placed.device)  # type: ignore[arg-type]  # transformers' stub wraps .to
    placement.apply_threads(placed)
    model.eval()
    if tokenizer.pad_token_id is None:
        # Batching needs a pad token; EOS is the usual stand-in (masked out anyway).
        tokenizer.pad_token = tokenizer.eos_token
    stage(LOAD_STAGES[4])
    return LoadedModel(
        model, tokenizer, folder, kind, placed.device, placed.dtype, fingerprint, placed
    )


# What load_model says as it goes (the verbalise job passes them on as its progress).
LOAD_STAGES = (
    "resolving the model",
    "reading the tokenizer",
    "reading the weights",
    "moving the model to the device",
    "model ready",
)

# config.json keys that give a model's context length, by architecture.
_CONTEXT_KEYS = ("max_position_embeddings", "n_positions", "max_sequence_length", "n_ctx")


def context_length(folder: Path) -> int | None:
    """How many positions (prompt and generated tokens together) the model in ``folder``
    takes, read from its config.json (no weights loaded); None where it does not say."""
    try:
        config = bounded.read_json(Path(folder) / "config.json", limit=files.CONFIG_LIMIT)
    except UserFacingError:
        return None
    if not isinstance(config, dict):
        return None
    for source in (config, config.get("text_config") or {}):
        for key in _CONTEXT_KEYS:
            value = source.get(key) if isinstance(source, dict) else None
            if isinstance(value, int) and value > 0:
                return value
    return None


def context_warning(prompt_tokens: int, max_new_tokens: int, limit: int | None) -> str | None:
    """One line when a prompt and the tokens asked for do not fit the model's context."""
    if limit is None or prompt_tokens + max_new_tokens <= limit:
        return None
    return (
        f"Too long for this model: the prompt is {prompt_tokens} tokens and up to "
        f"{max_new_tokens} new tokens are asked for, {prompt_tokens + max_new_tokens} in all, "
        f"but the model takes {limit}. Lower 'max new tokens' or use a shorter prompt; "
        "otherwise the text is cut short or the run fails."
    )


def load_tokenizer(name_or_path: str | Path) -> Any:
    """Only the tokenizer of a model (fast: for prompt previews, no weights loaded)."""
    folder = resolve_model(name_or_path)
    _offline()
    with heavy.lock():
        from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(folder, local_files_only=True)
    except (OSError, ValueError, KeyError, ImportError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelError(f"cannot load the tokenizer in {folder}: {first}") from exc


def prompt_token_ids(tokenizer: Any, prompt: str, *, chat: bool | None = None) -> list[int]:
    """The token ids a causal model is given for ``prompt``: wrapped in the model's chat
    template as a user turn when it has one (``chat`` None), plain with the tokenizer's
    special tokens otherwise. Generation and perplexity both use this, so a text is
    scored under exactly the context it was generated in."""
    return prompts_token_ids(tokenizer, [prompt], chat=chat)[0]


def prompts_token_ids(
    tokenizer: Any, prompts: Sequence[str], *, chat: bool | None = None
) -> list[list[int]]:
    """:func:`prompt_token_ids` of each prompt, in one tokenizer call (a fast tokenizer
    encodes a list in parallel: a batch of 32 prompts costs about what 4 do one by one)."""
    if not prompts:
        return []
    use_chat = bool(getattr(tokenizer, "chat_template", None)) if chat is None else chat
    if use_chat:
        texts = [
            tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
            )
            for prompt in prompts
        ]
        # The template writes its own BOS where the model wants one.
        return [list(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]
    return [list(ids) for ids in tokenizer(list(prompts), add_special_tokens=True)["input_ids"]]


def is_out_of_memory(error: BaseException) -> bool:
    """A CUDA (or mps) out-of-memory error, whatever class the torch build raises.

    Only a torch already imported is asked: an error torch raised means it is, and
    importing it here to look at another error (a model server's) would cost seconds and
    some 200 MB."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(error, getattr(torch, "OutOfMemoryError", ())):
        return True
    return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()


def free_device_memory(device: str) -> None:
    import gc
    import threading

    # Where automatic collection is off, the GUI collects on its own (UI) thread; a
    # collection here, in a job's worker thread, could destroy Qt objects off that thread.
    if gc.isenabled() or threading.current_thread() is threading.main_thread():
        gc.collect()
    if device.startswith("cuda"):
        with heavy.lock():
            import torch

        torch.cuda.empty_cache()


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"
