"""Making one annotator's pack: choosing the texts (selection, limit, golden items mixed
in), copying them with their units into a new session file built under a temporary name,
blinding what blind mode hides, and recording the pack in the source session once the
file is in place."""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
import uuid
from collections.abc import Sequence
from contextlib import closing, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import delete, select

from core.annotation.golden import golden_answers
from core.annotation.packs.manifest import (
    GUIDELINES_KEY,
    KIND_LETTER,
    LETTER_KIND,
    MANIFEST_KEY,
    PACK_FORMAT,
    TARGETS,
    PackError,
    session_uid,
    text_hash,
)
from core.annotation.queue import rateable_texts
from core.annotation.types import (
    REFERENCE,
    VERBALISATION,
    ItemRef,
    item_ref,
)
from core.io.atomic import temporary_name
from core.io.output_guard import (
    check_output_target,
    record_written,
    sweep_stale_temporaries,
)
from core.jobs import Job, JobContext
from core.store import SessionStore
from core.store.engine import file_uri
from core.store.models import (
    Annotation,
    AnnotationPack,
    Annotator,
)
from core.store.placing import make_self_contained


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
    manifest = _manifest(store, request, items)
    pack_uid = manifest["pack_uid"]
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
        _record_pack(store, request, out, manifest, golden)
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


def _manifest(
    store: SessionStore, request: PackRequest, items: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """The pack's description: its uid and its source's (made on the first pack), and
    each item's kind, id and text digest."""
    return {
        "format": PACK_FORMAT,
        "pack_uid": uuid.uuid4().hex,
        "source_session": session_uid(store, create=True),
        "source_name": store.path.name,
        "annotator": request.annotator,
        "target": request.target,
        "blind": request.blind,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "items": [[KIND_LETTER[t["ref"].kind], t["ref"].id, text_hash(t["text"])] for t in items],
    }


def _record_pack(
    store: SessionStore,
    request: PackRequest,
    out: Path,
    manifest: dict[str, Any],
    golden: set[ItemRef],
) -> None:
    """The session's record of the pack: what was handed out, and which was golden."""
    with store.unit_of_work() as db:
        db.add(
            AnnotationPack(
                pack_uid=manifest["pack_uid"],
                annotator=request.annotator,
                file_name=out.name,
                target=request.target,
                blind=request.blind,
                items={
                    "items": [
                        [kind, item_id, digest, ItemRef(LETTER_KIND[kind], item_id) in golden]
                        for kind, item_id, digest in manifest["items"]
                    ]
                },
            )
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
