"""A WebNLG entry as read from a file, before anything touches the session: plain data
shared by the reader (``core.formats.webnlg``) and the re-run check
(``core.formats.rerun``), which both import it from here (no cycle between them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ParsedTriple:
    subject: str
    predicate: str
    object: str


@dataclass(frozen=True)
class ParsedMention:
    """One ``references/reference`` of an enriched WebNLG lex (a human entity mention)."""

    entity: str
    mention: str
    tag: str | None
    mention_type: str | None


@dataclass(frozen=True)
class ParsedReference:
    lang: str
    text: str
    quality: str
    lid: str | None
    lang_given: bool = True  # False: no lang, or lang="": the file's language was used
    mentions: tuple[ParsedMention, ...] = ()


@dataclass  # not frozen: filled child by child while the entry is read
class ParsedEntry:
    uid: str
    size: int
    shape: str | None
    tier: str | None
    sub_tier: str | None
    root_qid: str | None
    attributes: dict[str, Any]
    # (lang, tripleset) -> triples in order
    triples: dict[tuple[str, str], list[ParsedTriple]] = field(default_factory=dict)
    references: list[ParsedReference] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
