"""Importing WebNLG/TailNLG files or folders into a session (METHODS §10): the files' text
language, the import report, the batched inserts and the GUI's import job."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.changes import IMPORT_WRITES
from core.formats.common import IMPORT_KEPT, FormatError, check_readable
from core.formats.report import EntryError, FileImport, ImportReport, LanguageDecision
from core.formats.webnlg.entries import (
    ISO_639_1,
    EntryRejected,
    ImportFlavour,
    ParsedEntry,
)
from core.formats.webnlg.parse import parse_entry
from core.formats.webnlg.reader import Position, detect_flavour, iter_entries
from core.jobs import Job, JobContext
from core.labels import plural

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from core.store import SessionStore


def _check_readable(path: Path) -> Path:
    return check_readable(path, "Give a WebNLG/TailNLG XML file or a folder of them.")


def check_import_path(path: Path | str) -> None:
    """FormatError unless ``path`` is a readable file or a folder holding .xml files."""
    path = Path(path).expanduser()
    if path.is_dir():
        _files_of(path)
    else:
        _check_readable(path)


def language_in_file_name(name: str) -> str | None:
    """The ISO 639-1 language a WebNLG release names in its file name: the last part of
    the stem (``…-with-refs-en.xml``) or a part between underscores (``train_ru_x.xml``)."""
    stem = name[:-4] if name.lower().endswith(".xml") else name
    parts = re.split(r"[-_.]", stem)
    if len(parts) > 1 and parts[-1].lower() in ISO_639_1:
        return parts[-1].lower()
    for match in re.finditer(r"(?<=_)([A-Za-z]{2})(?=_)", stem):
        if match.group(1).lower() in ISO_639_1:
            return match.group(1).lower()
    return None


def file_language(name: str, lang: str | None = None) -> LanguageDecision:
    """The language of texts without one: ``lang`` as asked, else the file name's, else
    English; with the rule that decided it."""
    if lang is not None and lang.strip():
        code = lang.strip().lower()
        if code not in ISO_639_1:
            raise FormatError(
                f"Language {lang!r} is not a two-letter ISO 639-1 code (such as en, ru, it)."
            )
        return LanguageDecision(code, "asked", f"--lang {code}")
    found = language_in_file_name(name)
    if found:
        return LanguageDecision(found, "filename", name)
    return LanguageDecision("en", "default")


def _files_of(path: Path) -> list[Path]:
    files = sorted(p for p in path.rglob("*") if p.suffix.lower() == ".xml" and p.is_file())
    if not files:
        raise FormatError(f"Cannot import {path}: the folder holds no .xml files.")
    return files


@dataclass
class _Totals:
    entries: int = 0
    units: int = 0
    references: int = 0
    triples: int = 0
    mentions: int = 0
    already: int = 0


def import_webnlg(
    store: SessionStore,
    path: Path | str,
    *,
    flavour: ImportFlavour = "auto",
    lang: str | None = None,
    ctx: JobContext | None = None,
) -> ImportReport:
    """Import a WebNLG or TailNLG file, or a folder of them (recursively, in name order),
    into ``store`` in one transaction.

    Texts without a language (no ``lang``, or ``lang=""``) take ``lang``, else the
    language in the file's name, else English; the report says which rule decided, per
    file. Entries that break the format are skipped and listed in the report; a file that
    is not well-formed or is refused, an unexpected failure or a cancel leaves the
    session as it was (nothing is committed).
    """
    from sqlalchemy import select

    from core.store.models import DataUnit

    path = Path(path).expanduser()
    if flavour not in ("auto", "tailnlg", "webnlg"):
        raise FormatError(f"Unknown WebNLG flavour {flavour!r}: use auto, tailnlg or webnlg.")
    if lang is not None and lang.strip():
        file_language("", lang)  # an unknown code is refused before anything is read
    folder = path.is_dir()
    if folder:
        files = [(p, p.relative_to(path).as_posix()) for p in _files_of(path)]
        for file, _name in files:
            _check_readable(file)
    else:
        files = [(_check_readable(path), path.name)]
    errors: list[EntryError] = []
    warnings: list[EntryError] = []
    lines: list[FileImport] = []
    totals = _Totals()
    with store.unit_of_work() as db:
        taken = set(db.scalars(select(DataUnit.uid)))
        seen: set[str] = set()
        for file, name in files:
            language = file_language(Path(name).name, lang)
            before = _Totals(**vars(totals))
            file_errors, file_warnings, unmarked = _import_file(
                db,
                file,
                name,
                flavour,
                language,
                taken,
                seen,
                totals,
                ctx,
                prefix=f"{name} " if folder else "",
            )
            errors += file_errors
            warnings += file_warnings
            lines.append(
                FileImport(
                    name,
                    totals.entries - before.entries,
                    totals.units - before.units,
                    totals.references - before.references,
                    len(file_errors),
                    language,
                    unmarked,
                )
            )
        if ctx is not None:
            ctx.check_cancelled()
    return ImportReport(
        totals.entries,
        totals.units,
        totals.references,
        errors,
        triples=totals.triples,
        source=path.name,
        warnings=warnings,
        files=lines,
        mentions=totals.mentions,
        already=totals.already,
    )


def _import_file(
    db: Session,
    path: Path,
    name: str,
    flavour: str,
    language: LanguageDecision,
    taken: set[str],
    seen: set[str],
    totals: _Totals,
    ctx: JobContext | None,
    *,
    prefix: str,
) -> tuple[list[EntryError], list[EntryError], int]:
    """One file's entries into the open transaction: (errors, warnings, texts that took
    the file's language)."""
    label = detect_flavour(path) if flavour == "auto" else flavour
    # Inside a folder the uid and provenance use the path below it: 1triples/Airport.xml
    # and 2triples/Airport.xml both number their entries from Id1.
    stem = name[:-4] if name.lower().endswith(".xml") else name
    errors: list[EntryError] = []
    warnings: list[EntryError] = []
    unmarked = 0
    batch: list[ParsedEntry] = []
    position = Position(name)
    for number, element in enumerate(iter_entries(path, name, position), start=1):
        if ctx is not None:
            ctx.check_cancelled()
        totals.entries += 1
        eid = element.get("eid")
        where = f"{prefix}entry {number}" + (f" (eid {eid})" if eid else "")
        try:
            entry = parse_entry(
                element, file_name=name, stem=stem, flavour=label, file_language=language
            )
            if entry.uid in seen:
                raise EntryRejected(f"duplicate id {entry.uid!r} (already used in this import)")
            if entry.uid in taken:
                from core.formats.rerun import same_webnlg_entry

                if not same_webnlg_entry(db, entry):
                    raise EntryRejected(
                        f"id {entry.uid!r} is already in the session with different content"
                    )
                seen.add(entry.uid)
                totals.already += 1  # a re-run: the same entry is there, not an error
                continue
        except EntryRejected as exc:
            errors.append(EntryError(where, str(exc)))
            if ctx is not None:
                ctx.progress(totals.entries, None, _progress_note(totals, name))
            continue
        seen.add(entry.uid)
        batch.append(entry)
        warnings += [EntryError(where, text) for text in entry.warnings]
        unmarked += sum(not r.lang_given for r in entry.references)
        totals.units += 1
        totals.references += len(entry.references)
        totals.mentions += sum(len(r.mentions) for r in entry.references)
        totals.triples += sum(len(rows) for rows in entry.triples.values())
        if ctx is not None:
            ctx.progress(totals.entries, None, _progress_note(totals, name))
        if len(batch) >= 500:
            _insert(db, batch, name)
            batch.clear()
    if ctx is not None:
        ctx.check_cancelled()
    _insert(db, batch, name)
    return errors, warnings, unmarked


def _insert(db: Session, batch: list[ParsedEntry], file_name: str) -> None:
    """Insert parsed entries with Core bulk inserts: the ORM's unit of work took most of
    the import time, and these rows need none of its bookkeeping."""
    from sqlalchemy import insert

    from core.store.models import DataUnit, ReferenceMention, UnitReference, UnitTriple

    if not batch:
        return
    ids = db.scalars(
        insert(DataUnit).returning(DataUnit.id, sort_by_parameter_order=True),
        [
            {
                "uid": e.uid,
                "origin": "imported",
                "source": file_name,
                "shape": e.shape,
                "size": e.size,
                "tier": e.tier,
                "sub_tier": e.sub_tier,
                "root_qid": e.root_qid,
                "attributes": e.attributes,
            }
            for e in batch
        ],
    ).all()
    triple_rows = [
        {
            "unit_id": unit_id,
            "lang": lang,
            "tripleset": tripleset,
            "position": position,
            "subject": t.subject,
            "predicate": t.predicate,
            "object": t.object,
        }
        for unit_id, e in zip(ids, batch, strict=True)
        for (lang, tripleset), rows in e.triples.items()
        for position, t in enumerate(rows)
    ]
    reference_rows = [
        {
            "unit_id": unit_id,
            "lang": r.lang,
            "text": r.text,
            "quality": r.quality,
            "lid": r.lid,
            "provenance": f"{file_name}#{r.lid}" if r.lid else file_name,
        }
        for unit_id, e in zip(ids, batch, strict=True)
        for r in e.references
    ]
    if triple_rows:
        db.execute(insert(UnitTriple), triple_rows)
    if not reference_rows:
        return
    parsed = [r for e in batch for r in e.references]
    if not any(r.mentions for r in parsed):
        db.execute(insert(UnitReference), reference_rows)
        return
    reference_ids = db.scalars(
        insert(UnitReference).returning(UnitReference.id, sort_by_parameter_order=True),
        reference_rows,
    ).all()
    db.execute(
        insert(ReferenceMention),
        [
            {
                "reference_id": reference_id,
                "position": position,
                "entity": m.entity,
                "mention": m.mention,
                "tag": m.tag,
                "mention_type": m.mention_type,
                "source": "import",
            }
            for reference_id, r in zip(reference_ids, parsed, strict=True)
            for position, m in enumerate(r.mentions)
        ],
    )


# -- jobs for the GUI ---------------------------------------------------------------------


def import_job(
    store: SessionStore,
    path: Path | str,
    *,
    flavour: ImportFlavour = "auto",
    lang: str | None = None,
) -> Job[ImportReport]:
    path = Path(path)
    return Job(
        title=f"Import {path.name}",
        run=lambda ctx: import_webnlg(store, path, flavour=flavour, lang=lang, ctx=ctx),
        kind="import",
        kept=lambda: IMPORT_KEPT,
        params={"path": str(path), "format": flavour, "lang": lang},
        writes=IMPORT_WRITES,
    )


def _progress_note(totals: _Totals, name: str) -> str:
    """The import's progress words: the count of entries read is the progress's own
    number, so the note names what it is ("1 entry read: 1 unit from x.xml")."""
    return f"{plural(totals.entries, 'entry')} read: {plural(totals.units, 'unit')} from {name}"
