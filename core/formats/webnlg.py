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
from typing import TYPE_CHECKING, Any, Literal, TypeGuard, cast

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from core.changes import IMPORT_WRITES
from core.formats.files import IMPORT_KEPT, FormatError, atomic_output, check_readable
from core.formats.report import (
    EntryError,
    ExportReport,
    FileImport,
    ImportReport,
    LanguageDecision,
)
from core.jobs import Job, JobContext
from core.labels import plural
from core.vocab import DEFAULT_QUALITY, QUALITIES

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from core.store import SessionStore

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


_ENGLISH_BY_DEFAULT = LanguageDecision("en", "default")


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


def _parse_error(
    path: Path, exc: ET.ParseError, display: str | None = None, where: str = ""
) -> FormatError:
    display = display or path.name
    line, column = getattr(exc, "position", (0, 0))
    problem = _encoding_problem(path, line) if line else None
    if problem:
        return FormatError(f"{display} is not readable: {problem}")
    what = str(exc).split(":", 1)[0]  # expat's text ends with its own "line x, column y"
    return FormatError(
        f"{display} is not well-formed XML: {what} at line {line}, column {column + 1}{where} "
        "(expected well-formed XML: every tag closed, '&' and '<' escaped in text)."
    )


def _refused(path: Path, exc: DefusedXmlException, display: str | None = None) -> FormatError:
    return FormatError(
        f"{display or path.name} was refused: it declares a DOCTYPE, entities or external "
        f"references ({type(exc).__name__}), which WebNLG files never need and which can "
        "read local files or exhaust memory. Remove the DOCTYPE and import it again."
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


MENTION_ATTRIBUTES = ("entity", "number", "tag", "type")


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


def _parse_entry(
    element: ET.Element,
    *,
    file_name: str,
    stem: str,
    flavour: str,
    file_language: LanguageDecision = _ENGLISH_BY_DEFAULT,
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


def _detect_flavour(path: Path) -> str:
    with path.open("rb") as handle:
        head = handle.read(65536)
    return "tailnlg" if b"unique_id=" in head or b"quality=" in head else "webnlg"


# Bounds on what one file may hold. WebNLG entries nest 7 elements deep and their longest
# tags are a few hundred bytes; these caps turn hostile or broken files into a message.
MAX_DEPTH = 100
MAX_TOKEN_BYTES = 16 << 20  # one tag (with its attributes) or text run without a '>'
READ_SIZE = 64 << 10
# Encodings a UTF-8 file is often mislabelled as.
_SINGLE_BYTE_LABELS = frozenset({"iso8859-1", "iso8859-15", "cp1252"})


class _Position:
    """Where the reader is, for messages: the entry being read (number and eid)."""

    def __init__(self, display: str) -> None:
        self.display = display
        self.entry = 0
        self.eid: str | None = None
        self.inside = False

    def where(self) -> str:
        if not self.inside:
            return ""
        return f" (in entry {self.entry}" + (f", eid {self.eid})" if self.eid else ")")


def _check_encoding(path: Path, display: str) -> None:
    """Refuse an encoding Python does not know, and UTF-8 bytes declared as a single-byte
    encoding (they would be stored as mojibake: "CafÃ©")."""
    declared = _declared_encoding(path)
    try:
        name = codecs.lookup(declared).name
    except LookupError:
        raise FormatError(
            f"{display} declares encoding {declared!r}, which is not a known text encoding. "
            'WebNLG files are UTF-8: fix the XML declaration (encoding="utf-8") and import '
            "it again."
        ) from None
    if name not in _SINGLE_BYTE_LABELS:
        return
    sample = _utf8_sample(path)
    if sample is not None:
        line, text = sample
        raise FormatError(
            f"{display} declares encoding {declared!r} but its bytes are UTF-8: line {line} "
            f"would be read as {text.encode('utf-8').decode(name, 'replace')!r} instead of "
            f'{text!r}. Fix the XML declaration (encoding="utf-8") and import it again.'
        )


def _utf8_sample(path: Path) -> tuple[int, str] | None:
    """(line, a few words) of the first non-ASCII text if every byte of the file is valid
    UTF-8 and some are not ASCII; None otherwise (then the file is what it declares)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    first: tuple[int, str] | None = None
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = decoder.decode(raw)
            except UnicodeDecodeError:
                return None
            if first is None and not raw.isascii():
                at = next(i for i, ch in enumerate(text) if ord(ch) > 127)
                first = (number, text[max(0, at - 15) : at + 15].strip())
    return first


def _iter_entries(
    path: Path, display: str | None = None, position: _Position | None = None
) -> Iterator[ET.Element]:
    """Each ``benchmark/entries/entry`` element, complete, then dropped from the tree.

    The file is fed to expat in chunks that grow with an unfinished tag, so a huge tag
    costs linear time (expat re-scans an unfinished token on every feed); a tag longer
    than :data:`MAX_TOKEN_BYTES` or nesting deeper than :data:`MAX_DEPTH` is refused."""
    display = display or path.name
    position = position or _Position(display)
    _check_encoding(path, display)
    parser = SafeET.DefusedXMLParser(target=ET.TreeBuilder(), forbid_dtd=True)
    # ET.iterparse builds the same pull parser around the parser it is given.
    pull = ET.XMLPullParser(events=("start", "end"), _parser=parser)
    stack: list[ET.Element] = []

    def line() -> int:
        return int(getattr(parser.parser, "CurrentLineNumber", 0))

    def events() -> Iterator[ET.Element]:
        for read in pull.read_events():
            # Only start/end events were asked for: each comes with an element.
            event, element = cast(tuple[str, ET.Element], read)
            if event == "start":
                if not stack and element.tag != "benchmark":
                    raise FormatError(
                        f"{display} is not a WebNLG file: its root element is "
                        f"<{element.tag}>, expected <benchmark>."
                    )
                stack.append(element)
                if len(stack) > MAX_DEPTH:
                    raise FormatError(
                        f"{display} is refused: elements nest deeper than {MAX_DEPTH} levels"
                        f"{position.where() or ' outside any entry'}; WebNLG entries nest 7 "
                        "deep."
                    )
                if len(stack) == 3 and element.tag == "entry":
                    position.entry += 1
                    position.eid = element.get("eid")
                    position.inside = True
                continue
            stack.pop()
            if element.tag == "entry" and len(stack) == 2 and stack[1].tag == "entries":
                yield element
                position.inside = False
                # Dropping finished entries keeps memory flat however long the file is.
                stack[1].remove(element)

    try:
        pending = 0  # bytes since the last '>': the unfinished tag expat must re-scan
        with path.open("rb") as handle:
            while chunk := handle.read(max(READ_SIZE, pending)):
                last = chunk.rfind(b">")
                pending = pending + len(chunk) if last < 0 else len(chunk) - last - 1
                if pending > MAX_TOKEN_BYTES:
                    raise FormatError(
                        f"{display} is refused: near line {line()}{position.where()} one tag "
                        f"or text runs over {MAX_TOKEN_BYTES >> 20} MiB without a '>'; "
                        "WebNLG entries are a few kilobytes. Check the file."
                    )
                pull.feed(chunk)
                yield from events()
        pull.close()
        yield from events()
    except ET.ParseError as exc:
        raise _parse_error(path, exc, display, position.where()) from None
    except DefusedXmlException as exc:
        raise _refused(path, exc, display) from None
    except UnicodeDecodeError as exc:
        raise FormatError(f"{display} is not readable as text: {exc}") from None
    except (LookupError, ValueError) as exc:  # an encoding expat cannot use
        raise FormatError(
            f"{display} cannot be read in its declared encoding "
            f"{_declared_encoding(path)!r}: {exc}. Save it as UTF-8 and import it again."
        ) from None
    except RecursionError:
        raise FormatError(f"{display} is refused: elements nest too deeply.") from None


def _check_readable(path: Path) -> Path:
    return check_readable(path, "Give a WebNLG/TailNLG XML file or a folder of them.")


def check_import_path(path: Path | str) -> None:
    """FormatError unless ``path`` is a readable file or a folder holding .xml files."""
    path = Path(path).expanduser()
    if path.is_dir():
        _files_of(path)
    else:
        _check_readable(path)


def language_in_file_name(name: str) -> str | None:
    """The ISO 639-1 language a WebNLG release names in its file name: the last part of
    the stem (``…-with-refs-en.xml``) or a part between underscores (``train_ru_x.xml``)."""
    stem = name[:-4] if name.lower().endswith(".xml") else name
    parts = re.split(r"[-_.]", stem)
    if len(parts) > 1 and parts[-1].lower() in ISO_639_1:
        return parts[-1].lower()
    for match in re.finditer(r"(?<=_)([A-Za-z]{2})(?=_)", stem):
        if match.group(1).lower() in ISO_639_1:
            return match.group(1).lower()
    return None


def file_language(name: str, lang: str | None = None) -> LanguageDecision:
    """The language of texts without one: ``lang`` as asked, else the file name's, else
    English; with the rule that decided it."""
    if lang is not None and lang.strip():
        code = lang.strip().lower()
        if code not in ISO_639_1:
            raise FormatError(
                f"Language {lang!r} is not a two-letter ISO 639-1 code (such as en, ru, it)."
            )
        return LanguageDecision(code, "asked", f"--lang {code}")
    found = language_in_file_name(name)
    if found:
        return LanguageDecision(found, "filename", name)
    return LanguageDecision("en", "default")


def _files_of(path: Path) -> list[Path]:
    files = sorted(p for p in path.rglob("*") if p.suffix.lower() == ".xml" and p.is_file())
    if not files:
        raise FormatError(f"Cannot import {path}: the folder holds no .xml files.")
    return files


@dataclass
class _Totals:
    entries: int = 0
    units: int = 0
    references: int = 0
    triples: int = 0
    mentions: int = 0
    already: int = 0


def import_webnlg(
    store: SessionStore,
    path: Path | str,
    *,
    flavour: ImportFlavour = "auto",
    lang: str | None = None,
    ctx: JobContext | None = None,
) -> ImportReport:
    """Import a WebNLG or TailNLG file, or a folder of them (recursively, in name order),
    into ``store`` in one transaction.

    Texts without a language (no ``lang``, or ``lang=""``) take ``lang``, else the
    language in the file's name, else English; the report says which rule decided, per
    file. Entries that break the format are skipped and listed in the report; a file that
    is not well-formed or is refused, an unexpected failure or a cancel leaves the
    session as it was (nothing is committed).
    """
    from sqlalchemy import select

    from core.store.models import DataUnit

    path = Path(path).expanduser()
    if flavour not in ("auto", "tailnlg", "webnlg"):
        raise FormatError(f"Unknown WebNLG flavour {flavour!r}: use auto, tailnlg or webnlg.")
    if lang is not None and lang.strip():
        file_language("", lang)  # an unknown code is refused before anything is read
    folder = path.is_dir()
    if folder:
        files = [(p, p.relative_to(path).as_posix()) for p in _files_of(path)]
        for file, _name in files:
            _check_readable(file)
    else:
        files = [(_check_readable(path), path.name)]
    errors: list[EntryError] = []
    warnings: list[EntryError] = []
    lines: list[FileImport] = []
    totals = _Totals()
    with store.unit_of_work() as db:
        taken = set(db.scalars(select(DataUnit.uid)))
        seen: set[str] = set()
        for file, name in files:
            language = file_language(Path(name).name, lang)
            before = _Totals(**vars(totals))
            file_errors, file_warnings, unmarked = _import_file(
                db,
                file,
                name,
                flavour,
                language,
                taken,
                seen,
                totals,
                ctx,
                prefix=f"{name} " if folder else "",
            )
            errors += file_errors
            warnings += file_warnings
            lines.append(
                FileImport(
                    name,
                    totals.entries - before.entries,
                    totals.units - before.units,
                    totals.references - before.references,
                    len(file_errors),
                    language,
                    unmarked,
                )
            )
        if ctx is not None:
            ctx.check_cancelled()
    return ImportReport(
        totals.entries,
        totals.units,
        totals.references,
        errors,
        triples=totals.triples,
        source=path.name,
        warnings=warnings,
        files=lines,
        mentions=totals.mentions,
        already=totals.already,
    )


def _import_file(
    db: Session,
    path: Path,
    name: str,
    flavour: str,
    language: LanguageDecision,
    taken: set[str],
    seen: set[str],
    totals: _Totals,
    ctx: JobContext | None,
    *,
    prefix: str,
) -> tuple[list[EntryError], list[EntryError], int]:
    """One file's entries into the open transaction: (errors, warnings, texts that took
    the file's language)."""
    label = _detect_flavour(path) if flavour == "auto" else flavour
    # Inside a folder the uid and provenance use the path below it: 1triples/Airport.xml
    # and 2triples/Airport.xml both number their entries from Id1.
    stem = name[:-4] if name.lower().endswith(".xml") else name
    errors: list[EntryError] = []
    warnings: list[EntryError] = []
    unmarked = 0
    batch: list[ParsedEntry] = []
    position = _Position(name)
    for number, element in enumerate(_iter_entries(path, name, position), start=1):
        if ctx is not None:
            ctx.check_cancelled()
        totals.entries += 1
        eid = element.get("eid")
        where = f"{prefix}entry {number}" + (f" (eid {eid})" if eid else "")
        try:
            entry = _parse_entry(
                element, file_name=name, stem=stem, flavour=label, file_language=language
            )
            if entry.uid in seen:
                raise EntryRejected(f"duplicate id {entry.uid!r} (already used in this import)")
            if entry.uid in taken:
                from core.formats.rerun import same_webnlg_entry

                if not same_webnlg_entry(db, entry):
                    raise EntryRejected(
                        f"id {entry.uid!r} is already in the session with different content"
                    )
                seen.add(entry.uid)
                totals.already += 1  # a re-run: the same entry is there, not an error
                continue
        except EntryRejected as exc:
            errors.append(EntryError(where, str(exc)))
            if ctx is not None:
                ctx.progress(totals.entries, None, _progress_note(totals, name))
            continue
        seen.add(entry.uid)
        batch.append(entry)
        warnings += [EntryError(where, text) for text in entry.warnings]
        unmarked += sum(not r.lang_given for r in entry.references)
        totals.units += 1
        totals.references += len(entry.references)
        totals.mentions += sum(len(r.mentions) for r in entry.references)
        totals.triples += sum(len(rows) for rows in entry.triples.values())
        if ctx is not None:
            ctx.progress(totals.entries, None, _progress_note(totals, name))
        if len(batch) >= 500:
            _insert(db, batch, name)
            batch.clear()
    if ctx is not None:
        ctx.check_cancelled()
    _insert(db, batch, name)
    return errors, warnings, unmarked


def _insert(db: Session, batch: list[ParsedEntry], file_name: str) -> None:
    """Insert parsed entries with Core bulk inserts: the ORM's unit of work took most of
    the import time, and these rows need none of its bookkeeping."""
    from sqlalchemy import insert

    from core.store.models import DataUnit, ReferenceMention, UnitReference, UnitTriple

    if not batch:
        return
    ids = db.scalars(
        insert(DataUnit).returning(DataUnit.id, sort_by_parameter_order=True),
        [
            {
                "uid": e.uid,
                "origin": "imported",
                "source": file_name,
                "shape": e.shape,
                "size": e.size,
                "tier": e.tier,
                "sub_tier": e.sub_tier,
                "root_qid": e.root_qid,
                "attributes": e.attributes,
            }
            for e in batch
        ],
    ).all()
    triple_rows = [
        {
            "unit_id": unit_id,
            "lang": lang,
            "tripleset": tripleset,
            "position": position,
            "subject": t.subject,
            "predicate": t.predicate,
            "object": t.object,
        }
        for unit_id, e in zip(ids, batch, strict=True)
        for (lang, tripleset), rows in e.triples.items()
        for position, t in enumerate(rows)
    ]
    reference_rows = [
        {
            "unit_id": unit_id,
            "lang": r.lang,
            "text": r.text,
            "quality": r.quality,
            "lid": r.lid,
            "provenance": f"{file_name}#{r.lid}" if r.lid else file_name,
        }
        for unit_id, e in zip(ids, batch, strict=True)
        for r in e.references
    ]
    if triple_rows:
        db.execute(insert(UnitTriple), triple_rows)
    if not reference_rows:
        return
    parsed = [r for e in batch for r in e.references]
    if not any(r.mentions for r in parsed):
        db.execute(insert(UnitReference), reference_rows)
        return
    reference_ids = db.scalars(
        insert(UnitReference).returning(UnitReference.id, sort_by_parameter_order=True),
        reference_rows,
    ).all()
    db.execute(
        insert(ReferenceMention),
        [
            {
                "reference_id": reference_id,
                "position": position,
                "entity": m.entity,
                "mention": m.mention,
                "tag": m.tag,
                "mention_type": m.mention_type,
                "source": "import",
            }
            for reference_id, r in zip(reference_ids, parsed, strict=True)
            for position, m in enumerate(r.mentions)
        ],
    )


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


def _mentions_element(mentions: list[Any], layout: dict[str, Any]) -> ET.Element:
    """``references`` of an enriched lex, rebuilt from its ``reference_mentions`` rows."""
    element = ET.Element("references", layout.get("attributes", {}))
    numbers, orders = layout.get("numbers", {}), layout.get("orders", {})
    extras = layout.get("extra", {})
    for index, row in enumerate(mentions):
        key = str(row.position)
        values = {
            "entity": row.entity,
            "number": numbers.get(key, str(index + 1)),
            "tag": row.tag,
            "type": row.mention_type,
            **extras.get(key, {}),
        }
        order = orders.get(key, list(MENTION_ATTRIBUTES))
        child = ET.SubElement(
            element, "reference", {n: values[n] for n in order if values.get(n) is not None}
        )
        child.text = row.mention
    return element


def _lex_element(
    slot: dict[str, Any] | None, reference: Any, flavour: str, mentions: list[Any] | None = None
) -> ET.Element:
    if slot is None:
        order = ["lid", "lang"] + (["quality"] if flavour == "tailnlg" else [])
        slot = {"kind": "lex", "order": order}
    values = {
        "lid": reference.lid,
        "lang": reference.lang,
        "quality": reference.quality,
        **slot.get("extra", {}),
    }
    if "lang_written" in slot and reference.lang == slot.get("lang_decided"):
        values["lang"] = slot["lang_written"]  # lang="" as the file had it
    attributes = {name: values[name] for name in slot["order"] if values.get(name) is not None}
    element = ET.Element("lex", attributes)
    if "children" in slot:
        for index, (xml, tail) in enumerate(zip(slot["children"], slot["tails"], strict=True)):
            if index == slot.get("mentions_at"):
                child = _mentions_element(mentions or [], slot.get("mention_layout", {}))
            else:
                child = SafeET.fromstring(xml)
            if slot.get("text_from_child") and child.tag == "text":
                child.text = reference.text
            child.tail = tail
            element.append(child)
        element.text = slot["own_text"] if slot.get("text_from_child") else reference.text
    else:
        element.text = reference.text
    return element


def _entry_attributes(
    unit: Any, layout: dict[str, Any] | None, eid: str, flavour: str, category: str | None
) -> dict[str, str]:
    if layout is None:
        attributes = {
            "category": category or "",
            "eid": eid,
            "shape": "",
            "shape_type": unit.shape or "",
            "size": str(unit.size),
        }
        if flavour == "tailnlg":
            attributes.update(
                unique_id=unit.uid,
                qid=unit.root_qid or "",
                type=unit.tier or "",
                subtype=unit.sub_tier or "",
            )
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


def _entry_element(
    unit: Any,
    triples: list[Any],
    references: list[Any],
    eid: str,
    flavour: str,
    category: str | None,
    mentions: dict[int, list[Any]] | None = None,
) -> ET.Element:
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
                reference = remaining.pop(0)
                entry.append(
                    _lex_element(slot, reference, flavour, (mentions or {}).get(reference.id))
                )
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


def _append_generated_children(
    entry: ET.Element, by_set: dict[tuple[str, str], list[Any]], references: list[Any], flavour: str
) -> None:
    """Children of a unit built in the app: the usual WebNLG/TailNLG set order."""
    main_en = by_set.get(("en", "main"), [])
    original = by_set.get(("en", "original"), main_en)
    sets: list[tuple[str, list[Any]]] = [
        ("originaltripleset", original),
        ("modifiedtripleset", main_en),
    ]
    if flavour == "tailnlg":
        sets += [
            ("spanishtripleset", by_set.get(("es", "main"), [])),
            ("italiantripleset", by_set.get(("it", "main"), [])),
        ]
    for tag, rows in sets:
        entry.append(_tripleset_element({"tag": tag}, rows))
    for reference in references:
        entry.append(_lex_element(None, reference, flavour))


def _is_layout(attributes: Any) -> TypeGuard[dict[str, Any]]:
    return (
        isinstance(attributes, dict)
        and attributes.get("format") in ("tailnlg", "webnlg")
        and "entry" in attributes
        and "children" in attributes
    )


def export_webnlg(
    store: SessionStore,
    path: Path | str,
    *,
    flavour: ExportFlavour = "tailnlg",
    ctx: JobContext | None = None,
    force: bool = False,
) -> ExportReport:
    """Write every data unit of ``store`` to ``path``; the report counts entries (one per
    unit: no unit is skipped), the ``lex`` references and the triples written.

    Imported units are written back as they came (with edits made since); units built in
    the app get a generated eid. The file is written under a temporary name and moved
    into place, so a failure never leaves half a file.
    """
    from sqlalchemy import select

    from core.store.models import (
        Category,
        DataUnit,
        ReferenceMention,
        UnitReference,
        UnitTriple,
    )

    if flavour not in ("tailnlg", "webnlg"):
        raise FormatError(f"Unknown WebNLG flavour {flavour!r}: use tailnlg or webnlg.")
    path = Path(path).expanduser()
    if path.is_dir():
        raise FormatError(f"Cannot export to {path}: it is a folder. Give a file name.")
    with store.unit_of_work() as db:
        units = list(db.scalars(select(DataUnit).order_by(DataUnit.id)))
        triples: dict[int, list[Any]] = defaultdict(list)
        for row in db.scalars(
            select(UnitTriple).order_by(
                UnitTriple.unit_id, UnitTriple.lang, UnitTriple.tripleset, UnitTriple.position
            )
        ):
            triples[row.unit_id].append(row)
        references: dict[int, list[Any]] = defaultdict(list)
        for ref in db.scalars(select(UnitReference).order_by(UnitReference.id)):
            references[ref.unit_id].append(ref)
        categories = {row.id: row.name for row in db.execute(select(Category.id, Category.name))}
        mentions: dict[int, list[Any]] = defaultdict(list)
        for mention in db.scalars(
            select(ReferenceMention).order_by(
                ReferenceMention.reference_id, ReferenceMention.position, ReferenceMention.id
            )
        ):
            mentions[mention.reference_id].append(mention)
        db.expunge_all()
    used_eids = {u.attributes["entry"].get("eid") for u in units if _is_layout(u.attributes)}
    next_eid = _eid_counter(used_eids)
    written_references = written_triples = 0
    with atomic_output(path, force=force) as handle:
        handle.write(XML_DECLARATION)
        handle.write("<benchmark>\n  <entries>\n")
        for done, unit in enumerate(units, start=1):
            if ctx is not None:
                ctx.check_cancelled()
            eid = "" if _is_layout(unit.attributes) else next_eid()
            element = _entry_element(
                unit,
                triples[unit.id],
                references[unit.id],
                eid,
                flavour,
                categories.get(unit.category_id),
                mentions,
            )
            # Counted from the element, so the report says what the file holds (a WebNLG
            # export has no Spanish/Italian sets).
            written_references += len(element.findall("lex"))
            written_triples += sum(len(child) for child in element if child.tag in TRIPLESETS)
            ET.indent(element, space="  ", level=2)
            handle.write("    " + ET.tostring(element, encoding="unicode") + "\n")
            if ctx is not None:
                ctx.progress(done, len(units), f"{done} entries written")
        handle.write("  </entries>\n</benchmark>\n")
    return ExportReport(
        len(units),
        len(units),
        written_references,
        [],
        triples=written_triples,
        path=str(path),
        format=flavour,
    )


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
    store: SessionStore,
    path: Path | str,
    *,
    flavour: ImportFlavour = "auto",
    lang: str | None = None,
) -> Job[ImportReport]:
    path = Path(path)
    return Job(
        title=f"Import {path.name}",
        run=lambda ctx: import_webnlg(store, path, flavour=flavour, lang=lang, ctx=ctx),
        kind="import",
        kept=lambda: IMPORT_KEPT,
        params={"path": str(path), "format": flavour, "lang": lang},
        writes=IMPORT_WRITES,
    )


def export_job(
    store: SessionStore, path: Path | str, *, flavour: ExportFlavour = "tailnlg"
) -> Job[ExportReport]:
    path = Path(path)
    return Job(
        title=f"Export {path.name}",
        run=lambda ctx: export_webnlg(store, path, flavour=flavour, ctx=ctx),
        kind="export",
        params={"path": str(path), "format": flavour},
    )


def _progress_note(totals: _Totals, name: str) -> str:
    """The import's progress words: the count of entries read is the progress's own
    number, so the note names what it is ("1 entry read: 1 unit from x.xml")."""
    return f"{plural(totals.entries, 'entry')} read: {plural(totals.units, 'unit')} from {name}"
