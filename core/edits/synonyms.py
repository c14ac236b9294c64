"""Synonym table edits: a row added or removed, a file imported, the starter set copied.

The state is the whole ESA synonym table (``entity_synonyms``: entity, synonym,
language, source; a few hundred rows) and whether the session was seeded with the
starter set. Each edit derives its state after from the table it reads in its own
transaction (``plan``), so a row another window added meanwhile is kept; undo puts the
table back as it was, and is refused when the table changed since.
"""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from core.changes import Topic
from core.edits.base import JSON, Edit, EditRefusedError
from core.store.models import EntitySynonym, SessionMeta

SEEDED_KEY = "synonyms:seeded"  # as core.metrics.esa.synonyms marks a seeded session

Row = tuple[str, str, str]  # entity, synonym, lang ('' for any)


class SynonymEdit(Edit):
    """Change the synonym table: ``op`` is add, remove, import or seed."""

    kind = "synonyms"
    label = "synonyms"
    topics = frozenset({Topic.SYNONYMS})

    def __init__(
        self,
        op: str,
        rows: list[Row],
        *,
        any_lang: bool = False,
        source: str = "user",
        words: str = "",
    ) -> None:
        super().__init__({"table": "synonyms"}, None)
        self.op, self.rows, self.any_lang, self.row_source = op, rows, any_lang, source
        self.words = words

    def read(self, db: Session) -> JSON:
        rows = db.execute(
            select(
                EntitySynonym.entity,
                EntitySynonym.synonym,
                EntitySynonym.lang,
                EntitySynonym.source,
            ).order_by(EntitySynonym.entity, EntitySynonym.synonym, EntitySynonym.lang)
        ).all()
        seeded = db.execute(
            select(SessionMeta.value).where(SessionMeta.key == SEEDED_KEY)
        ).scalar_one_or_none()
        return {"rows": [[e, s, lang or "", src] for e, s, lang, src in rows], "seeded": seeded}

    def plan(self, db: Session, before: JSON) -> JSON:
        rows: list[list[str]] = [list(r) for r in before["rows"]]
        seeded = before["seeded"]
        if self.op == "remove":
            kept = [
                r
                for r in rows
                if not any(
                    r[0] == e and r[1] == s and (self.any_lang or r[2] == lang)
                    for e, s, lang in self.rows
                )
            ]
            if len(kept) == len(rows):
                e, s, lang = self.rows[0]
                raise EditRefusedError(
                    f"no synonym {s!r} of {e!r}"
                    + ("" if self.any_lang or not lang else f" in language {lang!r}")
                    + " in this session"
                )
            rows = kept
        else:
            have = {(r[0], r[1], r[2]) for r in rows}
            for entity, synonym, lang in self.rows:
                if (entity, synonym, lang) not in have:
                    have.add((entity, synonym, lang))
                    rows.append([entity, synonym, lang, self.row_source])
            if self.op == "seed":
                seeded = "starter"
        rows.sort(key=lambda r: (r[0], r[1], r[2]))
        return {"rows": rows, "seeded": seeded}

    def write(self, db: Session, state: JSON) -> None:
        wanted = {(r[0], r[1], r[2]): r[3] for r in state["rows"]}
        existing = {
            (r.entity, r.synonym, r.lang or ""): r for r in db.scalars(select(EntitySynonym))
        }
        # Rows that stay keep their id (and creation time); only the difference is written.
        for key, row in existing.items():
            if key not in wanted:
                db.delete(row)
            elif row.source != wanted[key]:
                row.source = wanted[key]
        for key, source in wanted.items():
            if key not in existing:
                db.add(EntitySynonym(entity=key[0], synonym=key[1], lang=key[2], source=source))
        if state["seeded"] is None:
            db.execute(delete(SessionMeta).where(SessionMeta.key == SEEDED_KEY))
        else:
            db.merge(SessionMeta(key=SEEDED_KEY, value=state["seeded"]))
        db.flush()

    def describe(self, before: JSON = None) -> str:
        words = getattr(self, "words", "")  # a rebuilt edit has only its states
        return words or f"the synonym table ({getattr(self, 'op', 'changed')})"
