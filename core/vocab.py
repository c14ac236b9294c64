"""The one home of TailLens' shared words: reference qualities, languages and their
names, and how a model is named.

Every module that needs one imports it from here (``tests/test_vocab.py`` checks that
no other module writes its own list of qualities or languages, its own table of
language names, or its own model-name rule). A leaf module: it imports nothing of
TailLens, so any layer can use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

# --- reference qualities -----------------------------------------------------------------

GOLD: Final = "gold"  # references a person wrote or checked
SILVER: Final = "silver"  # machine-made references (TailNLG's translations)
# In their order (gold first: the baseline of a comparison, listed first everywhere).
QUALITIES: Final[tuple[str, ...]] = (GOLD, SILVER)
DEFAULT_QUALITY: Final = GOLD

# --- languages ---------------------------------------------------------------------------

# The languages TailLens verbalises, scores and exports (TailNLG's), in their order.
LANGUAGES: Final[tuple[str, ...]] = ("en", "it", "es")
LANGUAGE_NAMES: Final[Mapping[str, str]] = MappingProxyType(
    {"en": "English", "it": "Italian", "es": "Spanish"}
)


def language_name(code: str) -> str:
    """``"it"`` -> ``"Italian"``; a code TailLens has no name for, as it is."""
    return LANGUAGE_NAMES.get(code, code)


# --- model names -------------------------------------------------------------------------

UNKNOWN: Final = "(none)"  # a group with no value (no model, no tier, …)


def run_name(system_name: str | None, model_id: str | None, default: str = UNKNOWN) -> str:
    """The name a run is shown and grouped by: the system's name (an imported system,
    a local model's display name), else the model id, else ``default``."""
    return system_name or model_id or default


def short_model_name(model_id: str) -> str:
    """A Hugging Face id without its organisation (``google-bert/bert-base-multilingual-
    cased`` -> ``bert-base-multilingual-cased``): the name baselines are filed under
    and runs are shown by. A name without an organisation, as it is."""
    return model_id.rstrip("/").rsplit("/", 1)[-1]


def hub_folder_name(repo_id: str) -> str:
    """The Hugging Face hub cache's folder of a model: ``org/name`` -> ``models--org--name``."""
    return "models--" + repo_id.replace("/", "--")


def repo_id_of_hub_folder(folder_name: str) -> str:
    """``models--org--name`` -> ``org/name`` ("--" cannot occur inside a hub name part)."""
    return "/".join(folder_name.split("--")[1:])
