"""WebNLG and TailNLG XML (METHODS §10): import into a session, export back, without loss.

A document is ``benchmark/entries/entry``; an entry holds triple sets
(``originaltripleset/otriple``, ``modifiedtripleset/mtriple``, and in TailNLG
``spanishtripleset/striple`` and ``italiantripleset/itriple``) and ``lex`` references.

Mapping (one data unit per entry):

* ``data_units``: uid = ``unique_id`` or ``"{file stem}:{eid}"``; shape = ``shape_type``;
  size, tier = ``type``, sub_tier = ``subtype``, root_qid = ``qid``.
* ``unit_triples``: otriple → (en, "original"; "original.1", "original.2", … for further
  originaltripleset elements), mtriple → (en, "main"), striple → (es, "main"),
  itriple → (it, "main"); ``position`` counts from 0 within the set.
* ``unit_references``: one row per lex, in order; provenance ``"{file name}#{lid}"``.

Everything that has no column is kept in ``data_units.attributes`` (see :func:`_layout`):
the entry's attributes as written, the order of its children, each lex's attribute
order, and unknown children serialised as XML. Export re-emits an imported entry from
that layout, taking the values that have columns from the columns (so edits made in the
app are exported) and the original strings where the column still holds what was
imported (so ``size="04"`` stays ``"04"``).

Parsing goes through :mod:`defusedxml` (no DTDs, entities or external references) and
is incremental: each finished entry is dropped from the tree, so memory stays small.
"""

from __future__ import annotations

import codecs
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from core.formats.files import FormatError, atomic_output
from core.formats.report import EntryError, ExportReport, ImportReport
from core.jobs import Job, JobContext

ImportFlavour = Literal["auto", "tailnlg", "webnlg"]
ExportFlavour = Literal["tailnlg", "webnlg"]

SHAPES = frozenset({"sibling", "chain", "mixed"})
TRIPLE_SEPARATOR = " | "
LAYOUT_VERSION = 1
XML_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>\n'

# tripleset element -> (triple element, lang, tripleset name). originaltripleset may repeat
# (WebNLG); its later copies get "original.1", "original.2", ... so rows stay unique.
TRIPLESETS: dict[str, tuple[str, str, str]] = {
    "originaltripleset": ("otriple", "en", "original"),
    "modifiedtripleset": ("mtriple", "en", "main"),
    "spanishtripleset": ("striple", "es", "main"),
    "italiantripleset": ("itriple", "it", "main"),
}
# (lang, tripleset) of a main set -> element, used when writing units built in the app.
MAIN_SET_TAGS: dict[str, str] = {"en": "modifiedtripleset", "es": "spanishtripleset",
                                 "it": "italiantripleset"}

# ISO 639-1: the two-letter codes a lex's lang may carry. A closed list rather than a
# pattern, so a typo such as "xx" is caught as well as "xx-bogus".
_ISO_639_1_CODES = (
    """aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu
    cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho
    hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv
    kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr
    nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq
    sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh
    yi yo za zh zu"""
)
ISO_639_1 = frozenset(_ISO_639_1_CODES.split())


# -- parsed entries (plain data, checked before anything touches the session) -------------


@dataclass(frozen=True)
class ParsedTriple:
    subject: str
    predicate: str
    object: str


@dataclass(frozen=True)
class ParsedReference:
    lang: str
    text: str
    quality: str
    lid: str | None


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


class EntryRejected(Exception):
    """An entry that breaks the format; it is listed in the report and skipped."""


# -- import -------------------------------------------------------------------------------


def _declared_encoding(path: Path) -> str:
    with path.open("rb") as handle:
        head = handle.read(200)
    match = re.match(rb"""\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""", head)
    if match:
        return match.group(1).decode("ascii")
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    return "utf-8"


def _encoding_problem(path: Path, line: int) -> str | None:
    """Why the bytes up to ``line`` do not decode with the declared encoding, if they don't.

    Expat reports such bytes as "not well-formed (invalid token)", which sends users
    looking for a markup mistake; this names the real cause."""
    encoding = _declared_encoding(path)
    try:
        decoder = codecs.getincrementaldecoder(encoding)()
    except LookupError:
        return None
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                decoder.decode(raw)
            except UnicodeDecodeError as exc:
                return (
                    f"line {number} holds bytes that are not valid {encoding} (byte "
                    f"0x{raw[exc.start]:02x} at column {exc.start + 1}), although the file "
                    f"declares encoding {encoding!r}. Save the file as {encoding} (or fix "
                    "its XML declaration) and import it again."
                )
            if number >= line:
                break
    return None


def _parse_error(path: Path, exc: ET.ParseError) -> FormatError:
    line, column = getattr(exc, "position", (0, 0))
    problem = _encoding_problem(path, line) if line else None
    if problem:
        return FormatError(f"{path.name} is not readable: {problem}")
    what = str(exc).split(":", 1)[0]  # expat's text ends with its own "line x, column y"
    return FormatError(
        f"{path.name} is not well-formed XML: {what} at line {line}, column {column + 1} "
        "(expected well-formed XML: every tag closed, '&' and '<' escaped in text)."
    )


def _refused(path: Path, exc: DefusedXmlException) -> FormatError:
    return FormatError(
        f"{path.name} was refused: it declares a DOCTYPE, entities or external references "
        f"({type(exc).__name__}), which WebNLG files never need and which can read local "
        "files or exhaust memory. Remove the DOCTYPE and import it again."
    )


def _split_triple(text: str) -> ParsedTriple | None:
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
        triple = _split_triple(text)
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


def _parse_lex(element: ET.Element) -> tuple[ParsedReference, dict[str, Any]]:
    attributes = _attributes_of(element)
    lang = attributes.get("lang")
    if lang is not None and lang.lower() not in ISO_639_1:
        raise EntryRejected(
            f"lex {attributes.get('lid', '?')} has unknown language {lang!r} "
            "(expected a two-letter ISO 639-1 code such as en, it, es)"
        )
    quality = attributes.get("quality")
    if quality is not None and quality not in ("gold", "silver"):
        raise EntryRejected(
            f"lex {attributes.get('lid', '?')} has quality {quality!r} (expected gold or silver)"
        )
    slot: dict[str, Any] = {"kind": "lex", "order": list(attributes)}
    extra = {k: v for k, v in attributes.items() if k not in ("lang", "quality", "lid")}
    if extra:
        slot["extra"] = extra
    text = element.text or ""
    if len(element):
        # WebNLG 2.x "enriched" lex elements hold sortedtripleset, references, text, ...
        slot["children"] = [_serialise(child) for child in element]
        slot["tails"] = [child.tail for child in element]
        if not text.strip():
            inner = element.find("text")
            slot["text_from_child"] = True
            slot["own_text"] = text
            text = (inner.text or "") if inner is not None else ""
    lid = attributes.get("lid")
    reference = ParsedReference(
        # A lex without lang is English in WebNLG 1.x/2.x; export omits it again.
        lang=lang if lang is not None else "en",
        text=text,
        # The column cannot be NULL; WebNLG references are written by people, so gold.
        quality=quality if quality is not None else "gold",
        lid=lid,
    )
    return reference, slot


def _parse_entry(
    element: ET.Element, *, file_name: str, stem: str, flavour: str
) -> ParsedEntry:
    attributes = _attributes_of(element)
    eid = attributes.get("eid")
    uid = attributes.get("unique_id") or (f"{stem}:{eid}" if eid else None)
    if not uid:
        raise EntryRejected("entry has neither unique_id nor eid")
    size_text = attributes.get("size")
    try:
        size = int(size_text) if size_text is not None else -1
    except ValueError:
        raise EntryRejected(f"size {size_text!r} is not an integer") from None
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
            reference, slot = _parse_lex(child)
            entry.references.append(reference)
            children.append(slot)
        else:
            # dbpedialinks, links, entitymap, a second modifiedtripleset, ...: kept verbatim.
            children.append({"kind": "xml", "xml": _serialise(child)})
    if size_text is None:
        # No size attribute: the unit's size is its main English set (else any set).
        main = entry.triples.get(("en", "main")) or next(iter(entry.triples.values()), [])
        entry.size = len(main)
    entry.attributes = _layout(attributes, children, file_name, flavour, element.text)
    return entry


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


def _detect_flavour(path: Path) -> str:
    with path.open("rb") as handle:
        head = handle.read(65536)
    return "tailnlg" if b"unique_id=" in head or b"quality=" in head else "webnlg"


def _iter_entries(path: Path) -> Iterator[ET.Element]:
    """Each ``benchmark/entries/entry`` element, complete, then dropped from the tree."""
    try:
        stack: list[ET.Element] = []
        for event, element in SafeET.iterparse(
            str(path), events=("start", "end"), forbid_dtd=True
        ):
            if event == "start":
                if not stack and element.tag != "benchmark":
                    raise FormatError(
                        f"{path.name} is not a WebNLG file: its root element is "
                        f"<{element.tag}>, expected <benchmark>."
                    )
                stack.append(element)
                continue
            stack.pop()
            if element.tag == "entry" and len(stack) == 2 and stack[1].tag == "entries":
                yield element
                # Dropping finished entries keeps memory flat however long the file is.
                stack[1].remove(element)
    except ET.ParseError as exc:
        raise _parse_error(path, exc) from None
    except DefusedXmlException as exc:
        raise _refused(path, exc) from None
    except UnicodeDecodeError as exc:
        raise FormatError(f"{path.name} is not readable as text: {exc}") from None


def _check_readable(path: Path) -> Path:
    path = Path(path).expanduser()
    if not path.exists():
        raise FormatError(f"Cannot import {path}: there is no such file.")
    if not path.is_file():
        raise FormatError(f"Cannot import {path}: it is a folder, not a file.")
    try:
        with path.open("rb"):
            pass
    except OSError as exc:
        raise FormatError(f"Cannot read {path.name}: {exc.strerror or exc}.") from exc
    return path


def import_webnlg(
    store: Any,
    path: Path | str,
    *,
    flavour: ImportFlavour = "auto",
    ctx: JobContext | None = None,
) -> ImportReport:
    """Import a WebNLG or TailNLG file into ``store`` in one transaction.

    Entries that break the format are skipped and listed in the report; a file that is
    not well-formed, refused, or an unexpected failure or cancel leaves the session as
    it was (nothing is committed).
    """
    from sqlalchemy import select

    from core.store.models import DataUnit

    path = _check_readable(Path(path))
    if flavour not in ("auto", "tailnlg", "webnlg"):
        raise FormatError(f"Unknown WebNLG flavour {flavour!r}: use auto, tailnlg or webnlg.")
    label = _detect_flavour(path) if flavour == "auto" else flavour
    file_name, stem = path.name, path.stem
    errors: list[EntryError] = []
    entries = units = references = triples = already = 0
    with store.unit_of_work() as db:
        taken = set(db.scalars(select(DataUnit.uid)))
        seen_in_file: set[str] = set()
        batch: list[ParsedEntry] = []
        for number, element in enumerate(_iter_entries(path), start=1):
            if ctx is not None:
                ctx.check_cancelled()
            entries += 1
            eid = element.get("eid")
            where = f"entry {number}" + (f" (eid {eid})" if eid else "")
            try:
                entry = _parse_entry(element, file_name=file_name, stem=stem, flavour=label)
                if entry.uid in seen_in_file:
                    raise EntryRejected(f"duplicate id {entry.uid!r} (already used in this file)")
                if entry.uid in taken:
                    from core.formats.rerun import same_webnlg_entry

                    if not same_webnlg_entry(db, entry):
                        raise EntryRejected(f"id {entry.uid!r} is already in the session "
                                            "with different content")
                    seen_in_file.add(entry.uid)
                    already += 1  # a re-run: the same entry is there, not an error
                    continue
            except EntryRejected as exc:
                errors.append(EntryError(where, str(exc)))
                if ctx is not None:
                    ctx.progress(entries, None, f"{units} units from {file_name}")
                continue
            seen_in_file.add(entry.uid)
            batch.append(entry)
            units += 1
            references += len(entry.references)
            triples += sum(len(rows) for rows in entry.triples.values())
            if ctx is not None:
                ctx.progress(entries, None, f"{units} units from {file_name}")
            if len(batch) >= 500:
                _insert(db, batch, file_name)
                batch.clear()
        if ctx is not None:
            ctx.check_cancelled()
        _insert(db, batch, file_name)
    return ImportReport(entries, units, references, errors, triples=triples, source=file_name,
                        already=already)


def _insert(db: Any, batch: list[ParsedEntry], file_name: str) -> None:
    """Insert parsed entries with Core bulk inserts: the ORM's unit of work took most of
    the import time, and these rows need none of its bookkeeping."""
    from sqlalchemy import insert

    from core.store.models import DataUnit, UnitReference, UnitTriple

    if not batch:
        return
    ids = db.scalars(
        insert(DataUnit).returning(DataUnit.id, sort_by_parameter_order=True),
        [
            {"uid": e.uid, "origin": "imported", "source": file_name, "shape": e.shape,
             "size": e.size, "tier": e.tier, "sub_tier": e.sub_tier, "root_qid": e.root_qid,
             "attributes": e.attributes}
            for e in batch
        ],
    ).all()
    triple_rows = [
        {"unit_id": unit_id, "lang": lang, "tripleset": tripleset, "position": position,
         "subject": t.subject, "predicate": t.predicate, "object": t.object}
        for unit_id, e in zip(ids, batch, strict=True)
        for (lang, tripleset), rows in e.triples.items()
        for position, t in enumerate(rows)
    ]
    reference_rows = [
        {"unit_id": unit_id, "lang": r.lang, "text": r.text, "quality": r.quality, "lid": r.lid,
         "provenance": f"{file_name}#{r.lid}" if r.lid else file_name}
        for unit_id, e in zip(ids, batch, strict=True)
        for r in e.references
    ]
    if triple_rows:
        db.execute(insert(UnitTriple), triple_rows)
    if reference_rows:
        db.execute(insert(UnitReference), reference_rows)


# -- export -------------------------------------------------------------------------------


def _text_of(row: Any, name: str) -> str:
    override = getattr(row, f"{name}_override")
    return override if override is not None else getattr(row, name)


def _triple_element(tag: str, row: Any, raw: str | None, attributes: dict[str, str]) -> ET.Element:
    element = ET.Element(tag, attributes)
    parts = (_text_of(row, "subject"), _text_of(row, "predicate"), _text_of(row, "object"))
    # The original text (odd spacing) is written back only while the triple is unchanged.
    if raw is not None and _split_triple(raw) == ParsedTriple(*parts):
        element.text = raw
    else:
        element.text = TRIPLE_SEPARATOR.join(parts)
    return element


def _tripleset_element(slot: dict[str, Any], rows: list[Any]) -> ET.Element:
    tag = slot["tag"]
    triple_tag = TRIPLESETS[tag][0]
    element = ET.Element(tag, slot.get("attributes", {}))
    if "text" in slot:
        element.text = slot["text"]
    raw = slot.get("raw", {})
    triple_attributes = slot.get("triple_attributes", {})
    for row in rows:
        key = str(row.position)
        element.append(
            _triple_element(triple_tag, row, raw.get(key), triple_attributes.get(key, {}))
        )
    return element


def _lex_element(slot: dict[str, Any] | None, reference: Any, flavour: str) -> ET.Element:
    if slot is None:
        order = ["lid", "lang"] + (["quality"] if flavour == "tailnlg" else [])
        slot = {"kind": "lex", "order": order}
    values = {"lid": reference.lid, "lang": reference.lang, "quality": reference.quality,
              **slot.get("extra", {})}
    attributes = {name: values[name] for name in slot["order"] if values.get(name) is not None}
    element = ET.Element("lex", attributes)
    if "children" in slot:
        for xml, tail in zip(slot["children"], slot["tails"], strict=True):
            child = SafeET.fromstring(xml)
            if slot.get("text_from_child") and child.tag == "text":
                child.text = reference.text
            child.tail = tail
            element.append(child)
        element.text = slot["own_text"] if slot.get("text_from_child") else reference.text
    else:
        element.text = reference.text
    return element


def _entry_attributes(unit: Any, layout: dict[str, Any] | None, eid: str, flavour: str,
                      category: str | None) -> dict[str, str]:
    if layout is None:
        attributes = {"category": category or "", "eid": eid, "shape": "",
                      "shape_type": unit.shape or "", "size": str(unit.size)}
        if flavour == "tailnlg":
            attributes.update(unique_id=unit.uid, qid=unit.root_qid or "",
                              type=unit.tier or "", subtype=unit.sub_tier or "")
        return attributes
    attributes = dict(layout["entry"])
    # Columns win where they were edited after the import; otherwise the original string.
    if "unique_id" in attributes:
        attributes["unique_id"] = unit.uid
    if "size" in attributes:
        try:
            same = int(attributes["size"]) == unit.size
        except ValueError:
            same = False
        if not same:
            attributes["size"] = str(unit.size)
    if "shape_type" in attributes and unit.shape is not None:
        attributes["shape_type"] = unit.shape
    for name, value in (("qid", unit.root_qid), ("type", unit.tier), ("subtype", unit.sub_tier)):
        if name in attributes and value is not None:
            attributes[name] = value
    return attributes


def _entry_element(unit: Any, triples: list[Any], references: list[Any], eid: str,
                   flavour: str, category: str | None) -> ET.Element:
    layout = unit.attributes if _is_layout(unit.attributes) else None
    entry = ET.Element("entry", _entry_attributes(unit, layout, eid, flavour, category))
    by_set: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for row in triples:
        by_set[(row.lang, row.tripleset)].append(row)
    if layout is None:
        _append_generated_children(entry, by_set, references, flavour)
        return entry
    if "text" in layout:
        entry.text = layout["text"]
    written: set[tuple[str, str]] = set()
    lex_slots = [slot for slot in layout["children"] if slot["kind"] == "lex"]
    remaining = list(references)
    for slot in layout["children"]:
        kind = slot["kind"]
        if kind == "tripleset":
            key = (slot["lang"], slot["tripleset"])
            written.add(key)
            entry.append(_tripleset_element(slot, by_set.get(key, [])))
        elif kind == "lex":
            if remaining:
                entry.append(_lex_element(slot, remaining.pop(0), flavour))
        else:
            entry.append(SafeET.fromstring(slot["xml"]))
        if kind == "lex" and slot is lex_slots[-1]:
            # References added in the app after the import follow the imported ones.
            for reference in remaining:
                entry.append(_lex_element(None, reference, flavour))
            remaining = []
    for reference in remaining:
        entry.append(_lex_element(None, reference, flavour))
    return entry


def _append_generated_children(entry: ET.Element, by_set: dict[tuple[str, str], list[Any]],
                               references: list[Any], flavour: str) -> None:
    """Children of a unit built in the app: the usual WebNLG/TailNLG set order."""
    main_en = by_set.get(("en", "main"), [])
    original = by_set.get(("en", "original"), main_en)
    sets: list[tuple[str, list[Any]]] = [("originaltripleset", original),
                                         ("modifiedtripleset", main_en)]
    if flavour == "tailnlg":
        sets += [("spanishtripleset", by_set.get(("es", "main"), [])),
                 ("italiantripleset", by_set.get(("it", "main"), []))]
    for tag, rows in sets:
        entry.append(_tripleset_element({"tag": tag}, rows))
    for reference in references:
        entry.append(_lex_element(None, reference, flavour))


def _is_layout(attributes: Any) -> bool:
    return (isinstance(attributes, dict) and attributes.get("format") in ("tailnlg", "webnlg")
            and "entry" in attributes and "children" in attributes)


def export_webnlg(
    store: Any,
    path: Path | str,
    *,
    flavour: ExportFlavour = "tailnlg",
    ctx: JobContext | None = None,
) -> ExportReport:
    """Write every data unit of ``store`` to ``path``; the report counts entries (one per
    unit: no unit is skipped), the ``lex`` references and the triples written.

    Imported units are written back as they came (with edits made since); units built in
    the app get a generated eid. The file is written under a temporary name and moved
    into place, so a failure never leaves half a file.
    """
    from sqlalchemy import select

    from core.store.models import Category, DataUnit, UnitReference, UnitTriple

    if flavour not in ("tailnlg", "webnlg"):
        raise FormatError(f"Unknown WebNLG flavour {flavour!r}: use tailnlg or webnlg.")
    path = Path(path).expanduser()
    if path.is_dir():
        raise FormatError(f"Cannot export to {path}: it is a folder. Give a file name.")
    with store.unit_of_work() as db:
        units = list(db.scalars(select(DataUnit).order_by(DataUnit.id)))
        triples: dict[int, list[Any]] = defaultdict(list)
        for row in db.scalars(select(UnitTriple).order_by(
                UnitTriple.unit_id, UnitTriple.lang, UnitTriple.tripleset, UnitTriple.position)):
            triples[row.unit_id].append(row)
        references: dict[int, list[Any]] = defaultdict(list)
        for ref in db.scalars(select(UnitReference).order_by(UnitReference.id)):
            references[ref.unit_id].append(ref)
        categories = {row.id: row.name for row in db.execute(select(Category.id, Category.name))}
        db.expunge_all()
    used_eids = {u.attributes["entry"].get("eid") for u in units if _is_layout(u.attributes)}
    next_eid = _eid_counter(used_eids)
    written_references = written_triples = 0
    with atomic_output(path) as handle:
        handle.write(XML_DECLARATION)
        handle.write("<benchmark>\n  <entries>\n")
        for done, unit in enumerate(units, start=1):
            if ctx is not None:
                ctx.check_cancelled()
            eid = "" if _is_layout(unit.attributes) else next_eid()
            element = _entry_element(unit, triples[unit.id], references[unit.id], eid,
                                     flavour, categories.get(unit.category_id))
            # Counted from the element, so the report says what the file holds (a WebNLG
            # export has no Spanish/Italian sets).
            written_references += len(element.findall("lex"))
            written_triples += sum(len(child) for child in element if child.tag in TRIPLESETS)
            ET.indent(element, space="  ", level=2)
            handle.write("    " + ET.tostring(element, encoding="unicode") + "\n")
            if ctx is not None:
                ctx.progress(done, len(units), f"{done} entries written")
        handle.write("  </entries>\n</benchmark>\n")
    return ExportReport(len(units), len(units), written_references, [],
                        triples=written_triples, path=str(path), format=flavour)


def _eid_counter(used: set[str | None]) -> Callable[[], str]:
    counter = 0

    def next_eid() -> str:
        nonlocal counter
        while True:
            counter += 1
            candidate = f"Id{counter}"
            if candidate not in used:
                used.add(candidate)
                return candidate

    return next_eid


# -- jobs for the GUI ---------------------------------------------------------------------


def import_job(
    store: Any, path: Path | str, *, flavour: ImportFlavour = "auto"
) -> Job[ImportReport]:
    path = Path(path)
    return Job(
        title=f"Import {path.name}",
        run=lambda ctx: import_webnlg(store, path, flavour=flavour, ctx=ctx),
        kind="import",
        params={"path": str(path), "format": flavour},
    )


def export_job(
    store: Any, path: Path | str, *, flavour: ExportFlavour = "tailnlg"
) -> Job[ExportReport]:
    path = Path(path)
    return Job(
        title=f"Export {path.name}",
        run=lambda ctx: export_webnlg(store, path, flavour=flavour, ctx=ctx),
        kind="export",
        params={"path": str(path), "format": flavour},
    )
