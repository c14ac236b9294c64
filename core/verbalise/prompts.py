"""Prompts, answer markers and reply parsing (METHODS §6).

One editable template per language; ``{triples}`` in it is replaced by the unit's
triples as ``[subject, predicate, object]`` lines. Templates come in presets
(:data:`PRESETS`): the default is the TailNLG study's own prompts, verbatim from Appendix H
of its paper (Draetta et al., 2026, CC BY 4.0) with the triples after the instructions;
``taillens`` is TailLens's earlier wording. resources/prompts/ATTRIBUTION.txt says where
each file comes from. The reply is parsed after the fixed
answer marker the template asks for (``The final verbalization is: [ … ]`` and its
Italian and Spanish equivalents, the same in the TailNLG study's Appendix H prompts),
as instruction-tuned models write it (Markdown, fences, commentary: see
:func:`parse_reply`). The raw reply is always kept; a reply that cannot be parsed is
flagged (``parse_ok`` False) with a reason and never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.surface import surface_triple
from core.vocab import LANGUAGE_NAMES, LANGUAGES
from resources import resource_path

PLACEHOLDER = "{triples}"
ANSWER_MARKERS: dict[str, str] = {
    "en": "The final verbalization is:",
    "it": "La verbalizzazione finale è:",
    "es": "La verbalización final es:",
}


# Preset name -> what the panel and the CLI call it; files resources/prompts/<name>_<lang>.txt.
PRESETS: dict[str, str] = {
    "tailnlg": "TailNLG study (Appendix H, verbatim)",
    "taillens": "TailLens wording",
}
DEFAULT_PRESET = "tailnlg"
# WDV's graph-to-text input (Ribeiro et al.'s T5 convention): this, then <H> <R> <T> triples.
DEFAULT_SEQ2SEQ_PREFIX = "translate from Graph to Text: "


class PromptError(ValueError):
    pass


def check_preset(preset: str) -> str:
    if preset not in PRESETS:
        raise PromptError(f"no prompt preset {preset!r}: choose from {', '.join(PRESETS)}")
    return preset


def default_template(lang: str, preset: str = DEFAULT_PRESET) -> str:
    """The bundled template of ``preset`` for ``lang``
    (resources/prompts/<preset>_<lang>.txt)."""
    if lang not in LANGUAGES:
        raise PromptError(f"no prompt template for language {lang!r}: use en, it or es")
    check_preset(preset)
    return resource_path("prompts", f"{preset}_{lang}.txt").read_text(encoding="utf-8")


def default_templates(
    langs: Sequence[str] = LANGUAGES, preset: str = DEFAULT_PRESET
) -> dict[str, str]:
    return {lang: default_template(lang, preset) for lang in langs}


def preset_of(templates: Mapping[str, str]) -> str | None:
    """The preset whose bundled texts ``templates`` are (every language given), else None
    (edited templates)."""
    for preset in PRESETS:
        if templates and all(
            default_template(lang, preset) == text
            for lang, text in templates.items()
            if lang in LANGUAGES
        ):
            return preset
    return None


def check_template(template: str, lang: str) -> None:
    """A template must hold ``{triples}`` once; raises :class:`PromptError` otherwise."""
    count = template.count(PLACEHOLDER)
    if count != 1:
        raise PromptError(
            f"the {lang} prompt template must contain {PLACEHOLDER} exactly once (found {count})"
        )


def triple_lines(triples: Sequence[tuple[str, str, str]]) -> str:
    """One ``[subject, predicate, object]`` line per triple, in surface forms
    (:mod:`core.surface`: DBpedia identifiers as text, Wikidata labels unchanged)."""
    return "\n".join(f"[{s}, {p}, {o}]" for s, p, o in map(surface_triple, triples))


def render_prompt(template: str, triples: Sequence[tuple[str, str, str]], lang: str) -> str:
    """The user message for a unit: the template with its triples filled in.

    Plain replacement, not ``str.format``: a user's template may hold braces."""
    check_template(template, lang)
    return template.replace(PLACEHOLDER, triple_lines(triples)).strip()


def seq2seq_prefix(lang: str, prefix: str | None = None) -> str:
    """The task prefix of a T5-style graph-to-text model for ``lang``: ``prefix``, or the
    bundled one (resources/prompts/seq2seq_prefix.txt: WDV's ``translate from Graph to
    Text: ``). ``{language}`` in it becomes the language's English name (``translate
    Graph to {language}: `` gives TailLens's earlier prefix)."""
    text = (
        prefix
        if prefix is not None
        else resource_path("prompts", "seq2seq_prefix.txt").read_text(encoding="utf-8")
    )
    return text.replace("{language}", LANGUAGE_NAMES.get(lang, lang))


def linearise_graph(triples: Sequence[tuple[str, str, str]], prefix: str = "") -> str:
    """WebNLG-style input: ``<H> subject <R> predicate <T> object`` for each triple."""
    body = " ".join(f"<H> {s} <R> {p} <T> {o}" for s, p, o in map(surface_triple, triples))
    return f"{prefix}{body}" if prefix else body


def seq2seq_input(
    triples: Sequence[tuple[str, str, str]], lang: str, prefix: str | None = None
) -> str:
    """What a WDV-style seq2seq model reads for ``triples`` in ``lang``: the task prefix
    (:func:`seq2seq_prefix`; None: the bundled one, WDV's) then the ``<H> <R> <T>``
    linearisation. The verbaliser and ``train-verbaliser`` both build it here, so a model
    is trained on exactly the input it is later given."""
    return linearise_graph(triples, seq2seq_prefix(lang, prefix))


@dataclass(frozen=True)
class ParsedReply:
    """A parsed reply: the clean text (None unless ``ok``) and, when not ok, why."""

    text: str | None
    ok: bool
    reason: str = ""


# The answer marker as models write it: any of the three languages, "verbalisation" or
# "verbalization", Markdown emphasis or code marks between its words and before its colon
# (``**The final verbalization is:**``, ``*The final verbalization* is:``).
_GAP = r"[\s*_`]+"
_MARKER_PATTERN = re.compile(
    r"(?:the" + _GAP + r"final" + _GAP + r"verbali[sz]ation" + _GAP + r"is"
    r"|la" + _GAP + r"verbali[sz]zazione" + _GAP + r"finale" + _GAP + r"(?:è|e'|e)"
    r"|la" + _GAP + r"verbalizaci[óo]n" + _GAP + r"final" + _GAP + r"es)"
    r"(?!\w)[*_`]*"
    # "… is as follows:", "… è la seguente:", "… es la siguiente:"
    r"(?:\s+(?:as\s+follows|the\s+following|below|la\s+seguente|di\s+seguito"
    r"|la\s+siguiente|a\s+continuaci[óo]n)[*_`]*)?"
    r"\s*(?P<colon>:?)[*_`]*",
    re.IGNORECASE,
)
# What may stand between the marker and the answer: white space, emphasis, a quote
# block's ">", a heading's "#", a code fence with its language tag.
_LEAD = re.compile(r"(?:```[\w-]*|[\s*_>#`~])*")
# The templates' own placeholders: a reply that only echoes the instruction.
_PLACEHOLDERS = frozenset(
    {
        "verbalization output",
        "verbalisation output",
        "your paragraph",
        "paragraph",
        "output di verbalizzazione",
        "il tuo paragrafo",
        "salida de verbalización",
        "tu párrafo",
        "...",
        "…",
    }
)
_QUOTES = {'"': '"', "“": "”", "«": "»", "„": "“", "'": "'", "‘": "’"}
_EMPHASIS = (
    re.compile(r"\*\*(.+?)\*\*", re.DOTALL),
    re.compile(r"(?<!\w)__(.+?)__(?!\w)", re.DOTALL),
    re.compile(r"\*(?=\S)(.+?)(?<=\S)\*", re.DOTALL),
    re.compile(r"(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)", re.DOTALL),
    re.compile(r"`+([^`]+?)`+"),
)
_NO_MARKER = (
    'no answer marker in the reply ("The final verbalization is:", '
    '"La verbalizzazione finale è:" or "La verbalización final es:")'
)


def _is_binary(reply: str) -> bool:
    """NUL bytes, or more than 5 % control or replacement characters: not text."""
    if "\x00" in reply:
        return True
    odd = sum(
        1
        for c in reply
        if (c < " " and c not in "\t\n\r\f") or "\x7f" <= c <= "\x9f" or c == "\ufffd"
    )
    return odd > 0.05 * len(reply)


def _closing_bracket(text: str, start: int) -> int:
    """Index of the "]" closing the "[" at ``start`` (nested pairs skipped), else -1."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
            if depth == 0:
                return i
    return -1


def clean_answer(text: str) -> str:
    """The answer without Markdown emphasis, code marks, outer brackets or quotes, and
    with its white space collapsed to single spaces (it is one paragraph)."""
    text = " ".join(text.split())
    for _ in range(3):  # "[**[Rome.]**]", "“[Rome.]”": peel layers until none is left
        before = text
        for pattern in _EMPHASIS:
            text = pattern.sub(r"\1", text)
        text = text.strip(" *`~")
        text = re.sub(r"^_+|_+$", "", text).strip()
        while text.startswith("[") and _closing_bracket(text, 0) == len(text) - 1:
            text = text[1:-1].strip()
        if len(text) >= 2 and _QUOTES.get(text[0]) == text[-1]:
            text = text[1:-1].strip()
        if text == before:
            break
    return text


def _answer_after(reply: str, end: int, colon: bool) -> tuple[str | None, str]:
    """The answer after a marker ending at ``end`` (written with a colon or not):
    (text, "") or (None, reason)."""
    lead = _LEAD.match(reply, end)
    start = lead.end() if lead else end
    if start >= len(reply):
        return None, "nothing after the answer marker"
    if not colon and reply[start] != "[":
        # "The final verbalization is correct." is prose, not the marker.
        return None, "the marker's words are there, but no answer follows them"
    if reply[start] == "[":
        close = _closing_bracket(reply, start)
        if close < 0:
            # Unbalanced inside ("[Rome [x is in Italy.]"): the last "]" of the paragraph
            # ends it, if nothing but markup follows it there; otherwise ("[Rome [x] is")
            # the reply stopped before the answer's bracket closed.
            end_of_paragraph = reply.find("\n\n", start)
            segment = reply[start:] if end_of_paragraph < 0 else reply[start:end_of_paragraph]
            close = segment.rfind("]")
            if close <= 0 or segment[close + 1 :].strip(" \t\r\n*_`.!"):
                return None, (
                    "the reply was cut off inside the brackets of the answer "
                    "(no closing ']': more new tokens may be needed)"
                )
            close += start
        body = reply[start + 1 : close]
    else:
        # No brackets: the first line after the marker (a closing fence ends it too).
        line = reply[start:].split("\n", 1)[0]
        body = line.split("```", 1)[0]
    text = clean_answer(body)
    if not text:
        return None, "nothing inside the answer's brackets"
    if text.lower().strip(" .") in _PLACEHOLDERS or text in _PLACEHOLDERS:
        return None, f"the answer only repeats the prompt's placeholder {text!r}"
    return text, ""


def parse_reply(reply: str | bytes) -> ParsedReply:
    """The answer after the last answer marker that has a complete one, as plain text.

    Replies are parsed as instruction-tuned models write them: Markdown emphasis around
    or inside the marker and the brackets, code fences, a preamble, commentary after the
    answer, the marker of another of the three languages, several markers (the last one
    with a complete answer wins; earlier ones often restate the instruction). The text
    never keeps the brackets, quotes around the answer or Markdown marks.

    Not ok (``text`` None, ``reason`` says why; the raw reply is kept by the caller): an
    empty or binary reply, no marker, nothing after it, an answer that only repeats the
    template's placeholder, and a reply cut off inside the brackets (max new tokens
    reached): what was written is in the raw reply only, never stored as a text."""
    if isinstance(reply, bytes | bytearray):
        try:
            reply = bytes(reply).decode("utf-8")
        except UnicodeDecodeError:
            return ParsedReply(None, False, "binary reply: not UTF-8 text")
    if not reply.strip():
        return ParsedReply(None, False, "empty reply")
    if _is_binary(reply):
        return ParsedReply(None, False, "binary reply: control characters, not text")
    matches = list(_MARKER_PATTERN.finditer(reply))
    if not matches:
        return ParsedReply(None, False, _NO_MARKER)
    last_reason = ""
    for match in reversed(matches):
        text, reason = _answer_after(reply, match.end(), bool(match["colon"]))
        if text is not None:
            return ParsedReply(text, True)
        last_reason = last_reason or reason
    return ParsedReply(None, False, last_reason)


def templates_for(
    langs: Sequence[str],
    overrides: Mapping[str, str] | None = None,
    preset: str = DEFAULT_PRESET,
) -> dict[str, str]:
    """The templates a run uses: the preset's bundled ones, replaced where the user edited
    one."""
    templates = default_templates(langs, preset)
    for lang, text in (overrides or {}).items():
        if lang not in LANGUAGES:
            raise PromptError(f"no such language {lang!r} for a prompt template")
        check_template(text, lang)
        templates[lang] = text
    return templates
