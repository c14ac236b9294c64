"""Plain records that sources return and the session cache stores.

Every source (HTTP endpoint, embedded snapshot, session cache) returns these same
records, so nothing above the sources knows where data came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

RANKS: tuple[str, ...] = ("preferred", "normal", "deprecated")


@dataclass(frozen=True)
class EntityRecord:
    """One member of a category, with its popularity signals (METHODS §3)."""

    qid: str
    label: str | None  # English label, or None when the entity has none
    statement_count: int
    sitelink_count: int
    wikis: frozenset[str] = frozenset()  # which of en/it/es Wikipedias have a page


@dataclass(frozen=True)
class Term:
    """A label, description or alias of an item or property in one language."""

    item_id: str  # Q… or P…
    lang: str
    kind: str  # "label" | "description" | "alias"
    text: str
    ordinal: int = 0


@dataclass(frozen=True)
class ClaimRecord:
    """One statement: subject, property, value with its type, rank and snak type."""

    statement_id: str | None
    subject_qid: str
    property_pid: str
    value: str | None  # a QID for items, else the literal's lexical form; None for no/some value
    value_type: str  # Wikidata datatype: wikibase-item, time, quantity, string, external-id, …
    rank: str = "normal"
    snak_type: str = "value"  # "value" | "novalue" | "somevalue"
    value_json: dict[str, Any] | None = None  # precision, unit, language, …


@dataclass(frozen=True)
class EntityDetails:
    """An entity with its terms, claims and what is needed to show them."""

    qid: str
    terms: tuple[Term, ...] = ()  # of the entity, its properties and its value items
    claims: tuple[ClaimRecord, ...] = ()
    property_types: dict[str, str] = field(default_factory=dict)  # pid -> datatype

    def label(self, item_id: str, lang: str = "en") -> str | None:
        for term in self.terms:
            if term.item_id == item_id and term.lang == lang and term.kind == "label":
                return term.text
        return None


@dataclass(frozen=True)
class MembersPage:
    """One bounded page of a category's members, as it arrived."""

    category: str
    offset: int
    entities: tuple[EntityRecord, ...]
    # Members the source sent beyond the LIMIT asked for, left out (a server that
    # ignores LIMIT must not make a fetch store more than asked).
    overflow: int = 0

    def limited(self, limit: int) -> MembersPage:
        """This page with at most ``limit`` members (the first ones, in qid order)."""
        if len(self.entities) <= limit:
            return self
        extra = len(self.entities) - limit
        return MembersPage(self.category, self.offset, self.entities[:limit], self.overflow + extra)


@dataclass(frozen=True, eq=False)
class CategoryTable:
    """A category's members as columns (qid order), for tables, tiers and histograms."""

    category: str
    qids: list[str]
    labels: list[str | None]
    statements: np.ndarray  # int64
    sitelinks: np.ndarray  # int64
    has_en: np.ndarray  # bool
    has_it: np.ndarray  # bool
    has_es: np.ndarray  # bool
    # Why the last fetch of these members stopped early (None: complete, or never
    # recorded); shown wherever the category is shown.
    incomplete: str | None = None

    def __len__(self) -> int:
        return len(self.qids)

    @classmethod
    def empty(cls, category: str = "") -> CategoryTable:
        counts = np.zeros(0, dtype=np.int64)
        flags = np.zeros(0, dtype=bool)
        return cls(category, [], [], counts, counts, flags, flags, flags)
