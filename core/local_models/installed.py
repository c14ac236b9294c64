"""Models on this machine, as ``models list`` and the Models dialog show them: the
Hugging Face cache and the configured folders, each with its kind (from its config and
card), size, languages and revisions. Pulling and removing are :mod:`core.local_models.hub`'s."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.errors import UserFacingError
from core.io import files
from core.local_models.loader import (
    CAUSAL,
    SEQ2SEQ,
    ModelError,
    _folder_size,
    _snapshot_of,
    hf_cache_dir,
    model_folders_in,
    model_type_of,
    read_config,
)
from core.vocab import hub_folder_name, repo_id_of_hub_folder

ENCODER, TRANSLATION, QE = "encoder", "translation", "QE"
KINDS = (CAUSAL, SEQ2SEQ, ENCODER, TRANSLATION, QE, "unknown")


@dataclass(frozen=True)
class LocalModel:
    """A model on this machine, as ``models list`` and the Models dialog show it."""

    name: str
    kind: str
    size_bytes: int
    path: Path
    source: str  # "hf-cache" | "folder"
    languages: tuple[str, ...] = ()
    revisions: tuple[str, ...] = field(default=())
    type: str = "unknown"  # what a verbaliser can use it as: causal | seq2seq | unknown
    architectures: tuple[str, ...] = ()


_TRANSLATION_TYPES = frozenset({"marian", "m2m_100", "nllb-moe", "fsmt"})


_ENCODER_SUFFIXES = ("Model", "ForMaskedLM", "ForSequenceClassification", "ForTokenClassification")


def _card(folder: Path) -> dict[str, Any]:
    """The YAML front matter of a README.md (the model card's metadata), or {}."""
    readme = folder / "README.md"
    if not readme.is_file():
        return {}
    try:
        text = files.read_text(readme, limit=files.CONFIG_LIMIT, what="the model card")
    except UserFacingError:
        return {}
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    if end < 0:
        return {}
    try:
        import yaml  # noqa: F401
    except ImportError:  # PyYAML comes with huggingface_hub, absent from the bundle
        return {}
    from core.io.bounded import loads_yaml

    try:
        data = loads_yaml(text[3:end], name=str(readme), what="the model card")
    except UserFacingError:
        return {}
    return data if isinstance(data, dict) else {}


def card_languages(card: dict[str, Any]) -> tuple[str, ...]:
    value = card.get("language") or card.get("languages") or ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        return ()
    return tuple(str(v) for v in value if v)


def model_kind(config: dict[str, Any] | None, card: dict[str, Any]) -> str:
    """causal / seq2seq / encoder / translation / QE, from the card's pipeline tag and
    tags and the config's architectures."""
    tags = {str(t).lower() for t in card.get("tags") or [] if t}
    pipeline = str(card.get("pipeline_tag") or "").lower()
    if tags & {"quality-estimation", "quality estimation", "comet", "cometkiwi"}:
        return QE
    if config is None:
        return QE if (tags & {"translation"} and "unbabel" in str(card).lower()) else "unknown"
    if pipeline == "translation" or config.get("model_type") in _TRANSLATION_TYPES:
        return TRANSLATION
    kind = model_type_of(config)
    if kind != "unknown":
        return kind
    architectures = [str(a) for a in config.get("architectures") or []]
    if (
        pipeline in ("feature-extraction", "sentence-similarity", "fill-mask")
        or "sentence-transformers" in tags
        or any(a.endswith(_ENCODER_SUFFIXES) for a in architectures)
    ):
        return ENCODER
    return "unknown"


def _describe_folder(folder: Path, name: str, source: str, size: int) -> LocalModel:
    try:
        config: dict[str, Any] | None = read_config(folder)
    except ModelError:
        config = None
    card = _card(folder)
    return LocalModel(
        name=name,
        kind=model_kind(config, card),
        size_bytes=size,
        path=folder,
        source=source,
        languages=card_languages(card),
        type=model_type_of(config) if config is not None else "unknown",
        architectures=tuple(str(a) for a in (config or {}).get("architectures") or []),
    )


def list_models(folders: Iterable[Path] | None = None) -> list[LocalModel]:
    """Every model in the hub cache (whatever pulled it) and in ``folders`` (default: the
    user's model folders, :func:`core.local_models.loader.configured_model_folders`)."""
    found: list[LocalModel] = []
    cache = hf_cache_dir()
    if cache.is_dir():
        for repo in sorted(cache.glob(hub_folder_name("*"))):
            snapshot = _snapshot_of(repo)
            if snapshot is None:
                continue
            name = repo_id_of_hub_folder(repo.name)
            size = _folder_size(repo / "blobs") if (repo / "blobs").is_dir() else 0
            model = _describe_folder(snapshot, name, "hf-cache", size or _folder_size(snapshot))
            revisions = tuple(sorted(p.name for p in (repo / "snapshots").iterdir()))
            found.append(replace(model, revisions=revisions))
    for candidate in model_folders_in(folders):
        found.append(_describe_folder(candidate, candidate.name, "folder", _folder_size(candidate)))
    return found


def as_json(models: list[LocalModel]) -> list[dict[str, Any]]:
    return [
        {
            "name": m.name,
            "kind": m.kind,
            "type": m.type,
            "architectures": list(m.architectures),
            "size_bytes": m.size_bytes,
            "languages": list(m.languages),
            "path": str(m.path),
            "source": m.source,
        }
        for m in models
    ]
