"""One surface-form rule for knowledge-graph identifiers (METHODS §7, "Surface forms").

WebNLG's entities are DBpedia identifiers and literals as the RDF had them
(``Abilene,_Texas``, ``Squeeze_(The_Velvet_Underground_album)``, ``"''Alvinegro"@en``,
``"230.05"^^xsd:double``); its predicates are camel-cased property names
(``cityServed``, ``ISBN_number``). Wherever such a label meets text (ESA, hallucination
candidates, graph–text linearisation, the template verbaliser, prompts, the panels), it
goes through this module first:

* :func:`surface`: quotes, ``@lang`` tags and ``^^datatype`` suffixes dropped, an
  identifier's underscores to spaces (a text with spaces keeps its underscores), spaces
  collapsed: ``Abilene,_Texas`` → "Abilene, Texas";
* :func:`variants`: the surface form and the same name without its disambiguating
  qualifier, a trailing parenthesis or a comma part: "Squeeze (The Velvet Underground
  album)" → also "Squeeze"; "Abilene, Texas" → also "Abilene";
* :func:`predicate_words`: a property identifier as words: ``cityServed`` → "city
  served", ``ISBN_number`` → "ISBN number".

Wikidata labels are words already ("Abilene", "place of birth"): they pass through
unchanged (a label with spaces is never split or lower-cased). The stored triple keeps
the file's form; only what is compared with, or shown next to, text is rewritten.
"""

from __future__ import annotations

import re
from functools import lru_cache

# "230.05"^^xsd:double, "1.5"^^<http://dbpedia.org/datatype/squareKilometre>
_DATATYPE = re.compile(r'^(".*")\^\^\S+$', re.DOTALL)
# "Alvinegro"@en, "x"@pt-BR
_LANG_TAG = re.compile(r'^(".*")@[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*$', re.DOTALL)
_QUOTES = '"“”'
_WIKI_ITALIC = re.compile(r"^'{2,}|'{2,}$")  # ''Alvinegro'' (wiki markup for italics)
_SPACES = re.compile(r"\s+")
_QUALIFIER = re.compile(r"^(.+?)\s*\([^()]*\)$")  # "Squeeze (The Velvet Underground album)"
_NUMBER = re.compile(r"^[+-]?[\d.,\s]+$")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@lru_cache(maxsize=65536)
def surface(identifier: str) -> str:
    """The text an identifier or literal stands for (see the module docstring)."""
    text = (identifier or "").strip()
    for pattern in (_DATATYPE, _LANG_TAG):
        match = pattern.match(text)
        if match:
            text = match.group(1)
            break
    if len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
        text = text[1:-1]
    text = _WIKI_ITALIC.sub("", text.strip())
    if "_" in text and " " not in text:  # an identifier; a label with spaces keeps its "_"
        text = text.replace("_", " ")
    return _SPACES.sub(" ", text).strip()


@lru_cache(maxsize=65536)
def variants(identifier: str) -> tuple[str, ...]:
    """The surface form first, then the name without its disambiguating qualifier.

    A trailing parenthesis (``Squeeze (The Velvet Underground album)`` → ``Squeeze``) and a
    comma part (``Abilene, Texas`` → ``Abilene``, ``St. Louis, Missouri`` → ``St. Louis``)
    are qualifiers; a number's thousands separators are not (``1,000`` stays whole)."""
    shown = surface(identifier)
    out = [shown] if shown else []
    base = shown
    match = _QUALIFIER.match(base)
    if match:
        base = match.group(1).strip()
        out.append(base)
    if ", " in base and not _NUMBER.match(base):
        head = base.split(", ", 1)[0].strip()
        if head:
            out.append(head)
    return tuple(dict.fromkeys(v for v in out if v))


@lru_cache(maxsize=8192)
def predicate_words(predicate: str) -> str:
    """A property identifier as words; a label with spaces passes through unchanged."""
    text = surface(predicate)
    if not text or " " in (predicate or "").strip():
        return text  # a label already ("place of birth") or an identifier with underscores
    words = []
    for part in text.split(" "):
        for word in _CAMEL.split(part):
            # ISBN, UK stay acronyms; Served (from cityServed) becomes served.
            words.append(
                word
                if word.isupper() and len(word) > 1
                else word.lower()
                if _CAMEL.search(part)
                else word
            )
    return " ".join(w for w in words if w)


def surface_triple(triple: tuple[str, str, str]) -> tuple[str, str, str]:
    """A triple as text: subject and object surface forms, the predicate as words."""
    subject, predicate, obj = triple
    return surface(subject), predicate_words(predicate), surface(obj)
