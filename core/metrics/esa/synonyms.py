"""The ESA synonym table (the ESA paper's dictionary), stored in the session (rev 0004).

A row says that an entity may be written another way: ``Spain | Spanish``, ``Texas |
TX``, ``United States | U.S.``, ``English language | English``. ESA treats a synonym as
one more name of the entity (matched at the same normalised Levenshtein distance as a
label) and the table as symmetric. ``lang`` is ``''`` for every language.

A session's table starts as the bundled starter set: until the user first edits it, ESA
reads the starter set with the session's rows (:func:`effective_rows`, nothing written);
the first time the editor or ``taillens synonyms`` opens it (:func:`ensure_seeded`) the
starter set is copied in once and ``session_meta`` records it (``synonyms:seeded``), so
rows the user removes stay removed. ``seed`` copies the bundled starter set again
(``resources/synonyms/starter.tsv``: country ↔ demonym, US state ↔ abbreviation, "United
States" ↔ "U.S."/"American", language names, common units) with ``source = 'starter'``;
the user adds, removes and imports rows (``source = 'user'``). A file is tab-separated
(``.tsv``, ``.txt``) or comma-separated (``.csv``): entity, synonym, optional language;
``#`` starts a comment. A bad row (no entity, no synonym, an unknown language) is refused
with its file, line and reason, and nothing of that file is stored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import UserFacingError
from core.io import files

if TYPE_CHECKING:
    from core.store import SessionStore

STARTER_FILE = ("synonyms", "starter.tsv")
_LANG = re.compile(r"^(?:[a-z]{2,3})?$")


class SynonymError(UserFacingError):
    """A synonym row or file that cannot be stored; the message names what and why."""


@dataclass(frozen=True)
class SynonymRow:
    entity: str
    synonym: str
    lang: str = ""
    source: str = "user"
    id: int | None = None

    def key(self) -> tuple[str, str, str]:
        return (self.entity, self.synonym, self.lang)


def check_row(entity: str, synonym: str, lang: str = "", *, where: str = "") -> SynonymRow:
    """A clean row, or a :class:`SynonymError` saying which field is wrong."""
    at = f"{where}: " if where else ""
    entity, synonym, lang = (
        (entity or "").strip(),
        (synonym or "").strip(),
        (lang or "").strip().lower(),
    )
    if not entity:
        raise SynonymError(
            f"{at}the row names no entity (first field empty): "
            f"a synonym must say which entity it is another name of"
        )
    if not synonym:
        raise SynonymError(
            f"{at}the row for entity {entity!r} gives no synonym (second field empty)"
        )
    if entity.casefold() == synonym.casefold():
        raise SynonymError(f"{at}{synonym!r} is the entity's own name, not a synonym")
    if not _LANG.match(lang):
        raise SynonymError(
            f"{at}{lang!r} is not a language code (en, it, es, or empty for every language)"
        )
    return SynonymRow(entity, synonym, lang)


def parse_rows(text: str, *, name: str = "<text>", delimiter: str = "\t") -> list[SynonymRow]:
    """Rows of a synonym file; the first bad row raises, naming file and line."""
    rows: list[SynonymRow] = []
    from core.io.bounded import csv_rows

    for line_number, fields in csv_rows(text, name=name, delimiter=delimiter, error=SynonymError):
        if not fields or not "".join(fields).strip() or fields[0].lstrip().startswith("#"):
            continue
        where = f"{name}, line {line_number}"
        if len(fields) > 3:
            raise SynonymError(
                f"{where}: expected entity, synonym and an optional language, "
                f"found {len(fields)} fields"
            )
        if len(fields) == 1:
            raise SynonymError(
                f"{where}: expected entity and synonym separated by "
                f"{'a tab' if delimiter == chr(9) else repr(delimiter)}, "
                f"found one field {fields[0].strip()!r}"
            )
        rows.append(
            check_row(fields[0], fields[1], fields[2] if len(fields) > 2 else "", where=where)
        )
    return rows


def read_file(path: str | Path) -> list[SynonymRow]:
    path = Path(path).expanduser()
    text = files.read_text(
        path, limit=files.TABLE_LIMIT, what="the synonym table", error=SynonymError
    )
    return parse_rows(
        text, name=str(path), delimiter="," if path.suffix.lower() == ".csv" else "\t"
    )


def starter_rows() -> list[tuple[str, str, str]]:
    """The bundled starter set as ``(entity, synonym, lang)``."""
    from resources import resource_path

    path = resource_path(*STARTER_FILE)
    return [r.key() for r in parse_rows(path.read_text(encoding="utf-8"), name=str(path))]


# --- the session's table ------------------------------------------------------------------


def list_synonyms(store: SessionStore, *, entity: str | None = None) -> list[SynonymRow]:
    from sqlalchemy import select

    from core.store.models import EntitySynonym

    query = select(EntitySynonym).order_by(
        EntitySynonym.entity, EntitySynonym.synonym, EntitySynonym.lang
    )
    if entity:
        query = query.where(EntitySynonym.entity == entity.strip())
    with store.snapshot() as db:
        return [
            SynonymRow(r.entity, r.synonym, r.lang or "", r.source, r.id) for r in db.scalars(query)
        ]


def synonym_rows(store: SessionStore) -> list[tuple[str, str, str]]:
    """``(entity, synonym, lang)`` of the session's table, for ESA."""
    return [row.key() for row in list_synonyms(store)]


def _insert(
    store: SessionStore,
    rows: Sequence[SynonymRow],
    source: str,
    op: str,
    words: str,
    *,
    by: str = "gui",
) -> int:
    """Add the rows not already there, as one recorded edit; the number added."""
    from core.edits import apply_edit
    from core.edits.synonyms import SynonymEdit

    edit = SynonymEdit(op, [r.key() for r in rows], source=source, words=words)
    entry = apply_edit(store, edit, source=by)
    if entry is None:
        return 0
    return len(entry.after["rows"]) - len(entry.before["rows"])


def add_synonym(
    store: SessionStore, entity: str, synonym: str, lang: str = "", *, source: str = "gui"
) -> bool:
    """Add one row; False when it was there already."""
    row = check_row(entity, synonym, lang)
    words = f"the synonym {row.synonym!r} of {row.entity!r} added"
    return _insert(store, [row], "user", "add", words, by=source) == 1


def remove_synonym(
    store: SessionStore,
    entity: str,
    synonym: str,
    lang: str | None = None,
    *,
    source: str = "gui",
) -> int:
    """Remove the row(s) of ``entity`` and ``synonym`` (every language unless given), as
    one recorded edit; the number removed."""
    from core.edits import apply_edit
    from core.edits.synonyms import SynonymEdit

    key = (entity.strip(), synonym.strip(), (lang or "").strip().lower())
    words = f"the synonym {key[1]!r} of {key[0]!r} removed"
    edit = SynonymEdit("remove", [key], any_lang=lang is None, words=words)
    try:
        entry = apply_edit(store, edit, source=source)
    except UserFacingError:
        raise _no_such_row(entity, synonym, lang) from None
    assert entry is not None  # plan refuses a removal that removes nothing
    return len(entry.before["rows"]) - len(entry.after["rows"])


def _no_such_row(entity: str, synonym: str, lang: str | None) -> SynonymError:
    return SynonymError(
        f"no synonym {synonym.strip()!r} of {entity.strip()!r}"
        + (f" in language {lang!r}" if lang else "")
        + " in this session"
    )


def check_removal(store: SessionStore, entity: str, synonym: str, lang: str | None = None) -> None:
    """Raise before anything is written when the table ESA uses has no such row."""
    wanted = (entity.strip(), synonym.strip())
    if not any(
        (e, s) == wanted and (lang is None or lang.strip().lower() == row_lang)
        for e, s, row_lang in effective_rows(store)
    ):
        raise _no_such_row(entity, synonym, lang)


def import_file(store: SessionStore, path: str | Path, *, source: str = "gui") -> tuple[int, int]:
    """Import a file: (rows read, rows added). All or nothing: a bad row stores none."""
    rows = read_file(path)
    words = f"the synonyms of {Path(path).name} imported"
    return len(rows), _insert(store, rows, "user", "import", words, by=source)


SEEDED_KEY = "synonyms:seeded"


def seed(store: SessionStore, *, source: str = "gui") -> tuple[int, int]:
    """Copy the bundled starter set into the session and mark it seeded (from then on
    ESA uses the session's rows alone, so a starter row removed stays removed): (rows in
    the set, rows added)."""
    rows = [SynonymRow(e, s, lang) for e, s, lang in starter_rows()]
    added = _insert(store, rows, "starter", "seed", "the starter synonyms copied", by=source)
    return len(rows), added


def ensure_seeded(store: SessionStore, *, source: str = "gui") -> int:
    """Copy the starter set into a session that never had it; the number of rows added."""
    if store.get_meta(SEEDED_KEY):
        return 0
    _total, added = seed(store, source=source)
    return added


def effective_rows(store: SessionStore) -> list[tuple[str, str, str]]:
    """The table ESA uses: the session's rows, and the starter set while the session has
    never been seeded (read only: scoring never writes the table)."""
    rows = synonym_rows(store)
    if not store.get_meta(SEEDED_KEY):
        rows = list(dict.fromkeys([*rows, *starter_rows()]))
    return rows


def describe(rows: Iterable[SynonymRow]) -> list[str]:
    return [f"{r.entity}\t{r.synonym}\t{r.lang or '*'}\t{r.source}" for r in rows]
