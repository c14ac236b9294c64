"""The words ESA compares (METHODS §7): Unicode word tokens, casefolded and without
accents, and the edit distance between them: Hyyrö's bit-parallel form of Myers'
algorithm, with a search that reads several patterns in one pass over a text."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


WORD = re.compile(r"\w+")

# --- edit distance ------------------------------------------------------------------------


def pattern_masks(pattern: str) -> dict[str, int]:
    masks: dict[str, int] = {}
    for index, char in enumerate(pattern):
        masks[char] = masks.get(char, 0) | (1 << index)
    return masks


def myers(pattern: str, masks: dict[str, int], text: str) -> int:
    """Levenshtein distance of ``pattern`` and ``text`` (Hyyrö 2001, global variant)."""
    m = len(pattern)
    if m == 0:
        return len(text)
    full = (1 << m) - 1
    last = 1 << (m - 1)
    pv, mv, score = full, 0, m
    for char in text:
        eq = masks.get(char, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | ~(xh | pv)
        mh = pv & xh
        if ph & last:
            score += 1
        elif mh & last:
            score -= 1
        ph = (ph << 1) | 1
        mh <<= 1
        pv = (mh | ~(xv | ph)) & full
        mv = ph & xv & full
    return score


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions, each 1)."""
    if a == b:
        return 0
    if len(a) < len(b):
        a, b = b, a  # the shorter string as the text: fewer loop passes
    return myers(a, pattern_masks(a), b)


def normalised_distance(a: str, b: str) -> float:
    """Levenshtein distance over the longer length: 0 same, 1 nothing in common."""
    longest = max(len(a), len(b))
    return levenshtein(a, b) / longest if longest else 0.0


# --- tokens and dates ---------------------------------------------------------------------


@lru_cache(maxsize=1 << 17)
def fold(text: str) -> str:
    """Casefolded, accents removed: the form words are compared in."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@dataclass(frozen=True)
class Token:
    text: str  # as written
    folded: str
    start: int
    end: int


def tokenize(text: str) -> list[Token]:
    return [Token(m.group(), fold(m.group()), m.start(), m.end()) for m in WORD.finditer(text)]


def folded_words(text: str) -> str:
    return " ".join(fold(w) for w in WORD.findall(text))


def search_scores(pattern: str, masks: dict[str, int], text: str) -> list[int]:
    """For each end position j of ``text``: the least edit distance between ``pattern`` and
    any substring of ``text`` ending at j (Myers' search variant: the top row is 0)."""
    return multi_search([pattern], text, range(len(text)))[0]


def multi_search(patterns: Sequence[str], text: str, at: Iterable[int]) -> list[list[int]]:
    """:func:`search_scores` of several patterns in one pass over ``text``, read at the
    positions ``at`` only: ``out[i][k]`` is pattern i's score at the k-th position.

    The patterns share one bit-vector (Hyyrö's packing), each followed by a guard bit that
    swallows the carry of the addition so no pattern's column leaks into the next; the
    score of a pattern at a column is the sum of its vertical deltas (the top row is 0):
    ``popcount(pv) - popcount(mv)`` over its bits. One pass of a dozen integer operations
    per character serves every name of every entity of a text."""
    masks: dict[str, int] = {}
    spans: list[int] = []
    offset = 0
    lows = 0
    keep = 0
    for pattern in patterns:
        for i, char in enumerate(pattern):
            masks[char] = masks.get(char, 0) | (1 << (offset + i))
        bits = ((1 << len(pattern)) - 1) << offset
        spans.append(bits)
        keep |= bits
        lows |= 1 << offset
        offset += len(pattern) + 1  # + the guard bit
    shifted = keep & ~lows
    wanted = sorted(set(at))
    out: list[list[int]] = [[] for _ in patterns]
    if not patterns or not wanted:
        return out
    pv, mv = keep, 0
    position = 0
    for j, char in enumerate(text):
        eq = masks.get(char, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | ~(xh | pv)
        mh = pv & xh
        ph = (ph << 1) & shifted
        mh = (mh << 1) & shifted
        pv = (mh | ~(xv | ph)) & keep
        mv = ph & xv & keep
        if j == wanted[position]:
            for i, bits in enumerate(spans):
                out[i].append((pv & bits).bit_count() - (mv & bits).bit_count())
            position += 1
            if position == len(wanted):
                break
    return out
