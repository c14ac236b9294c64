"""Words shown to users, in one place: counts with the right plural, tier names.

Every panel and command shows a tier through :func:`tier_label` (``long_tail`` is
"long tail", ``long_tail_it`` is "long tail · it only"), and counts through :func:`plural`
("1 unit", "2 units"), so no two places disagree.
"""

from __future__ import annotations

_IRREGULAR = {
    "entity": "entities",
    "entry": "entries",
    "category": "categories",
    "this": "these",
    "was": "were",
    "is": "are",
    "has": "have",
}


def plural_word(count: float, word: str) -> str:
    if count == 1:
        return word
    return _IRREGULAR.get(word, word + "s")


def plural(count: float, word: str) -> str:
    """``plural(1, "unit")`` → "1 unit"; ``plural(1234, "entity")`` → "1,234 entities"."""
    number = f"{count:,}" if isinstance(count, int) else f"{count:,g}"
    return f"{number} {plural_word(count, word)}"


def duration_words(seconds: float) -> str:
    """``duration_words(151)`` → "2 min 31 s"; "45 s" under a minute, "1 h 05 min" from an
    hour (the time left of a pull or a scoring run)."""
    whole = int(round(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes, whole = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {whole:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


# TailNLG's top_head is the head (core.groups.head_tier): one word for it in every panel.
_TIER_WORDS = {"head": "head", "top_head": "head", "torso": "torso", "long_tail": "long tail"}


def tier_label(value: str | None) -> str:
    """The display words of a tier or sub-tier code: "head", "torso", "long tail",
    "long tail · en only"; "no tier" for none. Codes stay as they are in files and the
    command line."""
    if not value:
        return "no tier"
    value = str(value)
    if value in _TIER_WORDS:
        return _TIER_WORDS[value]
    if value.startswith("long_tail_"):
        return f"long tail · {value.removeprefix('long_tail_')} only"
    return value.replace("_", " ")
