"""The session as a Wikidata cache: store what sources returned, read it back fast.

A session reopened offline shows what it showed online because :class:`SessionCacheSource`
serves the same records, in the same order, from these tables.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

import numpy as np
from sqlalchemy import Table, and_, delete, func, select, update
from sqlalchemy.dialects.sqlite import insert
from sqlalchemy.orm import Session

from core.jobs import CancelToken
from core.store import SessionInfo, SessionStore, read_session_info
from core.store import models as m
from core.store.batching import in_chunks
from core.wikidata.categories import Category
from core.wikidata.records import (
    CategoryTable,
    ClaimRecord,
    EntityDetails,
    EntityRecord,
    MembersPage,
    Term,
)
from core.wikidata.sources import SourceError, canonical_details

# SQLite's bound-variable limit is 32766 on current builds but 999 on old ones.
_CHUNK = 400


def _now() -> datetime:
    return datetime.now(UTC)


def _category_id(db: Session, category: Category) -> int:
    row = db.execute(
        select(m.Category).where(m.Category.name == category.name)
    ).scalar_one_or_none()
    if row is None:
        row = m.Category(
            name=category.name,
            class_qid=category.class_qid,
            membership_property=category.membership_property,
            pattern=category.pattern,
        )
        db.add(row)
        db.flush()
        return row.id
    if row.pattern != category.pattern:
        # Members found with another pattern are not members of this one.
        db.execute(delete(m.CategoryMember).where(m.CategoryMember.category_id == row.id))
        row.fetch_status = None
        row.fetch_note = None
    row.class_qid = category.class_qid
    row.membership_property = category.membership_property
    row.pattern = category.pattern
    db.flush()
    return row.id


def store_members_page(
    store: SessionStore, category: Category, page: MembersPage, source_name: str
) -> None:
    """Upsert a page's entities, memberships and English labels in one transaction."""
    now = _now()
    with store.unit_of_work() as db:
        category_id = _category_id(db, category)
        if not page.entities:
            return
        rows = [
            {
                "qid": e.qid,
                "statement_count": e.statement_count,
                "sitelink_count": e.sitelink_count,
                "has_wiki_en": "en" in e.wikis,
                "has_wiki_it": "it" in e.wikis,
                "has_wiki_es": "es" in e.wikis,
                "source": source_name,
                "fetched_at": now,
            }
            for e in page.entities
        ]
        stmt = insert(m.Entity)
        db.execute(
            stmt.on_conflict_do_update(
                index_elements=[m.Entity.qid],
                set_={key: stmt.excluded[key] for key in rows[0] if key != "qid"},
            ),
            rows,
        )
        qids = [e.qid for e in page.entities]
        ids: dict[str, int] = {}
        for chunk in in_chunks(qids, _CHUNK):
            found = db.execute(select(m.Entity.qid, m.Entity.id).where(m.Entity.qid.in_(chunk)))
            ids.update({qid: entity_id for qid, entity_id in found})
        member = insert(m.CategoryMember)
        db.execute(
            member.on_conflict_do_update(
                index_elements=[m.CategoryMember.category_id, m.CategoryMember.entity_id],
                set_={"fetched_at": member.excluded.fetched_at},
            ),
            [{"category_id": category_id, "entity_id": ids[q], "fetched_at": now} for q in qids],
        )
        labels = [
            {"item_id": e.qid, "lang": "en", "kind": "label", "text": e.label, "ordinal": 0}
            for e in page.entities
            if e.label is not None
        ]
        if labels:
            _upsert_terms(db, labels)


def _upsert_terms(db: Session, rows: list[dict[str, object]]) -> None:
    stmt = insert(m.Term)
    db.execute(
        stmt.on_conflict_do_update(
            index_elements=[m.Term.item_id, m.Term.lang, m.Term.kind, m.Term.ordinal],
            set_={"text": stmt.excluded.text},
        ),
        rows,
    )


def store_entity(store: SessionStore, details: EntityDetails, source_name: str) -> None:
    """Replace an entity's terms and claims, and upsert properties and value labels.

    ``source_name`` is recorded on the entity row when it exists (a category member);
    an entity opened from nowhere has no row to record it on, which is harmless.
    """
    now = _now()
    with store.unit_of_work() as db:
        qid = details.qid
        db.execute(delete(m.Term).where(m.Term.item_id == qid))
        db.execute(delete(m.Claim).where(m.Claim.subject_qid == qid))
        own = [t for t in details.terms if t.item_id == qid]
        # Other items' labels are upserted, not replaced: their descriptions and aliases
        # may be in the session from when they were opened themselves.
        others = [t for t in details.terms if t.item_id != qid and t.kind == "label"]
        term_rows = [
            {
                "item_id": t.item_id,
                "lang": t.lang,
                "kind": t.kind,
                "text": t.text,
                "ordinal": t.ordinal,
            }
            for t in (*own, *others)
        ]
        if term_rows:
            _upsert_terms(db, term_rows)
        if details.property_types:
            prop = insert(m.Property)
            db.execute(
                prop.on_conflict_do_update(
                    index_elements=[m.Property.pid],
                    set_={
                        "datatype": prop.excluded.datatype,
                        "fetched_at": prop.excluded.fetched_at,
                    },
                ),
                [
                    {"pid": pid, "datatype": datatype, "fetched_at": now}
                    for pid, datatype in details.property_types.items()
                ],
            )
        if details.claims:
            db.execute(
                insert(m.Claim),
                [
                    {
                        "statement_id": c.statement_id,
                        "subject_qid": qid,
                        "property_pid": c.property_pid,
                        "value": c.value,
                        "value_type": c.value_type,
                        "value_json": c.value_json,
                        "rank": c.rank,
                        "snak_type": c.snak_type,
                        "fetched_at": now,
                    }
                    for c in details.claims
                ],
            )
        db.execute(
            cast(Table, m.Entity.__table__)
            .update()
            .where(m.Entity.qid == qid)
            .values(source=source_name)
        )


def _members_select(category_name: str):  # a SQLAlchemy Select
    label = m.Term
    return (
        select(
            m.Entity.qid,
            label.text,
            func.coalesce(m.Entity.statement_count, 0),
            func.coalesce(m.Entity.sitelink_count, 0),
            func.coalesce(m.Entity.has_wiki_en, False),
            func.coalesce(m.Entity.has_wiki_it, False),
            func.coalesce(m.Entity.has_wiki_es, False),
        )
        .select_from(m.Category)
        .join(m.CategoryMember, m.CategoryMember.category_id == m.Category.id)
        .join(m.Entity, m.Entity.id == m.CategoryMember.entity_id)
        .outerjoin(
            label,
            and_(
                label.item_id == m.Entity.qid,
                label.lang == "en",
                label.kind == "label",
                label.ordinal == 0,
            ),
        )
        .where(m.Category.name == category_name)
        .order_by(m.Entity.qid)  # the order sources page in (ORDER BY ?item)
    )


FETCH_COMPLETE = "complete"
FETCH_INCOMPLETE = "incomplete"


def set_fetch_status(
    store: SessionStore, category: Category, status: str, note: str | None = None
) -> None:
    """Record how the last fetch of the category's members ended (rev 0004 columns)."""
    with store.unit_of_work() as db:
        category_id = _category_id(db, category)
        db.execute(
            update(m.Category)
            .where(m.Category.id == category_id)
            .values(fetch_status=status, fetch_note=note)
        )


def fetch_status(store: SessionStore, category_name: str) -> tuple[str | None, str | None]:
    """(status, note) of the category's last recorded fetch; (None, None) if none."""
    with store.snapshot() as db:
        row = db.execute(
            select(m.Category.fetch_status, m.Category.fetch_note).where(
                m.Category.name == category_name
            )
        ).first()
    return (row[0], row[1]) if row is not None else (None, None)


def incomplete_note(status: str | None, note: str | None) -> str | None:
    """The words to show beside a category whose last fetch stopped early, or None."""
    if status != FETCH_INCOMPLETE:
        return None
    return note or "the last fetch stopped early"


def category_fetch_states(conn: sqlite3.Connection) -> list[dict[str, object]]:
    """Each category of a session with its members held and how its last fetch ended,
    through a plain (read-only) SQLite connection: ``session info`` describes a file
    without opening it as a session. An older schema without the columns says None."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    if "categories" not in tables or "category_members" not in tables:
        return []
    columns = {row[1] for row in conn.execute("PRAGMA table_info(categories)")}
    status = "c.fetch_status, c.fetch_note" if "fetch_status" in columns else "NULL, NULL"
    rows = conn.execute(
        f"SELECT c.name, {status}, (SELECT count(*) FROM category_members m "
        "WHERE m.category_id = c.id) FROM categories c ORDER BY c.name"
    ).fetchall()
    return [
        {
            "name": name,
            "members": int(count),
            "fetch_status": state,
            "incomplete": incomplete_note(state, note),
        }
        for name, state, note, count in rows
    ]


def describe_session_file(path: Path | str) -> SessionInfo:
    """``read_session_info`` (read-only: an older session is described, not upgraded)
    with each category's members held and how its last fetch ended; ``categories`` is
    None where the file was described but its categories cannot be read."""
    from core.store import SessionCorruptError
    from core.store.fileinfo import reading

    info = read_session_info(path)
    try:
        # Read within the bounds of a file from elsewhere: a statement past them is
        # refused (SessionBoundsError), Ctrl+C ends the command.
        with reading(Path(info["path"])) as conn:
            info["categories"] = category_fetch_states(conn)
    except SessionCorruptError:
        info["categories"] = None
    return info


def load_category(store: SessionStore, category_name: str) -> CategoryTable:
    with store.snapshot() as db:
        rows = db.execute(_members_select(category_name)).all()
    columns = list(zip(*rows, strict=True)) if rows else [()] * 7
    incomplete = incomplete_note(*fetch_status(store, category_name))
    return CategoryTable(
        category_name,
        list(columns[0]),
        list(columns[1]),
        np.asarray(columns[2], dtype=np.int64),
        np.asarray(columns[3], dtype=np.int64),
        np.asarray(columns[4], dtype=bool),
        np.asarray(columns[5], dtype=bool),
        np.asarray(columns[6], dtype=bool),
        incomplete,
    )


def fetched_count(store: SessionStore, category_name: str) -> int:
    """How many members of the category the session holds (where a fetch resumes)."""
    with store.snapshot() as db:
        return int(
            db.execute(
                select(func.count())
                .select_from(m.CategoryMember)
                .join(m.Category, m.Category.id == m.CategoryMember.category_id)
                .where(m.Category.name == category_name)
            ).scalar_one()
        )


def load_entity(store: SessionStore, qid: str) -> EntityDetails | None:
    with store.snapshot() as db:
        claim_rows = db.execute(
            select(
                m.Claim.statement_id,
                m.Claim.property_pid,
                m.Claim.value,
                m.Claim.value_type,
                m.Claim.rank,
                m.Claim.snak_type,
                m.Claim.value_json,
            ).where(m.Claim.subject_qid == qid)
        ).all()
        own_terms = db.execute(
            select(m.Term.lang, m.Term.kind, m.Term.text, m.Term.ordinal).where(
                m.Term.item_id == qid
            )
        ).all()
        # A label alone comes from a members page: the entity itself was never fetched.
        if not claim_rows and all(kind == "label" for _, kind, _, _ in own_terms):
            return None
        claims = [
            ClaimRecord(sid, qid, pid, value, vtype or "", rank, snak, vjson)
            for sid, pid, value, vtype, rank, snak, vjson in claim_rows
        ]
        pids = sorted({c.property_pid for c in claims})
        values = sorted(
            {
                c.value
                for c in claims
                if c.value_type in ("wikibase-item", "wikibase-property") and c.value
            }
        )
        others = [i for i in {*pids, *values} if i != qid]
        other_terms: list[Term] = []
        for chunk in in_chunks(others, _CHUNK):
            other_terms.extend(
                Term(item, lang, "label", text, ordinal)
                for item, lang, text, ordinal in db.execute(
                    select(m.Term.item_id, m.Term.lang, m.Term.text, m.Term.ordinal).where(
                        m.Term.item_id.in_(chunk), m.Term.kind == "label"
                    )
                )
            )
        types: dict[str, str] = {}
        for chunk in in_chunks(pids, _CHUNK):
            found = db.execute(
                select(m.Property.pid, m.Property.datatype).where(m.Property.pid.in_(chunk))
            )
            types.update({pid: datatype for pid, datatype in found})
    terms = [Term(qid, lang, kind, text, ordinal) for lang, kind, text, ordinal in own_terms]
    return canonical_details(qid, [*terms, *other_terms], claims, types)


class SessionCacheSource:
    """What the session already holds, served like any other source (offline)."""

    kind = "cache"

    def __init__(self, store: SessionStore, name: str = "Session cache") -> None:
        self.store = store
        self.name = name

    def members_page(
        self, category: Category, offset: int, limit: int, token: CancelToken | None = None
    ) -> MembersPage:
        with self.store.snapshot() as db:
            rows = db.execute(_members_select(category.name).limit(limit).offset(offset)).all()
        entities = tuple(
            EntityRecord(
                qid,
                label,
                int(statements),
                int(sitelinks),
                frozenset(lang for lang, flag in (("en", en), ("it", it), ("es", es)) if flag),
            )
            for qid, label, statements, sitelinks, en, it, es in rows
        )
        return MembersPage(category.name, offset, entities)

    def entity(self, qid: str, token: CancelToken | None = None) -> EntityDetails:
        details = load_entity(self.store, qid)
        if details is None:
            raise SourceError(
                f"{self.name}: {qid} was never opened in this session, so it is not "
                "available offline. Connect to a source to fetch it."
            )
        return details
