"""Reading a session checks what it reads: damaged rows are found, named and skipped.

A session file is something people share and edit with other tools, so a row may hold
what TailLens never writes: a verbalisation of a unit that is gone, a score value
``'abc'``, ``attributes`` that are not JSON, run parameters that are a list, a rating
of 33, a cached encoding of the wrong size. One mechanism covers them all:

* The checks are derived from the schema (``core.store.models``), as SQLite's own
  ``PRAGMA integrity_check`` / ``foreign_key_check`` derive theirs: every JSON column
  must hold a JSON object (or null), every numeric column a number, a column with
  ``info={"range": (low, high)}`` a value in that range, a table's
  ``info={"checks": [...]}`` its own SQL conditions, and every foreign key a row
  (SQLite's ``PRAGMA foreign_key_check``). Each finding is a :class:`DamagedRow`
  (table, id, what is wrong), its wording computed in SQL from the stored value.
* :class:`Integrity` runs the checks of a table the first time an ORM query of the
  session reads it (inside that query's transaction, so the check and the read see the
  same snapshot), once per open store. Rows that belong to a damaged row through an
  ``ON DELETE CASCADE`` key (the scores of a verbalisation of a missing unit) are hidden
  with it: they mean nothing without it.
* ``SessionStore`` adds the hidden ids to every ORM SELECT as global criteria
  (SQLAlchemy's ``with_loader_criteria``, the documented way to filter soft-deleted
  rows), so every reader (export, report, units, score, retrieve, the panels) skips them
  without a check of its own, and nothing it writes back is built from them. The rows
  themselves are left as they are: TailLens never repairs or deletes data on its own.
* What was skipped is said once per table through the ``core.store`` logger (the CLI
  prints it on stderr as ``taillens: ...``; the GUI shows it in the error log), and
  ``taillens session check`` lists every damaged row of a session.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    Integer,
    LargeBinary,
    String,
    Table,
    bindparam,
)
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from core.store.bounds import guard_of
from core.store.models import Base

_log = logging.getLogger("core.store")

# Where a store's sessions keep its Integrity (Session.info), for usable_rows.
SESSION_INFO_KEY = "taillens_integrity"
# Rows named in one notice; the rest are counted ('taillens session check' lists all).
NAMED_IN_NOTICE = 3
# A stored value quoted in a problem is cut to this many characters.
QUOTED_CHARS = 40
# A table's text columns with at most this many distinct combinations of values have each
# combination checked for UTF-8 once, not each row (texts_are_utf8).
DISTINCT_TEXTS = 1024


@dataclass(frozen=True)
class DamagedRow:
    """A row a reader cannot use: ``table``, its ``row_id`` and what is wrong with it."""

    table: str
    row_id: int
    problem: str

    def __str__(self) -> str:
        return f"{self.table} id {self.row_id}: {self.problem}"


def _quoted(column: str) -> str:
    """SQL for the column's stored value as SQLite quotes it, cut to QUOTED_CHARS."""
    return (
        f"CASE WHEN length(CAST({column} AS TEXT)) > {QUOTED_CHARS} "
        f"THEN quote(substr(CAST({column} AS TEXT), 1, {QUOTED_CHARS})) || '…' "
        f"ELSE quote({column}) END"
    )


def column_checks(table: Table) -> list[tuple[str, str]]:
    """(condition, problem) SQL pairs for ``table``, from its columns' types and infos
    and the table's own ``info["checks"]``: a row matching a condition is damaged and
    the problem expression says why."""
    return [(condition, problem) for condition, problem, _text in _checks(table)]


_Check = tuple[str, str, str | None]  # condition, problem, the text column it checks


def _checks(table: Table) -> list[_Check]:
    """:func:`column_checks`, each with the name of the text column whose UTF-8 check it
    is (None for the others)."""
    checks: list[_Check] = []
    for column in table.columns:
        if not column.primary_key:
            checks += _type_checks(column.name, column.type)
            checks += _range_checks(column.name, column.info.get("range"))
    checks.extend((condition, problem, None) for condition, problem in table.info.get("checks", ()))
    return checks


def _type_checks(column: str, kind: Any) -> list[_Check]:
    """The checks that a value of ``column`` is of its declared type ``kind``."""
    name = f'"{column}"'
    if isinstance(kind, JSON):
        return _json_checks(column, name)
    if isinstance(kind, Boolean):
        return [
            (
                f"{name} IS NOT NULL AND {name} NOT IN (0, 1)",
                f"'{column} ' || {_quoted(name)} || ' is not true or false'",
                None,
            )
        ]
    if isinstance(kind, Integer | Float):
        return [
            (
                f"typeof({name}) NOT IN ('integer', 'real', 'null')",
                f"'{column} ' || {_quoted(name)} || ' is not a number'",
                None,
            )
        ]
    if isinstance(kind, DateTime):
        # SQLAlchemy parses the text it wrote; anything else fails every read.
        return [
            (
                f"{name} IS NOT NULL AND (typeof({name}) != 'text' OR "
                f"{name} NOT GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*' OR "
                f"datetime({name}) IS NULL)",
                f"'{column} ' || {_quoted(name)} || ' is not a date and time'",
                None,
            )
        ]
    if isinstance(kind, String):
        # A blob where text belongs (text of another encoding, bytes), or text that is
        # not UTF-8 (an encoded lone surrogate): no reader can show it as text.
        return [
            (
                f"typeof({name}) = 'blob' OR (typeof({name}) = 'text' AND "
                f"NOT taillens_utf8(CAST({name} AS BLOB)))",
                f"CASE WHEN typeof({name}) = 'blob' THEN '{column} is bytes (' || "
                f"length({name}) || '), not text' ELSE '{column} is not UTF-8 text' END",
                column,
            )
        ]
    if isinstance(kind, LargeBinary):
        return [
            (
                f"{name} IS NOT NULL AND typeof({name}) != 'blob'",
                f"'{column} is ' || typeof({name}) || ', not bytes'",
                None,
            )
        ]
    return []


def _json_checks(column: str, name: str) -> list[_Check]:
    return [
        # One parse per value: a valid JSON text's type is its first character.
        (
            f"{name} IS NOT NULL AND (NOT json_valid({name}) OR "
            f"(ltrim({name}, ' ' || char(9, 10, 13)) NOT LIKE '{{%' "
            f"AND {name} != 'null'))",
            f"CASE WHEN json_valid({name}) "
            f"THEN '{column} is a JSON ' || json_type({name}) || ', not an object' "
            f"ELSE '{column} is not JSON: ' || {_quoted(name)} END",
            None,
        ),
        # The Python check parses the text: only for one with an escape that may be a
        # lone surrogate's (SQLite's GLOB, one pass, no lowered copy of the text).
        (
            f"{name} IS NOT NULL AND {name} GLOB '*\\[uU][dD]*' AND NOT taillens_json_text({name})",
            f"'{column} holds a lone surrogate escape (\\ud800-\\udfff) or a value out of bounds'",
            None,
        ),
    ]


def _range_checks(column: str, bounds: tuple[float, float] | None) -> list[_Check]:
    """The check of a column's ``info={"range": (low, high)}``, if it has one."""
    if bounds is None:
        return []
    low, high = bounds
    name = f'"{column}"'
    return [
        (
            f"typeof({name}) IN ('integer', 'real') AND NOT ({name} BETWEEN {low} AND {high})",
            f"'{column} ' || {name} || ' is outside {low}–{high}'",
            None,
        )
    ]


def checked_tables() -> dict[str, Table]:
    """The tables whose rows are checked and skipped: those with an integer ``id`` key
    (the rest are keyed by names or pairs and hold nothing a reader decodes)."""
    return {
        name: table
        for name, table in Base.metadata.tables.items()
        if "id" in table.c and table.c.id.primary_key
    }


def _cascade_parents(table: Table) -> list[tuple[str, str]]:
    """(column, parent table) of the keys whose row means nothing without its parent."""
    return sorted(
        (key.parent.name, key.column.table.name)
        for key in table.foreign_keys
        if (key.ondelete or "").upper() == "CASCADE"
    )


def _text_columns(table: Table) -> list[str]:
    """The quoted names of ``table``'s text columns (those with a UTF-8 check)."""
    return [f'"{text}"' for _condition, _problem, text in _checks(table) if text is not None]


def _as_bytes(names: Sequence[str]) -> str:
    """SQL for each text value of the columns ``names`` as its bytes (NULL for others)."""
    return ", ".join(f"CASE WHEN typeof({n}) = 'text' THEN CAST({n} AS BLOB) END" for n in names)


def row_conditions(table: Table, *, texts_checked: bool = False) -> list[str]:
    """SQL conditions a row of ``table`` meets exactly when it meets one of
    :func:`column_checks`'s, for finding the damaged rows: the text columns' UTF-8 checks
    made one, a single call into Python per row (one per column was most of the time the
    scores table's check took); saying what is wrong with a row found stays per column.
    ``texts_checked``: every text value is known to be UTF-8 (:func:`texts_are_utf8`), so
    only a blob where text belongs is looked for, with no call into Python."""
    checks = _checks(table)
    conditions = [condition for condition, _problem, text in checks if text is None]
    names = _text_columns(table)
    if names:
        blobs = " OR ".join(f"typeof({n}) = 'blob'" for n in names)
        if texts_checked:
            conditions.append(blobs)
        else:
            conditions.append(f"{blobs} OR NOT taillens_utf8_all({_as_bytes(names)})")
    return conditions


def texts_are_utf8(connection: Connection, table: Table) -> bool:
    """True when every text value in ``table``'s text columns is UTF-8, seen from their
    distinct combinations, when there are at most ``DISTINCT_TEXTS`` of them: each is
    decoded once instead of once per row (the scores' metric, level, language and
    signature are a dozen combinations over 85,000 rows of a challenge-sized session).
    False when one is not UTF-8 or there are more (the per-row check then decides)."""
    from core.store.engine import _are_utf8

    names = _text_columns(table)
    if not names:
        return True
    rows = connection.exec_driver_sql(
        f'SELECT DISTINCT {_as_bytes(names)} FROM "{table.name}" LIMIT {DISTINCT_TEXTS + 1}'
    ).fetchall()
    return len(rows) <= DISTINCT_TEXTS and all(_are_utf8(*row) for row in rows)


def find_damaged_rows(connection: Connection, table: Table) -> list[DamagedRow]:
    """Every damaged row of ``table``: its columns' checks and SQLite's foreign-key check."""
    found: dict[int, list[str]] = {}
    checks = column_checks(table)
    if checks:  # one scan of the table for all of its column checks
        problems = ", ".join(f"CASE WHEN {c} THEN {p} END" for c, p in checks)
        texts_checked = texts_are_utf8(connection, table)
        matches = " OR ".join(f"({c})" for c in row_conditions(table, texts_checked=texts_checked))
        for row_id, *texts in connection.exec_driver_sql(
            f'SELECT id, {problems} FROM "{table.name}" WHERE {matches} ORDER BY id'
        ):
            found[int(row_id)] = [str(text) for text in texts if text is not None]
    keys = {
        int(row[0]): (str(row[3]), str(row[2]))
        for row in connection.exec_driver_sql(f'PRAGMA foreign_key_list("{table.name}")')
    }
    for _table, row_id, parent, key_id in connection.exec_driver_sql(
        f'PRAGMA foreign_key_check("{table.name}")'
    ):
        column, _parent = keys.get(int(key_id), ("?", str(parent)))
        value = connection.exec_driver_sql(
            f'SELECT {_quoted(chr(34) + column + chr(34))} FROM "{table.name}" WHERE id = ?',
            (row_id,),
        ).scalar()
        found.setdefault(int(row_id), []).append(f"{column} {value} points at no {parent} row")
    return [
        DamagedRow(table.name, row_id, "; ".join(problems))
        for row_id, problems in sorted(found.items())
    ]


def _ids_sql(ids: Iterable[int]) -> str:
    return ", ".join(str(int(i)) for i in ids)


class Integrity:
    """What one open store has checked so far: per table, the damaged rows and every id
    hidden from readers (the damaged rows and the rows that belong to them)."""

    def __init__(self, session_name: str) -> None:
        self.session_name = session_name
        self._tables = checked_tables()
        # The lock of what is kept (the dicts below, what was said), held for moments.
        self._lock = threading.RLock()
        # One lock per table, held while that table is checked: a reader of another table
        # (the window, a setting) does not wait for a scan of the scores on another
        # thread. A thread holds one at a time: a table's parents are checked first.
        self._table_locks = {name: threading.Lock() for name in self._tables}
        self._generation = 0  # forget() makes checks under way store nothing
        self.damaged: dict[str, list[DamagedRow]] = {}
        self.hidden: dict[str, frozenset[int]] = {}
        # Called with each notice (from the reading thread), besides the log: the GUI
        # shows them in its error log.
        self.listeners: list[Callable[[str], None]] = []
        self._said: set[str] = set()

    def ensure(self, connection: Connection, names: Iterable[str], *, notify: bool = True) -> None:
        """Check the tables ``names`` (and the tables they belong to) unless done; with
        ``notify``, say what is skipped (the log and the listeners). A table checked
        already, or one without row ids, costs no lock."""
        for name in names:
            self._ensure(connection, name, notify)

    def _ensure(self, connection: Connection, name: str, notify: bool) -> None:
        if name in self.hidden or name not in self._tables:
            return
        table = self._tables[name]
        parents = _cascade_parents(table)
        for _column, parent in parents:
            if parent != name:
                self._ensure(connection, parent, notify)
        with self._table_locks[name]:
            if name in self.hidden:  # checked by another thread meanwhile
                return
            with self._lock:
                generation = self._generation
            # The session may come from elsewhere: the check of each table, a scan of
            # every row, ends within the deadline of a file from elsewhere (a refusal
            # past it).
            guard = guard_of(connection.connection.dbapi_connection)
            with guard.within() if guard is not None else nullcontext():
                damaged = find_damaged_rows(connection, table)
            hidden = {row.row_id for row in damaged}
            direct = len(hidden)
            for column, parent in parents:
                parent_hidden = self.hidden.get(parent, frozenset())
                if parent_hidden:
                    hidden.update(
                        int(row_id)
                        for (row_id,) in connection.exec_driver_sql(
                            f'SELECT id FROM "{name}" WHERE "{column}" IN '
                            f"({_ids_sql(parent_hidden)})"
                        )
                    )
            with self._lock:
                if generation != self._generation:
                    return  # forgotten meanwhile (a write): the next read checks again
                self.damaged[name] = damaged
                self.hidden[name] = frozenset(hidden)
        if not notify:
            return
        if damaged:
            self._notice(skipped_notice(self.session_name, damaged))
        if len(hidden) > direct:
            count = len(hidden) - direct
            self._notice(
                f"{self.session_name}: also skipped {count} {'row' if count == 1 else 'rows'} "
                f"of {name} that belong to damaged rows"
            )

    def forget(self) -> None:
        """Check again at the next reads (after a write: a damaged row may be gone, and
        SQLite may give its id to a new row); what was said is not said again."""
        with self._lock:
            self._generation += 1
            self.damaged.clear()
            self.hidden.clear()

    def _notice(self, text: str) -> None:
        with self._lock:
            if text in self._said:
                return
            self._said.add(text)
        _log.warning("%s", text)
        for listener in list(self.listeners):
            listener(text)

    def check_all(self, connection: Connection) -> list[DamagedRow]:
        """Check every table (``taillens session check``); the damaged rows found."""
        self.ensure(connection, sorted(self._tables), notify=False)
        return self.all_damaged()

    def dependents(self) -> dict[str, int]:
        """Per table, the rows hidden only because they belong to a damaged row."""
        with self._lock:
            counts = {
                name: len(ids) - len(self.damaged.get(name, ()))
                for name, ids in sorted(self.hidden.items())
            }
        return {name: n for name, n in counts.items() if n}

    def all_damaged(self) -> list[DamagedRow]:
        with self._lock:
            return [row for name in sorted(self.damaged) for row in self.damaged[name]]

    def criteria(self) -> list[tuple[str, frozenset[int]]]:
        """(table, hidden ids) of every checked table that hides rows. Without the lock:
        a table's hidden ids are set once, as a whole (a frozenset), and ``list`` copies
        the items in one step, so a check running on another thread is not waited for."""
        return [(name, ids) for name, ids in sorted(list(self.hidden.items())) if ids]

    def hides(self, table: str) -> bool:
        with self._lock:
            return bool(self.hidden.get(table))


def skipped_notice(session_name: str, damaged: Sequence[DamagedRow]) -> str:
    """One line naming the first damaged rows of one table and counting the rest."""
    count = len(damaged)
    named = "; ".join(str(row) for row in damaged[:NAMED_IN_NOTICE])
    more = (
        f"; and {count - NAMED_IN_NOTICE} more ('taillens session check' lists them)"
        if count > NAMED_IN_NOTICE
        else ""
    )
    return (
        f"{session_name}: skipped {count} damaged {'row' if count == 1 else 'rows'}: {named}{more}"
    )


def usable_rows(db: Session, table: str, alias: str) -> str:
    """An SQL condition keeping the rows of ``table`` (named ``alias`` in the query) that
    readers may use, for the few readers written in SQL text, which the ORM criteria do
    not reach: ``f"... WHERE {usable_rows(db, 'scores', 's')}"``. Checks the table (and
    the tables it belongs to) first, as an ORM read would."""
    integrity = db.info.get(SESSION_INFO_KEY)
    if not isinstance(integrity, Integrity):
        return "1"
    integrity.ensure(db.connection(), [table])
    with integrity._lock:
        ids = integrity.hidden.get(table, frozenset())
    return f"{alias}.id NOT IN ({_ids_sql(sorted(ids))})" if ids else "1"


def hidden_ids_param(table: str, ids: frozenset[int]) -> Any:
    """The ids as an expanding parameter rendered inline (integers only), so a long list
    is not limited by SQLite's count of bound variables."""
    return bindparam(f"damaged_{table}", sorted(ids), expanding=True, literal_execute=True)
