"""Agreement of automatic metrics with human judgments (METHODS §7, "Agreement with humans").

Pearson, Spearman and Kendall (tau-b) correlations, each with its two-sided p-value and
n, between any automatic metric stored in the session (a sentence score column: ``esa``,
``bleu:gold``, …) and any human rating, at two levels:

* **text level**: one pair per verbalisation that has both the metric and the rating;
* **system level**: one pair per run (system): the mean of the metric and the mean of the
  rating over that run's texts that have both (so both sides describe the same texts).
  Fewer than 3 pairs give no coefficient (a note says so), as does a constant side.

Human judgments come from:

* the session's own annotations, WDV's imported crowd scores included (``taillens import
  FILE.json --format wdv`` stores them as annotations): ``fluency`` (the item's mean, 0-5)
  and ``adequacy`` (the item's share of Yes votes, METHODS §9), per item as
  :func:`core.annotation.per_item_values` aggregates them;
* the WebNLG 2020 human-evaluation release (WebNLG/GenerationEval, ``data/human_evaluation``
  and ``data/correlation``): one JSON file per system, ``human_eval_id_<SYSTEM>.json``,
  an object from the test set's sample id ("3" = entry ``Id3``) to either the raters'
  ratings ``{"<worker>": {"Correctness": 0-100, "DataCoverage": …, "Fluency": …,
  "Relevance": …, "TextStructure": …, "feedback"?: str}}`` or ``{"text": "<the output>",
  "hits": {<the same>}}``. :func:`import_webnlg_judgments` matches a file to the run whose
  system name is ``<SYSTEM>`` (or the run given), each sample id to that run's text of
  the unit whose WebNLG id is ``Id<N>`` (else the N-th text in unit order, the line of the
  submitted file), and stores every rating in the session (``session_meta`` key
  ``human-judgments:webnlg2020:run<ID>``; importing a run again replaces its ratings).
  Ratings are ``webnlg:correctness``, ``webnlg:data_coverage``, ``webnlg:fluency``,
  ``webnlg:relevance`` and ``webnlg:text_structure``: per text the mean over raters; with
  ``zscore`` each rater's ratings of a criterion are first turned into z-scores over all
  that rater's ratings, as the WebNLG 2020 analysis did (a rater with constant ratings
  gives 0, numpy's ``nan_to_num`` as there).

A file that cannot be read, has the wrong shape, names no run of the session, or holds an
id that matches no text is refused with the file, entry and reason, and nothing is stored.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from core import files, heavy
from core.errors import UserFacingError
from core.jobs import Job, JobContext
from core.labels import plural
from core.vocab import run_name

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from core.store import SessionStore

META_PREFIX = "human-judgments:webnlg2020:run"
WEBNLG_CRITERIA = {
    "Correctness": "correctness",
    "DataCoverage": "data_coverage",
    "Fluency": "fluency",
    "Relevance": "relevance",
    "TextStructure": "text_structure",
}
WEBNLG_PREFIX = "webnlg:"
APP_RATINGS = ("fluency", "adequacy")
LEVELS = ("text", "system")
MIN_PAIRS = 3
_FILE_SYSTEM = re.compile(r"^human_eval(?:_id)?_(?P<system>.+)\.json$", re.IGNORECASE)
_SAMPLE_ID = re.compile(r"^\d+$")


class JudgmentError(UserFacingError):
    """A human-judgment file that cannot be used; the message names file, entry, reason."""


# --- WebNLG 2020 human evaluation files ---------------------------------------------------


@dataclass(frozen=True)
class _ParsedFile:
    path: Path
    system: str
    # sample id -> worker -> criterion (ours) -> value; and the text the file shows, if any
    ratings: dict[str, dict[str, dict[str, float]]]
    texts: dict[str, str]


def _read_json(path: Path) -> Any:
    text = files.read_text(
        path, limit=files.JUDGMENTS_LIMIT, what="the judgments file", error=JudgmentError
    )
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise JudgmentError(
            f"{path}: not JSON (line {error.lineno}, column {error.colno}: {error.msg})"
        ) from error


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def parse_webnlg_file(path: Path | str) -> _ParsedFile:
    """Read one ``human_eval_id_<SYSTEM>.json`` file exactly as the release lays it out."""
    path = Path(path)
    match = _FILE_SYSTEM.match(path.name)
    system = match.group("system") if match else path.stem
    data = _read_json(path)
    if not isinstance(data, dict) or not data:
        raise JudgmentError(
            f"{path}: expected a JSON object from sample ids to ratings "
            "(the WebNLG 2020 human-evaluation layout)"
        )
    ratings: dict[str, dict[str, dict[str, float]]] = {}
    texts: dict[str, str] = {}
    for sample_id, entry in data.items():
        where = f"{path}: entry {sample_id!r}"
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
            raise JudgmentError(f"{where}: no ratings")
        workers: dict[str, dict[str, float]] = {}
        for worker, rating in entry.items():
            if not isinstance(rating, dict):
                raise JudgmentError(
                    f"{where}, rater {worker!r}: expected an object with "
                    f"{', '.join(WEBNLG_CRITERIA)}"
                )
            missing = [c for c in WEBNLG_CRITERIA if c not in rating]
            if missing:
                raise JudgmentError(f"{where}, rater {worker!r}: no {', '.join(missing)}")
            values = {}
            for criterion, ours in WEBNLG_CRITERIA.items():
                value = rating[criterion]
                if not _number(value) or not 0 <= value <= 100:
                    raise JudgmentError(
                        f"{where}, rater {worker!r}: {criterion} is {value!r}, "
                        "not a number from 0 to 100"
                    )
                values[ours] = float(value)
            workers[str(worker)] = values
        ratings[str(sample_id)] = workers
    return _ParsedFile(path, system, ratings, texts)


def _files(paths: Iterable[Path | str]) -> list[Path]:
    found: list[Path] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            inside = sorted(
                p
                for p in path.iterdir()
                if p.is_file() and p.suffix == ".json" and not p.name.startswith(".")
            )
            if not inside:
                raise JudgmentError(f"{path}: a folder with no .json files")
            found.extend(inside)
        else:
            found.append(path)
    if not found:
        raise JudgmentError("no human-judgment file given")
    return found


@dataclass(frozen=True)
class _RunTexts:
    run_id: int
    name: str
    # (unit uid, verbalisation id, text), candidate 0, in unit-id order
    texts: list[tuple[str, int, str | None]]


def _runs(db: Session) -> list[_RunTexts]:
    from sqlalchemy import select

    from core.store.models import DataUnit, ModelRun, Verbalisation

    runs = {r.id: r for r in db.scalars(select(ModelRun).order_by(ModelRun.id))}
    texts: dict[int, list[tuple[str, int, str | None]]] = defaultdict(list)
    for run_id, uid, vid, text in db.execute(
        select(Verbalisation.run_id, DataUnit.uid, Verbalisation.id, Verbalisation.text)
        .join(DataUnit, DataUnit.id == Verbalisation.unit_id)
        .where(Verbalisation.candidate_index == 0)
        .order_by(Verbalisation.run_id, Verbalisation.unit_id, Verbalisation.lang)
    ):
        texts[run_id].append((uid, vid, text))
    return [
        _RunTexts(r.id, run_name(r.system_name, r.model_id), texts.get(r.id, []))
        for r in runs.values()
    ]


def _match_run(parsed: _ParsedFile, runs: list[_RunTexts], run_id: int | None) -> _RunTexts:
    if run_id is not None:
        chosen = next((r for r in runs if r.run_id == run_id), None)
        if chosen is None:
            raise JudgmentError(f"no run {run_id} in this session")
        return chosen
    exact = [r for r in runs if r.name == parsed.system]
    if not exact:
        exact = [r for r in runs if r.name.lower() == parsed.system.lower()]
    if len(exact) != 1:
        names = ", ".join(f"{r.run_id}: {r.name}" for r in runs) or "none"
        how = "no run" if not exact else f"{len(exact)} runs"
        raise JudgmentError(
            f"{parsed.path}: {how} named {parsed.system!r} in this session (runs: {names}); "
            "import the system's outputs with taillens import-outputs --system "
            f"{parsed.system}, or name the run with --run"
        )
    return exact[0]


def _match_texts(parsed: _ParsedFile, run: _RunTexts) -> tuple[dict[str, int], str]:
    """Sample id -> verbalisation id, and the rule used (WebNLG id, else position)."""
    by_eid: dict[str, int] = {}
    for uid, vid, _text in run.texts:
        eid = uid.rsplit(":", 1)[-1]
        if re.fullmatch(r"Id\d+", eid):
            by_eid.setdefault(str(int(eid[2:])), vid)
    ids = list(parsed.ratings)
    if by_eid and any(i in by_eid for i in ids):
        matched, rule = {i: by_eid[i] for i in ids if i in by_eid}, "WebNLG entry id Id<N>"
    else:
        matched = {i: run.texts[int(i) - 1][1] for i in ids if 1 <= int(i) <= len(run.texts)}
        rule = "N-th text of the run in unit order"
    unmatched = [i for i in ids if i not in matched]
    if len(unmatched) == len(ids):
        raise JudgmentError(
            f"{parsed.path}: no sample id matches a text of run {run.run_id} ({run.name}, "
            f"{plural(len(run.texts), 'text')}): ids such as {', '.join(ids[:3])} name no "
            "unit Id<N> and no line of its outputs; nothing was stored"
        )
    if unmatched:
        raise JudgmentError(
            f"{parsed.path}: {len(unmatched):,} of {len(ids):,} sample ids match no text of "
            f"run {run.run_id} ({run.name}), e.g. {', '.join(unmatched[:5])} (matched by "
            f"{rule}); nothing was stored"
        )
    return matched, rule


@dataclass(frozen=True)
class JudgmentFileReport:
    file: str
    system: str
    run_id: int
    texts: int
    ratings: int
    rule: str
    text_mismatches: int  # the file's "text" differs from the stored output


@dataclass(frozen=True)
class JudgmentImport:
    files: list[JudgmentFileReport]

    def summary_lines(self) -> list[str]:
        lines = []
        for f in self.files:
            line = (
                f"{f.file}: {plural(f.ratings, 'rating')} of {plural(f.texts, 'text')} "
                f"of run {f.run_id} ({f.system}), matched by {f.rule}"
            )
            if f.text_mismatches:
                line += (
                    f"; WARNING: {f.text_mismatches:,} texts in the file differ from "
                    "the run's stored outputs"
                )
            lines.append(line)
        return lines


def import_webnlg_judgments(
    store: SessionStore, paths: Iterable[Path | str], *, run_id: int | None = None
) -> JudgmentImport:
    """Validate every file, then store all their ratings in one transaction."""
    from core.store.models import SessionMeta

    files = _files(paths)
    if run_id is not None and len(files) != 1:
        raise JudgmentError("--run names the run of ONE file; give one file")
    parsed = [parse_webnlg_file(p) for p in files]
    with store.unit_of_work() as db:
        runs = _runs(db)
    planned: dict[int, dict[str, Any]] = {}
    reports = []
    for one in parsed:
        run = _match_run(one, runs, run_id)
        if run.run_id in planned:
            raise JudgmentError(
                f"{one.path}: run {run.run_id} ({run.name}) already has "
                f"{planned[run.run_id]['file']} in this import"
            )
        matched, rule = _match_texts(one, run)
        stored_text = {vid: text for _uid, vid, text in run.texts}
        mismatches = sum(
            1
            for sid, text in one.texts.items()
            if (stored_text.get(matched[sid]) or "").strip() != text.strip().strip('"').strip()
        )
        planned[run.run_id] = {
            "file": one.path.name,
            "system": one.system,
            "run_id": run.run_id,
            "rule": rule,
            "ratings": {str(matched[sid]): workers for sid, workers in one.ratings.items()},
            "sample_ids": {str(matched[sid]): sid for sid in one.ratings},
        }
        reports.append(
            JudgmentFileReport(
                one.path.name,
                one.system,
                run.run_id,
                len(one.ratings),
                sum(len(w) for w in one.ratings.values()),
                rule,
                mismatches,
            )
        )
    with store.unit_of_work() as db:
        for rid, payload in planned.items():
            db.merge(
                SessionMeta(
                    key=f"{META_PREFIX}{rid}", value=json.dumps(payload, ensure_ascii=False)
                )
            )
    return JudgmentImport(reports)


# --- judgments per text ---------------------------------------------------------------------


def _webnlg_payloads(store: SessionStore) -> list[dict[str, Any]]:
    from sqlalchemy import select

    from core.store.models import SessionMeta

    with store.unit_of_work() as db:
        values = db.scalars(
            select(SessionMeta.value)
            .where(SessionMeta.key.like(f"{META_PREFIX}%"))
            .order_by(SessionMeta.key)
        ).all()
    return [json.loads(v) for v in values]


def human_values(store: SessionStore, *, zscore: bool = False) -> dict[str, dict[int, float]]:
    """Rating name -> verbalisation id -> the text's value (see the module docstring)."""
    import numpy as np

    from core.annotation import per_item_values

    out: dict[str, dict[int, float]] = defaultdict(dict)
    for vid, entry in per_item_values(store).items():
        for name, value in entry.items():
            if name in APP_RATINGS and value is not None:
                out[name][vid] = float(value)
    # WebNLG: (criterion, vid) -> worker -> value
    cells: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    for payload in _webnlg_payloads(store):
        for vid, workers in payload.get("ratings", {}).items():
            for worker, values in workers.items():
                for criterion, value in values.items():
                    cells[(criterion, int(vid))][worker] = float(value)
    if zscore:
        by_worker: dict[tuple[str, str], list[tuple[int, float]]] = defaultdict(list)
        for (criterion, vid), workers in cells.items():
            for worker, value in workers.items():
                by_worker[(criterion, worker)].append((vid, value))
        for (criterion, worker), rated in by_worker.items():
            values = np.array([v for _, v in rated], dtype=float)
            with np.errstate(invalid="ignore", divide="ignore"):
                z = np.nan_to_num((values - values.mean()) / values.std())
            for (vid, _), zv in zip(rated, z, strict=True):
                cells[(criterion, vid)][worker] = float(zv)
    for (criterion, vid), workers in cells.items():
        out[WEBNLG_PREFIX + criterion][vid] = sum(workers.values()) / len(workers)
    return {name: dict(values) for name, values in out.items() if values}


# --- correlations -------------------------------------------------------------------------


@dataclass(frozen=True)
class CorrelationRequest:
    metrics: tuple[str, ...] | None = None  # score columns; None: every one with pairs
    humans: tuple[str, ...] | None = None  # rating names; None: every one in the session
    levels: tuple[str, ...] = LEVELS
    run_ids: tuple[int, ...] | None = None
    langs: tuple[str, ...] | None = None
    zscore: bool = False


@dataclass(frozen=True)
class CorrelationRow:
    level: str
    metric: str
    human: str
    n: int
    pearson: float | None = None
    pearson_p: float | None = None
    spearman: float | None = None
    spearman_p: float | None = None
    kendall: float | None = None
    kendall_p: float | None = None
    note: str = ""


@dataclass
class CorrelationResult:
    rows: list[CorrelationRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    humans: list[str] = field(default_factory=list)
    metrics: list[str] = field(default_factory=list)


def coefficients(xs: Sequence[float], ys: Sequence[float]) -> dict[str, Any]:
    """Pearson, Spearman and Kendall tau-b with two-sided p-values (scipy), or a note."""
    n = len(xs)
    if n < MIN_PAIRS:
        return {"note": f"fewer than {MIN_PAIRS} pairs"}
    if len(set(xs)) < 2 or len(set(ys)) < 2:
        return {"note": "one side is constant"}
    out: dict[str, Any] = {}
    with heavy.lock(), warnings.catch_warnings():
        from scipy import stats

        warnings.simplefilter("ignore")
        for name, function in (
            ("pearson", stats.pearsonr),
            ("spearman", stats.spearmanr),
            ("kendall", stats.kendalltau),
        ):
            result = function(xs, ys)
            value, p = float(result[0]), float(result[1])
            out[name] = None if math.isnan(value) else value
            out[f"{name}_p"] = None if math.isnan(p) else p
    return out


def correlate(
    store: SessionStore, request: CorrelationRequest | None = None, ctx: JobContext | None = None
) -> CorrelationResult:
    from core.metrics.scoring import sentence_score_table

    request = request or CorrelationRequest()
    unknown = [level for level in request.levels if level not in LEVELS]
    if unknown or not request.levels:
        raise UserFacingError(f"levels are {' and '.join(LEVELS)} (got {unknown or 'none'})")
    humans = human_values(store, zscore=request.zscore)
    result = CorrelationResult(humans=sorted(humans))
    if request.humans is not None:
        missing = [h for h in request.humans if h not in humans]
        if missing:
            raise UserFacingError(
                f"no human rating {', '.join(map(repr, missing))} in this session (ratings "
                f"here: {', '.join(sorted(humans)) or 'none'})"
            )
        humans = {h: humans[h] for h in request.humans}
    if not humans:
        raise UserFacingError(
            "the session holds no human judgments: rate texts in the Annotate panel, import "
            "WDV JSON (taillens import FILE --format wdv) or WebNLG 2020 human-evaluation "
            "files (taillens import-judgments)"
        )
    rows = sentence_score_table(store, run_ids=request.run_ids, langs=request.langs)
    columns = sorted({c for r in rows for c in r.scores})
    result.metrics = columns
    if request.metrics is not None:
        missing = [m for m in request.metrics if m not in columns]
        if missing:
            raise UserFacingError(
                f"no sentence scores {', '.join(map(repr, missing))} in this session (score "
                f"columns here: {', '.join(columns) or 'none'}; reference-based ones are "
                "metric:quality, e.g. bleu:gold)"
            )
        columns = list(request.metrics)
    rated = set().union(*(set(v) for v in humans.values()))
    by_vid = {r.verbalisation_id: r for r in rows if r.verbalisation_id in rated}
    if not by_vid:
        raise UserFacingError(
            "no text has both a human rating and an automatic score "
            "(score the rated runs first: taillens score)"
        )
    total = len(columns) * len(humans)
    done = 0
    for human, values in sorted(humans.items()):
        for metric in columns:
            if ctx is not None:
                ctx.check_cancelled()
                ctx.progress(done, total, f"{metric} · {human}")
            done += 1
            pairs = [
                (cast(float, row.scores[metric]), values[vid], row.run_id, row.model)
                for vid, row in by_vid.items()
                if vid in values and row.scores.get(metric) is not None
            ]
            if not pairs:
                continue
            if "text" in request.levels:
                xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
                result.rows.append(
                    CorrelationRow("text", metric, human, len(pairs), **coefficients(xs, ys))
                )
            if "system" in request.levels:
                runs: dict[int, list[tuple[float, float]]] = defaultdict(list)
                for x, y, run_id, _model in pairs:
                    runs[run_id].append((x, y))
                xs = [sum(x for x, _ in v) / len(v) for v in runs.values()]
                ys = [sum(y for _, y in v) / len(v) for v in runs.values()]
                result.rows.append(
                    CorrelationRow("system", metric, human, len(runs), **coefficients(xs, ys))
                )
    if request.zscore:
        result.notes.append("WebNLG ratings z-scored per rater and criterion before averaging")
    result.notes.append(
        "system level: per run, the means over its texts that have both the metric and the rating"
    )
    return result


def correlation_job(
    store: SessionStore, request: CorrelationRequest | None = None
) -> Job[CorrelationResult]:
    request = request or CorrelationRequest()
    return Job(
        title="Metrics against human judgments",
        run=lambda ctx: correlate(store, request, ctx),
        kind="report.correlate",
        params={"levels": list(request.levels), "zscore": request.zscore},
    )


TABLE_COLUMNS = (
    "level",
    "metric",
    "human rating",
    "n",
    "Pearson r",
    "p (Pearson)",
    "Spearman ρ",
    "p (Spearman)",
    "Kendall τ",
    "p (Kendall)",
    "note",
)


def table_rows(result: CorrelationResult) -> list[tuple[Any, ...]]:
    return [
        (
            r.level,
            r.metric,
            r.human,
            r.n,
            r.pearson,
            r.pearson_p,
            r.spearman,
            r.spearman_p,
            r.kendall,
            r.kendall_p,
            r.note,
        )
        for r in result.rows
    ]


def agreement_table(store: SessionStore, request: CorrelationRequest | None = None) -> Any:
    """The Report's "Metrics against human judgments" table (a ``core.report`` Table), or
    None when the session has no text with both a human rating and a score."""
    from core.tables import Table

    try:
        result = correlate(store, request)
    except UserFacingError:
        return None
    if not result.rows:
        return None
    return Table(
        "agreement",
        "Metrics against human judgments",
        TABLE_COLUMNS,
        tuple(table_rows(result)),
        note="Pearson r, Spearman ρ and Kendall τ-b with two-sided p-values; "
        + "; ".join(result.notes),
    )


__all__ = [
    "CorrelationRequest",
    "CorrelationResult",
    "CorrelationRow",
    "JudgmentError",
    "JudgmentImport",
    "TABLE_COLUMNS",
    "agreement_table",
    "coefficients",
    "correlate",
    "correlation_job",
    "human_values",
    "import_webnlg_judgments",
    "parse_webnlg_file",
    "table_rows",
]
