"""Import another system's outputs: one text per line, aligned with the session's units.

The convention of WebNLG submissions: line *i* of the file is the system's text for the
*i*-th input. Here the inputs are the session's data units **ordered by their id**
(``data_units.id``, i.e. the order they were built or imported in; for an imported
TailNLG/WebNLG file, the order of the file's entries). The lines become one
``model_runs`` row of kind ``external`` (``system_name`` = the name given) and one
verbalisation per unit in the chosen language, so the scoring job treats them like the
outputs of a model run here.

Refused with a clear message, the session unchanged: a file that is missing, not a
regular file, not UTF-8 (a BOM is accepted), or whose line count differs from the
number of units. A trailing newline does not make an extra line; an empty line is an
empty output (stored, flagged ``parse_ok = False``; the scoring job scores it as the
empty text, as the WebNLG challenge's scripts do, unless asked to exclude it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import UserFacingError
from core.io import files
from core.labels import plural
from core.vocab import LANGUAGES

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from core.store import SessionStore

ORDER = "data_units.id"


class OutputsError(UserFacingError):
    """An outputs file that cannot be imported; the message says why."""


@dataclass(frozen=True)
class OutputsImport:
    run_id: int
    system: str
    lang: str
    lines: int
    empty: int
    already: bool = False  # the same outputs were there as run_id (a re-run): nothing added


def read_output_lines(path: Path | str) -> list[str]:
    """The file's lines (UTF-8, BOM allowed); the line a decoding fails on is named."""
    path = Path(path).expanduser()
    text = files.read_text(
        path, limit=files.OUTPUTS_LIMIT, what="the outputs file", error=OutputsError
    )
    if "\x00" in text:
        raise OutputsError(f"{path}: holds NUL characters; is it a text file (UTF-16?)")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    return [line.rstrip("\r") for line in lines]


def import_outputs(
    store: SessionStore, path: Path | str, *, system: str, lang: str = "en"
) -> OutputsImport:
    """Store the file's lines as an external run's verbalisations (one transaction)."""
    from sqlalchemy import func, insert, select

    from core.store.models import DataUnit, ModelRun, Verbalisation

    system = system.strip()
    if not system:
        raise OutputsError("the system needs a name (--system NAME)")
    if lang not in LANGUAGES and not (lang.isalpha() and len(lang) in (2, 3)):
        raise OutputsError(f"{lang!r} is not a language code (e.g. en, it, es)")
    lines = read_output_lines(path)
    with store.unit_of_work() as db:
        unit_ids = list(db.scalars(select(DataUnit.id).order_by(DataUnit.id)))
        if not unit_ids:
            raise OutputsError("the session has no data units to align the outputs with")
        if len(lines) != len(unit_ids):
            raise OutputsError(
                f"{Path(path).name} has {plural(len(lines), 'line')} but the session has "
                f"{plural(len(unit_ids), 'unit')}; line i must be the output for the i-th unit "
                f"(units ordered by id), nothing was imported"
            )
        same = db.scalar(
            select(func.count())
            .select_from(ModelRun)
            .where(ModelRun.kind == "external", ModelRun.system_name == system)
        )
        existing = _same_run(db, system, lang, unit_ids, lines) if same else None
        if existing is not None:  # a re-run after a crash: the same outputs are there
            return OutputsImport(
                existing,
                system,
                lang,
                len(lines),
                sum(1 for line in lines if not line.strip()),
                already=True,
            )
        run = ModelRun(
            kind="external",
            model_id=system,
            system_name=system,
            status="finished",
            finished_at=datetime.now(UTC),
            parameters={
                "file": Path(path).name,
                "lang": lang,
                "order": ORDER,
                "lines": len(lines),
                "imports_before": same or 0,
            },
        )
        db.add(run)
        db.flush()
        db.execute(
            insert(Verbalisation),
            [
                {
                    "run_id": run.id,
                    "unit_id": unit_id,
                    "lang": lang,
                    "candidate_index": 0,
                    "raw_output": line,
                    "text": line.strip() or None,
                    "parse_ok": bool(line.strip()),
                }
                for unit_id, line in zip(unit_ids, lines, strict=True)
            ],
        )
        run_id = run.id
    return OutputsImport(
        run_id, system, lang, len(lines), sum(1 for line in lines if not line.strip())
    )


def _same_run(
    db: Session, system: str, lang: str, unit_ids: list[int], lines: list[str]
) -> int | None:
    """An external run of ``system`` holding exactly these lines for these units in
    ``lang`` (and nothing else), or None."""
    from sqlalchemy import select

    from core.store.models import ModelRun, Verbalisation

    wanted = list(zip(unit_ids, lines, strict=True))
    for run_id in db.scalars(
        select(ModelRun.id)
        .where(ModelRun.kind == "external", ModelRun.system_name == system)
        .order_by(ModelRun.id)
    ):
        rows = db.execute(
            select(Verbalisation.unit_id, Verbalisation.raw_output, Verbalisation.lang)
            .where(Verbalisation.run_id == run_id)
            .order_by(Verbalisation.unit_id, Verbalisation.candidate_index)
        ).all()
        if [(u, raw) for u, raw, _ in rows] == wanted and all(v == lang for *_, v in rows):
            return int(run_id)
    return None
