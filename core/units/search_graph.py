"""The graph the knowledge beam search walks: claims read from a source, by subject and
property, with the labels a verbalisation needs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.jobs import CancelToken
from core.store import SessionStore
from core.store.batching import in_chunks
from core.units.search_template import SearchError
from core.wikidata.categories import QID_RE, Category

MAX_ROOTS = 20_000  # class members read for the first step (a category's default limit)
PAGE = 5_000  # rows per triple_values page


# --- the graph ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    qid: str
    statement_id: str | None


class Graph:
    """The claims and labels the search reads, from a SPARQL source (embedded snapshot or
    endpoint) through named queries, or from the session cache's tables."""

    def __init__(self, source: Any, token: CancelToken | None = None) -> None:
        self.source = source
        self.token = token
        self.name = getattr(source, "name", "source")
        self.cache_store: SessionStore | None = (
            source.store if getattr(source, "kind", None) == "cache" else None
        )

    def _select(self, query: str) -> list[Mapping[str, Any]]:
        if hasattr(self.source, "select"):
            return list(self.source.select(query, self.token))
        raise SearchError(f"{self.name} cannot answer the search's queries")

    def property_type(self, pid: str) -> str | None:
        from core.wikidata import queries

        if self.cache_store is not None:
            from sqlalchemy import select

            from core.store import models as m

            with self.cache_store.unit_of_work() as db:
                row = db.execute(
                    select(m.Claim.value_type).where(m.Claim.property_pid == pid).limit(1)
                ).first()
            return row[0] if row else None
        rows = self._select(queries.property_type(pid))
        if not rows:
            return None
        local = rows[0]["ptype"].value.rsplit("#", 1)[-1]
        return queries.PROPERTY_TYPES.get(local, local)

    def values(self, subjects: Sequence[str], pid: str) -> dict[str, list[Value]]:
        """Each subject's distinct truthy item values of ``pid`` (first statement kept)."""
        from core.wikidata import queries

        found: dict[str, list[Value]] = {}
        seen: set[tuple[str, str]] = set()

        def add(s: str, o: str, st: str | None) -> None:
            if (s, o) not in seen and QID_RE.match(o):
                seen.add((s, o))
                found.setdefault(s, []).append(Value(o, st))

        unique = sorted(set(subjects))
        if self.cache_store is not None:
            for s, o, st in self._cache_values(unique, pid):
                add(s, o, st)
            return found
        for start in range(0, len(unique), queries.MAX_VALUES_SUBJECTS):
            chunk = unique[start : start + queries.MAX_VALUES_SUBJECTS]
            offset = 0
            while True:
                if self.token is not None and self.token.cancelled:
                    from core.jobs import JobCancelled

                    raise JobCancelled()
                rows = self._select(queries.triple_values(chunk, pid, PAGE, offset))
                for row in rows:
                    s = row["s"].value.rsplit("/", 1)[-1]
                    o = row["o"].value.rsplit("/", 1)[-1]
                    st = row["st"].value.rsplit("/", 1)[-1] if row.get("st") else None
                    add(s, o, st)
                if len(rows) < PAGE:
                    break
                offset += PAGE
        return found

    def _cache_values(self, subjects: Sequence[str], pid: str) -> list[tuple[str, str, str | None]]:
        from sqlalchemy import select

        from core.store import models as m

        out: list[tuple[str, str, str | None]] = []
        assert self.cache_store is not None
        with self.cache_store.snapshot() as db:
            for chunk in in_chunks(subjects):
                rows = db.execute(
                    select(m.Claim.subject_qid, m.Claim.value, m.Claim.statement_id, m.Claim.rank)
                    .where(
                        m.Claim.subject_qid.in_(chunk),
                        m.Claim.property_pid == pid,
                        m.Claim.value_type == "wikibase-item",
                        m.Claim.value.is_not(None),
                        m.Claim.rank != "deprecated",
                    )
                    .order_by(m.Claim.subject_qid, m.Claim.value, m.Claim.id)
                ).all()
                preferred = {s for s, _v, _st, rank in rows if rank == "preferred"}
                # Truthy values only: where a subject has preferred ones, the normal go.
                out.extend(
                    (s, v, st)
                    for s, v, st, rank in rows
                    if v is not None and (rank == "preferred" or s not in preferred)
                )
        return out

    def labels(self, ids: Sequence[str], lang: str) -> dict[str, str]:
        from core.wikidata import queries

        unique = sorted(set(ids))
        found: dict[str, str] = {}
        if self.cache_store is not None:
            from core.tiers.likelihood import _labels

            with self.cache_store.unit_of_work() as db:
                return _labels(db, unique, lang)
        for start in range(0, len(unique), queries.MAX_VALUES_SUBJECTS):
            rows = self._select(
                queries.item_labels(unique[start : start + queries.MAX_VALUES_SUBJECTS], lang)
            )
            for row in rows:
                item = row["item"].value.rsplit("/", 1)[-1]
                found.setdefault(item, row["text"].value)
        return found

    def roots(self, category: Category, limit: int = MAX_ROOTS) -> list[str]:
        qids: list[str] = []
        offset = 0
        while len(qids) < limit:
            page = self.source.members_page(
                category, offset, min(PAGE, limit - len(qids)), self.token
            )
            qids.extend(e.qid for e in page.entities)
            if len(page.entities) < min(PAGE, limit - len(qids) + len(page.entities)):
                break
            offset += len(page.entities)
        return sorted(dict.fromkeys(qids), key=lambda q: int(q[1:]))


def class_category(class_qid: str) -> Category:
    """A category of the instances of a class (and of its subclasses)."""
    from core.wikidata.categories import default_pattern

    if not isinstance(class_qid, str) or not QID_RE.fullmatch(class_qid):
        raise SearchError(f"--class {class_qid!r} is not a Wikidata item id like Q515")
    return Category(f"class {class_qid}", class_qid, "P31", default_pattern(class_qid, "P31"))
