"""The folder a training writes (``--out``): new, or holding an unfinished training of
the same setup to resume; its files written atomically; the finished model moved in.

While training, the folder holds ``checkpoint.pt`` (weights, optimizer, scheduler, torch
RNG, step, losses, evaluations, best so far), ``best.pt`` (the best weights so far) and
``taillens-training.json`` (the record), each written to a temporary file renamed over the
old, at each evaluation and when cancelled; running the same training into the same folder
again continues from it (another base, other data or other settings are refused). A
finished folder is a model like any other (``config.json`` is written last), with
``README.md`` (the model card) and the record; the checkpoint files are then removed.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from core.errors import UserFacingError
from core.io import atomic, jsonio
from core.io.atomic import temporary_name
from core.io.folder_lock import LOCK_NAME
from core.verbalise.training.card import model_card
from core.verbalise.training.data import Split, data_fingerprint
from core.verbalise.training.settings import TrainingError, TrainingSettings

CHECKPOINT = "checkpoint.pt"
BEST = "best.pt"
RECORD = "taillens-training.json"
CARD = "README.md"
# Settings a resumed training may change: where it runs, not what it learns.
_FREE_SETTINGS = frozenset({"device", "threads"})


@dataclass(frozen=True)
class OutFolder:
    """What ``--out`` holds: nothing yet, or an unfinished training to resume."""

    path: Path
    resume_step: int | None  # None: a new training
    record: dict[str, Any] | None


def check_out(out: Path) -> OutFolder:
    out = Path(out).expanduser()
    if not out.exists():
        if not out.parent.is_dir():
            raise TrainingError(f"{out.parent}: no such folder to write the model in")
        return OutFolder(out, None, None)
    if not out.is_dir():
        raise TrainingError(f"{out}: is a file; choose a new folder for the model")
    if (out / "config.json").is_file():
        raise TrainingError(
            f"{out}: already holds a model; choose a new folder for the trained model"
        )
    if (out / CHECKPOINT).is_file():
        record = _read_record(out)
        return OutFolder(out, int(record.get("steps", 0)), record)
    # The lock file is ours (taken before this check) or a killed holder's: not content.
    leftovers = [p for p in out.iterdir() if not _is_leftover(p) and p.name != LOCK_NAME]
    if leftovers:
        raise TrainingError(
            f"{out}: not empty ({leftovers[0].name}, …) and no training to resume; "
            "choose a new or empty folder"
        )
    return OutFolder(out, None, None)


def _is_leftover(path: Path) -> bool:
    """A temporary file or folder of this module (a killed write): ``.NAME.PID-HEX8.tmp``
    and ``.final.PID-HEX8.partial`` (core.io.atomic's names), or ``.final-…`` of an older
    TailLens. Never the folder's lock file: it belongs to the training holding it."""
    name = path.name
    if not name.startswith(".") or name == LOCK_NAME:
        return False
    return (
        name.endswith(".tmp")
        or name.startswith(".final-")
        or (name.startswith(".final.") and name.endswith(".partial"))
    )


def _read_record(out: Path) -> dict[str, Any]:
    from core.io import bounded, files

    path = out / RECORD
    try:
        # The folder is the user's to name: what is there may come from anywhere.
        record = bounded.read_json(path, limit=files.SETTINGS_LIMIT, limits=bounded.SMALL)
    except (UserFacingError, OSError):
        raise TrainingError(
            f"{out}: holds a checkpoint but its {RECORD} is missing or damaged; choose a new folder"
        ) from None
    if not isinstance(record, dict):
        raise TrainingError(f"{path}: damaged (not a JSON object); choose a new folder")
    return record


def check_resumable(folder: OutFolder, identity: dict[str, Any]) -> None:
    """Refuse to resume a training of another base, other data or other settings."""
    if folder.record is None:
        return
    before = folder.record.get("identity") or {}
    differences = []
    for key in ("kind", "base_fingerprint", "data_fingerprint"):
        if before.get(key) != identity.get(key):
            differences.append(key.replace("_", " "))
    old, new = before.get("settings") or {}, identity.get("settings") or {}
    if old:  # trainings from before the setting sampled every reference
        old = {"sampling": "all", **old}
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            differences.append(f"{key} {old.get(key)!r} → {new.get(key)!r}")
    if differences:
        raise TrainingError(
            f"{folder.path}: holds a training (step {folder.resume_step}) of another "
            f"setup ({'; '.join(differences)}): run it with the same settings to resume, "
            "or choose a new folder"
        )


def identity_of(base: Path, split: Split, settings: TrainingSettings) -> dict[str, Any]:
    """What a checkpoint may only be resumed with: the base model's kind and weights, the
    data and every setting but where it runs."""
    from core.local_models.loader import check_model_folder, model_fingerprint

    return {
        "kind": check_model_folder(base),
        "base_fingerprint": model_fingerprint(base)[:16],
        "data_fingerprint": data_fingerprint([*split.train, *split.dev]),
        "settings": {k: v for k, v in asdict(settings).items() if k not in _FREE_SETTINGS},
    }


def remove_leftovers(out: Path) -> None:
    """Remove what a killed write left (temporary files and folders)."""
    for path in out.iterdir():
        if _is_leftover(path):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def write_atomically(path: Path, write: Callable[[Any], object]) -> None:
    """``write(handle)`` into a temporary file beside ``path``, synced, renamed over it
    (:func:`core.io.atomic.write_atomically`, with the bytes on disk before the rename:
    a checkpoint must survive a power cut, not only a killed process)."""

    def synced(temporary: Path) -> None:
        with temporary.open("wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())

    atomic.write_atomically(path, synced)


def write_json(path: Path, data: dict[str, Any]) -> None:
    text = jsonio.dumps(data, indent=2, ensure_ascii=False).encode("utf-8")
    write_atomically(path, lambda handle: handle.write(text))


def install_model(out: Path, save: Callable[[Path], None], record: dict[str, Any]) -> None:
    """Write the finished model into ``out``: ``save(folder)`` writes the weights and the
    tokenizer into a temporary folder beside them, the card and the record join them, and
    everything is moved in with ``config.json`` last, so a folder with one is a whole model
    (the model list's test) even if the process is killed while moving. The checkpoint
    files go afterwards: until then a killed process can still resume."""
    partial = temporary_name(out / "final", "partial")
    try:
        save(partial)
        (partial / CARD).write_text(model_card(record), encoding="utf-8")
        (partial / RECORD).write_text(
            jsonio.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8"
        )
        names = sorted(p.name for p in partial.iterdir() if p.name != "config.json")
        for name in [*names, "config.json"]:
            os.replace(partial / name, out / name)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    for name in (CHECKPOINT, BEST):
        (out / name).unlink(missing_ok=True)
