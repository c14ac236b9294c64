"""Prompts, answer markers and reply parsing (METHODS §6).

One editable template per language; ``{triples}`` in it is replaced by the unit's
triples as ``[subject, predicate, object]`` lines. The reply is parsed after the fixed
answer marker the template asks for (``The final verbalization is: [ … ]`` and its
Italian and Spanish equivalents). The raw reply is always kept; a reply without the
marker, or with nothing after it, is flagged (``parse_ok`` False) and never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.surface import surface_triple
from resources import resource_path

LANGUAGES: tuple[str, ...] = ("en", "it", "es")
LANGUAGE_NAMES = {"en": "English", "it": "Italian", "es": "Spanish"}
PLACEHOLDER = "{triples}"
ANSWER_MARKERS: dict[str, str] = {
    "en": "The final verbalization is:",
    "it": "La verbalizzazione finale è:",
    "es": "La verbalización final es:",
}
# Models sometimes answer in another language than asked, or spell the marker with
# "verbalisation"/"verbalizzazione" variants: every known marker is accepted.
_MARKER_PATTERN = re.compile(
    r"(?:the\s+final\s+verbali[sz]ation\s+is"
    r"|la\s+verbali[sz]zazione\s+finale\s+[èe]"
    r"|la\s+verbalizaci[óo]n\s+final\s+es)\s*:?",
    re.IGNORECASE,
)


class PromptError(ValueError):
    pass


def default_template(lang: str) -> str:
    """The bundled template for ``lang`` (resources/prompts/<lang>.txt)."""
    if lang not in LANGUAGES:
        raise PromptError(f"no prompt template for language {lang!r}: use en, it or es")
    return resource_path("prompts", f"{lang}.txt").read_text(encoding="utf-8")


def default_templates(langs: Sequence[str] = LANGUAGES) -> dict[str, str]:
    return {lang: default_template(lang) for lang in langs}


def check_template(template: str, lang: str) -> None:
    """A template must hold ``{triples}`` once; raises :class:`PromptError` otherwise."""
    count = template.count(PLACEHOLDER)
    if count != 1:
        raise PromptError(f"the {lang} prompt template must contain {PLACEHOLDER} exactly once "
                          f"(found {count})")


def triple_lines(triples: Sequence[tuple[str, str, str]]) -> str:
    """One ``[subject, predicate, object]`` line per triple, in surface forms
    (:mod:`core.surface`: DBpedia identifiers as text, Wikidata labels unchanged)."""
    return "\n".join(f"[{s}, {p}, {o}]" for s, p, o in map(surface_triple, triples))


def render_prompt(template: str, triples: Sequence[tuple[str, str, str]], lang: str) -> str:
    """The user message for a unit: the template with its triples filled in.

    Plain replacement, not ``str.format``: a user's template may hold braces."""
    check_template(template, lang)
    return template.replace(PLACEHOLDER, triple_lines(triples)).strip()


def seq2seq_prefix(lang: str) -> str:
    """The task prefix of a T5-style graph-to-text model (resources/prompts/seq2seq_prefix.txt)."""
    text = resource_path("prompts", "seq2seq_prefix.txt").read_text(encoding="utf-8")
    return text.replace("{language}", LANGUAGE_NAMES.get(lang, lang))


def linearise_graph(triples: Sequence[tuple[str, str, str]], prefix: str = "") -> str:
    """WebNLG-style input: ``<H> subject <R> predicate <T> object`` for each triple."""
    body = " ".join(f"<H> {s} <R> {p} <T> {o}" for s, p, o in map(surface_triple, triples))
    return f"{prefix}{body}" if prefix else body


@dataclass(frozen=True)
class ParsedReply:
    text: str | None
    ok: bool


def parse_reply(reply: str) -> ParsedReply:
    """The text after the last answer marker, without its brackets or quotes.

    ``[ … ]`` is taken up to its last closing bracket; a reply cut off before the
    bracket closes (max new tokens reached) still yields the text so far. No marker,
    or nothing after it, gives ``ParsedReply(None, False)``."""
    matches = list(_MARKER_PATTERN.finditer(reply))
    if not matches:
        return ParsedReply(None, False)
    rest = reply[matches[-1].end():].strip()
    if rest.startswith("["):
        closing = rest.rfind("]")
        rest = rest[1:closing] if closing > 0 else rest[1:]
    rest = rest.strip().strip("\"'“”«»").strip()
    return ParsedReply(rest, True) if rest else ParsedReply(None, False)


def templates_for(
    langs: Sequence[str], overrides: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The templates a run uses: the bundled ones, replaced where the user edited one."""
    templates = default_templates(langs)
    for lang, text in (overrides or {}).items():
        if lang not in LANGUAGES:
            raise PromptError(f"no such language {lang!r} for a prompt template")
        check_template(text, lang)
        templates[lang] = text
    return templates
