"""WebNLG/TailNLG entries as parsed, before anything touches the session (METHODS §10):
plain data, the format's constants and the closed list of language codes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from core.formats.report import LanguageDecision

ImportFlavour = Literal["auto", "tailnlg", "webnlg"]
ExportFlavour = Literal["tailnlg", "webnlg"]

SHAPES = frozenset({"sibling", "chain", "mixed"})
TRIPLE_SEPARATOR = " | "
LAYOUT_VERSION = 1
XML_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>\n'
MENTION_ATTRIBUTES = ("entity", "number", "tag", "type")  # a mention's attributes, in order

# tripleset element -> (triple element, lang, tripleset name). originaltripleset may repeat
# (WebNLG); its later copies get "original.1", "original.2", ... so rows stay unique.
TRIPLESETS: dict[str, tuple[str, str, str]] = {
    "originaltripleset": ("otriple", "en", "original"),
    "modifiedtripleset": ("mtriple", "en", "main"),
    "spanishtripleset": ("striple", "es", "main"),
    "italiantripleset": ("itriple", "it", "main"),
}

# ISO 639-1: the two-letter codes a lex's lang may carry. A closed list rather than a
# pattern, so a typo such as "xx" is caught as well as "xx-bogus".
_ISO_639_1_CODES = """aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce
    ch co cr cs cu
    cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho
    hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv
    kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr
    nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq
    sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh
    yi yo za zh zu"""
ISO_639_1 = frozenset(_ISO_639_1_CODES.split())


# -- parsed entries (plain data, checked before anything touches the session) -------------


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


# The language of a file's texts that carry none (``lex`` without ``lang`` or with
# ``lang=""``) when nothing else decides it (core.formats.report.LanguageDecision).
ENGLISH_BY_DEFAULT = LanguageDecision("en", "default")


class EntryRejected(Exception):
    """An entry that breaks the format; it is listed in the report and skipped."""
