"""The WebNLG 2020 human-evaluation files, in the layouts they were published in.

Three layouts, each read as published:

* **one file per system, named after it** (WebNLG/GenerationEval, ``data/human_evaluation``
  and ``data/correlation``): ``human_eval_id_<SYSTEM>.json``, an object from the test set's
  sample id ("3" = entry ``Id3``) to the raters' ratings ``{"<worker>": {"Correctness":
  0-100, "DataCoverage": …, "Fluency": …, "Relevance": …, "TextStructure": …,
  "feedback"?: str}}`` or to ``{"text": "<the output>", "hits": {<the same>}}``;
* **one folder per system** (WebNLG/challenge-2020,
  ``evaluation/human-evaluation/results/en/<SYSTEM>/primary.json``): the same object, the
  system named by its folder and the file by the submission (``primary``);
* **the all-teams file** (challenge-2020, ``results/en/english_humeval_data_all_teams.json``):
  a JSON list of records ``{"submission_id": "<SYSTEM>", "size", "sample_id", "domain",
  "category", "Correctness": <z>, …}``, one per (system, sample), each criterion already the
  mean of the raters' z-scores (the challenge's analysis), so these values are z-scores.

An entry with no ratings (``"1124": {}`` in the official ``Baseline-FORGE2020/primary.json``)
is skipped and counted, not an error. Every message names the system and the file (and the
entry or record).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import UserFacingError
from core.io import files

WEBNLG_CRITERIA = {
    "Correctness": "correctness",
    "DataCoverage": "data_coverage",
    "Fluency": "fluency",
    "Relevance": "relevance",
    "TextStructure": "text_structure",
}
RAW = "0-100"  # the raters' own ratings
ZSCORES = "z"  # per-text means of per-rater z-scores (the all-teams file)
ALL_TEAMS_RATER = "all-teams"  # the one "rater" of a text in the all-teams file
_FILE_SYSTEM = re.compile(r"^human_eval(?:_id)?_(?P<system>.+)\.json$", re.IGNORECASE)
_SAMPLE_ID = re.compile(r"^\d+$")


class JudgmentError(UserFacingError):
    """A human-judgment file that cannot be used; the message names system, file, entry."""


@dataclass(frozen=True)
class JudgmentSet:
    """One system's ratings from one file."""

    path: Path
    source: str  # the file as the messages show it: "Baseline-FORGE2020/primary.json"
    names: tuple[str, ...]  # the system's possible names, the likeliest first
    scale: str  # RAW or ZSCORES
    # sample id -> rater -> criterion (ours) -> value; and the text the file shows, if any
    ratings: dict[str, dict[str, dict[str, float]]]
    texts: dict[str, str] = field(default_factory=dict)
    empty: tuple[str, ...] = ()  # sample ids with no ratings, skipped

    @property
    def system(self) -> str:
        return self.names[0]

    @property
    def where(self) -> str:
        return f"{self.system} ({self.source})"


def _read_json(path: Path, source: str) -> Any:
    text = files.read_text(
        path, limit=files.JUDGMENTS_LIMIT, what="the judgments file", error=JudgmentError
    )
    from core.io.bounded import loads_json

    return loads_json(text, name=source, error=JudgmentError)


def _plain(name: str) -> str:
    """``name`` for a message: as it is when every character prints, else escaped and
    quoted (``core.io.safe_names.shown``), so a system named with a newline or ESC in the
    file still gives a one-line message that a terminal shows as text."""
    from core.io.safe_names import shown

    return name if name.isprintable() else shown(name)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def system_names(path: Path) -> tuple[str, ...]:
    """A per-system file's possible system names: ``human_eval_id_<SYSTEM>.json`` names it;
    otherwise the folder (``<SYSTEM>/primary.json``), then the file's stem."""
    match = _FILE_SYSTEM.match(path.name)
    if match:
        return (match.group("system"),)
    folder = path.parent.name
    return (folder, path.stem) if folder and folder != path.stem else (path.stem,)


def _display(path: Path, root: Path | None) -> str:
    if root is not None and root != path:
        try:
            return str(path.relative_to(root))
        except ValueError:
            pass
    names = system_names(path)
    return f"{path.parent.name}/{path.name}" if len(names) > 1 else path.name


def read_judgment_file(path: Path | str, root: Path | None = None) -> list[JudgmentSet]:
    """The systems' ratings in one file of any of the published layouts."""
    path = Path(path)
    source = _display(path, root)
    data = _read_json(path, source)
    if isinstance(data, list):
        return _all_teams(path, source, data)
    return [_per_system(path, source, data)]


def _per_system(path: Path, source: str, data: Any) -> JudgmentSet:
    names = system_names(path)
    where_file = f"{_plain(names[0])} ({_plain(source)})"
    if not isinstance(data, dict) or not data:
        raise JudgmentError(
            f"{where_file}: expected a JSON object from sample ids to ratings, or the "
            "all-teams list (the WebNLG 2020 human-evaluation layouts)"
        )
    ratings: dict[str, dict[str, dict[str, float]]] = {}
    texts: dict[str, str] = {}
    empty: list[str] = []
    for sample_id, entry in data.items():
        where = f"{where_file}, entry {sample_id!r}"
        if not _SAMPLE_ID.match(str(sample_id)):
            raise JudgmentError(f'{where}: a sample id is a test-set number such as "3"')
        if not isinstance(entry, dict):
            raise JudgmentError(f"{where}: expected an object of raters' ratings")
        if "hits" in entry:
            if "text" in entry and not isinstance(entry["text"], str):
                raise JudgmentError(f'{where}: "text" is not a string')
            if isinstance(entry.get("text"), str):
                texts[sample_id] = entry["text"]
            entry = entry["hits"]
            if not isinstance(entry, dict):
                raise JudgmentError(f'{where}: "hits" is not an object of raters\' ratings')
        if not entry:
            empty.append(str(sample_id))
            continue
        workers: dict[str, dict[str, float]] = {}
        for worker, rating in entry.items():
            if not isinstance(rating, dict):
                raise JudgmentError(
                    f"{where}, rater {worker!r}: expected an object with "
                    f"{', '.join(WEBNLG_CRITERIA)}"
                )
            workers[str(worker)] = _criteria(rating, f"{where}, rater {worker!r}", scale=RAW)
        ratings[str(sample_id)] = workers
    if not ratings:
        raise JudgmentError(f"{where_file}: no entry holds a rating")
    texts = {sid: text for sid, text in texts.items() if sid in ratings}
    return JudgmentSet(path, source, names, RAW, ratings, texts, tuple(empty))


def _criteria(record: dict[str, Any], where: str, *, scale: str) -> dict[str, float]:
    missing = [c for c in WEBNLG_CRITERIA if c not in record]
    if missing:
        raise JudgmentError(f"{where}: no {', '.join(missing)}")
    values = {}
    for criterion, ours in WEBNLG_CRITERIA.items():
        value = record[criterion]
        if scale == RAW and (not _number(value) or not 0 <= value <= 100):
            raise JudgmentError(f"{where}: {criterion} is {value!r}, not a number from 0 to 100")
        if scale == ZSCORES and not _number(value):
            raise JudgmentError(f"{where}: {criterion} is {value!r}, not a number (a z-score)")
        values[ours] = float(value)
    return values


def _all_teams(path: Path, source: str, data: list[Any]) -> list[JudgmentSet]:
    by_system: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for index, record in enumerate(data):
        if not isinstance(record, dict):
            raise JudgmentError(
                f"{_plain(source)}, record {index}: expected an object with submission_id, "
                "sample_id and the criteria (the all-teams layout)"
            )
        system = record.get("submission_id")
        sample_id = record.get("sample_id")
        if not isinstance(system, str) or not system.strip():
            raise JudgmentError(f"{_plain(source)}, record {index}: no submission_id (the system)")
        where = f"{_plain(system)} ({_plain(source)}, record {index})"
        if not _SAMPLE_ID.match(str(sample_id)) or isinstance(sample_id, bool):
            raise JudgmentError(
                f'{where}: sample_id is {sample_id!r}, not a test-set number such as "3"'
            )
        ratings = by_system.setdefault(system, {})
        if str(sample_id) in ratings:
            raise JudgmentError(f"{where}: sample {sample_id} appears twice")
        ratings[str(sample_id)] = {ALL_TEAMS_RATER: _criteria(record, where, scale=ZSCORES)}
    if not by_system:
        raise JudgmentError(f"{_plain(source)}: the all-teams list holds no record")
    return [
        JudgmentSet(path, source, (system,), ZSCORES, ratings)
        for system, ratings in by_system.items()
    ]


def judgment_files(paths: Iterable[Path | str]) -> list[tuple[Path, Path | None]]:
    """Each .json file given, or found (at any depth, in name order) in a folder given, with
    the folder it was found in."""
    found: list[tuple[Path, Path | None]] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            inside = sorted(
                p
                for p in path.rglob("*.json")
                if p.is_file() and not any(part.startswith(".") for part in p.parts[-2:])
            )
            if not inside:
                raise JudgmentError(f"{path}: a folder with no .json files")
            found.extend((p, path) for p in inside)
        else:
            found.append((path, None))
    if not found:
        raise JudgmentError("no human-judgment file given")
    return found


__all__ = [
    "ALL_TEAMS_RATER",
    "RAW",
    "WEBNLG_CRITERIA",
    "ZSCORES",
    "JudgmentError",
    "JudgmentSet",
    "judgment_files",
    "read_judgment_file",
    "system_names",
]
