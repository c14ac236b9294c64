"""The per-text table written to a file: the export, its report and its job."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.formats.common import atomic_output
from core.formats.report import ExportReport
from core.formats.texts_table.plan import (
    OUTPUT,
    REFERENCE,
    Plan,
    TextsTableError,
    make_plan,
    output_where,
)
from core.formats.texts_table.rows import pages
from core.formats.texts_table.writers import metadata, open_table, pyarrow_module
from core.io import jsonio
from core.io.output_guard import check_output_target
from core.jobs import Job, JobContext
from core.labels import plural_word

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from core.store import SessionStore

PAGE_SIZE = 2000  # texts per read and per Parquet row group
SUFFIXES = {".csv": "csv", ".jsonl": "jsonl", ".parquet": "parquet"}


def texts_format(path: Path | str) -> str:
    """``csv``, ``jsonl`` or ``parquet`` from the file's suffix, else a one-line error."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise TextsTableError(
            f"Cannot tell the table format of {Path(path).name}: name the file .csv, "
            ".jsonl or .parquet."
        )
    return SUFFIXES[suffix]


def sidecar_path(path: Path | str) -> Path:
    """Where a CSV or JSON Lines table's signatures and column types go."""
    path = Path(path).expanduser()
    return path.with_name(path.name + ".signatures.json")


@dataclass(frozen=True)
class TextsReport(ExportReport):
    """An :class:`ExportReport` (entries: rows) with what the table holds: its columns and
    their types, each score column's signatures, outputs and references written, and the
    sidecar written (CSV, JSON Lines)."""

    columns: tuple[tuple[str, str], ...] = ()
    signatures: dict[str, list[str]] = field(default_factory=dict)
    outputs: int = 0
    sidecar: str = ""

    def texts_line(self) -> str:
        """``"5 texts (4 outputs, 1 reference) of 2 units, 27 columns"``: plain integers,
        as :func:`core.formats.report.counts_line`, so scripts can parse the line."""
        return "{} ({}, {}) of {}, {}".format(
            *(
                f"{n} {plural_word(n, word)}"
                for n, word in (
                    (self.entries, "text"),
                    (self.outputs, "output"),
                    (self.references, "reference"),
                    (self.units, "unit"),
                    (len(self.columns), "column"),
                )
            )
        )


@dataclass
class _Written:
    """What the rows written so far hold."""

    rows: int = 0
    outputs: int = 0
    references: int = 0
    units: set[str] = field(default_factory=set)  # bounded by the session's units
    neutralised: int = 0
    cells: str = ""


def _output_count(db: Session, plan: Plan) -> int:
    from sqlalchemy import text

    params: dict[str, Any] = {}
    query = "SELECT count(*) FROM verbalisations v WHERE " + output_where(plan, params)
    return int(db.execute(text(query), params).scalar_one())


def _write_table(
    db: Session,
    plan: Plan,
    path: Path,
    fmt: str,
    ctx: JobContext | None,
    *,
    force: bool,
    raw: bool,
    page_size: int,
) -> _Written:
    """Every page of the table into ``path``, through :func:`atomic_output`."""
    total = _output_count(db, plan)
    written = _Written()
    newline = "" if fmt == "csv" else None
    with atomic_output(path, binary=fmt == "parquet", newline=newline, force=force) as handle:
        table = open_table(fmt, handle, plan, raw)
        try:
            for rows in pages(db, plan, page_size):
                if ctx is not None:
                    ctx.check_cancelled()
                table.write(rows)
                written.rows += len(rows)
                written.outputs += sum(1 for r in rows if r["kind"] == OUTPUT)
                written.references += sum(1 for r in rows if r["kind"] == REFERENCE)
                written.units.update(r["unit"] for r in rows)
                if ctx is not None:
                    ctx.progress(min(written.rows, total), total, f"{written.rows} texts written")
        finally:
            table.close()
        written.neutralised, written.cells = table.cells()
    return written


def export_texts(
    store: SessionStore,
    path: Path | str,
    ctx: JobContext | None = None,
    *,
    force: bool = False,
    raw: bool = False,
    runs: Sequence[int] | None = None,
    langs: Sequence[str] | None = None,
    page_size: int = PAGE_SIZE,
) -> TextsReport:
    """Write the per-text table of ``store`` to ``path`` (.csv, .jsonl or .parquet, by its
    suffix); ``runs``/``langs`` keep only those runs' texts (no references then) or
    languages. A CSV or JSON Lines file gets its sidecar (:func:`sidecar_path`)."""
    path = Path(path).expanduser()
    check_output_target(path, force=force)
    fmt = texts_format(path)
    sidecar = sidecar_path(path) if fmt != "parquet" else None
    if sidecar is not None:
        check_output_target(sidecar, force=force)
    if fmt == "parquet":
        pyarrow_module()  # refused before any read
    with store.snapshot() as db:
        plan = make_plan(db, runs, langs)
        written = _write_table(db, plan, path, fmt, ctx, force=force, raw=raw, page_size=page_size)
    if sidecar is not None:
        meta = metadata(plan, fmt) | {"rows": written.rows, "file": path.name}
        with atomic_output(sidecar, force=force) as handle:
            jsonio.dump(meta, handle, ensure_ascii=False, indent=2)
            handle.write("\n")
    return TextsReport(
        written.rows,
        len(written.units),
        written.references,
        [],
        path=str(path),
        format=fmt,
        cells=written.cells,
        neutralised=written.neutralised,
        columns=plan.columns,
        signatures=plan.signatures,
        outputs=written.outputs,
        sidecar=str(sidecar) if sidecar is not None else "",
    )


def export_texts_job(
    store: SessionStore,
    path: Path | str,
    *,
    runs: Sequence[int] | None = None,
    langs: Sequence[str] | None = None,
) -> Job[TextsReport]:
    """The per-text export as a job (the Scores panel's "Export texts…"): reads only."""
    path = Path(path)
    texts_format(path)  # a wrong suffix is refused before the job starts
    return Job(
        title=f"Export texts to {path.name}",
        run=lambda ctx: export_texts(store, path, ctx=ctx, runs=runs, langs=langs),
        kind="export",
        params={"path": str(path), "format": "texts", "runs": runs, "langs": langs},
    )
