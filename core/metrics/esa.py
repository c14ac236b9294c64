"""Entity-based semantic adequacy (ESA), ESI@n, and hallucination candidates (METHODS §7).

ESA (Faille, Gatt and Gardent 2021, §4) asks, without any reference: which of the unit's
subjects and objects does the text mention? Identifiers become text first
(:mod:`core.surface`: ``Abilene,_Texas`` is "Abilene, Texas" and also "Abilene"). Every
word n-gram of the text within a normalised Levenshtein distance of :data:`MAX_DISTANCE`
(0.4) of an entity's surface form, a variant, an alias or a synonym (the session's
synonym table, :mod:`core.synonyms`) is a candidate mention; dates are compared after
normalisation (``1990-05-01``, ``1 May 1990``, ``May 1, 1990``, ``5/1/1990``, ``1 maggio
1990``, ``1 de mayo de 1990`` are one date) and numbers as numbers (``610.0`` is "610",
``3500`` is "3,500", and "3.500" in Italian). Overlapping candidates go to the lowest
distance, then the longest span; the third-person pronouns left over are mentions of the
root entity. An entity is detected when it has a mention.

Matching is on words: the text and every name are split into Unicode word tokens
(``\\w+``), compared casefolded and without accents (NFKD, combining marks dropped), so
"Mongolia" in a label and "MONGOLIA" or "Mongólia" in a text meet. The edit distance is
Hyyrö's bit-parallel form of Myers' algorithm on Python integers (no rapidfuzz here). All
names of all entities of a text are searched in one pass over the text (the patterns
packed into one bit-vector): the search score at a token's end bounds every n-gram ending
there from below, so exact n-gram distances are computed only where a match is possible.
The enriched WebNLG dev set (2,268 texts) takes about 1.6 s of CPU time.

Hallucination candidates are the text's capitalised or numeric spans (a run of
capitalised/numeric words, joined by short connectors such as "of" or "de") that match no
subject, object, predicate label or alias, and no detected mention: names, numbers and
dates the unit does not contain. They are candidates for a person to look at, not
verdicts.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core.metrics.base import (
    ESA,
    HALLUCINATION,
    CorpusFromSentences,
    EntityInfo,
    MetricValue,
    ScoringItem,
)
from core.metrics.details import EsaDetails, HallucinationDetails, Span
from core.metrics.signature import Signature
from core.surface import predicate_words, surface, variants
from core.units import MONTH_NAMES

MAX_DISTANCE = 0.4
ESA_VERSION = "2"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Third-person pronouns (casefolded, accents kept: Spanish "él" is a pronoun, "el" is not).
PRONOUNS: dict[str, frozenset[str]] = {
    "en": _words(
        "he she it they him her them his hers its their theirs himself herself itself themselves"
    ),
    "it": _words("egli ella esso essa essi esse lui lei loro suo sua suoi sue"),
    "es": _words("él ella ello ellos ellas su sus suyo suya suyos suyas"),
}

# Words that start sentences capitalised without naming anything; never hallucinations.
_STOPWORDS: dict[str, frozenset[str]] = {
    "en": _words(
        "a an the he she it they we i you his her its their our this that these those there "
        "here in on at by for with from as and but or also both however after before during "
        "since while which who whom whose what when where why how is was are were be been "
        "being has have had born its one some many most all each other another further then "
        "today currently formerly according although though because if not no yes"
    ),
    "it": _words(
        "il lo la i gli le un uno una l un' egli ella esso essa lui lei loro suo sua suoi sue "
        "questo questa questi queste quello quella quelli quelle che chi cui dove quando come "
        "perché e ed o ma anche inoltre nel nella nei nelle nello negli al alla ai alle allo "
        "agli del della dei delle dello degli dal dalla dai dalle in a da di con su per tra fra "
        "è era sono erano fu nato nata ha hanno aveva è oggi attualmente secondo dopo prima "
        "durante si ci non"
    ),
    "es": _words(
        "el la los las un una unos unas él ella ellos ellas su sus este esta estos estas ese esa "
        "esos esas aquel aquella que quien cuyo cuya donde cuando como porque y e o u pero "
        "también además en a de del al con por para entre desde hasta es era son eran fue "
        "nació nacido nacida ha han había hoy actualmente según después antes durante se no "
        "lo le les"
    ),
}
# Short words allowed inside a capitalised span ("Republic of China", "Reino de España").
_CONNECTORS = _words("of the de del della di dei degli delle la las los y e von van da du and")
_SPAN_GLUE = re.compile(r"[ \t\-–'’.]*")

_WORD = re.compile(r"\w+")

_MONTH_NAMES: dict[str, int] = {}
for _month_names in (
    # The full names in en, it and es (core.units writes values with them), lower-cased.
    *(tuple(name.lower() for name in names) for names in MONTH_NAMES.values()),
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
):
    for _number, _name in enumerate(_month_names, start=1):
        _MONTH_NAMES.setdefault(_name, _number)
_MONTH_NAMES["sept"] = 9
_MONTH_NAMES["setiembre"] = 9
_MONTH = "|".join(sorted(_MONTH_NAMES, key=len, reverse=True))
_ORDINAL = r"(?:st|nd|rd|th|º|°|o)?"
# Order matters: the most specific forms claim their characters first.
_DATE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<![\w+-])([+-]?\d{1,4})-(\d{1,2})-(\d{1,2})(?:T[\d:]+Z?)?(?!\w)"), "ymd"),
    (
        re.compile(
            rf"(?<!\w)(\d{{1,2}}){_ORDINAL}\s+(?:de\s+|of\s+)?({_MONTH})\.?,?\s+"
            rf"(?:de\s+|del\s+)?(\d{{1,4}})(?!\w)",
            re.IGNORECASE,
        ),
        "dmy",
    ),
    (
        re.compile(
            rf"(?<!\w)({_MONTH})\.?\s+(\d{{1,2}}){_ORDINAL},?\s+(\d{{1,4}})(?!\w)", re.IGNORECASE
        ),
        "mdy",
    ),
    (
        re.compile(
            rf"(?<!\w)({_MONTH})\.?,?\s+(?:de\s+|del\s+|of\s+)?(\d{{3,4}})(?!\w)", re.IGNORECASE
        ),
        "my",
    ),
    (re.compile(r"(?<![\w/])(\d{4})/(\d{1,2})/(\d{1,2})(?![\w/])"), "ymd"),
    (re.compile(r"(?<![\w/.])(\d{1,2})[/.](\d{1,2})[/.](\d{4})(?![\w/])"), "dmy_numeric"),
)


# --- edit distance ------------------------------------------------------------------------


def _pattern_masks(pattern: str) -> dict[str, int]:
    masks: dict[str, int] = {}
    for index, char in enumerate(pattern):
        masks[char] = masks.get(char, 0) | (1 << index)
    return masks


def _myers(pattern: str, masks: dict[str, int], text: str) -> int:
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
    return _myers(a, _pattern_masks(a), b)


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
    return [Token(m.group(), fold(m.group()), m.start(), m.end()) for m in _WORD.finditer(text)]


def _folded_words(text: str) -> str:
    return " ".join(fold(w) for w in _WORD.findall(text))


@dataclass(frozen=True)
class DateMention:
    year: int
    month: int | None
    day: int | None
    start: int
    end: int

    @property
    def key(self) -> tuple[int, int | None, int | None]:
        return (self.year, self.month, self.day)


def find_dates(text: str) -> list[DateMention]:
    """Dates written in the text, in any of the en/it/es forms or ISO, with char spans."""
    found: list[DateMention] = []
    taken: list[tuple[int, int]] = []
    for pattern, form in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < e and s < end for s, e in taken):
                continue
            groups = match.groups()
            try:
                if form == "ymd":
                    year, month, day = int(groups[0]), int(groups[1]), int(groups[2])
                elif form == "dmy":
                    day, month, year = (
                        int(groups[0]),
                        _MONTH_NAMES[groups[1].lower()],
                        int(groups[2]),
                    )
                elif form == "mdy":
                    month, day, year = (
                        _MONTH_NAMES[groups[0].lower()],
                        int(groups[1]),
                        int(groups[2]),
                    )
                elif form == "my":
                    month, day, year = _MONTH_NAMES[groups[0].lower()], 0, int(groups[1])
                else:
                    day, month, year = int(groups[0]), int(groups[1]), int(groups[2])
                    if month > 12 >= day:  # 11/18/1923: the American order
                        day, month = month, day
            except (KeyError, ValueError):
                continue
            if not 1 <= month <= 12 or not 0 <= day <= 31:
                if form == "ymd" and month == 0:  # Wikidata year precision: +1990-00-00
                    found.append(DateMention(year, None, None, start, end))
                    taken.append((start, end))
                continue
            found.append(DateMention(year, month, day or None, start, end))
            taken.append((start, end))
    return sorted(found, key=lambda d: d.start)


def date_of_label(label: str) -> tuple[int, int | None, int | None] | None:
    """The date a label states, when the whole label is one date; else None."""
    dates = find_dates(label.strip())
    if len(dates) == 1 and dates[0].start == 0 and dates[0].end == len(label.strip()):
        return dates[0].key
    return None


# --- ESA ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mention:
    entity: str  # the entity's label
    start: int
    end: int
    matched: str  # the label, alias or date it matched
    distance: float
    via: str  # "label", "alias", "synonym", "date", "number" or "pronoun"

    def as_json(self) -> dict[str, Any]:
        return {
            "entity": self.entity,
            "start": self.start,
            "end": self.end,
            "matched": self.matched,
            "distance": round(self.distance, 4),
            "via": self.via,
        }


@dataclass(frozen=True)
class _Target:
    text: str  # the label, variant, alias or synonym as given
    folded: str  # words folded and joined by single spaces
    words: int
    masks: dict[str, int]
    via: str


def synonym_index(rows: Iterable[tuple[str, str, str]]) -> dict[str, tuple[tuple[str, str], ...]]:
    """``(entity, synonym, lang)`` rows as a lookup from a folded name to its synonyms.

    The table is symmetric (the paper's dictionary pairs names that name one thing): a row
    ``Spain | Spanish`` lets an entity labelled "Spain" be found as "Spanish" and one
    labelled "Spanish" as "Spain". ``lang`` '' applies to every language."""
    index: dict[str, list[tuple[str, str]]] = {}
    for entity, synonym, lang in rows:
        for key, other in ((entity, synonym), (synonym, entity)):
            folded = _folded_words(surface(key))
            if folded and other.strip():
                index.setdefault(folded, []).append((other.strip(), lang or ""))
    return {key: tuple(dict.fromkeys(values)) for key, values in index.items()}


SynonymIndex = Mapping[str, Sequence[tuple[str, str]]]


def synonyms_signature(rows: Sequence[tuple[str, str, str]]) -> str:
    """The synonym table's part of a metric signature: its size and, when it has rows, a
    hash of them (sorted, as the metrics keep them), since any row can change a score."""
    if not rows:
        return "synonyms:0"
    table = hashlib.sha256(repr(tuple(rows)).encode()).hexdigest()[:12]
    return f"synonyms:{len(rows)}@{table}"


def _names(entity: EntityInfo) -> list[tuple[str, str]]:
    """(name, via) for an entity: its surface form and variants, then its aliases'."""
    names = [(variant, "label") for variant in variants(entity.label)]
    for alias in entity.aliases:
        names.extend((variant, "alias") for variant in variants(alias))
    if entity.qid:
        names.append((entity.qid, "qid"))  # only ever a key into the synonym table
    return names


def _targets(
    entity: EntityInfo, synonyms: SynonymIndex | None = None, lang: str = ""
) -> list[_Target]:
    targets: list[_Target] = []
    seen: set[str] = set()
    names = _names(entity)
    if synonyms:
        extra: list[tuple[str, str]] = []
        for name, _via in names:
            for synonym, synonym_lang in synonyms.get(_folded_words(name), ()):
                if not synonym_lang or synonym_lang == lang:
                    extra.extend((variant, "synonym") for variant in variants(synonym))
        names.extend(extra)
    for name, via in names:
        if via == "qid":
            continue
        folded = _folded_words(name)
        if folded and folded not in seen:
            seen.add(folded)
            targets.append(
                _Target(name, folded, folded.count(" ") + 1, _pattern_masks(folded), via)
            )
    return targets


# --- numbers --------------------------------------------------------------------------------

# 610, 610.0, 3,500, 3,500.25, -6.5 (not part of a date, a word or a longer number)
_NUMBER_IN_TEXT = re.compile(
    r"(?<![\w.,/-])[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w/]|[.,]\d)"
)
# Italian and Spanish: 3.500 and 3.500,25 (a point between thousands, a decimal comma)
_NUMBER_IN_TEXT_COMMA = re.compile(
    r"(?<![\w.,/-])[+-]?(?:\d{1,3}(?:\.\d{3})+|\d+)(?:,\d+)?(?![\w/]|[.,]\d)"
)
DECIMAL_COMMA = frozenset({"it", "es", "fr", "de", "pt", "nl"})
_NUMBER_LABEL = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$|^[+-]?\.\d+$")


def number_of_label(label: str) -> float | None:
    """The number a label states, when the whole surface form is one number; else None."""
    text = surface(label)
    if not _NUMBER_LABEL.match(text):
        return None
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


@dataclass(frozen=True)
class NumberMention:
    values: tuple[float, ...]  # what the digits may mean (3.500 in Italian: 3500, or 3.5)
    start: int
    end: int


def find_numbers(text: str, lang: str = "en") -> list[NumberMention]:
    """Numbers written in digits, thousands separators allowed: ``3,500.0`` is 3500; in a
    decimal-comma language (it, es, ...) ``3.500,5`` is 3500.5, and a number written the
    English way (as models often do) still reads as such."""
    found: dict[tuple[int, int], list[float]] = {}
    patterns = [(_NUMBER_IN_TEXT, ",", ".")]
    if lang in DECIMAL_COMMA:
        patterns.insert(0, (_NUMBER_IN_TEXT_COMMA, ".", ","))
    for pattern, thousands, decimal in patterns:
        for match in pattern.finditer(text):
            try:
                value = float(match.group().replace(thousands, "").replace(decimal, "."))
            except ValueError:
                continue
            values = found.setdefault(match.span(), [])
            if value not in values:
                values.append(value)
    return [
        NumberMention(tuple(values), start, end) for (start, end), values in sorted(found.items())
    ]


def _search_scores(pattern: str, masks: dict[str, int], text: str) -> list[int]:
    """For each end position j of ``text``: the least edit distance between ``pattern`` and
    any substring of ``text`` ending at j (Myers' search variant: the top row is 0)."""
    return _multi_search([pattern], text, range(len(text)))[0]


def _multi_search(patterns: Sequence[str], text: str, at: Iterable[int]) -> list[list[int]]:
    """:func:`_search_scores` of several patterns in one pass over ``text``, read at the
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


class _TextIndex:
    """A text's tokens joined by single spaces, so an n-gram is one slice."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        parts: list[str] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        position = 0
        for token in self.tokens:
            self.starts.append(position)
            parts.append(token.folded)
            position += len(token.folded)
            self.ends.append(position)
            position += 1
        self.joined = " ".join(parts)
        self._start_token = {start: i for i, start in enumerate(self.starts)}
        self._dates: list[DateMention] | None = None
        self._numbers: dict[str, list[NumberMention]] = {}

    @property
    def dates(self) -> list[DateMention]:
        if self._dates is None:
            self._dates = find_dates(self.text)
        return self._dates

    def numbers(self, lang: str = "en") -> list[NumberMention]:
        if lang not in self._numbers:
            self._numbers[lang] = find_numbers(self.text, lang)
        return self._numbers[lang]

    def search(self, targets: Sequence[_Target]) -> list[list[int]]:
        """Per target, its search score at each token's end (see :func:`_multi_search`)."""
        return _multi_search(
            [t.folded for t in targets], self.joined, [end - 1 for end in self.ends]
        )

    def matches(
        self, target: _Target, max_distance: float, scores: Sequence[int] | None = None
    ) -> list[tuple[float, int, int]]:
        """Every word n-gram within ``max_distance`` of the target, the closest (then the
        longest) per end token: ``(distance, first, last token)``. ``scores``: the target's
        :meth:`search` scores, when already made for several targets at once."""
        n_tokens = len(self.tokens)
        if not n_tokens:
            return []
        found: list[tuple[float, int, int]] = []
        length = len(target.folded)
        exact_ends: set[int] = set()
        # Exact occurrences on word boundaries: cheap, and the common case.
        at = self.joined.find(target.folded)
        while at != -1:
            end = at + length
            if (at == 0 or self.joined[at - 1] == " ") and (
                end == len(self.joined) or self.joined[end] == " "
            ):
                first = self._start_token[at]
                found.append((0.0, first, first + target.words - 1))
                exact_ends.add(first + target.words - 1)
            at = self.joined.find(target.folded, at + 1)
        if max_distance <= 0.0 or (target.via == "synonym" and length <= 3):
            return found  # abbreviations from the synonym table (TX, U.S.) only as written
        # An n-gram within the threshold is at most length/(1 - max_distance) long and at
        # most that far from the target; the search scores bound every n-gram ending at a
        # character from below, so most end tokens are skipped without a single comparison.
        bound = max_distance * length / (1.0 - max_distance)
        if scores is None:
            scores = self.search([target])[0]
        high = target.words + 1
        for last in range(n_tokens):
            floor = scores[last]
            if last in exact_ends or floor > bound:
                continue
            best: tuple[float, int, int] | None = None
            end_char = self.ends[last]
            for count in range(1, high + 1):
                first = last - count + 1
                if first < 0:
                    break
                gram_length = end_char - self.starts[first]
                longest = max(gram_length, length)
                allowed = max_distance * longest
                if gram_length - length > allowed:
                    break  # longer n-grams from here only get longer
                if length - gram_length > allowed or floor > allowed:
                    continue
                gram = self.joined[self.starts[first] : end_char]
                distance = _myers(target.folded, target.masks, gram) / longest
                if distance <= max_distance and (best is None or distance <= best[0]):
                    best = (distance, first, last)  # equal distance: the longer n-gram
            if best is not None:
                found.append(best)
        return found


def _unique_entities(entities: Iterable[EntityInfo]) -> list[EntityInfo]:
    """Each subject and object once (a subject of two triples is one input entity)."""
    unique: dict[str, EntityInfo] = {}
    for entity in entities:
        key = entity.qid or _folded_words(surface(entity.label))
        if not key:
            continue
        if key in unique:
            kept = unique[key]
            if entity.is_root and not kept.is_root:
                unique[key] = entity
            continue
        unique[key] = entity
    return list(unique.values())


def entities_of_triples(triples: Sequence[tuple[str, str, str]]) -> tuple[EntityInfo, ...]:
    """Subjects and objects of triples without QIDs (e.g. WebNLG's DBpedia identifiers).

    The root is the subject of the most triples (the first such subject on a tie)."""
    counts: dict[str, int] = {}
    for subject, _predicate, _obj in triples:
        counts[subject] = counts.get(subject, 0) + 1
    root = max(counts, key=lambda s: counts[s]) if counts else None
    out: list[EntityInfo] = []
    for subject, _predicate, obj in triples:
        out.append(EntityInfo(subject, is_root=subject == root))
        out.append(EntityInfo(obj, is_root=obj == root))
    return tuple(out)


@dataclass(frozen=True)
class EsaResult:
    entities: int
    detected: tuple[str, ...]
    missing: tuple[str, ...]
    mentions: tuple[Mention, ...]

    @property
    def esa(self) -> float | None:
        return len(self.detected) / self.entities if self.entities else None

    def details(self) -> dict[str, Any]:
        return {
            "entities": self.entities,
            "detected": list(self.detected),
            "missing": list(self.missing),
            "undetected": len(self.missing),
            "mentions": [m.as_json() for m in self.mentions],
        }


def _candidates(
    text: str, entity: EntityInfo, shown: str, index: _TextIndex, lang: str
) -> list[Mention] | None:
    """Where the text mentions a date or a number entity; None for a named entity, whose
    ``targets`` (names) are searched for all entities of the text at once."""
    wanted_date = (
        date_of_label(shown)
        if entity.value_type == "time" or any(c.isdigit() for c in shown)
        else None
    )
    if wanted_date is not None:
        # A date is found as a date or not at all: "December 1815" is one edit from
        # "10 December 1815" as a string, but it does not state the day.
        return [
            Mention(shown, d.start, d.end, text[d.start : d.end], 0.0, "date")
            for d in index.dates
            if d.key == wanted_date
        ]
    number = number_of_label(entity.label)
    if number is not None:
        # Numbers as numbers: 610.0 is "610" and "610.00"; 3500 is "3,500".
        tolerance = 1e-9 * max(1.0, abs(number))
        return [
            Mention(shown, n.start, n.end, text[n.start : n.end], 0.0, "number")
            for n in index.numbers(lang)
            if any(abs(v - number) <= tolerance for v in n.values)
        ]
    return None


# A mention is the noun phrase: an English article before a name, a possessive after it,
# and a number's unit word after the number are part of it ("the Aarhus Airport's",
# "84 metres"), as the enriched WebNLG's human mentions mark them.
_ARTICLE_BEFORE = re.compile(r"(?:^|(?<=\W))(the)\s+$", re.IGNORECASE)
_POSSESSIVE_AFTER = re.compile(r"^(?:'s|’s|'|’)(?!\w)")
UNIT_WORDS = _words(
    "metres meters metre meter m feet foot ft km kilometres kilometers kilometre kilometer "
    "miles mile inches inch cm centimetres centimeters mm millimetres kg kilograms "
    "kilogram grams lbs lb pounds tonnes tons square km2 sq mph kmh km/h hours minutes "
    "mins seconds days years people inhabitants residents percent per cent % degrees °c °f "
    "litres liters euros dollars"
)
_UNIT_AFTER = re.compile(r"^\s*((?:square\s+|sq\.?\s+|cubic\s+)?[^\W\d]+|%)", re.IGNORECASE)


def _extended(mention: Mention, text: str, lang: str, taken: Sequence[tuple[int, int]]) -> Mention:
    start, end = mention.start, mention.end

    def free(s: int, e: int) -> bool:
        return not any(
            s < te and ts < e and (ts, te) != (mention.start, mention.end) for ts, te in taken
        )

    if mention.via == "number":
        unit = _UNIT_AFTER.match(text[end:])
        if (
            unit
            and unit.group(1).casefold().split()[-1] in UNIT_WORDS
            and free(end, end + unit.end())
        ):
            end += unit.end()
    elif mention.via != "date":
        if lang == "en":
            article = _ARTICLE_BEFORE.search(text[max(0, start - 8) : start])
            if article and free(start - len(article.group(0)), start):
                start -= len(article.group(0))
        possessive = _POSSESSIVE_AFTER.match(text[end:])
        if possessive and free(end, end + possessive.end()):
            end += possessive.end()
    if (start, end) == (mention.start, mention.end):
        return mention
    return Mention(mention.entity, start, end, mention.matched, mention.distance, mention.via)


def esa_of_text(
    text: str,
    entities: Sequence[EntityInfo],
    lang: str,
    *,
    max_distance: float = MAX_DISTANCE,
    pronouns: bool = True,
    index: _TextIndex | None = None,
    synonyms: SynonymIndex | None = None,
    noun_phrases: bool = True,
) -> EsaResult:
    """Which input entities the text mentions, where, and which are missing.

    Every word n-gram within ``max_distance`` of an entity's surface form, a variant, an
    alias or a synonym is a candidate mention (dates and numbers by value); overlapping
    candidates go to the lowest distance, then the longest span, then the earliest; the
    pronouns left over are mentions of the root entity. With ``noun_phrases`` a mention
    takes in an English article before it, a possessive after it and a number's unit
    (which changes where a mention starts and ends, never whether an entity is found).
    Entities are reported by their surface form (:func:`core.surface.surface`)."""
    index = index or _TextIndex(text)
    unique = _unique_entities(entities)
    shown = [surface(e.label) for e in unique]
    candidates: list[Mention] = []
    named: list[tuple[str, _Target]] = []
    for entity, name in zip(unique, shown, strict=True):
        found = _candidates(text, entity, name, index, lang)
        if found is None:
            named.extend((name, target) for target in _targets(entity, synonyms, lang))
        else:
            candidates.extend(found)
    if named and index.tokens:
        all_scores = (
            index.search([target for _, target in named])
            if max_distance > 0
            else [None] * len(named)
        )
        for (name, target), scores in zip(named, all_scores, strict=True):
            for distance, first, last in index.matches(target, max_distance, scores):
                start, end = index.tokens[first].start, index.tokens[last].end
                candidates.append(Mention(name, start, end, target.text, distance, target.via))
    candidates.sort(key=lambda m: (m.distance, m.start - m.end, m.start))
    mentions: list[Mention] = []
    taken: list[tuple[int, int]] = []
    for mention in candidates:
        if any(mention.start < e and s < mention.end for s, e in taken):
            continue
        mentions.append(mention)
        taken.append((mention.start, mention.end))
    if noun_phrases:
        mentions = [_extended(m, text, lang, taken) for m in mentions]
    taken = [(m.start, m.end) for m in mentions]
    if pronouns and unique:
        # The root is the entity marked so; without a mark, the first subject.
        root_at = next((i for i, e in enumerate(unique) if e.is_root), 0)
        words = PRONOUNS.get(lang, frozenset())
        for token in index.tokens:
            if token.text.casefold() in words and not any(
                token.start < e and s < token.end for s, e in taken
            ):
                mentions.append(
                    Mention(shown[root_at], token.start, token.end, token.text, 0.0, "pronoun")
                )
    found_entities = {m.entity for m in mentions}
    detected = tuple(name for name in shown if name in found_entities)
    missing = tuple(name for name in shown if name not in found_entities)
    mentions.sort(key=lambda m: m.start)
    return EsaResult(len(unique), detected, missing, tuple(mentions))


def esi_summary(results: Sequence[EsaResult]) -> dict[str, Any]:
    """ESI@1, ESI@2 and the three ESA means over texts that had entities to find."""
    scored = [r for r in results if r.entities]
    n = len(scored)

    def mean(values: list[float]) -> float | None:
        return sum(values) / len(values) if values else None

    ge1 = [r for r in scored if len(r.missing) >= 1]
    ge2 = [r for r in scored if len(r.missing) >= 2]
    return {
        "n": n,
        "esi@1": len(ge1) / n if n else None,
        "esi@2": len(ge2) / n if n else None,
        "esa_mean": mean([r.esa for r in scored if r.esa is not None]),
        "esa_mean_ge1": mean([r.esa for r in ge1 if r.esa is not None]),
        "esa_mean_ge2": mean([r.esa for r in ge2 if r.esa is not None]),
        "texts_ge1": len(ge1),
        "texts_ge2": len(ge2),
    }


class EntityAdequacy(CorpusFromSentences):
    """ESA per text; at corpus level the mean ESA with ESI@1/ESI@2 in details."""

    name = ESA

    def __init__(
        self,
        max_distance: float = MAX_DISTANCE,
        pronouns: bool = True,
        synonyms: Sequence[tuple[str, str, str]] = (),
    ) -> None:
        if not 0.0 <= max_distance < 1.0:
            from core.errors import UserFacingError

            raise UserFacingError(f"ESA distance must be in [0, 1), got {max_distance}")
        self.max_distance = max_distance
        self.pronouns = pronouns
        self.synonym_rows = tuple(sorted(set(synonyms)))
        self.synonyms = synonym_index(self.synonym_rows) if self.synonym_rows else None

    def signature(self) -> Signature:
        return Signature.of(
            ESA,
            "taillens-esa",
            ESA_VERSION,
            {
                "match": f"word-ngram-levenshtein<={self.max_distance:g}",
                "names": "surface+variants+aliases",
                "fold": "casefold+noaccents",
                "dates": "normalised",
                "numbers": "value",
                "overlaps": "distance,longest",
                "pronouns": "root" if self.pronouns else "off",
                "synonyms": synonyms_signature(self.synonym_rows).removeprefix("synonyms:"),
            },
        )

    def results(self, items: Sequence[ScoringItem]) -> list[EsaResult]:
        return [
            esa_of_text(
                item.text or "",
                item.entities,
                item.lang,
                max_distance=self.max_distance,
                pronouns=self.pronouns,
                synonyms=self.synonyms,
            )
            for item in items
        ]

    def sentence_scores(self, items: Sequence[ScoringItem]) -> list[MetricValue]:
        return [self._value(result) for result in self.results(items)]

    @staticmethod
    def _value(result: EsaResult) -> MetricValue:
        details = EsaDetails.from_json(result.details())
        if not result.entities:
            note = "the unit has no subject or object labels to look for"
            details = dataclasses.replace(details, note=note)
        return MetricValue(result.esa, details)

    def corpus_from_sentences(
        self, items: Sequence[ScoringItem], values: Sequence[MetricValue]
    ) -> MetricValue | None:
        results = [
            EsaResult(
                v.details.get("entities", 0),
                tuple(v.details.get("detected", ())),
                tuple(v.details.get("missing", ())),
                (),
            )
            for v in values
        ]
        summary = esi_summary(results)
        return MetricValue(summary["esa_mean"], EsaDetails.from_json(summary))


# --- hallucination candidates -----------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    text: str
    start: int
    end: int

    def as_json(self) -> dict[str, Any]:
        return {"text": self.text, "start": self.start, "end": self.end}


def _is_name_or_number(token: Token) -> bool:
    return token.text[:1].isupper() or any(c.isdigit() for c in token.text)


def capitalised_spans(
    text: str, lang: str, tokens: Sequence[Token] | None = None
) -> list[tuple[int, int]]:
    """Runs of capitalised or numeric words (token index ranges, inclusive)."""
    tokens = tokenize(text) if tokens is None else tokens
    stop = _STOPWORDS.get(lang, frozenset()) | _STOPWORDS["en"]
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(tokens):
        if not _is_name_or_number(tokens[i]) or tokens[i].text.casefold() in stop:
            i += 1
            continue
        first = last = i
        j = i + 1
        while j < len(tokens):
            glue = text[tokens[j - 1].end : tokens[j].start]
            thousands = (
                glue == ","
                and tokens[j - 1].text.isdigit()
                and tokens[j].text.isdigit()
                and len(tokens[j].text) == 3
            )  # 2,194 is one number
            if not _SPAN_GLUE.fullmatch(glue) and not thousands:
                break
            if _is_name_or_number(tokens[j]) and tokens[j].text.casefold() not in stop:
                last = j
                j += 1
            elif (
                tokens[j].text.casefold() in _CONNECTORS
                and j + 1 < len(tokens)
                and _is_name_or_number(tokens[j + 1])
                and _SPAN_GLUE.fullmatch(text[tokens[j].end : tokens[j + 1].start])
            ):
                j += 1  # the connector joins only when a name follows it
            else:
                break
        spans.append((first, last))
        i = last + 1
    return spans


class _Vocabulary:
    """Everything the unit names: labels, aliases, predicates; words, numbers, dates."""

    def __init__(self, item: ScoringItem) -> None:
        names: list[str] = []
        for entity in item.entities:
            names.extend(variants(entity.label))
            for alias in entity.aliases:
                names.extend(variants(alias))
        for subject, predicate, obj in item.triples:
            names.extend((*variants(subject), predicate_words(predicate), *variants(obj)))
        self.phrases = {_folded_words(n) for n in names if n}
        self.words = {w for phrase in self.phrases for w in phrase.split()}
        self.word_masks = [(w, _pattern_masks(w)) for w in self.words]
        self.phrase_masks = [(p, _pattern_masks(p)) for p in self.phrases]
        self.numbers = {w for w in self.words if any(c.isdigit() for c in w)}
        self.values = {v for v in (number_of_label(n) for n in names) if v is not None}
        self.dates = {d.key for n in names for d in find_dates(n)}

    def _close(
        self, value: str, pool: list[tuple[str, dict[str, int]]], max_distance: float
    ) -> bool:
        for known, masks in pool:
            longest = max(len(known), len(value))
            if abs(len(known) - len(value)) > max_distance * longest:
                continue
            if _myers(known, masks, value) / longest <= max_distance:
                return True
        return False

    def knows(self, words: Sequence[str], max_distance: float) -> bool:
        phrase = " ".join(words)
        if phrase in self.phrases or self._close(phrase, self.phrase_masks, max_distance):
            return True
        for word in words:
            if word in _CONNECTORS:
                continue
            if any(c.isdigit() for c in word):
                if word not in self.numbers:
                    return False
            elif word not in self.words and not self._close(word, self.word_masks, max_distance):
                return False
        return True


def hallucination_candidates(
    item: ScoringItem,
    *,
    max_distance: float = MAX_DISTANCE,
    mentions: Sequence[Mention] = (),
    index: _TextIndex | None = None,
) -> list[Candidate]:
    """Capitalised or numeric spans of the text that name nothing in the unit."""
    text = item.text or ""
    index = index or _TextIndex(text)
    vocabulary = _Vocabulary(item)
    covered = [(m.start, m.end) for m in mentions]
    text_dates = index.dates
    candidates: list[Candidate] = []
    for first, last in capitalised_spans(text, item.lang, index.tokens):
        start, end = index.tokens[first].start, index.tokens[last].end
        if any(start < e and s < end for s, e in covered):
            continue
        date = next((d for d in text_dates if d.start < end and start < d.end), None)
        if date is not None and date.key in vocabulary.dates:
            continue
        numbers = [n for n in index.numbers(item.lang) if n.start < end and start < n.end]
        if (
            numbers
            and all(set(n.values) & vocabulary.values for n in numbers)
            and all(
                any(n.start <= t.start and t.end <= n.end for n in numbers)
                or not any(c.isdigit() for c in t.text)
                for t in index.tokens[first : last + 1]
            )
        ):
            continue  # 3,500 or 610.00 where the unit says 3500.0 or 610
        words = [t.folded for t in index.tokens[first : last + 1]]
        if vocabulary.knows(words, max_distance):
            continue
        candidates.append(Candidate(text[start:end], start, end))
    return candidates


class HallucinationCandidates(CorpusFromSentences):
    """Count of capitalised/numeric spans matching nothing in the unit (spans in details)."""

    name = HALLUCINATION

    def __init__(
        self, max_distance: float = MAX_DISTANCE, synonyms: Sequence[tuple[str, str, str]] = ()
    ) -> None:
        self.max_distance = max_distance
        self.synonym_rows = tuple(sorted(set(synonyms)))
        self.synonyms = synonym_index(self.synonym_rows) if self.synonym_rows else None

    def signature(self) -> Signature:
        return Signature.of(
            HALLUCINATION,
            "taillens-hallucination",
            ESA_VERSION,
            {
                "spans": "capitalised-or-numeric",
                "match": (f"surface+variants+aliases+synonyms+predicates<={self.max_distance:g}"),
                "fold": "casefold+noaccents",
                "dates": "normalised",
                "numbers": "value",
                "synonyms": synonyms_signature(self.synonym_rows).removeprefix("synonyms:"),
            },
        )

    def sentence_scores(self, items: Sequence[ScoringItem]) -> list[MetricValue]:
        values = []
        for item in items:
            index = _TextIndex(item.text or "")
            esa = esa_of_text(
                item.text or "",
                item.entities,
                item.lang,
                max_distance=self.max_distance,
                pronouns=False,
                index=index,
                synonyms=self.synonyms,
            )
            found = hallucination_candidates(
                item, max_distance=self.max_distance, mentions=esa.mentions, index=index
            )
            spans = tuple(Span(c.text, c.start, c.end) for c in found)
            values.append(MetricValue(float(len(found)), HallucinationDetails(spans=spans)))
        return values

    def corpus_from_sentences(
        self, items: Sequence[ScoringItem], values: Sequence[MetricValue]
    ) -> MetricValue | None:
        counts = [v.value for v in values if v.value is not None]
        if not counts:
            return None
        return MetricValue(
            sum(counts) / len(counts),
            HallucinationDetails(
                n=len(counts),
                texts_with_candidates=sum(1 for c in counts if c > 0),
                share_with_candidates=sum(1 for c in counts if c > 0) / len(counts),
                total=sum(counts),
            ),
        )
