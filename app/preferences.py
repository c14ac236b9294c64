"""Preferences: the user's defaults, kept with QSettings (the settings file of app/gui).

- method defaults that exist as settings (METHODS): the tier split (Pareto cut-off or
  head fraction) with its Pareto share and head fraction, used for every category that
  has no saved cut-offs of its own;
- the contact (e-mail or URL) for the User-Agent sent to endpoints;
- model folders: where Verbalise and Scores look for local models (kept by
  ``core.models`` in its own file, the one source those panels read).

``PreferencesController`` opens the dialog (File ▸ Preferences…), stores what was
chosen and applies it at once; panels read the values from ``AppController.preferences``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.tiers import DEFAULT_HEAD_FRACTION, DEFAULT_PARETO_SHARE, TierSettings

CONTACT_ENV = "TAILLENS_CONTACT"
_KEYS = {
    "split_by": "methods/tier_split",
    "share": "methods/pareto_share",
    "fraction": "methods/head_fraction",
    "contact": "network/contact",
}


@dataclass(frozen=True)
class Preferences:
    split_by: str = "pareto"
    share: float = DEFAULT_PARETO_SHARE
    fraction: float = DEFAULT_HEAD_FRACTION
    contact: str = ""
    model_folders: tuple[str, ...] = field(default=())

    def tier_settings(self) -> TierSettings:
        return TierSettings(split_by=self.split_by, share=self.share, fraction=self.fraction)


def load_preferences(settings: Any) -> Preferences:
    from core.models import configured_model_folders

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
    env = os.environ.get("TAILLENS_MODEL_DIRS", "")
    from_env = {str(Path(p).expanduser()) for p in env.split(os.pathsep) if p}
    folders = tuple(str(f) for f in configured_model_folders() if str(f) not in from_env)
    return replace(prefs, model_folders=folders)


def save_preferences(settings: Any, prefs: Preferences) -> None:
    from core.models import save_model_folders

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


class PreferencesController:
    def __init__(self, app: Any, window: Any) -> None:
        self.app = app
        self.window = window
        self.dialog: Any = None
        app.preferences = load_preferences(window.settings)
        apply_contact(app.preferences)
        window.preferences_requested.connect(self.open)

    def open(self) -> Any:
        from widgets.preferences import PreferencesDialog

        if self.dialog is None:
            self.dialog = PreferencesDialog(self.window)
            self.dialog.accepted.connect(lambda: self.store(self.dialog.values()))
        self.dialog.show_values(self.app.preferences)
        self.dialog.open()
        return self.dialog

    def store(self, values: dict[str, Any]) -> bool:
        try:
            prefs = replace(self.app.preferences, **values)
            save_preferences(self.window.settings, prefs)
        except (ValueError, OSError) as error:
            self.window.show_error("Preferences not saved", str(error))
            return False
        self.app.preferences = prefs
        apply_contact(prefs)
        self.window.statusBar().showMessage("Preferences saved", 5_000)
        return True
