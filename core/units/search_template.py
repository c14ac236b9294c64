"""Unit templates of the knowledge beam search (METHODS §3): ``?x P19 ?a . ?a P17 ?b``
parsed into patterns whose variables the search fills, one at a time."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.errors import UserFacingError
from core.units.shapes import MAX_SIZE
from core.wikidata.categories import PID_RE


class SearchError(UserFacingError):
    """Bad input to the unit search (template, property, class, settings)."""


# --- templates ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    subject: str  # a variable name, without "?"
    pid: str
    obj: str


@dataclass(frozen=True)
class UnitTemplate:
    text: str
    patterns: tuple[Pattern, ...]

    @property
    def root(self) -> str:
        return self.patterns[0].subject

    @property
    def variables(self) -> tuple[str, ...]:
        """Fill order: the root, then each pattern's object."""
        return (self.root, *(p.obj for p in self.patterns))


_VAR = re.compile(r"\?[A-Za-z_][A-Za-z0-9_]*")
_PROP = re.compile(r"(?:wdt:)?(P[0-9]+)")
_TOKEN = re.compile(r"\S+")


def parse_template(text: str) -> UnitTemplate:
    """Parse ``?x P19 ?a . ?a P17 ?b``: patterns separated by ``.``, each a variable, a
    property id (``P19`` or ``wdt:P19``) and a new variable. The first pattern's subject is
    the root; every other subject must be bound by an earlier pattern. Errors name the
    pattern and the character position (1-based)."""
    if not isinstance(text, str) or not text.strip():
        raise SearchError("the template is empty: write patterns like ?x P19 ?a . ?a P17 ?b")
    tokens = [(m.group(), m.start() + 1) for m in _TOKEN.finditer(text)]
    groups: list[list[tuple[str, int]]] = [[]]
    for token, pos in tokens:
        # A "." may stand alone or end a token ("?a ." or "?a.").
        if token == ".":
            groups.append([])
        elif token.endswith(".") and len(token) > 1:
            groups[-1].append((token[:-1], pos))
            groups.append([])
        else:
            groups[-1].append((token, pos))
    if not groups[-1]:
        groups.pop()
    patterns: list[Pattern] = []
    bound: set[str] = set()
    for n, group in enumerate(groups, 1):
        where = f"pattern {n}"
        if len(group) != 3:
            pos = group[0][1] if group else len(text)
            raise SearchError(
                f"template {where} at position {pos}: a pattern is "
                f"'?subject Pnn ?object', got {' '.join(t for t, _ in group)!r}"
            )
        (subj, sp), (prop, pp), (obj, op) = group
        for token, pos, part in ((subj, sp, "subject"), (obj, op, "object")):
            if not _VAR.fullmatch(token):
                raise SearchError(
                    f"template {where} at position {pos}: the {part} must be a "
                    f"variable like ?x, not {token!r}"
                )
        match = _PROP.fullmatch(prop)
        if not match or not PID_RE.fullmatch(match.group(1)):
            raise SearchError(
                f"template {where} at position {pp}: {prop!r} is not a property id like P19"
            )
        s, o = subj[1:], obj[1:]
        if n == 1:
            bound.add(s)
        elif s not in bound:
            raise SearchError(
                f"template {where} at position {sp}: ?{s} is not bound by an "
                "earlier pattern (the unit must be connected from the root)"
            )
        if o in bound:
            raise SearchError(
                f"template {where} at position {op}: ?{o} is already bound; "
                "each pattern must introduce a new variable"
            )
        bound.add(o)
        patterns.append(Pattern(s, match.group(1), o))
    if not patterns:
        raise SearchError("the template has no pattern")
    if len(patterns) > MAX_SIZE:
        raise SearchError(
            f"the template has {len(patterns)} patterns; a unit has at most {MAX_SIZE} triples"
        )
    return UnitTemplate(text.strip(), tuple(patterns))
