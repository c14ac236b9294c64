"""The rule-based template verbaliser for en, it, es (METHODS §6): no weights, always there.

One clause per triple, ``<subject> has <object> as its <predicate>`` and its Italian and
Spanish equivalents (``ha come <predicate> <object>``, ``tiene como <predicate>
<object>``), worded so they need no article or gender agreement with the predicate.
Triples that share a subject are aggregated into one sentence, in the order the subject
first appears, the verb said once:

    Paris has France as its country and Anne Hidalgo as its mayor.
    Parigi ha come paese Francia e come sindaco Anne Hidalgo.

Raw literal values (a Wikidata time ``+1871-05-12T00:00:00Z``, an ISO date, a signed
quantity ``+1234.50``) are rendered with the value templates of :mod:`core.units.shapes`; labels
go through :mod:`core.surface` (``Abilene,_Texas`` → "Abilene, Texas", ``cityServed`` →
"city served"; Wikidata labels unchanged). The output is deterministic: one candidate per unit.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from core.surface import predicate_words, surface
from core.units.shapes import render_quantity, render_time
from core.verbalise.base import Candidate, GenerationParams, ShouldStop, VerbaliseRequest
from core.verbalise.prompts import triple_lines
from core.vocab import LANGUAGES

TEMPLATE_VERSION = "template-v2"  # v2: surface forms of identifiers

# (first clause, later clause) per language; {p} predicate, {o} object.
CLAUSES: dict[str, tuple[str, str]] = {
    "en": ("has {o} as its {p}", "{o} as its {p}"),
    "it": ("ha come {p} {o}", "come {p} {o}"),
    "es": ("tiene como {p} {o}", "como {p} {o}"),
}
CONJUNCTIONS = {"en": "and", "it": "e", "es": "y"}

_TIME = re.compile(r"^[+-]?\d{1,16}-\d{2}-\d{2}(T00:00:00Z)?\Z")
_QUANTITY = re.compile(r"^[+-]\d+(\.\d+)?\Z")


def render_object(value: str, lang: str) -> str:
    """A raw literal as text in ``lang`` (dates at day precision unless month/day are 00)."""
    text = value.strip()
    if _TIME.match(text):
        digits = text.lstrip("+-").split("T", 1)[0].split("-")
        precision = 9 if digits[1] == "00" else 10 if digits[2] == "00" else 11
        return render_time(text, precision, lang)
    if _QUANTITY.match(text):
        return render_quantity(text, None, lang)
    return text


def _join(clauses: Sequence[str], lang: str) -> str:
    if len(clauses) == 1:
        return clauses[0]
    head = ", ".join(clauses[:-1])
    return f"{head} {CONJUNCTIONS[lang]} {clauses[-1]}"


def _capitalised(sentence: str) -> str:
    return sentence[:1].upper() + sentence[1:] if sentence else sentence


def verbalise_triples(triples: Sequence[tuple[str, str, str]], lang: str) -> str:
    """The template text for a unit's triples in ``lang``."""
    if lang not in CLAUSES:
        raise ValueError(f"the template verbaliser speaks en, it and es, not {lang!r}")
    first, later = CLAUSES[lang]
    by_subject: dict[str, list[tuple[str, str]]] = {}
    for subject, predicate, obj in triples:
        by_subject.setdefault(surface(subject), []).append(
            (predicate_words(predicate), render_object(surface(obj), lang))
        )
    sentences = []
    for subject, facts in by_subject.items():
        clauses = [(first if i == 0 else later).format(p=p, o=o) for i, (p, o) in enumerate(facts)]
        sentence = f"{subject} {_join(clauses, lang)}".rstrip(".")
        sentences.append(_capitalised(sentence) + ".")
    return " ".join(sentences)


class TemplateVerbaliser:
    """Deterministic sentences from templates; the default verbaliser of a run."""

    kind = "template"
    model_id = "template"
    system_name = "template"

    def __init__(self, params: GenerationParams | None = None) -> None:
        # Never asked: a batch takes microseconds and is returned whole.
        self.should_stop: ShouldStop | None = None
        # One candidate whatever was asked: more would be copies of the same text.
        base = params or GenerationParams()
        self.params = GenerationParams(
            candidates=1,
            temperature=base.temperature,
            top_p=base.top_p,
            max_new_tokens=base.max_new_tokens,
            seed=base.seed,
            num_beams=base.num_beams,
        )
        # The "templates" a template run records are its clause patterns.
        self.templates: Mapping[str, str] = {
            lang: " | ".join(CLAUSES[lang]) + f" | {CONJUNCTIONS[lang]}" for lang in LANGUAGES
        }

    def fingerprint(self) -> str:
        text = TEMPLATE_VERSION + repr(sorted(CLAUSES.items())) + repr(sorted(CONJUNCTIONS.items()))
        return hashlib.sha256(text.encode()).hexdigest()

    def describe(self) -> dict[str, Any]:
        return {"version": TEMPLATE_VERSION}

    def prompt_for(self, triples: Sequence[tuple[str, str, str]], lang: str) -> str:
        return triple_lines(triples)  # no prompt: the triples are the input

    def load(self) -> None:
        return None

    def verbalise(self, requests: Sequence[VerbaliseRequest]) -> list[list[Candidate]]:
        results = []
        for request in requests:
            text = verbalise_triples(request.triples, request.lang)
            results.append([Candidate(raw=text, text=text, parse_ok=bool(text), tokens=0)])
        return results

    def close(self) -> None:
        return None
