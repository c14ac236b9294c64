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
* the WebNLG 2020 human evaluation, in the layouts it was published in
  (:mod:`core.formats.webnlg.human_eval`: ``human_eval_id_<SYSTEM>.json``,
  ``results/en/<SYSTEM>/primary.json``, the all-teams list). :func:`import_webnlg_judgments`
  matches each system to the run named like it (case and punctuation aside; the folder's
  name, then the file's) or the run ``--run`` names (id or name; ``SYSTEM=RUN``), each
  sample id to that run's text of the unit whose WebNLG id is ``Id<N>`` (else the N-th
  text in unit order, the line of the submitted file), and stores every rating in the
  session (``session_meta`` key ``human-judgments:webnlg2020:run<ID>``; importing a run
  again replaces its ratings). Ratings are ``webnlg:correctness``,
  ``webnlg:data_coverage``, ``webnlg:fluency``, ``webnlg:relevance`` and
  ``webnlg:text_structure``: per text the mean over raters; with ``zscore`` each rater's
  ratings of a criterion are first turned into z-scores over all that rater's ratings, as
  the WebNLG 2020 analysis did (a rater with constant ratings gives 0, numpy's
  ``nan_to_num`` as there). The all-teams file holds those z-scores already (per text):
  its systems count only with ``zscore``, and a system that also has its raters' own file
  keeps that file's ratings.

A file that cannot be read or has the wrong shape, a per-system file that names no run, or
an id that matches no text is refused with the system, file, entry and reason, and nothing
is stored; entries with no ratings are skipped and counted.

Correlations can be restricted to a subset (tiers, systems, languages, runs and
``--where`` conditions over metadata, scores and score details: :mod:`core.text_filters`).
At system level the metric side is either the mean of the per-text scores (``system``) or,
for BLEU, chrF++ and TER, the corpus score over the same texts (``system-corpus``, as the
WebNLG reports compute system BLEU); both are labelled.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from core import heavy
from core.errors import UserFacingError
from core.formats.webnlg.human_eval import (
    RAW,
    ZSCORES,
    JudgmentError,
    JudgmentSet,
    judgment_files,
    read_judgment_file,
)
from core.jobs import Job, JobContext
from core.labels import plural
from core.vocab import run_name

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from core.metrics.scoring.queries import SentenceScoreRow
    from core.store import SessionStore

META_PREFIX = "human-judgments:webnlg2020:run"
WEBNLG_PREFIX = "webnlg:"
APP_RATINGS = ("fluency", "adequacy")
LEVELS = ("text", "system")
SYSTEM_SCORES = ("mean", "corpus")
MIN_PAIRS = 3


# --- WebNLG 2020 human evaluation files: to the session's runs ----------------------------


@dataclass(frozen=True)
class _RunTexts:
    run_id: int
    name: str
    # (unit uid, verbalisation id, text), candidate 0, in unit-id order
    texts: list[tuple[str, int, str | None]]

    @property
    def label(self) -> str:
        return f"run {self.run_id} ({self.name})"


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


def _key(name: str) -> str:
    """A system name as runs are matched to it: case and punctuation aside
    ("OSU Neural NLG" = "OSU_Neural_NLG", "cuni-ufal" = "CUNI_UFAL")."""
    return re.sub(r"[\W_]+", "", name.casefold())


def _named(runs: list[_RunTexts], name: str) -> list[_RunTexts]:
    exact = [r for r in runs if r.name == name]
    return exact or [r for r in runs if _key(r.name) == _key(name) and _key(name)]


def _runs_list(runs: list[_RunTexts]) -> str:
    return ", ".join(f"{r.run_id}: {r.name}" for r in runs) or "none"


def _run_by_spec(spec: str, runs: list[_RunTexts], where: str) -> _RunTexts:
    """The run a --run value names: its id, else its name."""
    spec = str(spec).strip()
    if spec.isdigit():
        chosen = next((r for r in runs if r.run_id == int(spec)), None)
        if chosen is not None:
            return chosen
    named = _named(runs, spec)
    if len(named) == 1:
        return named[0]
    how = f"{len(named)} runs are named {spec!r}" if named else f"no run {spec!r} (id or name)"
    raise JudgmentError(f"{where}: {how} in this session (runs: {_runs_list(runs)})")


def _match_run(one: JudgmentSet, runs: list[_RunTexts], spec: str | None) -> _RunTexts | None:
    """The run of one system's ratings: the run ``spec`` names, else the one run named
    like the system (the folder, then the file: ``Baseline-FORGE2020/primary.json``).
    None when nothing matches the all-teams file's system (that file holds every team)."""
    if spec is not None:
        return _run_by_spec(spec, runs, one.where)
    for name in one.names:
        named = _named(runs, name)
        if len(named) > 1:
            raise JudgmentError(
                f"{one.where}: {len(named)} runs are named {name!r} in this session "
                f"(runs: {_runs_list(runs)}); name the run with --run {name}=RUN"
            )
        if named:
            return named[0]
    if one.scale == ZSCORES or is_reference_set(one):
        return None
    tried = " or ".join(repr(n) for n in one.names)
    raise JudgmentError(
        f"{one.where}: no run named {tried} in this session (runs: {_runs_list(runs)}); "
        "import the system's outputs with taillens import-outputs --system "
        f"{one.system}, or name the run with --run (its id or name)"
    )


def is_reference_set(one: JudgmentSet) -> bool:
    """The ratings of the human references themselves (the challenge's
    ``WebNLG-2020-reference/``): rated like a system, but no system's outputs."""
    return any("reference" in _key(name) for name in one.names)


REFERENCE_NOTE = (
    "the references' own ratings ({source}) skipped: no run holds the rated references "
    "(the files do not say which of an entry's references was shown); to rate them beside "
    "the systems, import those texts with taillens import-outputs --system {system}"
)


def _match_texts(one: JudgmentSet, run: _RunTexts) -> tuple[dict[str, int], str]:
    """Sample id -> verbalisation id, and the rule used (WebNLG id, else position)."""
    by_eid: dict[str, int] = {}
    for uid, vid, _text in run.texts:
        eid = uid.rsplit(":", 1)[-1]
        if re.fullmatch(r"Id\d+", eid):
            by_eid.setdefault(str(int(eid[2:])), vid)
    ids = list(one.ratings)
    if by_eid and any(i in by_eid for i in ids):
        matched, rule = {i: by_eid[i] for i in ids if i in by_eid}, "WebNLG entry id Id<N>"
    else:
        matched = {i: run.texts[int(i) - 1][1] for i in ids if 1 <= int(i) <= len(run.texts)}
        rule = "N-th text of the run in unit order"
    unmatched = [i for i in ids if i not in matched]
    if len(unmatched) == len(ids):
        raise JudgmentError(
            f"{one.where}: no sample id matches a text of {run.label}, "
            f"{plural(len(run.texts), 'text')}: ids such as {', '.join(ids[:3])} name no "
            "unit Id<N> and no line of its outputs; nothing was stored"
        )
    if unmatched:
        raise JudgmentError(
            f"{one.where}: {len(unmatched):,} of {len(ids):,} sample ids match no text of "
            f"{run.label}, e.g. {', '.join(unmatched[:5])} (matched by {rule}); nothing "
            "was stored"
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
    run_name: str = ""
    empty: tuple[str, ...] = ()  # sample ids with no ratings, skipped
    scale: str = RAW


@dataclass(frozen=True)
class JudgmentImport:
    files: list[JudgmentFileReport]
    # all-teams systems left out: (system, file, why)
    skipped: list[tuple[str, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def summary_lines(self) -> list[str]:
        lines = []
        for f in self.files:
            what = "z-scores" if f.scale == ZSCORES else plural(f.ratings, "rating")
            line = (
                f"{f.system} ({f.file}): {what} of {plural(f.texts, 'text')} to run "
                f"{f.run_id} ({f.run_name or f.system}), matched by {f.rule}"
            )
            if f.empty:
                line += (
                    f"; {plural(len(f.empty), 'entry')} with no ratings skipped "
                    f"({', '.join(f.empty[:5])}{', …' if len(f.empty) > 5 else ''})"
                )
            if f.text_mismatches:
                line += (
                    f"; WARNING: {f.text_mismatches:,} texts in the file differ from "
                    "the run's stored outputs"
                )
            lines.append(line)
        if self.skipped:
            lines.append(
                f"{plural(len(self.skipped), 'system')} of the all-teams file left out: "
                + "; ".join(f"{system} ({why})" for system, _file, why in self.skipped)
            )
        lines.extend(f"note: {note}" for note in self.notes)
        return lines


def _run_specs(runs: Sequence[str | int], systems: list[JudgmentSet]) -> dict[str, str]:
    """``--run`` values as system -> run: ``SYSTEM=RUN`` maps one system; a bare RUN (an
    id or a name) is the run of the one system given."""
    mapped: dict[str, str] = {}
    bare = []
    for value in runs:
        text = str(value)
        if "=" in text:
            system, run = (part.strip() for part in text.split("=", 1))
            if not system or not run:
                raise JudgmentError(f"--run {text!r}: give SYSTEM=RUN (a run id or name)")
            mapped[_key(system)] = run
        else:
            bare.append(text.strip())
    if bare:
        names = sorted({one.system for one in systems})
        if len(bare) > 1 or len(names) != 1:
            raise JudgmentError(
                "--run RUN names the run of ONE system; these files hold "
                f"{plural(len(names), 'system')} ({', '.join(names[:6])}"
                f"{', …' if len(names) > 6 else ''}): give --run SYSTEM=RUN for each"
            )
        mapped[_key(names[0])] = bare[0]
    known = {_key(n) for one in systems for n in one.names}
    stray = [s for s in mapped if s not in known]
    if stray:
        raise JudgmentError(
            f"--run names a system that no file holds: {', '.join(stray)} (systems: "
            f"{', '.join(sorted({one.system for one in systems})[:10])})"
        )
    return mapped


def import_webnlg_judgments(
    store: SessionStore,
    paths: Iterable[Path | str],
    *,
    runs: Sequence[str | int] = (),
) -> JudgmentImport:
    """Read every file (any published layout: :mod:`core.formats.webnlg.human_eval`), match
    each system to a run and its sample ids to texts, then store all ratings in one
    transaction; any error stores nothing. ``runs``: ``--run`` values (see
    :func:`_run_specs`)."""
    from core.store.models import SessionMeta

    sets = [one for path, root in judgment_files(paths) for one in read_judgment_file(path, root)]
    specs = _run_specs(runs, sets)
    with store.unit_of_work() as db:
        session_runs = _runs(db)
    # Per-rater files first: a system the all-teams file also holds keeps its raters' own
    # ratings (z-scores can be made from them, not the other way round).
    sets.sort(key=lambda one: one.scale == ZSCORES)
    planned: dict[int, dict[str, Any]] = {}
    reports = []
    skipped: list[tuple[str, str, str]] = []
    notes: list[str] = []
    for one in sets:
        spec = next((specs[_key(n)] for n in one.names if _key(n) in specs), None)
        run = _match_run(one, session_runs, spec)
        if run is None and is_reference_set(one) and one.scale == RAW:
            notes.append(REFERENCE_NOTE.format(source=one.source, system=one.system))
            continue
        if run is None:
            skipped.append((one.system, one.source, "no run of that name"))
            continue
        if run.run_id in planned:
            earlier = planned[run.run_id]
            if one.scale == ZSCORES and earlier["scale"] == RAW:
                skipped.append(
                    (one.system, one.source, f"{run.label} has its raters in {earlier['source']}")
                )
                continue
            raise JudgmentError(
                f"{one.where}: {run.label} already has {earlier['source']} in this import"
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
            "source": one.source,
            "system": one.system,
            "run_id": run.run_id,
            "rule": rule,
            "scale": one.scale,
            "empty": list(one.empty),
            "ratings": {str(matched[sid]): workers for sid, workers in one.ratings.items()},
            "sample_ids": {str(matched[sid]): sid for sid in one.ratings},
        }
        reports.append(
            JudgmentFileReport(
                one.source,
                one.system,
                run.run_id,
                len(one.ratings),
                sum(len(w) for w in one.ratings.values()),
                rule,
                mismatches,
                run.name,
                one.empty,
                one.scale,
            )
        )
    if not planned:
        raise JudgmentError(
            "no system of these files names a run of this session (runs: "
            f"{_runs_list(session_runs)}); import the systems' outputs with taillens "
            "import-outputs --system NAME, or map them with --run SYSTEM=RUN"
        )
    with store.unit_of_work() as db:
        for rid, payload in planned.items():
            db.merge(
                SessionMeta(
                    key=f"{META_PREFIX}{rid}", value=json.dumps(payload, ensure_ascii=False)
                )
            )
    return JudgmentImport(reports, skipped, notes)


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
    from core.io.bounded import stored_json

    # Stored by import-judgments; a session from elsewhere may hold anything there.
    payloads = (stored_json(v, None) for v in values)
    return [p for p in payloads if isinstance(p, dict)]


def human_values(store: SessionStore, *, zscore: bool = False) -> dict[str, dict[int, float]]:
    """Rating name -> verbalisation id -> the text's value (see the module docstring)."""
    import numpy as np

    from core.annotation import per_item_values

    out: dict[str, dict[int, float]] = defaultdict(dict)
    for vid, entry in per_item_values(store).items():
        for name, value in entry.items():
            if name in APP_RATINGS and value is not None:
                out[name][vid] = float(value)
    # WebNLG: (criterion, vid) -> worker -> value; the all-teams file's z-scores apart
    # (they are z-scores already, and only comparable with z-scores: --zscore)
    cells: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    given_z: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    for payload in _webnlg_payloads(store):
        z_only = payload.get("scale") == ZSCORES
        if z_only and not zscore:
            continue
        for vid, workers in payload.get("ratings", {}).items():
            for worker, values in workers.items():
                for criterion, value in values.items():
                    (given_z if z_only else cells)[(criterion, int(vid))][worker] = float(value)
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
    for (criterion, vid), workers in (*cells.items(), *given_z.items()):
        out[WEBNLG_PREFIX + criterion][vid] = sum(workers.values()) / len(workers)
    return {name: dict(values) for name, values in out.items() if values}


def zscore_only_systems(store: SessionStore) -> list[str]:
    """The systems whose WebNLG ratings are the all-teams file's z-scores only."""
    return [str(p.get("system", "?")) for p in _webnlg_payloads(store) if p.get("scale") == ZSCORES]


# --- correlations -------------------------------------------------------------------------


class Reads:
    """What the agreement table and the ESA matrix read from one state of a session,
    kept so that the next of them (another subset, the other table) reads it no more:
    the human values, the score columns, the judged texts' scores, their details (for
    ``--where`` conditions), sentence statistics (for corpus scores) and the systems rated
    in z-scores only. What is kept is
    never changed by its readers. The holder drops it when the session is written (the
    report keeps one in its ``ReportCache``); one without is read afresh each time."""

    def __init__(self) -> None:
        import threading

        self._parts: dict[tuple[Any, ...], Any] = {}
        self._lock = threading.RLock()
        self._details: dict[str, dict[int, dict[str, Any]]] = {}
        self._details_asked: dict[str, set[int]] = {}

    def get(self, key: tuple[Any, ...], make: Any) -> Any:
        with self._lock:
            if key not in self._parts:
                self._parts[key] = make()
            return self._parts[key]

    def details(
        self, store: SessionStore, columns: Iterable[str], vids: Iterable[int]
    ) -> dict[str, dict[int, dict[str, Any]]]:
        """:func:`core.text_filters.sentence_details`, each text's details read once
        (the result may hold other texts too)."""
        from core.text_filters import sentence_details

        wanted = set(vids)
        out = {}
        with self._lock:
            for column in set(columns):
                asked = self._details_asked.setdefault(column, set())
                have = self._details.setdefault(column, {})
                missing = wanted - asked
                if missing:
                    have.update(sentence_details(store, [column], missing)[column])
                    asked |= missing
                out[column] = have
        return out


def _read(reads: Reads | None, key: tuple[Any, ...], make: Any) -> Any:
    return make() if reads is None else reads.get(key, make)


def read_humans(
    store: SessionStore, *, zscore: bool = False, reads: Reads | None = None
) -> dict[str, dict[int, float]]:
    """:func:`human_values`, from ``reads`` when it holds them."""
    return _read(reads, ("humans", zscore), lambda: human_values(store, zscore=zscore))


def read_columns(
    store: SessionStore,
    *,
    run_ids: Sequence[int] | None,
    langs: Sequence[str] | None,
    reads: Reads | None = None,
) -> list[str]:
    """:func:`core.metrics.scoring.score_columns`, from ``reads`` when it holds them."""
    from core.metrics.scoring import score_columns

    key = ("columns", _frozen(run_ids), _frozen(langs))
    return list(_read(reads, key, lambda: score_columns(store, run_ids=run_ids, langs=langs)))


def read_score_table(
    store: SessionStore,
    *,
    run_ids: Sequence[int] | None,
    langs: Sequence[str] | None,
    verbalisation_ids: Collection[int] | None,
    reads: Reads | None = None,
) -> list[SentenceScoreRow]:
    """:func:`core.metrics.scoring.sentence_score_table`, from ``reads`` when it holds it."""
    from core.metrics.scoring import sentence_score_table

    key = (
        "table",
        _frozen(run_ids),
        _frozen(langs),
        None if verbalisation_ids is None else frozenset(verbalisation_ids),
    )
    return list(
        _read(
            reads,
            key,
            lambda: sentence_score_table(
                store, run_ids=run_ids, langs=langs, verbalisation_ids=verbalisation_ids
            ),
        )
    )


def _frozen(values: Sequence[Any] | None) -> tuple[Any, ...] | None:
    return None if values is None else tuple(values)


@dataclass(frozen=True)
class CorrelationRequest:
    metrics: tuple[str, ...] | None = None  # score columns; None: every one with pairs
    humans: tuple[str, ...] | None = None  # rating names; None: every one in the session
    levels: tuple[str, ...] = LEVELS
    run_ids: tuple[int, ...] | None = None
    langs: tuple[str, ...] | None = None
    zscore: bool = False
    # The subset: texts of these tiers (tier or sub-tier) and systems (run system or model
    # name), where every condition holds (core.text_filters: "esa.undetected>=1").
    tiers: tuple[str, ...] | None = None
    systems: tuple[str, ...] | None = None
    where: tuple[str, ...] = ()
    # System level: "mean" (the mean of per-text scores) and "corpus" (the metric's corpus
    # form over the run's texts, as WebNLG's reports: BLEU, chrF++, TER).
    system_scores: tuple[str, ...] = SYSTEM_SCORES


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
    """Pearson, Spearman and Kendall tau-b with two-sided p-values (scipy's, computed
    without importing scipy.stats: :mod:`core.correlation_tests`), or a note."""
    n = len(xs)
    if n < MIN_PAIRS:
        return {"note": f"fewer than {MIN_PAIRS} pairs"}
    if len(set(xs)) < 2 or len(set(ys)) < 2:
        return {"note": "one side is constant"}
    import numpy as np

    from core.correlation_tests import kendall_tau_b, pearson, spearman

    x, y = np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)
    out: dict[str, Any] = {}
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        return _scipy_coefficients(x, y)  # scipy's own handling of NaN and infinity
    for name, function in (
        ("pearson", pearson),
        ("spearman", spearman),
        ("kendall", kendall_tau_b),
    ):
        value, p = function(x, y)
        out[name] = None if math.isnan(value) else value
        out[f"{name}_p"] = None if math.isnan(p) else p
    return out


def _scipy_coefficients(xs: Any, ys: Any) -> dict[str, Any]:
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
    store: SessionStore,
    request: CorrelationRequest | None = None,
    ctx: JobContext | None = None,
    *,
    reads: Reads | None = None,
) -> CorrelationResult:
    """The correlations ``request`` asks for (``reads``: what earlier reads of the same
    state of the session kept, see :class:`Reads`)."""
    request = request or CorrelationRequest()
    unknown = [level for level in request.levels if level not in LEVELS]
    if unknown or not request.levels:
        raise UserFacingError(f"levels are {' and '.join(LEVELS)} (got {unknown or 'none'})")
    humans = read_humans(store, zscore=request.zscore, reads=reads)
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
    rated = set().union(*(set(v) for v in humans.values()))
    # No text without a rating enters a correlation: only the rated ones are read, unless
    # tiers or systems are asked for (they are checked against the whole session's).
    rows = read_score_table(
        store,
        run_ids=request.run_ids,
        langs=request.langs,
        verbalisation_ids=rated if request.tiers is None and request.systems is None else None,
        reads=reads,
    )
    universe = {r.verbalisation_id for r in rows}
    columns = read_columns(store, run_ids=request.run_ids, langs=request.langs, reads=reads)
    result.metrics = list(columns)
    rows = _subset(store, rows, request, result, reads)
    if request.metrics is not None:
        missing = [m for m in request.metrics if m not in columns]
        if missing:
            raise UserFacingError(
                f"no sentence scores {', '.join(map(repr, missing))} in this session (score "
                f"columns here: {', '.join(columns) or 'none'}; reference-based ones are "
                "metric:quality, e.g. bleu:gold)"
            )
        columns = list(request.metrics)
    by_vid = {r.verbalisation_id: r for r in rows if r.verbalisation_id in rated}
    if not by_vid:
        raise UserFacingError(
            "no text has both a human rating and an automatic score"
            + (
                " in the subset asked for (" + "; ".join(result.notes) + ")"
                if result.notes
                else " (score the rated runs first: taillens score)"
            )
        )
    corpus = (
        _CorpusForm(store, by_vid, reads=reads, universe=universe)
        if "corpus" in request.system_scores
        else None
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
            if "system" not in request.levels:
                continue
            runs: dict[int, list[tuple[int, float, float]]] = defaultdict(list)
            for vid, row in by_vid.items():
                if vid in values and row.scores.get(metric) is not None:
                    runs[row.run_id].append((vid, cast(float, row.scores[metric]), values[vid]))
            ys = [sum(y for _, _, y in v) / len(v) for v in runs.values()]
            if "mean" in request.system_scores:
                xs = [sum(x for _, x, _ in v) / len(v) for v in runs.values()]
                result.rows.append(
                    CorrelationRow("system", metric, human, len(runs), **coefficients(xs, ys))
                )
            if corpus is not None and corpus.has(metric):
                corpus_xs = [corpus.score(metric, [vid for vid, _, _ in v]) for v in runs.values()]
                kept = [(x, y) for x, y in zip(corpus_xs, ys, strict=True) if x is not None]
                result.rows.append(
                    CorrelationRow(
                        "system-corpus",
                        metric,
                        human,
                        len(kept),
                        **coefficients([x for x, _ in kept], [y for _, y in kept]),
                    )
                )
    if request.zscore:
        result.notes.append("WebNLG ratings z-scored per rater and criterion before averaging")
    else:
        z_only = _read(reads, ("z-scores only",), lambda: zscore_only_systems(store))
        if z_only:
            result.notes.append(
                f"{plural(len(z_only), 'system')} rated only in the all-teams file (z-scores: "
                f"{', '.join(z_only[:5])}{', …' if len(z_only) > 5 else ''}) left out; "
                "--zscore takes them in"
            )
    if "system" in request.levels:
        if "mean" in request.system_scores:
            result.notes.append(
                "system level (system): per run, the means of the per-text metric and rating "
                "over its texts that have both"
            )
        if corpus is not None and corpus.used:
            result.notes.append(
                "system level (system-corpus): per run, the metric's corpus score over the "
                "same texts ("
                + "; ".join(f"{m}: {s}" for m, s in sorted(corpus.used.items()))
                + "), against the mean rating, as WebNLG's reports"
            )
        if corpus is not None:
            result.notes += corpus.notes()
    result.notes.append(
        "Pearson r; Spearman ρ on average ranks; Kendall τ-b (ties counted in both "
        "variables' corrections); two-sided p-values (scipy)"
    )
    return result


def _subset(
    store: SessionStore,
    rows: list[SentenceScoreRow],
    request: CorrelationRequest,
    result: CorrelationResult,
    reads: Reads | None = None,
) -> list[SentenceScoreRow]:
    """The texts ``request``'s tiers, systems and conditions keep; each filter noted."""
    from core.text_filters import filter_rows

    if request.tiers is not None:
        wanted = set(request.tiers)
        present = {v for r in rows for v in (r.tier, r.sub_tier) if v}
        unknown = sorted(wanted - present)
        if unknown:
            raise UserFacingError(
                f"no text of tier {', '.join(map(repr, unknown))} (tiers here: "
                f"{', '.join(sorted(present)) or 'none'})"
            )
        rows = [r for r in rows if r.tier in wanted or r.sub_tier in wanted]
        result.notes.append(f"tiers: {', '.join(request.tiers)}")
    if request.systems is not None:
        present = {r.model for r in rows}
        by_key = {_key(name): name for name in present}
        chosen = set()
        for system in request.systems:
            name = system if system in present else by_key.get(_key(system))
            if name is None:
                raise UserFacingError(
                    f"no run of system {system!r} (systems here: "
                    f"{', '.join(sorted(present)) or 'none'})"
                )
            chosen.add(name)
        rows = [r for r in rows if r.model in chosen]
        result.notes.append(f"systems: {', '.join(sorted(chosen))}")
    if request.where:
        rows = filter_rows(
            store, rows, request.where, details=None if reads is None else reads.details
        )
        result.notes.append(f"where {' and '.join(request.where)}")
    return rows


class _CorpusForm:
    """Corpus-level BLEU, chrF++ and TER over a run's texts: the sum of the sentence
    statistics the scoring job stored with each text's score (sacrebleu's corpus_score
    over the same texts and references sums the very same statistics), made with the
    tokenisation of those scores. Scores stored before the statistics were kept are
    scored again from the stored texts and references (sacrebleu), and a note says so."""

    METRICS = ("bleu", "chrf++", "ter")

    def __init__(
        self,
        store: SessionStore,
        rows: dict[int, SentenceScoreRow],
        *,
        reads: Reads | None = None,
        universe: set[int] | None = None,
    ) -> None:
        self.store = store
        self.rows = rows
        # With ``reads``, the statistics of every text of ``universe`` (a superset of
        # ``rows``: the texts before a subset was taken) are read once for all subsets.
        self.reads = reads
        self.universe = universe if universe is not None else set(rows)
        self.used: dict[str, str] = {}  # column -> the metric's signature
        self.recomputed: set[str] = set()  # columns whose statistics were not stored
        self._metrics: dict[str, Any] = {}
        self._stored: dict[str, dict[int, Any]] = {}  # column -> vid -> SentenceStatistics
        self._references: dict[tuple[int, str, str], list[tuple[int, str]]] | None = None
        # (column, the texts) -> score: every human rating over the same texts reuses it
        self._scores: dict[tuple[str, tuple[int, ...]], float | None] = {}

    def has(self, column: str) -> bool:
        return column.split(":", 1)[0] in self.METRICS and ":" in column

    def notes(self) -> list[str]:
        if not self.recomputed:
            return []
        columns = sorted(self.recomputed)
        metrics = ",".join(sorted({c.split(":", 1)[0] for c in columns}))
        return [
            f"system-corpus {', '.join(columns)}: these scores were stored without their "
            "sentence statistics (scored by an earlier TailLens), so their corpus scores "
            "were computed again from the texts; score again (taillens score --metrics "
            f"{metrics}) to have them read"
        ]

    def _refs(self) -> dict[tuple[int, str, str], list[tuple[int, str]]]:
        if self._references is None:
            from core.metrics.scoring.material import unit_references

            self._references = unit_references(
                self.store, sorted({r.unit_id for r in self.rows.values()})
            )
        return self._references

    def _statistics(self, column: str) -> dict[int, Any]:
        if column not in self._stored:
            from core.metrics.scoring import sentence_statistics

            metric, quality = column.split(":", 1)
            if self.reads is None:
                self._stored[column] = sentence_statistics(self.store, metric, quality, self.rows)
            else:
                universe = frozenset(self.universe)
                self._stored[column] = self.reads.get(
                    ("statistics", column, universe),
                    lambda: sentence_statistics(self.store, metric, quality, universe),
                )
        return self._stored[column]

    def _metric(self, metric: str, tokenisation: str) -> Any:
        from core.metrics import FACTORIES, MetricOptions

        options = MetricOptions(bleu_tokenize=tokenisation)
        key = f"{metric}|{options.bleu_tokenize if metric == 'bleu' else ''}"
        if key not in self._metrics:
            with heavy.lock():
                self._metrics[key] = FACTORIES[metric](options, None)
        return self._metrics[key]

    def score(self, column: str, vids: list[int]) -> float | None:
        key = (column, tuple(sorted(vids)))
        if key not in self._scores:
            self._scores[key] = self._score(column, vids)
        return self._scores[key]

    def _score(self, column: str, vids: list[int]) -> float | None:
        metric_name, quality = column.split(":", 1)
        stored = self._statistics(column)
        found = [stored[vid] for vid in vids if vid in stored]
        # The tokenisation the stored sentence scores were made with: a corpus score
        # under another tokenisation than its sentence scores would not be the same metric.
        tokenisation = (
            self._tokenisation(metric_name, {f.signature for f in found if f.signature})
            if metric_name == "bleu"
            else "13a"
        )
        metric = self._metric(metric_name, tokenisation)
        if (
            found
            and len(found) == len(vids)
            and all(f.statistics is not None and f.references for f in found)
        ):
            with heavy.lock():
                value = metric.corpus_from_statistics(
                    [f.statistics for f in found], [f.references for f in found]
                )
        else:
            self.recomputed.add(column)
            value = self._from_texts(metric, quality, vids)
        if value is None or value.value is None:
            return None
        self.used[column] = value.signature or metric_name
        return float(value.value)

    def _from_texts(self, metric: Any, quality: str, vids: list[int]) -> Any:
        """sacrebleu's corpus score from the stored texts and their units' references."""
        from core.metrics.base import ScoringItem

        references = self._refs()
        items = []
        for vid in vids:
            row = self.rows[vid]
            refs = references.get((row.unit_id, row.lang, quality), [])
            if refs:
                items.append(ScoringItem(row.text or "", row.lang, tuple(text for _, text in refs)))
        if not items:
            return None
        with heavy.lock():
            return metric.corpus_score(items)

    @staticmethod
    def _tokenisation(metric: str, signatures: set[str]) -> str:
        """The ``tok`` these signatures name (13a, sacrebleu's default, where none says);
        texts scored under several are refused."""
        from core.metrics.signature import Signature, read_signature

        tokenisations = set()
        for text in signatures:
            signature = read_signature(text, metric)
            if isinstance(signature, Signature) and signature.get("tok"):
                tokenisations.add(str(signature.get("tok")))
        if len(tokenisations) > 1:
            raise UserFacingError(
                f"the {metric} scores of these texts were made with different tokenisations "
                f"({', '.join(sorted(tokenisations))}): score them again with one "
                "(--bleu-tokenize) before a corpus-level correlation"
            )
        return tokenisations.pop() if tokenisations else "13a"


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


def agreement_table(
    store: SessionStore,
    request: CorrelationRequest | None = None,
    *,
    strict: bool = False,
    reads: Reads | None = None,
) -> Any:
    """The Report's "Metrics against human judgments" table (a ``core.report`` Table), or
    None when the session has no text with both a human rating and a score. A request
    that cannot be honoured gives None too, or, ``strict``, raises its UserFacingError."""
    from core.tables import Table

    try:
        result = correlate(store, request, reads=reads)
    except UserFacingError:
        if strict:
            raise
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
    "Reads",
    "TABLE_COLUMNS",
    "agreement_table",
    "coefficients",
    "correlate",
    "correlation_job",
    "human_values",
    "import_webnlg_judgments",
    "table_rows",
]
