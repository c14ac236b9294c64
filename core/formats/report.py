"""What an import did: counts, and the entries it skipped with the reason for each."""

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

    def summary_line(self) -> str:
        # Plain integers (no thousands separators) so scripts can parse the line.
        return (
            f"{self.entries} entries, {self.units} units, "
            f"{self.references} references, {len(self.errors)} errors"
        )
