"""Hallucination candidates (METHODS §7): a text's capitalised or numeric spans that match
no subject, object, predicate label or alias, and no detected mention; candidates for a
person to look at, not verdicts."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.metrics.base import (
    HALLUCINATION,
    CorpusFromSentences,
    MetricValue,
    ScoringItem,
)
from core.metrics.details import HallucinationDetails, Span
from core.metrics.esa.detect import (
    ESA_VERSION,
    MAX_DISTANCE,
    Mention,
    TextIndex,
    esa_of_text,
    synonym_index,
    synonyms_signature,
)
from core.metrics.esa.literals import find_dates, number_of_label
from core.metrics.esa.text import Token, folded_words, myers, pattern_masks, tokenize, word_set
from core.metrics.signature import Signature
from core.surface import predicate_words, variants

# Words that start sentences capitalised without naming anything; never hallucinations.
_STOPWORDS: dict[str, frozenset[str]] = {
    "en": word_set(
        "a an the he she it they we i you his her its their our this that these those there "
        "here in on at by for with from as and but or also both however after before during "
        "since while which who whom whose what when where why how is was are were be been "
        "being has have had born its one some many most all each other another further then "
        "today currently formerly according although though because if not no yes"
    ),
    "it": word_set(
        "il lo la i gli le un uno una l un' egli ella esso essa lui lei loro suo sua suoi sue "
        "questo questa questi queste quello quella quelli quelle che chi cui dove quando come "
        "perché e ed o ma anche inoltre nel nella nei nelle nello negli al alla ai alle allo "
        "agli del della dei delle dello degli dal dalla dai dalle in a da di con su per tra fra "
        "è era sono erano fu nato nata ha hanno aveva è oggi attualmente secondo dopo prima "
        "durante si ci non"
    ),
    "es": word_set(
        "el la los las un una unos unas él ella ellos ellas su sus este esta estos estas ese esa "
        "esos esas aquel aquella que quien cuyo cuya donde cuando como porque y e o u pero "
        "también además en a de del al con por para entre desde hasta es era son eran fue "
        "nació nacido nacida ha han había hoy actualmente según después antes durante se no "
        "lo le les"
    ),
}
# Short words allowed inside a capitalised span ("Republic of China", "Reino de España").
_CONNECTORS = word_set("of the de del della di dei degli delle la las los y e von van da du and")
_SPAN_GLUE = re.compile(r"[ \t\-–'’.]*")

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
        self.phrases = {folded_words(n) for n in names if n}
        self.words = {w for phrase in self.phrases for w in phrase.split()}
        self.word_masks = [(w, pattern_masks(w)) for w in self.words]
        self.phrase_masks = [(p, pattern_masks(p)) for p in self.phrases]
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
            if myers(known, masks, value) / longest <= max_distance:
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
    index: TextIndex | None = None,
) -> list[Candidate]:
    """Capitalised or numeric spans of the text that name nothing in the unit."""
    text = item.text or ""
    index = index or TextIndex(text)
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
            index = TextIndex(item.text or "")
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
