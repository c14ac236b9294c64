"""Offline annotation packs for a team (METHODS §13).

A pack is a small session file holding only what one annotator needs: the texts to rate,
their units and references, the guidelines, golden items mixed in; no scores, no
annotations, and in blind mode no model names, tiers or categories. The annotator opens
it in TailLens on their own machine and rates offline; :func:`merge_packs` brings the
ratings and corrections back.

Identity and checks:

* the source session gets a uid (session_meta ``session:uid``) the first time a pack is
  made from it; each pack carries it, its own uid and the SHA-256 of every item's text;
* the source records each pack (``annotation_packs``): its items and which were golden, so
  the progress view knows what was handed out and a merge knows the pack;
* merging refuses a pack made from another session, a pack this session has no record of,
  and (unless asked to skip them) items whose text changed since the pack was made;
* merging is idempotent: every merged rating records its origin (``annotation_origins``:
  pack, annotator, the rating's id and last change in the pack, merge time); merging the
  same pack again adds nothing, and a rating changed in the pack since the last merge
  updates the one it made. A rating the session already holds from elsewhere that differs
  from the pack's is a conflict: it is reported and kept, never overwritten.

Rows are copied with their ids, so an item is the same id in the pack and the session.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import sqlite3
import statistics
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import delete, insert, select, update

from core.annotation.golden import golden_accuracy, golden_answers
from core.annotation.queue import rateable_texts
from core.annotation.ratings import RATING_FIELDS
from core.annotation.types import (
    REFERENCE,
    VERBALISATION,
    AnnotationError,
    ItemRef,
    clean_annotator_name,
    item_ref,
    natural_key,
)
from core.edits import canonical, collect, record_edit
from core.edits.history import current_user
from core.edits.packs import PackMergeEdit
from core.io.atomic import temporary_name
from core.io.output_guard import (
    check_output_target,
    record_written,
    sweep_stale_temporaries,
)
from core.jobs import Job, JobContext
from core.store import SessionStore
from core.store.batching import in_chunks
from core.store.engine import file_uri
from core.store.models import (
    Annotation,
    AnnotationOrigin,
    AnnotationPack,
    Annotator,
    UnitReference,
    Verbalisation,
)
from core.store.placing import make_self_contained

PACK_FORMAT = 1
SESSION_UID_KEY = "session:uid"
MANIFEST_KEY = "annotation:pack"
GUIDELINES_KEY = "annotation:guidelines"
TARGETS = ("verbalisations", "references")
# Gaps between two ratings longer than this are breaks, not time spent on an item.
DEFAULT_BREAK_S = 900.0
_KIND = {VERBALISATION: "v", REFERENCE: "r"}
_REF_KIND = {"v": VERBALISATION, "r": REFERENCE}
_PACK_KIND = {kind: letter for letter, kind in _REF_KIND.items()}


class PackError(AnnotationError):
    """A pack that cannot be made or merged, with the reason."""


def text_hash(text: str | None) -> str:
    return hashlib.sha256((text or "").encode("utf-8")).hexdigest()


def parse_ids(spec: str | None) -> tuple[int, ...] | None:
    """``"1-5,9"`` → (1, 2, 3, 4, 5, 9); None or ``"all"`` → None (no restriction)."""
    if spec is None or spec.strip().lower() in ("", "all"):
        return None
    ids: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        match = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
        if match is None:
            raise PackError(f"Not an id or a range of ids: {part!r} (write e.g. 1-50,60,72).")
        first = int(match[1])
        last = int(match[2]) if match[2] else first
        if last < first:
            raise PackError(f"The range {part} runs backwards; write {last}-{first}.")
        if last - first > 10_000_000:
            raise PackError(f"The range {part} is too large.")
        ids.extend(range(first, last + 1))
    return tuple(dict.fromkeys(ids))


def session_uid(store: SessionStore, *, create: bool = False) -> str | None:
    """The session's identity stamped on its packs (made on first use with ``create``)."""
    uid = store.get_meta(SESSION_UID_KEY)
    if uid or not create:
        return uid or None
    uid = uuid.uuid4().hex
    store.set_meta(SESSION_UID_KEY, uid)
    return uid


# -- making a pack ---------------------------------------------------------------------


@dataclass(frozen=True)
class PackRequest:
    """What goes into one annotator's pack. ``None`` selections mean every one."""

    annotator: str
    out: Path
    units: tuple[int, ...] | None = None
    runs: tuple[int, ...] | None = None
    langs: tuple[str, ...] | None = None
    target: str = "verbalisations"
    golden: int = 0
    blind: bool = False
    guidelines: str | None = None
    seed: int = 0
    limit: int | None = None
    include_rated: bool = False  # items the annotator already rated in the session
    force: bool = False


@dataclass(frozen=True)
class PackSummary:
    path: Path
    pack_uid: str
    annotator: str
    items: int
    golden: int
    units: int
    blind: bool
    notes: tuple[str, ...] = ()


def _pick_items(
    store: SessionStore, request: PackRequest
) -> tuple[list[dict[str, Any]], set[ItemRef], list[str]]:
    notes: list[str] = []
    if request.target not in TARGETS:
        raise PackError(f"A pack holds 'verbalisations' or 'references', not {request.target!r}.")
    with store.snapshot() as db:
        texts = rateable_texts(db, request.target)
        rated = {
            item_ref(v, r)
            for v, r in db.execute(
                select(Annotation.verbalisation_id, Annotation.reference_id)
                .join(Annotator, Annotator.id == Annotation.annotator_id)
                .where(Annotator.name == request.annotator, Annotation.is_golden.is_(False))
            )
        }
    units = set(request.units) if request.units is not None else None
    runs = set(request.runs) if request.runs is not None else None
    langs = set(request.langs) if request.langs is not None else None

    def wanted(t: dict[str, Any]) -> bool:
        return (
            (units is None or t["unit"].id in units)
            and (runs is None or t["run_id"] in runs)
            and (langs is None or t["lang"] in langs)
            and (request.include_rated or t["ref"] not in rated)
        )

    chosen = [t for t in texts if wanted(t)]
    if request.limit is not None and len(chosen) > request.limit:
        chosen = random.Random(request.seed).sample(chosen, request.limit)
        chosen.sort(key=lambda t: (t["unit"].id, t["lang"], t["ref"].id))
    golden: set[ItemRef] = set()
    if request.golden > 0:
        answers = set(golden_answers(store))
        by_ref = {t["ref"]: t for t in texts}
        pool = sorted(
            (ref for ref in answers if ref in by_ref and ref not in rated), key=lambda r: r.id
        )
        if not pool:
            notes.append(
                "no golden items: set known answers in Annotate (Golden…) first; the pack has none"
            )
        else:
            if len(pool) < request.golden:
                notes.append(f"only {len(pool)} golden items with known answers; all are in")
            golden = set(
                random.Random(request.seed + 1).sample(pool, min(request.golden, len(pool)))
            )
            have = {t["ref"] for t in chosen}
            chosen += [by_ref[ref] for ref in sorted(golden - have, key=lambda r: r.id)]
    if not chosen:
        raise PackError(
            f"No texts to pack for {request.annotator}: the selection holds no "
            f"{request.target} they have not rated yet"
            + ("" if request.include_rated else " (include rated ones to pack them again)")
            + "."
        )
    return chosen, golden, notes


def _columns(conn: sqlite3.Connection, table: str) -> str:
    return ", ".join(f'"{row[1]}"' for row in conn.execute(f'PRAGMA main.table_info("{table}")'))


def _copy(conn: sqlite3.Connection, table: str, where: str) -> None:
    cols = _columns(conn, table)
    conn.execute(
        f'INSERT INTO main."{table}" ({cols}) SELECT {cols} FROM src."{table}" WHERE {where}'
    )


def _fill_pack(
    pack_path: Path,
    source_path: Path,
    items: Sequence[dict[str, Any]],
    request: PackRequest,
    manifest: dict[str, Any],
    ctx: JobContext | None = None,
) -> None:
    from core.store.bounds import CACHE_KIB, stopped
    from core.store.fileinfo import connect_bounded

    # The session attached may come from elsewhere: the bounds of its own connections
    # (length limit, Ctrl+C, a cancel) hold here too, and its page cache is ours, not
    # the one its header suggests.
    with closing(connect_bounded(pack_path, "mode=rw")) as conn:
        guard = conn.guard
        assert guard is not None  # connect_bounded bounds it
        if ctx is not None:
            token = ctx.token
            guard.cancelled = lambda: token.cancelled
        conn.execute("ATTACH DATABASE ? AS src", (file_uri(source_path, "mode=ro"),))
        conn.execute(f"PRAGMA src.cache_size=-{CACHE_KIB}")
        try:
            _copy_items(conn, items, request, manifest)
        except sqlite3.DatabaseError as exc:
            why = stopped(exc, guard)  # Ctrl+C and a cancel raise here
            if why is None:
                raise
            raise PackError(f"{source_path.name}: {why}; no pack was written") from None


def _copy_items(
    conn: sqlite3.Connection,
    items: Sequence[dict[str, Any]],
    request: PackRequest,
    manifest: dict[str, Any],
) -> None:
    verbs = [t["ref"].id for t in items if t["ref"].kind == VERBALISATION]
    refs = [t["ref"].id for t in items if t["ref"].kind == REFERENCE]
    unit_ids = sorted({t["unit"].id for t in items})
    conn.execute("BEGIN")
    for name, ids in (("pack_units", unit_ids), ("pack_verbs", verbs), ("pack_refs", refs)):
        conn.execute(f"CREATE TEMP TABLE {name} (id INTEGER PRIMARY KEY)")
        conn.executemany(f"INSERT INTO {name} VALUES (?)", [(i,) for i in ids])
    if not request.blind:
        _copy(
            conn,
            "categories",
            "id IN (SELECT category_id FROM src.data_units WHERE id IN temp.pack_units)",
        )
    _copy(conn, "data_units", "id IN temp.pack_units")
    _copy(conn, "unit_triples", "unit_id IN temp.pack_units")
    _copy(conn, "unit_references", "unit_id IN temp.pack_units")
    _copy(
        conn,
        "model_runs",
        "id IN (SELECT run_id FROM src.verbalisations WHERE id IN temp.pack_verbs)",
    )
    _copy(conn, "verbalisations", "id IN temp.pack_verbs")
    # Links to rows a pack does not carry are cut; what only a scorer needs goes.
    conn.execute("UPDATE unit_triples SET claim_id = NULL")
    conn.execute("UPDATE verbalisations SET token_logprobs = NULL")
    if request.blind:
        conn.execute(
            "UPDATE data_units SET tier = NULL, sub_tier = NULL, category_id = NULL, "
            "attributes = NULL, source = NULL, notes = NULL, uid = 'unit-' || id"
        )
        run_ids = [r for (r,) in conn.execute("SELECT id FROM model_runs ORDER BY id")]
        random.Random(request.seed).shuffle(run_ids)
        for n, run_id in enumerate(run_ids):
            conn.execute(
                "UPDATE model_runs SET model_id = ?, system_name = NULL, "
                "model_fingerprint = NULL, parameters = NULL, prompt_templates = NULL, "
                "software = NULL WHERE id = ?",
                (f"System {_letters(n)}", run_id),
            )
        conn.execute("UPDATE verbalisations SET prompt = NULL")
    conn.execute("INSERT INTO annotators (name) VALUES (?)", (request.annotator,))
    meta = {MANIFEST_KEY: json.dumps(manifest), GUIDELINES_KEY: request.guidelines or ""}
    conn.executemany(
        "INSERT OR REPLACE INTO session_meta (key, value) VALUES (?, ?)", list(meta.items())
    )
    conn.execute("COMMIT")
    conn.execute("DETACH DATABASE src")


def _letters(n: int) -> str:
    """0 → A, 25 → Z, 26 → AA …"""
    out = ""
    n += 1
    while n:
        n, rest = divmod(n - 1, 26)
        out = chr(ord("A") + rest) + out
    return out


def make_pack(
    store: SessionStore, request: PackRequest, ctx: JobContext | None = None
) -> PackSummary:
    """Write ``request.out``: a pack for ``request.annotator`` (see the module docstring).

    The pack is built under a hidden temporary name beside the target and moved into place
    only when whole; the session records the pack only once the file is in place."""
    name = request.annotator.strip()
    if not name:
        raise PackError("A pack is for a named annotator: give their name.")
    request = _with(request, annotator=name)
    out = check_output_target(request.out, force=request.force)
    sweep_stale_temporaries(out)
    items, golden, notes = _pick_items(store, request)
    if ctx is not None:
        ctx.progress(0, 3, f"packing {len(items)} texts for {name}")
        ctx.check_cancelled()
    source_uid = session_uid(store, create=True)
    pack_uid = uuid.uuid4().hex
    hashes = [(_KIND[t["ref"].kind], t["ref"].id, text_hash(t["text"])) for t in items]
    manifest = {
        "format": PACK_FORMAT,
        "pack_uid": pack_uid,
        "source_session": source_uid,
        "source_name": store.path.name,
        "annotator": name,
        "target": request.target,
        "blind": request.blind,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "items": [list(h) for h in hashes],
    }
    building = temporary_name(out)
    try:
        SessionStore.create(building).close()
        _fill_pack(building, store.path, items, request, manifest, ctx)
        if ctx is not None:
            ctx.progress(1, 3, "checking the pack")
            ctx.check_cancelled()
        with SessionStore.open_read_only(building) as check:
            held = check.get_meta(MANIFEST_KEY)
        if held is None:
            raise PackError(f"The pack for {name} could not be written whole; nothing was kept.")
        make_self_contained(building)
        check_output_target(out, force=request.force)
        with store.unit_of_work() as db:
            db.add(
                AnnotationPack(
                    pack_uid=pack_uid,
                    annotator=name,
                    file_name=out.name,
                    target=request.target,
                    blind=request.blind,
                    items={
                        "items": [
                            [kind, item_id, digest, ItemRef(_REF_KIND[kind], item_id) in golden]
                            for kind, item_id, digest in hashes
                        ]
                    },
                )
            )
        try:
            os.replace(building, out)
            record_written(out)
        except OSError:
            with store.unit_of_work() as db:
                db.execute(delete(AnnotationPack).where(AnnotationPack.pack_uid == pack_uid))
            raise
    finally:
        for leftover in (
            building,
            *(building.with_name(building.name + s) for s in ("-wal", "-shm", "-journal")),
        ):
            with suppress(OSError):
                leftover.unlink()
    if ctx is not None:
        ctx.progress(3, 3, f"wrote {out.name}")
    return PackSummary(
        out,
        pack_uid,
        name,
        len(items),
        len(golden),
        len({t["unit"].id for t in items}),
        request.blind,
        tuple(notes),
    )


def _with(request: PackRequest, **changes: Any) -> PackRequest:
    from dataclasses import replace

    return replace(request, **changes)


def pack_job(store: SessionStore, request: PackRequest) -> Job[PackSummary]:
    from core.changes import Topic

    return Job(
        title=f"Annotation pack for {request.annotator}",
        run=lambda ctx: make_pack(store, request, ctx),
        kind="annotation-pack",
        params={"annotator": request.annotator, "out": str(request.out)},
        writes=frozenset({Topic.ANNOTATIONS}),
    )


# -- reading a pack ----------------------------------------------------------------------


@dataclass(frozen=True)
class PackInfo:
    """What an open session says about itself as a pack (None when it is not one)."""

    pack_uid: str
    annotator: str
    source_name: str
    blind: bool
    items: int
    guidelines: str


def pack_info(store: SessionStore) -> PackInfo | None:
    manifest = _manifest_of(store, store.path)
    if manifest is None:
        return None
    return PackInfo(
        manifest["pack_uid"],
        manifest["annotator"],
        manifest.get("source_name", ""),
        bool(manifest.get("blind")),
        len(manifest["items"]),
        store.get_meta(GUIDELINES_KEY) or "",
    )


def _manifest_of(store: SessionStore, path: Path) -> dict[str, Any] | None:
    text = store.get_meta(MANIFEST_KEY)
    return None if text is None else check_manifest(text, path)


_HEX = re.compile(r"[0-9a-f]{1,64}")
_DIGEST = re.compile(r"[0-9a-f]{64}")
_MAX_ID = (1 << 63) - 1


def check_manifest(text: object, path: Path) -> dict[str, Any]:
    """A pack's description (session_meta ``annotation:pack``), every field checked, or a
    :class:`PackError` naming the pack and the field."""
    from core.io.bounded import BoundedTextError, loads_json

    def damaged(why: str) -> PackError:
        return PackError(f"{path.name} is damaged: its pack description {why}.")

    if not isinstance(text, str):
        raise damaged("is not text")
    try:
        manifest = loads_json(text, name=path.name, what="the pack description of")
    except BoundedTextError as exc:
        raise damaged(f"cannot be read ({exc})") from None
    if not isinstance(manifest, dict):
        raise damaged("is not a JSON object")
    version = manifest.get("format", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise damaged(f"has format {ascii(version)[:40]}, not a version number")
    if version > PACK_FORMAT:
        raise PackError(f"{path.name} was made by a newer TailLens; update TailLens to merge it.")
    for key in ("pack_uid", "source_session"):
        value = manifest.get(key)
        if not isinstance(value, str) or _HEX.fullmatch(value) is None:
            raise damaged(f"has {key} {ascii(value)[:40]}, not an id")
    try:
        manifest["annotator"] = clean_annotator_name(manifest.get("annotator"))
    except AnnotationError as exc:
        raise damaged(f"names no annotator ({exc})") from None
    for key, kind in (("source_name", str), ("target", str), ("blind", bool)):
        if key in manifest and not isinstance(manifest[key], kind):
            raise damaged(f"has {key} {ascii(manifest[key])[:40]}")
    items = manifest.get("items")
    if not isinstance(items, list):
        raise damaged("lists no items")
    for item in items:
        if not (
            isinstance(item, list)
            and len(item) == 3
            and item[0] in _REF_KIND
            and isinstance(item[1], int)
            and not isinstance(item[1], bool)
            and 1 <= item[1] <= _MAX_ID
            and isinstance(item[2], str)
            and _DIGEST.fullmatch(item[2]) is not None
        ):
            raise damaged(f"lists an item {ascii(item)[:60]} that is not [kind, id, digest]")
    return manifest


# -- reading a pack from elsewhere ---------------------------------------------------------

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


def read_pack(
    path: Path, ctx: JobContext | None = None
) -> tuple[dict[str, Any], list[tuple[Any, ...]], list[str]]:
    """A pack's manifest, its ratings as merge uses them (pack id, annotator, item,
    checked values, created, updated), and the ratings left out, each with why. Time
    and memory are bounded (:func:`_bounded_reader`, :func:`_fetch_within`)."""
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
    return manifest, rows, refused


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
) -> tuple[list[tuple[Any, ...]], list[str]]:
    """The ratings of a pack (not golden answers) that pass the app's validators, as
    merge uses them, and one line for each that does not."""
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
    rows: list[tuple[Any, ...]] = []
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
) -> tuple[Any, ...]:
    from core.annotation.ratings import validate_rating
    from core.annotation.types import Rating
    from core.io.bounded import BoundedTextError, loads_json

    def an_id(value: Any) -> bool:
        return isinstance(value, int) and 1 <= value <= _MAX_ID

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
    return (pack_id, who, ref, checked, _stamp(created, "created"), _stamp(changed, "changed"))


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


# -- merging -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Conflict:
    item: ItemRef
    annotator: str
    kept: dict[str, Any]
    pack: dict[str, Any]

    def describe(self) -> str:
        def short(v: dict[str, Any]) -> str:
            return (
                ", ".join(f"{k} {v[k]}" for k in ("fluency", "adequacy") if v.get(k) is not None)
                or "no scores"
            )

        return (
            f"{self.item.kind} {self.item.id} by {self.annotator}: the session has "
            f"{short(self.kept)}, the pack {short(self.pack)} (kept the session's)"
        )


@dataclass(frozen=True)
class MergeReport:
    path: Path
    pack_uid: str
    annotator: str
    added: int
    updated: int
    unchanged: int
    conflicts: tuple[Conflict, ...] = ()
    changed_texts: tuple[ItemRef, ...] = ()  # skipped: the text changed since packing
    outside: int = 0  # ratings of texts that were not handed out in the pack
    refused: tuple[str, ...] = ()  # ratings left out: what the app would not have saved

    def describe(self) -> str:
        parts = [f"{self.added} added", f"{self.updated} updated", f"{self.unchanged} already in"]
        if self.conflicts:
            parts.append(f"{len(self.conflicts)} in conflict (the session's kept)")
        if self.changed_texts:
            parts.append(f"{len(self.changed_texts)} skipped (text changed since packing)")
        if self.outside:
            parts.append(f"{self.outside} skipped (not in the pack)")
        if self.refused:
            parts.append(f"{len(self.refused)} refused (not a rating the app would save)")
        line = f"{self.path.name} ({self.annotator}): " + ", ".join(parts)
        # Merging a pack again changes nothing: fine, and said in words.
        return line if self.added or self.updated else line + ": nothing new"


def _current_hashes(db: Any, refs: Iterable[ItemRef]) -> dict[ItemRef, str | None]:
    verbs = [r.id for r in refs if r.kind == VERBALISATION]
    refs_ = [r.id for r in refs if r.kind == REFERENCE]
    out: dict[ItemRef, str | None] = {}
    for chunk in in_chunks(verbs):
        for vid, text in db.execute(
            select(Verbalisation.id, Verbalisation.text).where(Verbalisation.id.in_(chunk))
        ):
            out[ItemRef(VERBALISATION, vid)] = text_hash(text)
    for chunk in in_chunks(refs_):
        for rid, text in db.execute(
            select(UnitReference.id, UnitReference.text).where(UnitReference.id.in_(chunk))
        ):
            out[ItemRef(REFERENCE, rid)] = text_hash(text)
    return out


def _iso(value: datetime | None) -> str:
    if value is None:
        return ""
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()


def merge_pack(
    store: SessionStore,
    path: Path | str,
    *,
    skip_changed: bool = False,
    ctx: JobContext | None = None,
    source: str = "gui",
) -> MergeReport:
    """Bring one pack's ratings and corrections into ``store`` (one transaction), as one
    recorded edit from ``source`` (``core.edits.packs.PackMergeEdit``: one undo takes the
    whole merge back).

    The pack is a file from elsewhere: it is checked before any row is read (no view,
    trigger or virtual table; the tables and columns of its schema revision), read-only
    with ``trusted_schema`` off and a deadline on every statement, an older one upgraded
    as a private copy (never in place), and each rating it holds passes the checks a
    rating made in the app passes (:func:`core.annotation.ratings.validate_rating`): one
    that does not is left out and said."""
    from core.formats.common import check_readable
    from core.store.placing import file_identity

    path = check_readable(Path(path).expanduser(), "an annotation pack (.taillens)")
    if file_identity(path) == file_identity(store.path):
        raise PackError(f"{path.name} is this session itself, not a pack made from it.")
    manifest, rows, refused = read_pack(path, ctx)
    pack_uid = manifest["pack_uid"]
    mine = session_uid(store)
    if mine is None or manifest["source_session"] != mine:
        raise PackError(
            f"{path.name} was made from another session "
            f"({manifest.get('source_name') or 'unknown'}), not from {store.path.name}; "
            "merge it into the session it came from."
        )
    hashes = {ItemRef(_REF_KIND[k], i): h for k, i, h in manifest["items"]}
    with store.unit_of_work() as db:
        record = db.scalar(select(AnnotationPack).where(AnnotationPack.pack_uid == pack_uid))
        if record is None:
            raise PackError(
                f"{store.path.name} has no record of the pack {path.name} (it was made from a "
                "copy of this session); merge it into the session it was made from."
            )
        current = _current_hashes(db, list(hashes))
        changed = frozenset(r for r, h in hashes.items() if current.get(r) != h)
        in_pack = {row[2] for row in rows}
        rated_changed = sorted(changed & in_pack, key=lambda r: (r.kind, r.id))
        if rated_changed and not skip_changed:
            shown = ", ".join(f"{r.kind} {r.id}" for r in rated_changed[:5])
            more = f" and {len(rated_changed) - 5} more" if len(rated_changed) > 5 else ""
            raise PackError(
                f"{path.name}: {len(rated_changed)} rated texts changed (or were deleted) "
                f"since the pack was made ({shown}{more}); nothing was merged. "
                "Merge with --skip-changed to bring in the rest."
            )
        # Everything this pack could touch is read once, and written in bulk: a merge of
        # 13,000 ratings is a few statements, not 13,000 round trips.
        annotators = dict(db.execute(select(Annotator.name, Annotator.id)).all())
        for who in sorted({row[1] for row in rows} - set(annotators)):
            added_annotator = Annotator(name=who)
            db.add(added_annotator)
            db.flush()
            annotators[who] = added_annotator.id
        wanted = {annotators[row[1]] for row in rows}
        existing: dict[tuple[int, ItemRef], Any] = {}
        for found in db.execute(
            select(
                Annotation.id,
                Annotation.annotator_id,
                Annotation.verbalisation_id,
                Annotation.reference_id,
                *(getattr(Annotation, f) for f in RATING_FIELDS),
            )
            .where(Annotation.annotator_id.in_(wanted), Annotation.is_golden.is_(False))
            .order_by(Annotation.id)
        ):
            key = (
                found.annotator_id,
                item_ref(found.verbalisation_id, found.reference_id),
            )
            existing.setdefault(key, found)  # the first, as save_rating updates it
        origins = dict(
            db.execute(
                select(AnnotationOrigin.annotation_id, AnnotationOrigin.pack_updated_at).where(
                    AnnotationOrigin.pack_uid == pack_uid
                )
            ).all()
        )
        added = updated = unchanged = outside = 0
        conflicts: list[Conflict] = []
        skipped: list[ItemRef] = []
        now = datetime.now(UTC)
        inserts: list[dict[str, Any]] = []
        inserted_from: list[tuple[int, str, str]] = []  # pack id, annotator, stamp
        row_updates: list[dict[str, Any]] = []
        origin_updates: list[dict[str, Any]] = []
        seen: set[tuple[int, ItemRef]] = set()
        by_row: dict[int, tuple[int, str, int]] = {}  # an updated rating's edit key
        for pack_id, who, ref, values, created, changed_at in rows:
            if ref not in hashes:
                outside += 1
                continue
            if ref in changed:
                skipped.append(ref)
                continue
            annotator_id = annotators[who]
            if (annotator_id, ref) in seen:
                outside += 1  # a second rating of one text by one person: not the app's
                continue
            seen.add((annotator_id, ref))
            held_row = existing.get((annotator_id, ref))
            stamp = _iso(changed_at)
            if held_row is None:
                inserts.append(
                    {
                        "annotator_id": annotator_id,
                        "is_golden": False,
                        "verbalisation_id": ref.id if ref.kind == VERBALISATION else None,
                        "reference_id": ref.id if ref.kind == REFERENCE else None,
                        "created_at": created,
                        "updated_at": changed_at,
                        **values,
                    }
                )
                inserted_from.append((pack_id, who, stamp))
                continue
            held = {f: getattr(held_row, f) for f in RATING_FIELDS}
            merged_stamp = origins.get(held_row.id)
            if held == values:
                unchanged += 1
            elif merged_stamp is not None and stamp > merged_stamp:
                # changed in the pack since the last merge of it: the rating it made follows
                by_row[held_row.id] = (annotator_id, _PACK_KIND[ref.kind], ref.id)
                row_updates.append({"id": held_row.id, "updated_at": changed_at, **values})
                origin_updates.append(
                    {"annotation_id": held_row.id, "pack_updated_at": stamp, "merged_at": now}
                )
                updated += 1
            else:
                conflicts.append(Conflict(ref, who, held, values))
        # The ratings the merge adds or changes, read before it writes them: one
        # recorded edit, so one undo takes the whole merge back.
        touched = [
            (int(item["annotator_id"]), _PACK_KIND[ref_kind], int(item_id))
            for item in inserts
            for ref_kind, item_id in (
                (VERBALISATION, item["verbalisation_id"])
                if item["verbalisation_id"] is not None
                else (REFERENCE, item["reference_id"]),
            )
        ] + [by_row[update_["id"]] for update_ in row_updates]
        edit = (
            PackMergeEdit(pack_uid, path.name, manifest["annotator"], touched) if touched else None
        )
        before = canonical(edit.read(db)) if edit is not None else None
        if inserts:
            new_ids = db.scalars(
                insert(Annotation).returning(Annotation.id, sort_by_parameter_order=True),
                inserts,
            ).all()
            db.execute(
                insert(AnnotationOrigin),
                [
                    {
                        "annotation_id": annotation_id,
                        "pack_uid": pack_uid,
                        "pack_file": path.name,
                        "annotator": who,
                        "pack_annotation_id": pack_id,
                        "pack_updated_at": stamp,
                        "merged_at": now,
                    }
                    for annotation_id, (pack_id, who, stamp) in zip(
                        new_ids, inserted_from, strict=True
                    )
                ],
            )
            added = len(new_ids)
        if row_updates:
            db.execute(update(Annotation), row_updates)
            db.execute(update(AnnotationOrigin), origin_updates)
        entry = None
        if edit is not None:
            after = canonical(edit.read(db))
            if after != before:
                entry = record_edit(db, edit, before, after, source=source, who=current_user())
    collect(entry)  # committed: a window's undo stack may offer its undo
    return MergeReport(
        path,
        pack_uid,
        manifest["annotator"],
        added,
        updated,
        unchanged,
        tuple(conflicts),
        tuple(skipped),
        outside,
        tuple(refused),
    )


def merge_packs(
    store: SessionStore,
    paths: Sequence[Path | str],
    *,
    skip_changed: bool = False,
    ctx: JobContext | None = None,
    source: str = "gui",
) -> list[MergeReport]:
    """Merge each pack in turn; a pack that is refused stops nothing already merged (each
    pack is its own transaction and its own recorded edit) and its error names it."""
    reports = []
    for n, path in enumerate(paths):
        if ctx is not None:
            ctx.progress(n, len(paths), f"merging {Path(path).name}")
            ctx.check_cancelled()
        reports.append(merge_pack(store, path, skip_changed=skip_changed, ctx=ctx, source=source))
    if ctx is not None:
        ctx.progress(len(paths), len(paths), "merged")
    return reports


def merge_job(
    store: SessionStore,
    paths: Sequence[Path],
    *,
    skip_changed: bool = False,
    source: str = "gui",
) -> Job[list[MergeReport]]:
    from core.changes import Topic

    return Job(
        title=f"Merge {len(paths)} annotation pack{'s' if len(paths) != 1 else ''}",
        run=lambda ctx: merge_packs(
            store, paths, skip_changed=skip_changed, ctx=ctx, source=source
        ),
        kind="annotation-merge",
        params={"packs": [str(p) for p in paths]},
        writes=frozenset({Topic.ANNOTATIONS}),
    )


# -- progress ----------------------------------------------------------------------------


@dataclass(frozen=True)
class AnnotatorProgress:
    """One annotator's work: items handed out in packs, rated, remaining, golden accuracy
    and the median time per rating (gaps over ``break_s`` are breaks and do not count)."""

    annotator: str
    packs: int
    assigned: int
    done: int
    ratings: int
    golden_items: int
    golden_adequacy: float | None
    golden_fluency: float | None
    seconds_per_item: float | None

    @property
    def remaining(self) -> int:
        return max(0, self.assigned - self.done)


@dataclass(frozen=True)
class TeamProgress:
    annotators: list[AnnotatorProgress] = field(default_factory=list)
    alpha_fluency: float | None = None
    alpha_adequacy: float | None = None
    rated_items: int = 0


def team_progress(
    store: SessionStore,
    *,
    break_s: float = DEFAULT_BREAK_S,
    agreement: Callable[[SessionStore], tuple[float | None, float | None, int]] | None = None,
) -> TeamProgress:
    with store.snapshot() as db:
        packs = list(db.execute(select(AnnotationPack.annotator, AnnotationPack.items)))
        ratings = list(
            db.execute(
                select(
                    Annotator.name,
                    Annotation.verbalisation_id,
                    Annotation.reference_id,
                    Annotation.created_at,
                )
                .join(Annotator, Annotator.id == Annotation.annotator_id)
                .where(Annotation.is_golden.is_(False))
            )
        )
    assigned: dict[str, set[ItemRef]] = defaultdict(set)
    pack_count: dict[str, int] = defaultdict(int)
    for who, held in packs:
        pack_count[who] += 1
        for kind, item_id, *_ in (held or {}).get("items", []):
            assigned[who].add(ItemRef(_REF_KIND[kind], item_id))
    rated: dict[str, set[ItemRef]] = defaultdict(set)
    times: dict[str, list[datetime]] = defaultdict(list)
    for name, v, r, created in ratings:
        rated[name].add(item_ref(v, r))
        if created is not None:
            times[name].append(created if created.tzinfo else created.replace(tzinfo=UTC))
    golden = {g.annotator: g for g in golden_accuracy(store)}
    people = sorted(set(assigned) | set(rated), key=natural_key)
    rows = []
    for name in people:
        stamps = sorted(times[name])
        gaps = [
            (b - a).total_seconds()
            for a, b in zip(stamps, stamps[1:], strict=False)
            if 0 < (b - a).total_seconds() <= break_s
        ]
        g = golden.get(name)
        rows.append(
            AnnotatorProgress(
                name,
                pack_count[name],
                len(assigned[name]),
                len(assigned[name] & rated[name]),
                len(rated[name]),
                g.items if g else 0,
                g.adequacy_accuracy if g else None,
                g.fluency_accuracy if g else None,
                statistics.median(gaps) if gaps else None,
            )
        )
    alpha_f = alpha_a = None
    items = 0
    if agreement is not None:
        alpha_f, alpha_a, items = agreement(store)
    return TeamProgress(rows, alpha_f, alpha_a, items)


def overall_agreement(store: SessionStore) -> tuple[float | None, float | None, int]:
    """Krippendorff's alpha over every merged rating (METHODS §9), and the items rated."""
    from core.annotation.summary import aggregate_annotations

    summary = aggregate_annotations(store, agreement=True)
    return summary.overall.alpha_fluency, summary.overall.alpha_adequacy, summary.overall.items
