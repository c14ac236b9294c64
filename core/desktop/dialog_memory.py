"""What a dialog was last given, so it reopens with the user's choices (the
Score dialog's unticked metrics used to come back ticked).

Qt-free: a :class:`DialogMemory` keeps one dialog's choices as a JSON object under
``dialogs/<name>`` in a settings store (anything with ``value``/``setValue``/``sync``:
the GUI's QSettings). A dialog reads it when it opens and writes it when accepted; what
does not parse, or names a choice no longer offered, is skipped by the dialog.
"""

from __future__ import annotations

import json
from typing import Any

from core.desktop.preferences import SettingsStore


class DialogMemory:
    def __init__(self, settings: SettingsStore, name: str) -> None:
        self.settings = settings
        self.key = f"dialogs/{name}"

    def load(self) -> dict[str, Any]:
        """The choices last saved ({} when none, or when what is stored does not parse)."""
        raw = self.settings.value(self.key)
        if not isinstance(raw, str) or not raw:
            return {}
        try:
            values = json.loads(raw)
        except ValueError:
            return {}
        return values if isinstance(values, dict) else {}

    def save(self, values: dict[str, Any]) -> None:
        self.settings.setValue(self.key, json.dumps(values, sort_keys=True))
        self.settings.sync()
