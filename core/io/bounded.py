"""Structured text from outside, read within bounds: JSON, YAML, CSV, integer attributes.

A file or reply that TailLens did not write (judgments, a pack's manifest, a lock file, a
model card, a worker's reply, a synonym table, an XML attribute) may hold what no writer
of it meant: a 100,000-deep array (Python's parsers recurse and fail with RecursionError),
a 5,000-digit integer (``int`` refuses over 4,300 digits with ValueError; SQLite with
OverflowError over 2**63), ``1e400`` (a float that is infinity), an encoded lone surrogate
(``"\\ud800"``: a ``str`` no UTF-8 writer can write later), a YAML alias bomb (a few
hundred bytes that stand for millions of nodes), a bare carriage return in a CSV field
(``_csv.Error``). Every reader of such text goes through this module, which checks

* the size of the text (the caller's byte limit, through :mod:`core.io.files`);
* the nesting depth (:attr:`Limits.depth`);
* every number: at most :attr:`Limits.number_chars` characters, and finite;
* every string: at most :attr:`Limits.string_chars` characters, no lone surrogate;
* the values in all (:attr:`Limits.nodes`), counting a YAML alias as the nodes it stands
  for, so that a bomb is refused while it is composed, before it is expanded;

and turns any refusal into one :class:`BoundedTextError` (a ``UserFacingError``) that
names the file (or the reply) and says what was wrong, never a traceback.
Qt-free and light: the standard library, ``core.errors`` and ``core.io.files`` (PyYAML is
imported only to read YAML).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import UserFacingError
from core.io import files


class BoundedTextError(UserFacingError):
    """Structured text that is not what it claims or breaks a bound; names its source."""


@dataclass(frozen=True)
class Limits:
    depth: int = 64  # arrays/objects (sequences/mappings) inside one another
    number_chars: int = 100  # characters of one number as written
    string_chars: int = 16 * files.MB  # characters of one string (or YAML scalar)
    nodes: int = 20_000_000  # values in all (a YAML alias counts as what it stands for)
    # A reader that repairs lone surrogates itself (a server's reply) may take them.
    surrogates: bool = False


DEFAULT = Limits()
# A server's reply whose lone surrogates its reader replaces (the verbalisers, SPARQL).
REPLY = Limits(surrogates=True)
# A model card, a lock file, a settings file: small things.
SMALL = Limits(depth=32, string_chars=1 * files.MB, nodes=200_000)


class _Refused(Exception):
    """Raised inside a parser hook; becomes a BoundedTextError naming the source."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def _fail(error: type[UserFacingError], what: str, name: str, why: str) -> UserFacingError:
    subject = f"{what} {name}".strip() if what else name
    return error(f"Cannot read {subject}: {why}")


# -- JSON ------------------------------------------------------------------------------


# A float written with at most this many characters and no exponent is below 1e308: finite.
_FINITE_CHARS = 308


def _number_hooks(limits: Limits, text: str | None = None) -> dict[str, Any]:
    """The parser's hooks that refuse a number too long or not finite. Given the ``text``
    to parse, only those it needs: no number in it is longer than the text itself, and a
    text with no exponent (no ``e`` or ``E`` anywhere) short enough holds only finite
    floats, so a short text (a score's sentence statistics, ``[31, 39, 26, ...]``) is
    parsed with no Python call per number."""

    def parse_int(text: str) -> int:
        if len(text) > limits.number_chars:
            raise _Refused(
                f"a number of {len(text.lstrip('-')):,} digits (at most "
                f"{limits.number_chars} are read)"
            )
        return int(text)

    def parse_float(text: str) -> float:
        if len(text) > limits.number_chars:
            raise _Refused(
                f"a number written with {len(text):,} characters (at most "
                f"{limits.number_chars} are read)"
            )
        value = float(text)
        if not math.isfinite(value):
            raise _Refused(f"the number {text[:20]} is too large to hold")
        return value

    def parse_constant(text: str) -> Any:
        raise _Refused(f"{text} is not a number standard JSON allows")

    hooks = {"parse_int": parse_int, "parse_float": parse_float, "parse_constant": parse_constant}
    if text is not None and len(text) <= limits.number_chars:
        del hooks["parse_int"]
        if len(text) <= _FINITE_CHARS and "e" not in text and "E" not in text:
            del hooks["parse_float"]
    return hooks


def check_value(value: Any, limits: Limits = DEFAULT) -> str | None:
    """Why ``value`` (parsed JSON or YAML) breaks ``limits``, or None. Walks iteratively:
    the depth of the value costs no Python stack."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    nodes = 0
    while stack:
        item, depth = stack.pop()
        nodes += 1
        if nodes > limits.nodes:
            return f"more than {limits.nodes:,} values"
        if isinstance(item, str):
            if len(item) > limits.string_chars:
                return f"a text of {len(item):,} characters (at most {limits.string_chars:,})"
            if not limits.surrogates and _SURROGATE.search(item) is not None:
                return "a text holds an unpaired surrogate (\\ud800-\\udfff), which is not text"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return "a number is not finite"
        elif isinstance(item, dict | list | tuple):
            if depth > limits.depth:
                return f"values nested more than {limits.depth} deep"
            if isinstance(item, dict):
                for key, child in item.items():
                    stack.append((key, depth + 1))
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)
    return None


# A JSON escape that may stand for a lone surrogate (\uD800-\uDFFF, hex in either case).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD]")
# A JSON string (escapes included) or a run of anything but brackets and quotes: what is
# left when they are removed is the text's brackets, strings' brackets aside.
_NOT_A_BRACKET = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"|[^\[\]{}"]++')


def _surely_within(text: str, limits: Limits) -> bool:
    """True when the JSON ``text`` (already parsed with :func:`_number_hooks`) cannot
    break ``limits``, seen from the text alone, in C-speed scans: walking the parsed value
    (:func:`check_value`, a Python step per value) is then not needed. False means "walk
    it", not "it breaks them". Why each bound holds:

    * values: each starts at its own character of the text, so there are at most
      ``len(text)``; a string's characters are at most the text's too;
    * lone surrogates: a parsed string holds one only where the text holds one or a
      ``\\uD…`` escape;
    * numbers: the parser hooks have refused any too long or not finite already;
    * depth: at most the number of ``[`` and ``{`` in the text; where that is more than
      the bound, the deepest running count of the brackets outside strings.
    """
    if len(text) > limits.nodes or len(text) > limits.string_chars:
        return False
    if not limits.surrogates and (
        _SURROGATE.search(text) is not None or _SURROGATE_ESCAPE.search(text) is not None
    ):
        return False
    if text.count("[") + text.count("{") <= limits.depth:
        return True
    depth = 0
    for bracket in _NOT_A_BRACKET.sub("", text):
        if bracket in "[{":
            depth += 1
            if depth > limits.depth:
                return False
        else:
            depth -= 1
    return True


def loads_json(
    text: str | bytes,
    *,
    name: str,
    what: str = "",
    limits: Limits = DEFAULT,
    error: type[UserFacingError] = BoundedTextError,
) -> Any:
    """``text`` parsed as standard JSON within ``limits``, or ``error`` naming ``name``."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise _fail(error, what, name, f"not UTF-8 text (byte {exc.start})") from None
    try:
        value = json.loads(text, **_number_hooks(limits, text))
    except _Refused as exc:
        raise _fail(error, what, name, str(exc)) from None
    except RecursionError:
        raise _fail(error, what, name, f"values nested more than {limits.depth} deep") from None
    except json.JSONDecodeError as exc:
        raise _fail(
            error, what, name, f"not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except (ValueError, TypeError) as exc:
        raise _fail(error, what, name, f"not JSON ({exc})") from None
    if not _surely_within(text, limits):
        problem = check_value(value, limits)
        if problem is not None:
            raise _fail(error, what, name, problem)
    return value


def stored_json(text: object, default: Any) -> Any:
    """JSON a session holds (settings, drafts, a score's details): ``text`` parsed within
    :data:`DEFAULT`'s bounds, or ``default`` when there is none or it cannot be read. A
    session may come from elsewhere (sent by a colleague, edited by another program), so
    what it holds is outside text too: deep nesting, ``1e400`` or a lone surrogate there
    must make a reader fall back, never fail with a traceback."""
    if not isinstance(text, str | bytes) or not text:
        return default
    try:
        return loads_json(text, name="the session")
    except BoundedTextError:
        return default


def read_json(
    path: Path | str,
    *,
    limit: int,
    what: str = "the file",
    limits: Limits = DEFAULT,
    error: type[UserFacingError] = BoundedTextError,
) -> Any:
    """A JSON file from outside: checked and size-capped (:func:`core.io.files.read_text`),
    then :func:`loads_json`."""
    text = files.read_text(path, limit=limit, what=what, error=error)
    return loads_json(text, name=str(path), what=what, limits=limits, error=error)


# -- YAML ------------------------------------------------------------------------------


def loads_yaml(
    text: str,
    *,
    name: str,
    what: str = "",
    limits: Limits = SMALL,
    error: type[UserFacingError] = BoundedTextError,
) -> Any:
    """``text`` as YAML with PyYAML's safe loader, bounded while it is composed: depth,
    scalar length, integer digits, and nodes counted with what each alias stands for (an
    alias bomb is refused before anything is expanded)."""
    import yaml

    class Loader(yaml.SafeLoader):
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self._depth = 0
            self._weights: dict[int, int] = {}

        def compose_node(self, parent: Any, index: Any) -> Any:
            self._depth += 1
            if self._depth > limits.depth:
                raise _Refused(f"values nested more than {limits.depth} deep")
            try:
                node = super().compose_node(parent, index)
            finally:
                self._depth -= 1
            known = self._weights.get(id(node))
            if known is not None:  # an alias: the nodes it stands for
                weight = known
            elif isinstance(node, yaml.ScalarNode):
                if len(node.value) > limits.string_chars:
                    raise _Refused(
                        f"a text of {len(node.value):,} characters (at most "
                        f"{limits.string_chars:,})"
                    )
                weight = 1
            elif isinstance(node, yaml.MappingNode):
                weight = 1 + sum(
                    self._weights.get(id(k), 1) + self._weights.get(id(v), 1) for k, v in node.value
                )
            else:
                weight = 1 + sum(self._weights.get(id(child), 1) for child in node.value)
            if weight > limits.nodes:
                raise _Refused(
                    f"it stands for more than {limits.nodes:,} values (aliases expanded)"
                )
            self._weights[id(node)] = weight
            return node

        def construct_yaml_int(self, node: Any) -> int:
            if len(node.value) > limits.number_chars:
                raise _Refused(f"a number of {len(node.value):,} characters")
            return int(super().construct_yaml_int(node))

    Loader.add_constructor("tag:yaml.org,2002:int", Loader.construct_yaml_int)
    loader = None
    try:
        loader = Loader(text)  # its reader refuses control characters at once
        value = loader.get_single_data()
    except _Refused as exc:
        raise _fail(error, what, name, str(exc)) from None
    except RecursionError:
        raise _fail(error, what, name, f"values nested more than {limits.depth} deep") from None
    except yaml.YAMLError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise _fail(error, what, name, f"not YAML ({first})") from None
    except (ValueError, TypeError, OverflowError) as exc:
        raise _fail(error, what, name, f"a value YAML cannot hold ({exc})") from None
    finally:
        if loader is not None:
            loader.dispose()
    problem = check_value(value, limits)
    if problem is not None:
        raise _fail(error, what, name, problem)
    return value


# -- CSV -------------------------------------------------------------------------------

FIELD_CHARS = 128 * 1024  # the csv module's own default field limit


def csv_rows(
    text: str,
    *,
    name: str,
    delimiter: str = ",",
    what: str = "",
    error: type[UserFacingError] = BoundedTextError,
) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of ``text`` as CSV. Any line ending (``\\r\\n``, ``\\n``, a
    bare ``\\r``) ends a line, as Python's text files read them; a field longer than
    :data:`FIELD_CHARS` or a quote that never closes is one error naming the line."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise _fail(error, what, name, f"line {line} holds a NUL character; it is not text")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=False)
    line = 0
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise _fail(error, what, name, f"line {reader.line_num}: {exc}") from None
        line += 1
        if any(len(f) > FIELD_CHARS for f in fields):
            raise _fail(
                error, what, name, f"line {reader.line_num}: a field over {FIELD_CHARS:,} chars"
            )
        yield reader.line_num, fields


# -- integers written as text (XML attributes) -----------------------------------------

_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")


def bounded_int(text: str | None, *, low: int, high: int) -> int | None:
    """``text`` (an XML attribute, a header) as an integer in ``low..high``, or None when
    it is not one: not digits, more than 18 of them, or outside the range."""
    if text is None:
        return None
    stripped = text.strip()
    if _INTEGER.fullmatch(stripped) is None:
        return None
    value = int(stripped)
    return value if low <= value <= high else None


__all__ = [
    "DEFAULT",
    "REPLY",
    "SMALL",
    "BoundedTextError",
    "Limits",
    "bounded_int",
    "check_value",
    "csv_rows",
    "loads_json",
    "loads_yaml",
    "read_json",
]
