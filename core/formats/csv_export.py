"""CSV export (METHODS §10): one row per data unit, for spreadsheets and pandas.

Columns: ``uid, category, shape, size, tier, sub_tier, root_qid``, then for each of
en, it, es ``triples_{lang}`` (the main triple set, ``"s | p | o"`` joined with ``" ; "``,
manual overrides applied) and ``references_{lang}`` (joined with ``" || "``). UTF-8 with a
header row; the csv module quotes what needs quoting. Text that a spreadsheet would run as a
formula (a cell starting with ``= + - @``, tab or CR) gets a leading ``'`` unless ``raw``
(``files.CsvWriter``); the report's ``cells`` says which, and how many cells were changed.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.formats.common import CsvWriter, atomic_output
from core.formats.report import ExportReport
from core.jobs import Job, JobContext
from core.vocab import LANGUAGES

if TYPE_CHECKING:
    from core.store import SessionStore

TRIPLE_SEPARATOR = " | "
TRIPLES_JOINER = " ; "
REFERENCES_JOINER = " || "
UNIT_COLUMNS = ("uid", "category", "shape", "size", "tier", "sub_tier", "root_qid")
COLUMNS = UNIT_COLUMNS + tuple(
    f"{kind}_{lang}" for lang in LANGUAGES for kind in ("triples", "references")
)


def triple_text(row: Any) -> str:
    """``"s | p | o"`` of a unit_triples row, the user's overrides in place of the labels."""
    parts = []
    for name in ("subject", "predicate", "object"):
        override = getattr(row, f"{name}_override")
        parts.append(override if override is not None else getattr(row, name))
    return TRIPLE_SEPARATOR.join(parts)


def category_of(unit: Any, categories: dict[int, str]) -> str:
    """The unit's category: the session's, else the one an imported WebNLG entry named."""
    if unit.category_id in categories:
        return categories[unit.category_id]
    attributes = unit.attributes if isinstance(unit.attributes, dict) else {}
    entry = attributes.get("entry")
    # WebNLG/TailNLG imports keep the entry's attributes (category among them) here.
    return str(entry.get("category", "")) if isinstance(entry, dict) else ""


def export_csv(
    store: SessionStore,
    path: Path | str,
    ctx: JobContext | None = None,
    *,
    force: bool = False,
    raw: bool = False,
) -> ExportReport:
    """Write one row per data unit of ``store`` to ``path``; the report counts the rows
    (one per unit, none skipped) and the references and main triples in them."""
    from sqlalchemy import select

    from core.store.models import Category, DataUnit, UnitReference, UnitTriple

    with store.unit_of_work() as db:
        units = list(db.scalars(select(DataUnit).order_by(DataUnit.id)))
        triples: dict[tuple[int, str], list[str]] = defaultdict(list)
        # Only the main set: the WebNLG 'original' set repeats the same facts unedited.
        for triple in db.scalars(
            select(UnitTriple)
            .where(UnitTriple.tripleset == "main")
            .order_by(UnitTriple.unit_id, UnitTriple.position)
        ):
            triples[(triple.unit_id, triple.lang)].append(triple_text(triple))
        references: dict[tuple[int, str], list[str]] = defaultdict(list)
        for ref in db.scalars(select(UnitReference).order_by(UnitReference.id)):
            references[(ref.unit_id, ref.lang)].append(ref.text)
        categories = {row.id: row.name for row in db.execute(select(Category.id, Category.name))}
        db.expunge_all()
    written_references = written_triples = 0
    # newline="" as the csv module asks: it writes its own \r\n line ends.
    with atomic_output(path, newline="", force=force) as handle:
        writer = CsvWriter(handle, fieldnames=COLUMNS, raw=raw)
        writer.writeheader()
        for done, unit in enumerate(units, start=1):
            if ctx is not None:
                ctx.check_cancelled()
            row: dict[str, Any] = {
                "uid": unit.uid,
                "category": category_of(unit, categories),
                "shape": unit.shape or "",
                "size": unit.size,
                "tier": unit.tier or "",
                "sub_tier": unit.sub_tier or "",
                "root_qid": unit.root_qid or "",
            }
            for lang in LANGUAGES:
                unit_triples = triples.get((unit.id, lang), [])
                unit_references = references.get((unit.id, lang), [])
                row[f"triples_{lang}"] = TRIPLES_JOINER.join(unit_triples)
                row[f"references_{lang}"] = REFERENCES_JOINER.join(unit_references)
                written_triples += len(unit_triples)
                written_references += len(unit_references)
            writer.writerow(row)
            if ctx is not None:
                ctx.progress(done, len(units), f"{done} rows written")
    return ExportReport(
        len(units),
        len(units),
        written_references,
        [],
        triples=written_triples,
        path=str(path),
        format="csv",
        cells=writer.note,
        neutralised=writer.neutralised,
    )


def export_job(store: SessionStore, path: Path | str) -> Job[ExportReport]:
    path = Path(path)
    return Job(
        title=f"Export {path.name}",
        run=lambda ctx: export_csv(store, path, ctx=ctx),
        kind="export",
        params={"path": str(path), "format": "csv"},
    )
