"""A WDV JSON file into a session: records streamed, checked and inserted in batches,
all in one transaction."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

from core.changes import IMPORT_WRITES
from core.formats.common import IMPORT_KEPT, check_readable
from core.formats.report import EntryError, ImportReport
from core.formats.wdv.reader import RecordReader
from core.formats.wdv.records import (
    SYSTEM_NAME,
    WORKER_NAME,
    ParsedRecord,
    RecordRejected,
    has_surrogate,
    looks_wrong,
    parse_record,
)
from core.jobs import Job, JobContext

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from core.store import SessionStore

BATCH = 500  # parsed records inserted together (all in the import's one transaction)


def import_wdv(
    store: SessionStore, path: Path | str, ctx: JobContext | None = None
) -> ImportReport:
    """Import a WDV JSON file into ``store`` in one transaction.

    The file is read record by record (:class:`RecordReader`) and inserted in batches,
    all inside one transaction: records that break the format are skipped and listed in
    the report; a file that is not valid JSON or UTF-8, or a failure or cancel, leaves
    the session as it was.
    """
    from sqlalchemy import select

    from core.store.models import DataUnit

    path = check_readable(Path(path), "Give a WDV JSON file.")
    file_name = path.name
    size = path.stat().st_size
    errors: list[EntryError] = []
    warnings: list[EntryError] = []  # imported, but not what a WDV record should hold
    batch: list[ParsedRecord] = []
    entries = units = already = 0
    seen_in_file: set[str] = set()
    run_id: int | None = None
    with store.unit_of_work() as db, closing(RecordReader(path)) as reader:
        taken = set(db.scalars(select(DataUnit.uid)))
        for number, record in enumerate(reader.records(), start=1):
            if ctx is not None:
                ctx.check_cancelled()
            entries = number
            where = _where(number, record)
            try:
                entry = parse_record(record, file_name)
                if entry.uid in taken:
                    from core.formats.rerun import same_wdv_record

                    if entry.uid in seen_in_file or not same_wdv_record(db, entry, SYSTEM_NAME):
                        raise RecordRejected(
                            f"id {entry.uid!r} is already in the session"
                            " with different content (or twice in this file)"
                        )
                    seen_in_file.add(entry.uid)
                    already += 1  # a re-run: the same record is there, not an error
                    continue
            except RecordRejected as exc:
                errors.append(EntryError(where, str(exc)))
                continue
            taken.add(entry.uid)
            seen_in_file.add(entry.uid)
            warnings.extend(EntryError(where, note) for note in looks_wrong(record))
            batch.append(entry)
            units += 1
            if len(batch) >= BATCH:
                run_id = _insert(db, batch, file_name, run_id)
                batch.clear()
            if ctx is not None:
                ctx.progress(
                    min(reader.bytes_read, size), size, f"{units} records from {file_name}"
                )
        if ctx is not None:
            ctx.check_cancelled()
        if batch:
            _insert(db, batch, file_name, run_id)
    return ImportReport(
        entries,
        units,
        0,
        errors,
        triples=units,
        source=file_name,
        already=already,
        warnings=warnings,
    )


def _where(number: int, record: object) -> str:
    """How the report names a record: its place in the file and, if it has one, its claim
    (a lone surrogate written as an escape, so the report can be printed)."""
    claim = record.get("claim_id") if isinstance(record, dict) else None
    if isinstance(claim, str) and has_surrogate(claim):
        claim = claim.encode("utf-8", "backslashreplace").decode("utf-8")
    return f"record {number}" + (f" (claim {claim})" if isinstance(claim, str) else "")


def _workers(db: Session, count: int) -> list[int]:
    """Ids of the anonymous annotators wdv-worker-1 … wdv-worker-{count}, made if missing."""
    from sqlalchemy import select

    from core.store.models import Annotator

    names = [WORKER_NAME.format(i + 1) for i in range(count)]
    known: dict[str, int] = {
        name: id_
        for name, id_ in db.execute(
            select(Annotator.name, Annotator.id).where(Annotator.name.in_(names))
        )
    }
    for name in names:
        if name not in known:
            annotator = Annotator(name=name, is_anonymous=True)
            db.add(annotator)
            db.flush()
            known[name] = annotator.id
    return [known[name] for name in names]


def _insert(db: Session, batch: list[ParsedRecord], file_name: str, run_id: int | None) -> int:
    """Core bulk inserts, as for WebNLG: the ORM's bookkeeping is not needed here.

    The file's one external run is made with the first batch; returns its id."""
    if run_id is None:
        run_id = _new_run(db, file_name)
    workers = _workers(db, max(max(len(r.fluency), len(r.adequacy)) for r in batch))
    unit_ids = _insert_units(db, batch, file_name)
    verbalisation_ids = _insert_verbalisations(db, batch, unit_ids, run_id)
    _insert_ratings(db, batch, verbalisation_ids, workers)
    return run_id


def _new_run(db: Session, file_name: str) -> int:
    """The external run that holds a file's verbalisations."""
    from datetime import UTC, datetime

    from core.store.models import ModelRun

    run = ModelRun(
        kind="external",
        model_id=SYSTEM_NAME,
        system_name=SYSTEM_NAME,
        status="finished",
        parameters={"file": file_name},
        finished_at=datetime.now(UTC),
    )
    db.add(run)
    db.flush()
    return run.id


def _insert_units(db: Session, batch: list[ParsedRecord], file_name: str) -> list[int]:
    """One data unit and its one English main triple per record; the units' ids in order."""
    from sqlalchemy import insert

    from core.store.models import DataUnit, UnitTriple

    unit_ids = db.scalars(
        insert(DataUnit).returning(DataUnit.id, sort_by_parameter_order=True),
        [
            {
                "uid": r.uid,
                "origin": "imported",
                "source": file_name,
                "shape": "sibling",
                "size": 1,
                "root_qid": r.subject_id,
                "attributes": r.attributes,
            }
            for r in batch
        ],
    ).all()
    db.execute(
        insert(UnitTriple),
        [
            {
                "unit_id": unit_id,
                "lang": "en",
                "tripleset": "main",
                "position": 0,
                "subject": r.labels[0],
                "predicate": r.labels[1],
                "object": r.labels[2],
                "subject_qid": r.subject_id,
                "property_pid": r.property_id,
                "object_value": r.object_value,
            }
            for unit_id, r in zip(unit_ids, batch, strict=True)
        ],
    )
    return list(unit_ids)


def _insert_verbalisations(
    db: Session, batch: list[ParsedRecord], unit_ids: list[int], run_id: int
) -> list[int]:
    """Each record's verbalisation as candidate 0 of the file's run; their ids in order."""
    from sqlalchemy import insert

    from core.store.models import Verbalisation

    return list(
        db.scalars(
            insert(Verbalisation).returning(Verbalisation.id, sort_by_parameter_order=True),
            [
                {
                    "run_id": run_id,
                    "unit_id": unit_id,
                    "lang": "en",
                    "candidate_index": 0,
                    "raw_output": r.verbalisation,
                    "text": r.verbalisation,
                    "parse_ok": True,
                }
                for unit_id, r in zip(unit_ids, batch, strict=True)
            ],
        ).all()
    )


def _insert_ratings(
    db: Session, batch: list[ParsedRecord], verbalisation_ids: list[int], workers: list[int]
) -> None:
    """Position i of a record's score lists is the rating of worker i+1."""
    from sqlalchemy import insert

    from core.store.models import Annotation

    rows = []
    for verbalisation_id, r in zip(verbalisation_ids, batch, strict=True):
        for i in range(max(len(r.fluency), len(r.adequacy))):
            rows.append(
                {
                    "annotator_id": workers[i],
                    "verbalisation_id": verbalisation_id,
                    "fluency": r.fluency[i] if i < len(r.fluency) else None,
                    "adequacy": r.adequacy[i] if i < len(r.adequacy) else None,
                }
            )
    if rows:
        db.execute(insert(Annotation), rows)


def import_job(store: SessionStore, path: Path | str) -> Job[ImportReport]:
    path = Path(path)
    return Job(
        title=f"Import {path.name}",
        run=lambda ctx: import_wdv(store, path, ctx=ctx),
        kind="import",
        kept=lambda: IMPORT_KEPT,
        params={"path": str(path), "format": "wdv"},
        writes=IMPORT_WRITES,
    )
