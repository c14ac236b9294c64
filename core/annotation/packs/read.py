"""Reading a pack from elsewhere: the file is checked before any row is read, an older
one is upgraded as a private copy, every statement runs under a deadline and within a
memory budget, and each rating it holds passes the checks a rating made in the app
passes (:func:`core.annotation.ratings.validate_rating`); one that does not is left out
with the reason."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from core.annotation.packs.manifest import MANIFEST_KEY, MAX_ID, PackError, check_manifest
from core.annotation.ratings import RATING_FIELDS
from core.annotation.types import (
    AnnotationError,
    ItemRef,
    clean_annotator_name,
    item_ref,
)
from core.jobs import JobContext
from core.store import SessionStore

# Longest a statement on a pack may run: a pack of 100,000 ratings reads in a second.
PACK_STATEMENT_S = 60.0
# Memory a pack may take while read: no value longer than PACK_VALUE_BYTES (SQLite's
# length limit, so a planted 1 GB blob is refused before it is copied out), at most
# PACK_READ_BYTES of values and rows in all, and the page cache of every file from
# elsewhere (core.store.bounds.CACHE_KIB). A rating of the app is a few hundred bytes:
# 100,000 of them are about 40 MB. The longest value is the pack's description, which
# lists every item (about 80 bytes each: a pack of the 12,915 texts of the study was over
# 1 MB); 400,000 items with the longest ids are 38 MB.
PACK_VALUE_BYTES = 48_000_000
PACK_READ_BYTES = 256_000_000
_ROW_OVERHEAD = 64  # bytes counted for each row besides its values


class PackRating(NamedTuple):
    """One rating a pack holds, checked as a rating made in the app is."""

    pack_id: int  # its id in the pack
    annotator: str
    item: ItemRef
    values: dict[str, Any]  # the rating's fields (RATING_FIELDS), validated
    created: datetime | None
    changed: datetime | None


class PackContents(NamedTuple):
    """What a merge reads from a pack: its description, its ratings that pass the app's
    checks (in id order), and one line for each rating left out."""

    manifest: dict[str, Any]
    ratings: list[PackRating]
    refused: list[str]


class _NotText(bytes):
    """A TEXT value of the pack that is not UTF-8 (an encoded lone surrogate)."""


def _text(raw: bytes) -> str | bytes:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return _NotText(raw)


@contextmanager
def _bounded_reader(path: Path, ctx: JobContext | None) -> Iterator[sqlite3.Connection]:
    """A read-only connection to ``path`` (a pack checked by inspect_file) under the bounds
    of every file from elsewhere (``core.store.bounds``), the pack's own: every statement
    ends within :data:`PACK_STATEMENT_S`, at a cancel, or at Ctrl+C, and no value is
    longer than :data:`PACK_VALUE_BYTES`."""
    from core.store.bounds import stopped
    from core.store.fileinfo import connect_read_only

    with closing(
        connect_read_only(path, value_bytes=PACK_VALUE_BYTES, seconds=PACK_STATEMENT_S)
    ) as conn:
        if ctx is not None:
            token = ctx.token
            conn.guard.cancelled = lambda: token.cancelled  # type: ignore[union-attr]
        conn.execute("PRAGMA query_only=ON")
        conn.text_factory = _text
        try:
            yield conn
        except sqlite3.DatabaseError as exc:
            why = stopped(exc, conn.guard)  # Ctrl+C and a cancel raise here
            if why is None:
                raise
            raise PackError(f"{path.name}: {why}; it is not a pack TailLens made") from None


@contextmanager
def _readable_pack(path: Path) -> Iterator[Path]:
    """``path`` itself when it is a pack at the current schema revision; an older one is
    copied to a private folder and the copy upgraded (the pack is never changed)."""
    import tempfile

    from core.store import SessionError, SessionTooNewError, inspect_file

    try:
        check = inspect_file(path)
    except SessionError as exc:
        raise PackError(str(exc)) from None
    if not check.is_known:
        raise PackError(
            str(SessionTooNewError(check.path, str(check.revision), SessionStore.head_revision()))
        )
    if check.is_current:
        yield check.path
        return
    from core.store.fileinfo import connect_read_only
    from core.store.placing import copy_database

    with tempfile.TemporaryDirectory(prefix="taillens-pack-") as folder:
        copy = Path(folder) / "pack.taillens"
        try:
            with closing(connect_read_only(check.path)) as source:
                copy_database(source, copy, expected_revision=None)
            SessionStore.open(copy).close()
        except SessionError as exc:
            raise PackError(
                f"{path.name} is from an older TailLens and could not be upgraded "
                f"(a private copy was tried; the pack was not changed): {exc}"
            ) from None
        yield copy


def _fetch_within(cursor: sqlite3.Cursor, path: Path, budget: list[int]) -> list[Any]:
    """Every row of ``cursor`` while the rows read so far hold at most ``budget[0]``
    bytes (:data:`PACK_READ_BYTES` over one pack's reads), else a :class:`PackError`."""
    rows = []
    for row in cursor:
        budget[0] -= _ROW_OVERHEAD + sum(
            len(value) for value in row if isinstance(value, str | bytes)
        )
        if budget[0] < 0:
            raise PackError(
                f"{path.name}: it holds more than {PACK_READ_BYTES // 1_000_000} MB of "
                "ratings; it is not a pack TailLens made"
            )
        rows.append(row)
    return rows


def read_pack(path: Path, ctx: JobContext | None = None) -> PackContents:
    """A pack's description, its checked ratings and the ratings left out, each with
    why. Time and memory are bounded (:func:`_bounded_reader`, :func:`_fetch_within`)."""
    budget = [PACK_READ_BYTES]
    with _readable_pack(path) as readable, _bounded_reader(readable, ctx) as conn:
        meta = _manifest_rows(conn, path, budget)
        if not meta:
            raise PackError(
                f"{path.name} is a session but not an annotation pack; packs are made with "
                "'taillens annotations pack' or File ▸ Annotation pack…"
            )
        manifest = check_manifest(meta[0][0], path)
        rows, refused = _read_ratings(conn, path, budget)
    return PackContents(manifest, rows, refused)


def merge_refusals(path: Path, ctx: JobContext | None = None) -> list[str]:
    """What a merge of the session at ``path`` as a pack would refuse, one line each:
    its pack description, where it has one, and every rating the app's validators refuse
    (read as :func:`read_pack` reads a pack, within the same bounds; a file past them is
    one line too). ``taillens session check`` lists them."""
    budget = [PACK_READ_BYTES]
    found: list[str] = []
    try:
        with _readable_pack(path) as readable, _bounded_reader(readable, ctx) as conn:
            meta = _manifest_rows(conn, path, budget)
            if meta:
                try:
                    check_manifest(meta[0][0], path)
                except PackError as exc:
                    found.append(str(exc))
            found += _read_ratings(conn, path, budget)[1]
    except PackError as exc:
        found.append(str(exc))
    return found


def _manifest_rows(conn: sqlite3.Connection, path: Path, budget: list[int]) -> list[Any]:
    return _fetch_within(
        conn.execute("SELECT value FROM session_meta WHERE key = ?", (MANIFEST_KEY,)),
        path,
        budget,
    )


def _read_ratings(
    conn: sqlite3.Connection, path: Path, budget: list[int]
) -> tuple[list[PackRating], list[str]]:
    """The ratings of a pack (not golden answers) that pass the app's validators, and
    one line for each that does not."""
    names = dict(_fetch_within(conn.execute("SELECT id, name FROM annotators"), path, budget))
    found = _fetch_within(
        conn.execute(
            "SELECT id, annotator_id, verbalisation_id, reference_id, "
            + ", ".join(RATING_FIELDS)
            + ", created_at, updated_at FROM annotations "
            "WHERE is_golden IS NOT 1 ORDER BY id"
        ),
        path,
        budget,
    )
    rows: list[PackRating] = []
    refused: list[str] = []
    for pack_id, annotator_id, verb_id, ref_id, *values, created, changed in found:
        try:
            rows.append(
                _checked_row(
                    pack_id, names.get(annotator_id), verb_id, ref_id, values, created, changed
                )
            )
        except AnnotationError as exc:
            refused.append(f"rating {ascii(pack_id)[:24]}: {exc}")
    return rows, refused


def _checked_row(
    pack_id: Any,
    name: Any,
    verb_id: Any,
    ref_id: Any,
    values: list[Any],
    created: Any,
    changed: Any,
) -> PackRating:
    from core.annotation.ratings import validate_rating
    from core.annotation.types import Rating
    from core.io.bounded import BoundedTextError, loads_json

    def an_id(value: Any) -> bool:
        return isinstance(value, int) and 1 <= value <= MAX_ID

    if not an_id(pack_id):
        raise AnnotationError("its id is not a number")
    if name is None:
        raise AnnotationError("it names no annotator of the pack")
    who = clean_annotator_name(name)
    if an_id(verb_id) == an_id(ref_id) or (verb_id is not None and ref_id is not None):
        raise AnnotationError("it rates neither one verbalisation nor one reference")
    ref = item_ref(verb_id, ref_id)
    given = dict(zip(RATING_FIELDS, values, strict=True))
    for key, value in given.items():
        if isinstance(value, bytes):
            raise AnnotationError(f"its {key} is not text")
    for key in ("checks", "error_taxonomy"):
        if given[key] is not None:
            try:
                given[key] = loads_json(given[key], name=f"its {key}")
            except BoundedTextError as exc:
                raise AnnotationError(str(exc)) from None
            if given[key] is not None and not isinstance(given[key], dict):
                raise AnnotationError(f"its {key} is not a JSON object")
    for key in ("fluency", "adequacy"):
        if isinstance(given[key], float) and given[key].is_integer():
            given[key] = int(given[key])
    try:
        checked = validate_rating(Rating(**given))
    except (TypeError, ValueError) as exc:
        raise AnnotationError(f"it cannot be read ({exc})") from None
    return PackRating(
        pack_id, who, ref, checked, _stamp(created, "created"), _stamp(changed, "changed")
    )


def _stamp(value: Any, what: str) -> datetime | None:
    """A time stored in a pack, as SQLAlchemy writes them, or AnnotationError."""
    if value is None:
        return None
    if isinstance(value, str) and len(value) <= 40:
        try:
            stamp = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            return stamp if stamp.tzinfo is None else stamp.astimezone(UTC).replace(tzinfo=None)
    raise AnnotationError(f"its {what} time {ascii(value)[:40]} is not a date and time")
