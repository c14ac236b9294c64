"""The edit model: every change a user makes to a session is an :class:`Edit` that
applies and reverts itself, says what it touches and describes itself in words; it is
applied, undone and redone with its history row in one transaction
(``core.edits.history``). Qt-free: the GUI's undo stack (``app.edits``) and the CLI
apply the same objects. docs/edits.md lists the kinds."""

from __future__ import annotations

# The kinds register themselves in KINDS when imported: importing them here makes every
# history row rebuildable wherever core.edits is imported.
from core.edits import categories as _categories  # noqa: E402,F401  (registers its kind)
from core.edits import drafts as _drafts  # noqa: E402,F401  (registers its kind)
from core.edits import likelihood as _likelihood  # noqa: E402,F401  (registers its kind)
from core.edits import packs as _packs  # noqa: E402,F401  (registers its kind)
from core.edits import ratings as _ratings  # noqa: E402,F401  (registers its kinds)
from core.edits import references as _references  # noqa: E402,F401  (registers its kind)
from core.edits import settings as _settings  # noqa: E402,F401  (registers its kind)
from core.edits import synonyms as _synonyms  # noqa: E402,F401  (registers its kind)
from core.edits import tiers as _tiers  # noqa: E402,F401  (registers its kind)
from core.edits import units as _units  # noqa: E402,F401  (registers its kind)
from core.edits.base import KINDS, Edit, EditConflictError, EditRefusedError, canonical
from core.edits.history import (
    GUI,
    HistoryEntry,
    apply_edit,
    collect,
    current_states,
    history,
    record_edit,
    recording,
    redo_edit,
    replayed_states,
    undo_edit,
    undoable_tail,
)

__all__ = [
    "GUI",
    "KINDS",
    "Edit",
    "EditConflictError",
    "EditRefusedError",
    "HistoryEntry",
    "apply_edit",
    "canonical",
    "collect",
    "current_states",
    "history",
    "record_edit",
    "recording",
    "redo_edit",
    "replayed_states",
    "undo_edit",
    "undoable_tail",
]
