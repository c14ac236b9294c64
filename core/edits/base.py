"""The edit model's base: an edit knows what it touches, how to read and write that
state, and how to say what it does in words.

Every edit is *state based*: it names a target (``target``, a small JSON object: a
category, an item, a unit) and the state the target should have afterwards (``after``,
JSON). Applying reads the target's state now (``before``) and writes ``after``;
reverting writes ``before`` back. Both states go into the session's history
(``core.edits.history``), so an edit can be rebuilt from its history row alone (undo
after reopening) and the session's state can be replayed from the history.

Before an undo writes ``before`` back it checks the target still holds ``after`` (and a
redo that it still holds ``before``): when another change (another panel, another
process, the CLI) wrote the target since, the undo is refused with
:class:`EditConflictError` instead of reverting blindly.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from sqlalchemy.orm import Session

from core.changes import Topics
from core.errors import UserFacingError

JSON = Any  # what json.dumps writes and json.loads reads


class EditConflictError(UserFacingError):
    """What an undo or redo would revert was overwritten by another change."""


class EditRefusedError(UserFacingError):
    """An edit that cannot be applied as asked (a target that does not exist, a value
    out of range)."""


def canonical(value: JSON) -> JSON:
    """``value`` as it reads back from the history (tuples as lists, keys as strings),
    so a state read now compares equal to the same state stored earlier."""
    return json.loads(json.dumps(value, sort_keys=True))


# Every edit kind by name, filled by ``Edit.__init_subclass__``: a history row's kind
# finds the class that rebuilds it.
KINDS: dict[str, type[Edit]] = {}


class Edit(ABC):
    """One change a user makes to a session; see the module doc.

    A subclass sets ``kind`` (its name in the history), ``topics`` (what panels must
    reload after it) and ``label`` (the kind in words), and implements :meth:`read`,
    :meth:`write` and :meth:`describe`. It is Qt-free: the GUI wraps it in a
    ``QUndoCommand`` (``app.edits``) and the CLI applies it as it is.
    """

    kind: ClassVar[str]
    label: ClassVar[str]
    topics: ClassVar[Topics]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" in cls.__dict__:
            KINDS[cls.kind] = cls

    def __init__(self, target: dict[str, JSON], after: JSON) -> None:
        self.target = canonical(target)
        self.after = canonical(after)

    @classmethod
    def rebuild(cls, kind: str, target: dict[str, JSON], after: JSON) -> Edit:
        """The edit a history row stands for."""
        try:
            edit_class = KINDS[kind]
        except KeyError:
            raise EditRefusedError(
                f"this version of TailLens cannot undo edits of kind {kind!r}"
            ) from None
        edit = edit_class.__new__(edit_class)
        Edit.__init__(edit, target, after)
        return edit

    # -- what a kind implements -----------------------------------------------------
    @abstractmethod
    def read(self, db: Session) -> JSON:
        """The target's state now, as JSON (``canonical`` is applied to it)."""

    @abstractmethod
    def write(self, db: Session, state: JSON) -> None:
        """Make the target's state ``state`` (inside the caller's transaction)."""

    @abstractmethod
    def describe(self, before: JSON = None) -> str:
        """The edit in words, for the Edit menu ("Undo <what>") and the history."""

    def unit_id(self) -> int | None:
        """The data unit the edit concerns, if any (the history's unit filter)."""
        value = self.target.get("unit_id")
        return int(value) if isinstance(value, int) else None

    def annotator(self) -> str | None:
        """The annotator the edit concerns, if any (the history's annotator filter)."""
        value = self.target.get("annotator")
        return value if isinstance(value, str) else None

    # -- what every kind shares ---------------------------------------------------------
    def plan(self, db: Session, before: JSON) -> JSON:
        """The state to write, given the state now (read in the same transaction). Most
        kinds know it up front (``after``); one that changes part of a state (a synonym
        added to the table) derives it here, so a change made meanwhile is kept."""
        return self.after

    def apply(self, db: Session) -> tuple[JSON, JSON]:
        """Write ``after`` (as :meth:`plan` makes it); returns (before, after)."""
        before = canonical(self.read(db))
        self.after = canonical(self.plan(db, before))
        if before != self.after:
            self.write(db, self.after)
        return before, self.after

    def revert(self, db: Session, before: JSON, description: str) -> None:
        """Write ``before`` back, after checking the target still holds ``after``."""
        self.expect(db, self.after, f"Cannot undo {description}")
        self.write(db, before)

    def expect(self, db: Session, state: JSON, doing: str) -> None:
        """Refuse when the target does not hold ``state`` now: another change wrote it."""
        if canonical(self.read(db)) != canonical(state):
            raise EditConflictError(
                f"{doing}: another change overwrote it since (in another panel, another "
                "window or the command line). The history shows what changed it; nothing "
                "was reverted."
            )

    def key(self) -> str:
        """The target as one string: edits with the same key touch the same state."""
        return self.kind + ":" + json.dumps(self.target, sort_keys=True)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.target!r})"
