"""What an import or export did: counts, and the entries it skipped with the reason for each."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from core.labels import plural_word

# How the language of a file's texts was decided: every text carried its own (``lang``
# attribute), or those without one took the language asked for (--lang), the one in the
# file's name, or English by default.
LanguageHow = Literal["attribute", "asked", "filename", "default"]
LanguageConfidence = Literal["stated", "inferred", "assumed"]
_CONFIDENCE: dict[LanguageHow, LanguageConfidence] = {
    "attribute": "stated",
    "asked": "stated",
    "filename": "inferred",
    "default": "assumed",
}


def counts_line(entries: int, units: int, references: int, errors: int) -> str:
    """``"615 entries, 615 units, 1845 references, 0 errors"``, ``"1 entry, 1 unit, …"``:
    plain integers (no thousands separators) so scripts can parse the line; a parser
    reads ``(\\d+) (entr(y|ies)|units?|references?|errors?)``."""
    return ", ".join(
        f"{count} {plural_word(count, word)}"
        for count, word in (
            (entries, "entry"),
            (units, "unit"),
            (references, "reference"),
            (errors, "error"),
        )
    )


@dataclass(frozen=True)
class LanguageDecision:
    """The language given to a file's texts that carry none, how it was decided and on
    what evidence (the code asked for, the file name that names it)."""

    lang: str
    how: LanguageHow
    evidence: str = ""

    @property
    def confidence(self) -> LanguageConfidence:
        return _CONFIDENCE[self.how]

    @property
    def rule(self) -> str:
        """The decision in words, as the report and warnings say it."""
        if self.how == "asked":
            return "as asked for the import (--lang)"
        if self.how == "filename":
            return f"from the file name {self.evidence}"
        if self.how == "attribute":
            return "from each text's lang attribute"
        return "English by default: no --lang, no language in the file name"


@dataclass(frozen=True)
class FileImport:
    """One imported file: its counts and the language decision for its texts.
    ``unmarked``: its texts without a language, which took ``language.lang``."""

    file: str
    entries: int
    units: int
    references: int
    errors: int
    language: LanguageDecision
    unmarked: int = 0

    @property
    def how(self) -> LanguageHow:
        """How this file's texts got their language (``attribute``: all carried one)."""
        return self.language.how if self.unmarked else "attribute"

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.file,
            "entries": self.entries,
            "units": self.units,
            "references": self.references,
            "errors": self.errors,
            "unmarked_texts": self.unmarked,
            "lang": self.language.lang if self.unmarked else None,
            "how": self.how,
            "confidence": _CONFIDENCE[self.how],
            "evidence": self.language.evidence if self.unmarked else "",
        }

    def language_line(self) -> str | None:
        """What the texts without a language were taken as, None when there were none."""
        if not self.unmarked:
            return None
        return (
            f"{self.unmarked} {plural_word(self.unmarked, 'text')} without a language "
            f"taken as {self.language.lang} ({self.language.rule})"
        )

    def line(self) -> str:
        line = f"{self.file}: " + counts_line(
            self.entries, self.units, self.references, self.errors
        )
        # Every file says how its texts' language was decided, not only its counts.
        language = self.language_line() or "every text carried its own language"
        return f"{line}; {language}"


@dataclass(frozen=True)
class EntryError:
    """One entry (or place in a file) that was not imported, and why."""

    where: str  # e.g. "entry 12 (eid Id12)" or "line 40"
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


@dataclass(frozen=True)
class ImportReport:
    """Counts of an import. ``entries`` counts every entry read, skipped ones included."""

    entries: int
    units: int
    references: int
    errors: list[EntryError] = field(default_factory=list)
    triples: int = 0
    source: str = ""
    # Accepted entries that look wrong (a text whose language differs from its
    # siblings', an id that is not a Wikidata id): in the session, unlike ``errors``.
    warnings: list[EntryError] = field(default_factory=list)
    # Per file read (WebNLG): its counts and how its texts' language was decided.
    files: list[FileImport] = field(default_factory=list)
    mentions: int = 0  # entity mentions stored (enriched WebNLG ``references``)
    already: int = 0  # entries found in the session with the same content (a re-run)

    def summary_line(self) -> str:
        # Plain integers (no thousands separators) so scripts can parse the line; the
        # re-run count comes last, and only when there is one, so the prefix stays.
        line = counts_line(self.entries, self.units, self.references, len(self.errors))
        return line + (f", {self.already} already imported" if self.already else "")


@dataclass(frozen=True)
class ExportReport:
    """Counts of an export, shaped like :class:`ImportReport` so both read alike.

    ``entries`` counts what the file holds in the format's own terms (XML entries, WDV
    records, CSV rows, RDF data units); ``units`` the session's data units the export
    looked at; ``references`` the references written; ``skipped`` the units that were
    not written, each with the reason (a WDV record holds one claim, so a unit of three
    triples is skipped, not silently dropped). ``entries + len(skipped) == units``.
    """

    entries: int
    units: int
    references: int
    skipped: list[EntryError] = field(default_factory=list)
    triples: int = 0
    path: str = ""
    format: str = ""
    # CSV: how text cells were written (files.SAFE_CELLS_NOTE or RAW_CELLS_NOTE), and how
    # many were prefixed with ' to keep a spreadsheet from running them as formulas.
    cells: str = ""
    neutralised: int = 0

    @property
    def errors(self) -> list[EntryError]:
        """The skipped units, under the name an import report uses."""
        return self.skipped

    def summary_line(self) -> str:
        # Same words and order as an import's line, so one parser reads both.
        return counts_line(self.entries, self.units, self.references, len(self.skipped))
