"""The elements of a WDV file's top-level JSON array, read one at a time (:class:`RecordReader`)."""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.formats.common import FormatError

# The digits of an integer one record may hold (Python refuses to convert more than
# 4,300; a score has 1).
MAX_INT_DIGITS = 40
CHUNK_BYTES = 1 << 16  # read this much of the file at a time
# Longest one record may be: a WDV record is a few kilobytes; a file is streamed, so
# without this a single element (one endless string) would be held whole, however long.
MAX_RECORD_CHARS = 16_000_000


class _NumberTooLong(ValueError):
    def __init__(self, digits: int) -> None:
        super().__init__(f"a number of {digits} digits")
        self.digits = digits


_DIGIT_CHARS = frozenset("0123456789")


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _NumberTooLong(digits)
    return int(text)


_WHITESPACE = re.compile(r"[ \t\n\r]*")
# A decoding error this close to the end of what was read may only mean the value goes
# on in the next chunk ("tru|e", "\\u00|e9", "-|1"); further back it is a real error.
_TAIL_MARGIN = 16
_JSON_KINDS = {"{": "object", '"': "string", "t": "boolean", "f": "boolean", "n": "null"}


class RecordReader:
    """The elements of a JSON array read one at a time from a UTF-8 file.

    A WDV release is one large array; reading it whole would hold the text and every
    parsed record at once. This reader keeps only the undecoded rest of the current
    chunk: each element is decoded with :meth:`json.JSONDecoder.raw_decode` where it
    starts, and when an element runs past the chunk the next chunk is appended and the
    element decoded again. Errors name the line and column in the whole file, as
    :func:`json.loads` would.
    """

    def __init__(self, path: Path, chunk_bytes: int | None = None) -> None:
        self.path = path
        self.chunk_bytes = chunk_bytes or CHUNK_BYTES
        self.bytes_read = 0
        self._handle = path.open("rb")
        self._decoder = json.JSONDecoder(parse_int=_bounded_int)
        self._text_decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self._buffer = ""
        self._pos = 0  # next character to read in the buffer
        self._eof = False
        self._line, self._column = 1, 1  # where the buffer's first character is in the file
        self._raw_lines = 0  # newlines in the bytes decoded so far

    def close(self) -> None:
        self._handle.close()

    # -- reading ----------------------------------------------------------------------------
    def _fill(self, at_least: int = 0) -> None:
        """Append the next chunk of text, of at least ``at_least`` bytes (or note the end
        of the file)."""
        if self._eof:
            return
        # Dropping what was already read keeps the buffer about a chunk long.
        if self._pos:
            self._advance_origin(self._buffer[: self._pos])
            self._buffer = self._buffer[self._pos :]
            self._pos = 0
        raw = self._handle.read(max(self.chunk_bytes, at_least))
        if not raw:
            self._eof = True
        if self.bytes_read == 0 and raw:
            self._check_start(raw)
        try:
            text = self._text_decoder.decode(raw, final=not raw)
        except UnicodeDecodeError as exc:
            raise self._encoding_error(exc) from None
        self.bytes_read += len(raw)
        self._raw_lines += raw.count(b"\n")
        self._buffer += text

    def _check_start(self, head: bytes) -> None:
        if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or b"\x00" in head[:64]:
            raise FormatError(
                f"{self.path.name} is not UTF-8: it looks like UTF-16 or UTF-32 text (it "
                "starts with a byte-order mark or holds NUL bytes). WDV files are UTF-8 "
                "JSON: save it as UTF-8 and import it again."
            )

    def _encoding_error(self, exc: UnicodeDecodeError) -> FormatError:
        before = exc.object[: exc.start]
        line = self._raw_lines + before.count(b"\n") + 1
        column = exc.start - before.rfind(b"\n") if b"\n" in before else None
        where = f"line {line}" + (f", column {column}" if column is not None else "")
        return FormatError(
            f"{self.path.name} is not readable as UTF-8 text: {where} holds byte "
            f"0x{exc.object[exc.start]:02x}, which is not valid UTF-8 (the file may be "
            "Latin-1 or Windows-1252). WDV files are UTF-8 JSON: save it as UTF-8 and "
            "import it again."
        )

    def _advance_origin(self, dropped: str) -> None:
        newlines = dropped.count("\n")
        if newlines:
            self._line += newlines
            self._column = len(dropped) - dropped.rfind("\n")
        else:
            self._column += len(dropped)

    def _where(self, index: int) -> tuple[int, int]:
        before = self._buffer[:index]
        newlines = before.count("\n")
        if newlines:
            return self._line + newlines, index - before.rfind("\n")
        return self._line, self._column + index

    def _error(self, message: str, index: int) -> FormatError:
        line, column = self._where(index)
        return FormatError(
            f"{self.path.name} is not valid JSON: {message} at line {line}, column "
            f"{column} (expected a JSON array of WDV records)."
        )

    def _peek(self) -> str:
        """The next character that is not whitespace ("" at the end of the file)."""
        while True:
            self._pos = _WHITESPACE.match(self._buffer, self._pos).end()  # type: ignore[union-attr]
            if self._pos < len(self._buffer) or self._eof:
                return self._buffer[self._pos : self._pos + 1]
            self._fill()

    def _more(self) -> None:
        """Read on for an element that runs past the buffer. The buffer at least doubles,
        so an element of n characters is decoded O(log n) times, not once per chunk (which
        took time quadratic in n: 8 MB in 1.6 s, 64 MB in minutes); one longer than
        :data:`MAX_RECORD_CHARS` is refused."""
        pending = len(self._buffer) - self._pos
        if pending > MAX_RECORD_CHARS:
            raise self._error(
                f"a record longer than {MAX_RECORD_CHARS:,} characters (the record starting here)",
                self._pos,
            )
        self._fill(at_least=pending)

    def _value(self) -> Any:
        while True:
            try:
                value, end = self._decoder.raw_decode(self._buffer, self._pos)
            except RecursionError:
                raise self._error(
                    "lists or objects nested too deeply (the record starting here)", self._pos
                ) from None
            except _NumberTooLong as exc:
                if not self._eof and self._buffer[-1:] in _DIGIT_CHARS:
                    self._more()  # the number may go on in the next chunk: count it all
                    continue
                raise self._error(
                    f"a number of {exc.digits:,} digits, more than {MAX_INT_DIGITS} (in the "
                    "record starting here)",
                    self._pos,
                ) from None
            except json.JSONDecodeError as exc:
                near_end = exc.pos >= len(self._buffer) - _TAIL_MARGIN
                if not self._eof and (near_end or exc.msg.startswith("Unterminated string")):
                    self._more()
                    continue
                raise self._error(exc.msg, exc.pos) from None
            if end >= len(self._buffer) and not self._eof:
                self._more()  # a number at the very end may go on in the next chunk
                continue
            self._pos = end
            return value

    def records(self) -> Iterator[Any]:
        """Each element of the top-level array, in order."""
        first = self._peek()
        if first != "[":
            kind = _JSON_KINDS.get(first) or (
                "number" if first and first in "-0123456789" else None
            )
            if kind is None:
                raise self._error("Expecting value", self._pos)
            raise FormatError(
                f"{self.path.name} is not a WDV file: its top level is a JSON {kind}, "
                "expected an array of records."
            )
        self._pos += 1
        if self._peek() == "]":
            self._pos += 1
        else:
            while True:
                yield self._value()
                following = self._peek()
                self._pos += 1
                if following == "]":
                    break
                if following != ",":
                    raise self._error("Expecting ',' delimiter", self._pos - 1)
                self._peek()
        if self._peek():
            raise self._error("Extra data", self._pos)
