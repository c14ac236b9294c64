"""The user's defaults (File ▸ Preferences…), read from and written to a settings store.

- method defaults that exist as settings (METHODS): the tier split (Pareto cut-off or
  head fraction) with its Pareto share and head fraction, used for every category that
  has no saved cut-offs of its own;
- the contact (e-mail or URL) for the User-Agent sent to endpoints;
- the theme: follow the system's light or dark mode, or always light, or always dark;
- model folders: where Verbalise and Scores look for local models (kept by
  ``core.local_models.loader`` in its own file, the one source those panels read).

Qt-free: the settings store is anything with ``value``/``setValue``/``sync`` (the GUI
passes its ``QSettings``); ``app.preferences`` opens the dialog and applies the values.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from core.desktop.theme_choice import THEME_KEY, THEMES
from core.tiers.cutoffs import DEFAULT_HEAD_FRACTION, DEFAULT_PARETO_SHARE, TierSettings

CONTACT_ENV = "TAILLENS_CONTACT"
_KEYS = {
    "split_by": "methods/tier_split",
    "share": "methods/pareto_share",
    "fraction": "methods/head_fraction",
    "contact": "network/contact",
    "theme": THEME_KEY,
}


class SettingsStore(Protocol):
    """What preferences need of a settings store (``QSettings`` has it)."""

    def value(self, key: str) -> Any: ...

    def setValue(self, key: str, value: Any) -> None: ...  # noqa: N802 - QSettings' name

    def sync(self) -> None: ...


@dataclass(frozen=True)
class Preferences:
    split_by: str = "pareto"
    share: float = DEFAULT_PARETO_SHARE
    fraction: float = DEFAULT_HEAD_FRACTION
    contact: str = ""
    theme: str = "system"
    model_folders: tuple[str, ...] = field(default=())

    def tier_settings(self) -> TierSettings:
        return TierSettings(split_by=self.split_by, share=self.share, fraction=self.fraction)


def load_preferences(settings: SettingsStore) -> Preferences:
    """The stored preferences; a value that does not parse, or tiers out of range, give
    the defaults. Model folders set by ``TAILLENS_MODEL_DIRS`` are not the user's own."""
    from core.local_models.loader import configured_model_folders

    defaults = Preferences()
    values: dict[str, Any] = {}
    for name, key in _KEYS.items():
        raw = settings.value(key)
        if raw is None or raw == "":
            continue
        wanted = type(getattr(defaults, name))
        try:
            values[name] = wanted(raw)
        except (TypeError, ValueError):
            continue  # a hand-edited value that does not parse: the default
    prefs = replace(defaults, **values)
    try:
        prefs.tier_settings()
    except ValueError:  # out of range: the defaults for the tiers
        prefs = replace(
            prefs, split_by=defaults.split_by, share=defaults.share, fraction=defaults.fraction
        )
    if prefs.theme not in THEMES:
        prefs = replace(prefs, theme=defaults.theme)
    env = os.environ.get("TAILLENS_MODEL_DIRS", "")
    from_env = {str(Path(p).expanduser()) for p in env.split(os.pathsep) if p}
    folders = tuple(str(f) for f in configured_model_folders() if str(f) not in from_env)
    return replace(prefs, model_folders=folders)


def save_preferences(settings: SettingsStore, prefs: Preferences) -> None:
    """Store ``prefs``; tiers out of range are refused (``ValueError``) before anything
    is written."""
    from core.local_models.loader import save_model_folders

    prefs.tier_settings()  # refuses values out of range
    for name, key in _KEYS.items():
        settings.setValue(key, getattr(prefs, name))
    settings.sync()
    save_model_folders([Path(p) for p in prefs.model_folders])


_contact_set_here: str | None = None  # the TAILLENS_CONTACT value set from preferences


def apply_contact(prefs: Preferences) -> None:
    """The contact reaches every endpoint through ``TAILLENS_CONTACT`` (which
    ``core.wikidata.open_source`` reads); one set in the environment by the user wins."""
    global _contact_set_here
    current = os.environ.get(CONTACT_ENV)
    if current and current != _contact_set_here:
        return  # the user's own environment
    if prefs.contact:
        os.environ[CONTACT_ENV] = _contact_set_here = prefs.contact
    elif current:
        os.environ.pop(CONTACT_ENV, None)
        _contact_set_here = None
