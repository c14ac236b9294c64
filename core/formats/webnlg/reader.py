"""Reading a WebNLG/TailNLG file safely and incrementally: the declared encoding, the
bounds on depth and token size, DOCTYPE refusal (defusedxml), and the stream of parsed
entries, each finished entry dropped from the tree so memory stays small."""

from __future__ import annotations

import codecs
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from core.formats.common import FormatError


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


def detect_flavour(path: Path) -> str:
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


class Position:
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


def iter_entries(
    path: Path, display: str | None = None, position: Position | None = None
) -> Iterator[ET.Element]:
    """Each ``benchmark/entries/entry`` element, complete, then dropped from the tree.

    The file is fed to expat in chunks that grow with an unfinished tag, so a huge tag
    costs linear time (expat re-scans an unfinished token on every feed); a tag longer
    than :data:`MAX_TOKEN_BYTES` or nesting deeper than :data:`MAX_DEPTH` is refused."""
    display = display or path.name
    position = position or Position(display)
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
