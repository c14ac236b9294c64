"""What an import or export did: counts, and the entries it skipped with the reason for each."""

from __future__ import annotations

from dataclasses import dataclass, field


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
    # Entries imported that look wrong (e.g. an id that is not a Wikidata id), each
    # with what looks wrong; they are in the session, unlike ``errors``.
    warnings: list[EntryError] = field(default_factory=list)

    def summary_line(self) -> str:
        # Plain integers (no thousands separators) so scripts can parse the line.
        return (
            f"{self.entries} entries, {self.units} units, "
            f"{self.references} references, {len(self.errors)} errors"
        )


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

    @property
    def errors(self) -> list[EntryError]:
        """The skipped units, under the name an import report uses."""
        return self.skipped

    def summary_line(self) -> str:
        # Same words and order as an import's line, so one parser reads both.
        return (
            f"{self.entries} entries, {self.units} units, "
            f"{self.references} references, {len(self.skipped)} errors"
        )
