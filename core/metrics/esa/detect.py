"""ESA's entity detection (METHODS §7): which of a unit's subjects and objects a text
mentions, by label, variant, alias, synonym, date, number or pronoun; ESA and ESI@n."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.metrics.base import (
    EntityInfo,
)
from core.metrics.esa.literals import (
    DateMention,
    NumberMention,
    date_of_label,
    find_dates,
    find_numbers,
    number_of_label,
)
from core.metrics.esa.text import (
    folded_words,
    multi_search,
    myers,
    pattern_masks,
    tokenize,
    word_set,
)
from core.surface import surface, variants

MAX_DISTANCE = 0.4
ESA_VERSION = "3"


@dataclass(frozen=True)
class EsaConfig:
    """A named set of detection rules (see docs/esa.md, "Two configurations").

    ``paper``: the ESA paper's rules (Faille, Gatt and Gardent 2021) and nothing else:
    approximate word n-gram matches of labels, aliases and the synonym table; dates and
    numbers by value and, like any label, as written; overlaps to the lowest distance,
    then the longest span; leftover pronouns to the root. ``taillens``: TailLens's
    detection (ESA v3): the paper's rules plus the second chance and group heads, dates
    and numbers by value only."""

    name: str
    second_chance: bool
    group_names: bool
    literal_strings: bool  # a date or number entity is also matched as written

    def settings(self) -> dict[str, str]:
        return {
            "config": self.name,
            "second-chance": "on" if self.second_chance else "off",
            "group-heads": "on" if self.group_names else "off",
            "literals": "value+string" if self.literal_strings else "value",
        }


ESA_CONFIGS = {
    "paper": EsaConfig("paper", second_chance=False, group_names=False, literal_strings=True),
    "taillens": EsaConfig("taillens", second_chance=True, group_names=True, literal_strings=False),
}
DEFAULT_ESA_CONFIG = "paper"


def esa_config(name: str) -> EsaConfig:
    """The named configuration, or a one-line error naming the choices."""
    if name not in ESA_CONFIGS:
        from core.errors import UserFacingError

        raise UserFacingError(f"no ESA configuration {name!r} (choose {' or '.join(ESA_CONFIGS)})")
    return ESA_CONFIGS[name]


# Third-person pronouns (casefolded, accents kept: Spanish "él" is a pronoun, "el" is not).
PRONOUNS: dict[str, frozenset[str]] = {
    "en": word_set(
        "he she it they him her them his hers its their theirs himself herself itself themselves"
    ),
    "it": word_set("egli ella esso essa essi esse lui lei loro suo sua suoi sue"),
    "es": word_set("él ella ello ellos ellas su sus suyo suya suyos suyas"),
}

# --- ESA ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mention:
    entity: str  # the entity's label
    start: int
    end: int
    matched: str  # the label, alias or date it matched
    distance: float
    via: str  # "label", "alias", "group", "synonym", "date", "number" or "pronoun"

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
            folded = folded_words(surface(key))
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


# A group of people as DBpedia names it: "Turkish people", "Filipinos in Japan", "Native
# Americans in the United States". Texts name the group by its head ("the Turkish", "a
# Turkish national", "Filipinos", "Native Americans"), so the head is a name too.
_GROUP_LABEL = re.compile(
    r"^(?P<head>.+?)\s+people$|^(?P<plural>[^\W\d][\w'’ -]*?s)\s+in\s+\S.*$", re.IGNORECASE
)


def group_head(label: str) -> str | None:
    """The head a group label is also written as ("Turkish people" -> "Turkish",
    "Filipinos in Japan" -> "Filipinos"), or None for any other label."""
    match = _GROUP_LABEL.match(label.strip())
    if not match:
        return None
    return (match.group("head") or match.group("plural")).strip() or None


def _names(entity: EntityInfo, group_names: bool = True) -> list[tuple[str, str]]:
    """(name, via) for an entity: its surface form and variants, then its aliases'; with
    ``group_names``, a group's head (:func:`group_head`)."""
    names = [(variant, "label") for variant in variants(entity.label)]
    for alias in entity.aliases:
        names.extend((variant, "alias") for variant in variants(alias))
    if group_names:
        for name, _via in list(names):
            head = group_head(name)
            if head:
                names.append((head, "group"))
    if entity.qid:
        names.append((entity.qid, "qid"))  # only ever a key into the synonym table
    return names


def _targets(
    entity: EntityInfo,
    synonyms: SynonymIndex | None = None,
    lang: str = "",
    group_names: bool = True,
) -> list[_Target]:
    targets: list[_Target] = []
    seen: set[str] = set()
    names = _names(entity, group_names and lang == "en")
    if synonyms:
        extra: list[tuple[str, str]] = []
        for name, _via in names:
            for synonym, synonym_lang in synonyms.get(folded_words(name), ()):
                if not synonym_lang or synonym_lang == lang:
                    extra.extend((variant, "synonym") for variant in variants(synonym))
        names.extend(extra)
    for name, via in names:
        if via == "qid":
            continue
        folded = folded_words(name)
        if folded and folded not in seen:
            seen.add(folded)
            targets.append(_Target(name, folded, folded.count(" ") + 1, pattern_masks(folded), via))
    return targets


class TextIndex:
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
        """Per target, its search score at each token's end (see :func:`multi_search`)."""
        return multi_search(
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
                distance = myers(target.folded, target.masks, gram) / longest
                if distance <= max_distance and (best is None or distance <= best[0]):
                    best = (distance, first, last)  # equal distance: the longer n-gram
            if best is not None:
                found.append(best)
        return found


def _unique_entities(entities: Iterable[EntityInfo]) -> list[EntityInfo]:
    """Each subject and object once (a subject of two triples is one input entity)."""
    unique: dict[str, EntityInfo] = {}
    for entity in entities:
        key = entity.qid or folded_words(surface(entity.label))
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
    text: str, entity: EntityInfo, shown: str, index: TextIndex, lang: str
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
UNIT_WORDS = word_set(
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
    index: TextIndex | None = None,
    synonyms: SynonymIndex | None = None,
    noun_phrases: bool = True,
    second_chance: bool = True,
    group_names: bool = True,
    literal_strings: bool = False,
) -> EsaResult:
    """Which input entities the text mentions, where, and which are missing.

    Every word n-gram within ``max_distance`` of an entity's surface form, a variant, an
    alias or a synonym is a candidate mention (dates and numbers by value); overlapping
    candidates go to the lowest distance, then the longest span, then the earliest; with
    ``second_chance`` an entity left with no mention then gets its best candidate back
    (:func:`_second_chance`); the pronouns left over are mentions of the root entity. With
    ``group_names`` (English) a group's head is one of its names ("Turkish" for "Turkish
    people", :func:`group_head`). With ``noun_phrases`` a mention
    takes in an English article before it, a possessive after it and a number's unit
    (which changes where a mention starts and ends, never whether an entity is found).
    With ``literal_strings`` a date or number entity the text does not state as a value
    is also looked for as written, like a name ("175.26m", "70,308").
    Entities are reported by their surface form (:func:`core.surface.surface`)."""
    index = index or TextIndex(text)
    unique = _unique_entities(entities)
    shown = [surface(e.label) for e in unique]
    candidates: list[Mention] = []
    named: list[tuple[str, _Target]] = []
    for entity, name in zip(unique, shown, strict=True):
        found = _candidates(text, entity, name, index, lang)
        if found is None or (literal_strings and not found):
            named.extend((name, target) for target in _targets(entity, synonyms, lang, group_names))
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
    if second_chance:
        mentions = _second_chance(candidates, mentions)
        taken = [(m.start, m.end) for m in mentions]
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


def _overlap(a: Mention, b: Mention) -> bool:
    return a.start < b.end and b.start < a.end


def _second_chance(candidates: Sequence[Mention], mentions: list[Mention]) -> list[Mention]:
    """A second chance for each entity that the overlaps left with no mention, its
    candidates taken best first (``candidates`` is sorted so):

    * the same words name two input entities ("Spanish" for Spain and for the Spanish
      language, "Texans" for Texas and for Texan): when every mention the candidate
      overlaps belongs to an entity the text mentions elsewhere too, the candidate takes
      their place, so both entities are found;
    * an entity named, exactly as written, inside a longer mention of another ("Bangalore"
      in the address "…, Bangalore – 560090", "Texas" in "Abilene, Texas"): the candidate
      is kept, nested within it (an approximate one is not: "Mathematica" inside "Acta
      Mathematica Hungarica" is no mention of Mathematics).

    Otherwise the entity stays undetected."""
    count = Counter(m.entity for m in mentions)
    out = list(mentions)
    for candidate in candidates:
        if count[candidate.entity]:
            continue
        over = [m for m in out if _overlap(m, candidate)]
        if over and all(count[m.entity] > 1 for m in over) and len(over) == 1:
            out.remove(over[0])
            count[over[0].entity] -= 1
        elif candidate.distance > 0.0 or not all(
            m.start <= candidate.start
            and candidate.end <= m.end
            and m.end - m.start > candidate.end - candidate.start
            for m in over
        ):
            continue
        out.append(candidate)
        count[candidate.entity] += 1
    return out


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
