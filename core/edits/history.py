"""Applying, undoing and redoing edits, each in one transaction with its history row.

``apply_edit`` writes the edit and a row of ``edit_history`` (who, when, kind, words,
before and after, source) in one unit of work: the edit and its record land together or
not at all. ``undo_edit`` and ``redo_edit`` rebuild the edit from its row, check the
target still holds what the edit wrote (else :class:`EditConflictError`), write the
other state and mark the row ``undone`` / ``redone``, again in one transaction.
"""

from __future__ import annotations

import getpass
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select

from core.edits.base import JSON, Edit, EditConflictError, EditRefusedError, canonical
from core.store import SessionStore
from core.store.models import EditHistory

APPLIED, UNDONE, REDONE = "applied", "undone", "redone"
GUI = "gui"


def current_user() -> str:
    """The login name of who runs TailLens ("unknown" where the system has none)."""
    try:
        return getpass.getuser()
    except Exception:  # no login name (a container without passwd entry)
        return "unknown"


@dataclass(frozen=True)
class HistoryEntry:
    """One row of the session's edit history, as plain data."""

    id: int
    kind: str
    target: dict[str, Any]
    description: str
    before: JSON
    after: JSON
    who: str
    source: str
    status: str
    seq: int
    unit_id: int | None
    annotator: str | None
    created_at: str | None
    changed_at: str | None

    @property
    def stands(self) -> bool:
        """Whether the edit is in effect (applied or redone, not undone)."""
        return self.status != UNDONE

    def edit(self) -> Edit:
        return Edit.rebuild(self.kind, self.target, self.after)

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "target": self.target,
            "description": self.description,
            "before": self.before,
            "after": self.after,
            "who": self.who,
            "source": self.source,
            "status": self.status,
            "seq": self.seq,
            "unit_id": self.unit_id,
            "annotator": self.annotator,
            "created_at": self.created_at,
            "changed_at": self.changed_at,
        }


def _wrap(state: JSON) -> dict[str, JSON]:
    """A state as its column holds it: inside an object, as every JSON column of a
    session holds an object (a bare ``true`` or list would read as a damaged row,
    ``core.store.integrity``)."""
    return {"state": state}


def _unwrap(column: Any) -> JSON:
    return column.get("state") if isinstance(column, dict) else None


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)  # SQLite hands back naive UTC
    return value.isoformat(timespec="seconds")


def _entry(row: EditHistory) -> HistoryEntry:
    return HistoryEntry(
        id=row.id,
        kind=row.kind,
        target=dict(row.target),
        description=row.description,
        before=_unwrap(row.before),
        after=_unwrap(row.after),
        who=row.who,
        source=row.source,
        status=row.status,
        seq=row.seq,
        unit_id=row.unit_id,
        annotator=row.annotator,
        created_at=_iso(row.created_at),
        changed_at=_iso(row.changed_at),
    )


# The edits applied in this thread while a ``recording()`` block runs (see there).
_RECORDING = threading.local()


@contextmanager
def recording() -> Iterator[list[HistoryEntry]]:
    """Collect the history rows of the edits applied in this thread inside the block:
    the GUI's undo stack runs a panel's write (which may apply edits through core code,
    e.g. a rating saved by the annotation queue) inside one and pushes what it applied."""
    previous = getattr(_RECORDING, "entries", None)
    entries: list[HistoryEntry] = []
    _RECORDING.entries = entries
    try:
        yield entries
    finally:
        _RECORDING.entries = previous


def apply_edit(
    store: SessionStore, edit: Edit, *, source: str = GUI, who: str | None = None
) -> HistoryEntry | None:
    """Apply ``edit`` and record it; None when the target already held ``after`` (no
    change, nothing recorded)."""
    with store.unit_of_work() as db:
        before, after = edit.apply(db)
        if before == after:
            return None
        entry = record_edit(db, edit, before, after, source=source, who=who)
    collect(entry)
    return entry


def record_edit(
    db: Any, edit: Edit, before: JSON, after: JSON, *, source: str, who: str | None = None
) -> HistoryEntry:
    """Add the history row of ``edit``, which the caller applied in ``db``'s transaction
    (``before`` and ``after`` as ``canonical`` gives them): for core code that writes an
    edit's state in bulk itself (a pack merge). The caller hands the entry to
    :func:`collect` once the transaction has committed."""
    row = EditHistory(
        kind=edit.kind,
        target=edit.target,
        description=edit.describe(before),
        before=_wrap(before),
        after=_wrap(after),
        who=who or edit.annotator() or current_user(),
        source=source,
        status=APPLIED,
        seq=_next_seq(db),
        unit_id=edit.unit_id(),
        annotator=edit.annotator(),
    )
    db.add(row)
    db.flush()
    db.refresh(row)
    return _entry(row)


def collect(entry: HistoryEntry | None) -> None:
    """A committed edit's row, for the ``recording()`` block running in this thread (its
    caller may offer the edit's undo)."""
    recorded = getattr(_RECORDING, "entries", None)
    if recorded is not None and entry is not None:
        recorded.append(entry)


def _next_seq(db: Any) -> int:
    return int(db.execute(select(func.coalesce(func.max(EditHistory.seq), 0))).scalar_one()) + 1


def _row(db: Any, history_id: int) -> EditHistory:
    row = db.get(EditHistory, history_id)
    if row is None:
        raise EditRefusedError(f"the session's history has no edit {history_id}")
    return row


def undo_edit(store: SessionStore, history_id: int) -> HistoryEntry:
    """Revert the edit of history row ``history_id``; refused (nothing written) when it
    is undone already or another change overwrote its target."""
    with store.unit_of_work() as db:
        row = _row(db, history_id)
        if row.status == UNDONE:
            raise EditRefusedError(f"{row.description} is undone already")
        edit = Edit.rebuild(row.kind, row.target, _unwrap(row.after))
        edit.revert(db, _unwrap(row.before), row.description)
        row.status = UNDONE
        row.seq = _next_seq(db)
        row.changed_at = datetime.now(UTC)
        db.flush()
        return _entry(row)


def redo_edit(store: SessionStore, history_id: int) -> HistoryEntry:
    """Apply the undone edit of row ``history_id`` again; refused (nothing written) when
    it is not undone or its target changed since the undo."""
    with store.unit_of_work() as db:
        row = _row(db, history_id)
        if row.status != UNDONE:
            raise EditRefusedError(f"{row.description} is not undone, so it cannot be redone")
        edit = Edit.rebuild(row.kind, row.target, _unwrap(row.after))
        edit.expect(db, _unwrap(row.before), f"Cannot redo {row.description}")
        edit.write(db, _unwrap(row.after))
        row.status = REDONE
        row.seq = _next_seq(db)
        row.changed_at = datetime.now(UTC)
        db.flush()
        return _entry(row)


def history(
    store: SessionStore,
    *,
    kinds: Iterable[str] | None = None,
    unit_id: int | None = None,
    annotator: str | None = None,
) -> list[HistoryEntry]:
    """The session's edits, oldest first, filtered by kind, unit and annotator. Reads a
    snapshot (never waits for a writer)."""
    query = select(EditHistory).order_by(EditHistory.id)
    wanted = set(kinds) if kinds is not None else None
    if wanted is not None:
        query = query.where(EditHistory.kind.in_(sorted(wanted)))
    if unit_id is not None:
        query = query.where(EditHistory.unit_id == unit_id)
    if annotator is not None:
        query = query.where(EditHistory.annotator == annotator)
    with store.snapshot() as db:
        return [_entry(row) for row in db.scalars(query)]


def undoable_tail(store: SessionStore, limit: int = 50) -> list[HistoryEntry]:
    """The history's latest standing edits that can still be undone, oldest first (the
    undo stack after reopening). From the most recent change back, each applied or
    redone edit is offered when undoing the ones offered after it leaves its target
    holding what it wrote; the walk stops at the first that would not (an undo stack is
    a line: what lies under an edit that cannot be undone is not offered either).
    Undone rows are skipped: after reopening they are not offered for redo."""
    found: list[HistoryEntry] = []
    expected: dict[str, JSON] = {}  # each target's state once the offered undos ran
    with store.snapshot() as db:
        rows = db.scalars(select(EditHistory).order_by(EditHistory.seq.desc()))
        for row in rows:
            if row.status == UNDONE:
                continue
            try:
                edit = Edit.rebuild(row.kind, row.target, _unwrap(row.after))
                key = edit.key()
                if key not in expected:
                    expected[key] = canonical(edit.read(db))
            except EditRefusedError:
                break
            if expected[key] != canonical(_unwrap(row.after)):
                break
            expected[key] = canonical(_unwrap(row.before))
            found.append(_entry(row))
            if len(found) >= limit:
                break
    found.reverse()
    return found


def replayed_states(entries: Iterable[HistoryEntry]) -> dict[str, JSON]:
    """Each touched target's state as the history says it must be now (key ->
    state): of its rows, the one changed last (highest ``seq``) made it: its ``after``
    when it stands (applied, redone), its ``before`` when it was undone."""
    latest: dict[str, HistoryEntry] = {}
    for entry in sorted(entries, key=lambda e: e.seq):
        latest[entry.edit().key()] = entry
    return {key: (e.after if e.stands else e.before) for key, e in latest.items()}


def current_states(store: SessionStore, entries: Iterable[HistoryEntry]) -> dict[str, JSON]:
    """Each touched target's state as the session holds it now (key -> state)."""
    edits = {entry.edit().key(): entry.edit() for entry in entries}
    with store.snapshot() as db:
        return {key: canonical(edit.read(db)) for key, edit in edits.items()}


__all__ = [
    "APPLIED",
    "GUI",
    "REDONE",
    "UNDONE",
    "EditConflictError",
    "HistoryEntry",
    "apply_edit",
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
