"""Language codes per translation-model family (METHODS §11 step 2).

The session speaks ISO 639-1 (``en``, ``it``, ``es``); each family of translation model
names languages its own way:

* Marian / OPUS-MT: one model per pair (``opus-mt-en-it``), no code; a multi-target
  model wants a ``>>ita<<`` token (ISO 639-3) before the source, which its vocabulary
  lists, so the token is added only where the vocabulary has it.
* NLLB-200: FLORES-200 codes (``eng_Latn``) as ``src_lang`` and forced first token.
* M2M100: ISO 639-1 (``en``) as ``src_lang``, ``__it__`` as the forced first token.
* MADLAD-400: a ``<2it>`` prefix on the source (a T5 model).
* a causal LM or a server: the language's English name in the translation prompt.
"""

from __future__ import annotations

from core.errors import UserFacingError

MARIAN, NLLB, M2M100, MADLAD, CAUSAL, SERVER = (
    "marian",
    "nllb",
    "m2m100",
    "madlad",
    "causal",
    "openai",
)

# ISO 639-1 → (English name, ISO 639-3, FLORES-200). The languages TailNLG has, and the
# usual others a curator may ask for.
TRANSLATION_LANGUAGES: dict[str, tuple[str, str, str]] = {
    "en": ("English", "eng", "eng_Latn"),
    "it": ("Italian", "ita", "ita_Latn"),
    "es": ("Spanish", "spa", "spa_Latn"),
    "fr": ("French", "fra", "fra_Latn"),
    "de": ("German", "deu", "deu_Latn"),
    "pt": ("Portuguese", "por", "por_Latn"),
    "nl": ("Dutch", "nld", "nld_Latn"),
    "ca": ("Catalan", "cat", "cat_Latn"),
    "ro": ("Romanian", "ron", "ron_Latn"),
    "pl": ("Polish", "pol", "pol_Latn"),
    "ru": ("Russian", "rus", "rus_Cyrl"),
    "zh": ("Chinese", "zho", "zho_Hans"),
    "ja": ("Japanese", "jpn", "jpn_Jpan"),
}


class LanguageError(UserFacingError):
    """A language the translation step has no code for."""


def check_language(lang: str) -> str:
    code = lang.strip().lower()
    if code not in TRANSLATION_LANGUAGES:
        raise LanguageError(
            f"no translation language code for {lang!r}: "
            f"use one of {', '.join(TRANSLATION_LANGUAGES)}"
        )
    return code


def language_name(lang: str) -> str:
    """``it`` → ``Italian`` (the prompts' words)."""
    return TRANSLATION_LANGUAGES[check_language(lang)][0]


def model_code(family: str, lang: str) -> str:
    """The code ``family`` uses for ISO 639-1 ``lang``."""
    name, iso3, flores = TRANSLATION_LANGUAGES[check_language(lang)]
    if family == NLLB:
        return flores
    if family == M2M100:
        return lang
    if family == MADLAD:
        return f"<2{lang}>"
    if family == MARIAN:
        return f">>{iso3}<<"
    return name


def parse_languages(text: str) -> list[str]:
    """``"it,es"`` → ``["it", "es"]``, each checked, duplicates dropped."""
    found: list[str] = []
    for part in text.split(","):
        if part.strip():
            code = check_language(part)
            if code not in found:
                found.append(code)
    if not found:
        raise LanguageError("name at least one target language (e.g. --to it,es)")
    return found
