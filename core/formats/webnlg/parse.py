"""One WebNLG/TailNLG ``entry`` element into a :class:`ParsedEntry`: triple sets, lex
references with their entity mentions, and the layout that lets export re-emit the entry
as it was written (see :mod:`core.formats.webnlg`)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from core.formats.report import LanguageDecision
from core.formats.webnlg.entries import (
    ENGLISH_BY_DEFAULT,
    ISO_639_1,
    LAYOUT_VERSION,
    MENTION_ATTRIBUTES,
    SHAPES,
    TRIPLE_SEPARATOR,
    TRIPLESETS,
    EntryRejected,
    ParsedEntry,
    ParsedMention,
    ParsedReference,
    ParsedTriple,
)
from core.io.bounded import bounded_int
from core.vocab import DEFAULT_QUALITY, QUALITIES

# The most triples an entry's size attribute may claim (WebNLG's largest sets have 7;
# a larger number is not a size, and over 2**63 SQLite cannot store it).
MAX_SIZE = 100_000


def split_triple(text: str) -> ParsedTriple | None:
    parts = [part.strip() for part in text.split(TRIPLE_SEPARATOR)]
    if len(parts) != 3:
        return None
    return ParsedTriple(*parts)


def _attributes_of(element: ET.Element) -> dict[str, str]:
    # ElementTree keeps attributes in document order (a dict since Python 3.8).
    return dict(element.attrib)


def _serialise(element: ET.Element) -> str:
    tail, element.tail = element.tail, None  # the tail belongs to the parent's layout
    try:
        return ET.tostring(element, encoding="unicode")
    finally:
        element.tail = tail


def _parse_tripleset(
    element: ET.Element, tripleset: str, triple_tag: str
) -> tuple[list[ParsedTriple], dict[str, Any]] | None:
    """Triples of a set and what its layout slot must remember; None if the set holds
    anything but plain triple elements (it is then kept whole as unknown XML)."""
    triples: list[ParsedTriple] = []
    raw: dict[str, str] = {}
    triple_attributes: dict[str, dict[str, str]] = {}
    for position, child in enumerate(element):
        if child.tag != triple_tag or len(child):
            return None
        text = child.text or ""
        triple = split_triple(text)
        if triple is None:
            raise EntryRejected(
                f"triple without three parts in {element.tag} (triple {position + 1}): "
                f"{text.strip()!r}"
            )
        triples.append(triple)
        # Kept only where joining the parts does not give the text back (extra spaces).
        if TRIPLE_SEPARATOR.join((triple.subject, triple.predicate, triple.object)) != text:
            raw[str(position)] = text
        if child.attrib:
            triple_attributes[str(position)] = _attributes_of(child)
    slot: dict[str, Any] = {"kind": "tripleset", "tag": element.tag, "tripleset": tripleset}
    if element.attrib:
        slot["attributes"] = _attributes_of(element)
    if raw:
        slot["raw"] = raw
    if triple_attributes:
        slot["triple_attributes"] = triple_attributes
    if (element.text or "").strip():
        slot["text"] = element.text
    return triples, slot


def _parse_mentions(element: ET.Element) -> tuple[tuple[ParsedMention, ...], dict[str, Any]]:
    """Mentions of an enriched lex's ``references`` element, and what export needs to
    write it back that has no column (attribute order, ``number`` where it is not the
    position + 1, the element's own attributes)."""
    mentions: list[ParsedMention] = []
    layout: dict[str, Any] = {}
    numbers: dict[str, str] = {}
    orders: dict[str, list[str]] = {}
    extras: dict[str, dict[str, str]] = {}
    for position, child in enumerate(element):
        if child.tag != "reference" or len(child) or "entity" not in child.attrib:
            raise _KeepAsXml
        attributes = _attributes_of(child)
        mentions.append(
            ParsedMention(
                entity=attributes["entity"],
                mention=child.text or "",
                tag=attributes.get("tag"),
                mention_type=attributes.get("type"),
            )
        )
        if attributes.get("number") != str(position + 1):
            numbers[str(position)] = attributes.get("number")  # type: ignore[assignment]
        if list(attributes) != list(MENTION_ATTRIBUTES):
            orders[str(position)] = list(attributes)
        extra = {k: v for k, v in attributes.items() if k not in MENTION_ATTRIBUTES}
        if extra:
            extras[str(position)] = extra
    if element.attrib:
        layout["attributes"] = _attributes_of(element)
    if numbers:
        layout["numbers"] = numbers
    if orders:
        layout["orders"] = orders
    if extras:
        layout["extra"] = extras
    return tuple(mentions), layout


class _KeepAsXml(Exception):
    """A ``references`` element that is not plain mentions: kept verbatim instead."""


def _parse_lex(
    element: ET.Element, file_language: LanguageDecision
) -> tuple[ParsedReference, dict[str, Any]]:
    attributes = _attributes_of(element)
    lang = attributes.get("lang")
    lang_given = bool(lang and lang.strip())
    if lang_given and lang.lower() not in ISO_639_1:  # type: ignore[union-attr]
        raise EntryRejected(
            f"lex {attributes.get('lid', '?')} has unknown language {lang!r} "
            "(expected a two-letter ISO 639-1 code such as en, it, es)"
        )
    quality = attributes.get("quality")
    if quality is not None and quality not in QUALITIES:
        raise EntryRejected(
            f"lex {attributes.get('lid', '?')} has quality {quality!r} (expected gold or silver)"
        )
    slot: dict[str, Any] = {"kind": "lex", "order": list(attributes)}
    if lang is not None and not lang_given:
        # lang="" (WebNLG 2020): written back as it was while the language is unchanged.
        slot["lang_written"] = lang
        slot["lang_decided"] = file_language.lang
    extra = {k: v for k, v in attributes.items() if k not in ("lang", "quality", "lid")}
    if extra:
        slot["extra"] = extra
    text = element.text or ""
    mentions: tuple[ParsedMention, ...] = ()
    if len(element):
        # WebNLG 2.x "enriched" lex elements hold sortedtripleset, references, text, ...
        children: list[str] = []
        for index, child in enumerate(element):
            if child.tag == "references" and "mentions_at" not in slot:
                try:
                    mentions, mention_layout = _parse_mentions(child)
                except _KeepAsXml:
                    pass
                else:
                    # The mentions live in reference_mentions rows; export rebuilds them.
                    slot["mentions_at"] = index
                    if mention_layout:
                        slot["mention_layout"] = mention_layout
                    children.append("")
                    continue
            children.append(_serialise(child))
        slot["children"] = children
        slot["tails"] = [child.tail for child in element]
        if not text.strip():
            inner = element.find("text")
            slot["text_from_child"] = True
            slot["own_text"] = text
            text = (inner.text or "") if inner is not None else ""
    lid = attributes.get("lid")
    reference = ParsedReference(
        # No lang (WebNLG 1.x/2.x) or lang="" (WebNLG 2020): the file's language.
        lang=lang if lang_given else file_language.lang,  # type: ignore[arg-type]
        text=text,
        # The column cannot be NULL; WebNLG references are written by people, so gold.
        quality=quality if quality is not None else DEFAULT_QUALITY,
        lid=lid,
        lang_given=lang_given,
        mentions=mentions,
    )
    return reference, slot


def parse_entry(
    element: ET.Element,
    *,
    file_name: str,
    stem: str,
    flavour: str,
    file_language: LanguageDecision = ENGLISH_BY_DEFAULT,
) -> ParsedEntry:
    attributes = _attributes_of(element)
    eid = attributes.get("eid")
    uid = attributes.get("unique_id") or (f"{stem}:{eid}" if eid else None)
    if not uid:
        raise EntryRejected("entry has neither unique_id nor eid")
    size_text = attributes.get("size")
    size = -1
    if size_text is not None:
        counted = bounded_int(size_text, low=0, high=MAX_SIZE)
        if counted is None:
            raise EntryRejected(
                f"size {size_text[:40]!r} is not an integer from 0 to {MAX_SIZE:,} (a number "
                "of triples)"
            )
        size = counted
    shape_type = attributes.get("shape_type")
    entry = ParsedEntry(
        uid=uid,
        size=size,
        shape=shape_type if shape_type in SHAPES else None,
        tier=attributes.get("type"),
        sub_tier=attributes.get("subtype"),
        root_qid=attributes.get("qid"),
        attributes={},
    )
    children: list[dict[str, Any]] = []
    originals = 0
    for child in element:
        spec = TRIPLESETS.get(child.tag)
        parsed = None
        if spec is not None:
            triple_tag, lang, tripleset = spec
            if child.tag == "originaltripleset":
                tripleset = "original" if originals == 0 else f"original.{originals}"
            if (lang, tripleset) not in entry.triples:
                parsed = _parse_tripleset(child, tripleset, triple_tag)
        if parsed is not None:
            triples, slot = parsed
            if child.tag == "originaltripleset":
                originals += 1
            slot["lang"] = spec[1]  # type: ignore[index]
            entry.triples[(spec[1], slot["tripleset"])] = triples  # type: ignore[index]
            children.append(slot)
        elif child.tag == "lex":
            reference, slot = _parse_lex(child, file_language)
            entry.references.append(reference)
            children.append(slot)
        else:
            # dbpedialinks, links, entitymap, a second modifiedtripleset, ...: kept verbatim.
            children.append({"kind": "xml", "xml": _serialise(child)})
    if not any(entry.triples.values()):
        raise EntryRejected(
            "entry has no triples (no otriple, mtriple, striple or itriple): a data unit "
            "needs at least one"
        )
    _check_languages(entry, file_language)
    if size_text is None:
        # No size attribute: the unit's size is its main English set (else any set).
        main = entry.triples.get(("en", "main")) or next(iter(entry.triples.values()), [])
        entry.size = len(main)
    entry.attributes = _layout(attributes, children, file_name, flavour, element.text)
    return entry


def _check_languages(entry: ParsedEntry, file_language: LanguageDecision) -> None:
    """Warn when a text took the file's language although its siblings say otherwise
    (an Italian and Spanish entry with one unmarked lex: probably not English)."""
    written = sorted({r.lang for r in entry.references if r.lang_given})
    if not written or file_language.lang in written:
        return
    for reference in entry.references:
        if not reference.lang_given:
            entry.warnings.append(
                f"lex {reference.lid or '?'} has no language and was stored as "
                f"{file_language.lang} ({file_language.rule}), but the entry's other texts "
                f"are {', '.join(written)}: check its language"
            )


def _layout(
    attributes: dict[str, str],
    children: list[dict[str, Any]],
    file_name: str,
    flavour: str,
    text: str | None,
) -> dict[str, Any]:
    """What ``data_units.attributes`` holds for an imported entry (JSON keeps key order)."""
    layout: dict[str, Any] = {
        "format": flavour,
        "layout_version": LAYOUT_VERSION,
        "file": file_name,
        "entry": attributes,
        "children": children,
    }
    if text and text.strip():
        layout["text"] = text
    return layout
