"""Building the bias report (METHODS §8): read the session's per-item values, compare
groups on each dimension, lay out the study table, add the human-judgment tables and
correct every p-value of the report as one family. Parts already built on the session's
current state are kept in a :class:`ReportCache`, so a rebuild with other options
computes only what they change.

Only numpy and the standard library are imported at module level (SQLAlchemy and the
annotation, correlation and tier modules inside the functions that need them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from core.errors import UserFacingError
from core.groups import DIMENSIONS, order_key
from core.jobs import Job, JobContext
from core.report.bias_report import BiasReport
from core.report.compare import compare, headline_comparisons
from core.report.comparison import Comparison
from core.report.data import ScoreFrame, load_frame
from core.report.settings import DEFAULT_SETTINGS, Settings
from core.report.statistics import adjust_p_values
from core.report.study import StudyTable, study_table
from core.tables import Table

if TYPE_CHECKING:
    from core.agreement.reads import Reads
    from core.store import SessionStore

# What the Mann–Whitney protocol's numbers depend on: the runs picked, the metrics, the
# repetitions, the sample size, the seed and the bootstrap resamples (alpha and the
# correction only decide the marks, made afresh on every build).
Protocol = tuple[Any, ...]


class NothingToCompareError(UserFacingError):
    """The session holds nothing the report could compare."""


@dataclass(frozen=True)
class ReportRequest:
    """What to build, as the Report panel (or a script) asks for it: the dimensions to
    compare by, the metrics (None: every metric the session holds), the protocol's
    settings and the runs (None: for each model its latest output per item)."""

    by: tuple[str, ...] = ("tier",)
    metrics: tuple[str, ...] | None = None
    settings: Settings = DEFAULT_SETTINGS
    runs: tuple[int, ...] | None = None
    # The metrics-against-humans table's subset: texts where every condition holds
    # (core.text_filters, as ``correlate --where``: "esa.undetected>=1", "tier=long_tail").
    where: tuple[str, ...] = ()

    def job(self, store: SessionStore, cache: ReportCache | None = None) -> Job[BiasReport]:
        """:func:`report_job` for this request (``cache``: see :class:`ReportCache`)."""
        return report_job(
            store,
            by=self.by,
            metrics=self.metrics,
            settings=self.settings,
            runs=self.runs,
            where=self.where,
            cache=cache,
        )


def _annotation_table(store: SessionStore) -> Table | None:
    from core.annotation import aggregate_annotations

    summary = aggregate_annotations(store, by=("model", "tier"), agreement=True)
    if not summary.items:
        return None
    return Table(
        "annotations",
        "Human ratings by model and tier",
        summary.columns,
        tuple(tuple(r) for r in summary.rows()),
        note="figures average per-item aggregates (each item once); pooled_* pool "
        "every rating; alpha: Krippendorff, interval (fluency), nominal "
        "(adequacy)",
    )


def _tier_change_notes(store: SessionStore, frame: ScoreFrame) -> list[str]:
    """A note when units of the report were built under another tier than their root's
    current one (the report groups by the tier a unit recorded when it was built)."""
    from core.tiers.stored import unit_tier_changes

    if not hasattr(store, "engine"):
        return []
    changes = unit_tier_changes(store)
    units = {o.item.unit_id for o in frame.observations} & set(changes)
    if not units:
        return []
    example = changes[min(units)]
    return [
        f"{len(units):,} of the report's units were built when their root entity had "
        f"another tier than it has now (e.g. unit {example.unit_id}: "
        f"{example.describe()}); the report groups each unit by the tier it was built "
        "with."
    ]


class ReportCache:
    """The parts of bias reports already built on one state of a session, by what each
    depends on (the per-item values on the runs; a comparison on its dimension, metrics
    and protocol settings; the metrics-against-humans table on its condition), so that a
    build with other options computes only the parts those options change. Whoever holds
    one drops it when the session is written (the Report panel does on every change of
    scores, ratings, runs or units). A part is never changed once stored: what a build
    corrects or narrows it copies first. One build at a time may use it (the panel's
    builds run one after the other); reads and stores are locked all the same."""

    def __init__(self) -> None:
        import threading

        self._parts: dict[tuple[Any, ...], Any] = {}
        self._lock = threading.Lock()
        self.built: list[str] = []  # the kinds of part computed, in order (not reused)

    def get(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._parts:
                return self._parts[key]
        value = make()
        with self._lock:
            self.built.append(str(key[0]))
            return self._parts.setdefault(key, value)


def _with_alpha(results: list[Comparison], alpha: float) -> list[Comparison]:
    """Comparisons computed at another significance level, at ``alpha``: the p-values
    do not depend on it, only the marks."""
    return [
        c
        if c.test is None or c.test.alpha == alpha
        else replace(c, test=replace(c.test, alpha=alpha, significant=c.test.p_value < alpha))
        for c in results
    ]


def _fresh_study(study: StudyTable | None) -> StudyTable | None:
    """A copy whose cells :func:`correct` may replace (the cached one stays as built)."""
    if study is None:
        return None
    return replace(study, rows=[replace(row, cells=dict(row.cells)) for row in study.rows])


def _agreement(
    store: SessionStore, where: Sequence[str], reads: Reads | None = None
) -> tuple[Table | None, str | None]:
    """The metrics-against-humans table over the texts ``where`` holds, or a note on why
    it could not be made (an unknown field, say: said, not dropped). ``reads``: a
    ``core.agreement.reads.Reads`` of the session's current state."""
    from core.agreement.correlate import CorrelationRequest
    from core.agreement.table import agreement_table

    if not where:
        return agreement_table(store, reads=reads), None
    try:
        request = CorrelationRequest(where=tuple(where))
        return agreement_table(store, request, strict=True, reads=reads), None
    except UserFacingError as error:
        return None, f"metrics against human judgments not computed: {error}"


def _esa_matrix(
    store: SessionStore, where: Sequence[str], reads: Reads | None = None
) -> tuple[Table | None, str | None]:
    """ESA against every other score column and human criterion in the ESA paper's Table 3
    layout (core.agreement.matrix), or a note on why it could not be made."""
    from core.agreement.matrix import matrix_table

    try:
        return matrix_table(store, where=tuple(where), strict=bool(where), reads=reads), None
    except UserFacingError as error:
        return None, f"the ESA matrix (Table 3's layout) not computed: {error}"


def build_report(
    store: SessionStore,
    *,
    by: Sequence[str] = ("tier",),
    metrics: Sequence[str] | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    settings: Settings = DEFAULT_SETTINGS,
    frame: ScoreFrame | None = None,
    ctx: JobContext | None = None,
    runs: Sequence[int] | None = None,
    where: Sequence[str] = (),
    cache: ReportCache | None = None,
) -> BiasReport:
    """Compare groups on every metric in the session (or ``metrics``) and human ratings.

    Raises :class:`NothingToCompareError` when the session holds no per-item scores and
    no ratings; a dimension with fewer than two groups gives a note instead of rows.
    With ``ctx`` (a job), progress is reported per step and a cancel stops between steps.
    With ``cache`` (kept for the session's current state), every part already built with
    the same inputs is taken from it, and what is built is kept there.
    """
    steps = len(by) + 3

    def step(done: int, message: str) -> None:
        if ctx is not None:
            ctx.check_cancelled()
            ctx.progress(done, steps, message)

    _check_request(by, settings)
    # A frame given is not necessarily the session's: its parts are not shared.
    cache = cache if cache is not None and frame is None else ReportCache()
    picked = None if runs is None else tuple(sorted(set(runs)))
    step(0, "reading scores and ratings")
    if frame is None:
        frame = cache.get(("frame", picked), lambda: load_frame(store, runs=runs))
    frame, chosen = _narrowed_frame(frame, metrics, picked, cache)
    protocol: Protocol = (
        picked,
        chosen,
        settings.repetitions,
        settings.sample_size,
        settings.seed,
        settings.bootstrap_resamples,
    )
    step(1, "study table and human ratings")
    report = _new_report(store, frame, by, chosen, settings, protocol, cache)
    _add_human_tables(report, store, where, narrowed=bool(metrics), cache=cache)
    for done, dimension in enumerate(by, start=2):
        step(done, f"comparing by {dimension}")
        _add_comparisons(report, dimension, pairs, protocol, cache)
    report.headlines = _with_alpha(
        cache.get(
            ("headlines", *protocol, settings.study_quality),
            lambda: headline_comparisons(report.frame, chosen, settings),
        ),
        settings.alpha,
    )
    correct(report)
    step(steps, "done")
    return report


def _check_request(by: Sequence[str], settings: Settings) -> None:
    settings.check()
    for dimension in by:
        if dimension not in DIMENSIONS:
            raise UserFacingError(
                f"Cannot compare by {dimension!r}: choose from {', '.join(DIMENSIONS)}."
            )


def _narrowed_frame(
    frame: ScoreFrame,
    metrics: Sequence[str] | None,
    picked: tuple[int, ...] | None,
    cache: ReportCache,
) -> tuple[ScoreFrame, tuple[str, ...]]:
    """The frame of the metrics asked for (every metric present when none) and those
    metrics; refuses an empty frame and a metric the session has no scores for."""
    if not frame:
        raise NothingToCompareError(
            "Nothing to compare: the session holds no per-item scores and no human ratings. "
            "Verbalise and score some units first, or rate verbalisations in the Annotate "
            "panel."
        )
    present = frame.metrics
    if not metrics:
        return frame, tuple(present)
    unknown = [m for m in metrics if m not in present]
    if unknown:
        raise UserFacingError(
            f"The session has no scores for {', '.join(unknown)}; it has {', '.join(present)}."
        )
    chosen = tuple(metrics)
    # Every table follows the choice: counts, study table, signatures, plots.
    narrowed = cache.get(
        ("frame", picked, chosen),
        lambda: replace(
            frame,
            observations=[o for o in frame.observations if o.metric in chosen],
            signatures=[s for s in frame.signatures if s[0] in chosen],
        ),
    )
    return narrowed, chosen


def _new_report(
    store: SessionStore,
    frame: ScoreFrame,
    by: Sequence[str],
    chosen: tuple[str, ...],
    settings: Settings,
    protocol: Protocol,
    cache: ReportCache,
) -> BiasReport:
    """The report with its study table, human ratings and the frame's notes (and the
    tier-change note); the comparisons and the other tables are added after."""
    study_key = (
        "study",
        *protocol,
        settings.study_quality,
        settings.statistic,
        settings.study_references,
    )
    report = BiasReport(
        session=str(getattr(store, "path", "")),
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        by=tuple(by),
        metrics=chosen,
        settings=settings,
        comparisons={},
        study=_fresh_study(cache.get(study_key, lambda: study_table(frame, settings=settings))),
        frame=frame,
        annotation_table=cache.get(("annotations",), lambda: _annotation_table(store)),
        notes=list(frame.notes),
    )
    picked = protocol[0]
    report.notes += cache.get(("tier notes", picked), lambda: _tier_change_notes(store, frame))
    return report


def _add_human_tables(
    report: BiasReport,
    store: SessionStore,
    where: Sequence[str],
    *,
    narrowed: bool,
    cache: ReportCache,
) -> None:
    """The metrics-against-humans table and the ESA matrix over the texts ``where``
    holds (a note instead when one cannot be made); ``narrowed``: the user chose the
    report's metrics, and the agreement table keeps their rows only."""
    # What both human-judgment tables read, for every subset asked for on this state.
    from core.agreement.reads import Reads

    chosen = report.metrics
    reads = cache.get(("reads",), Reads)
    table, problem = cache.get(("agreement", tuple(where)), lambda: _agreement(store, where, reads))
    if problem:
        report.notes.append(problem)
    report.agreement_table = table
    if not narrowed or "esa" in chosen:
        matrix, problem = cache.get(
            ("esa matrix", tuple(where)), lambda: _esa_matrix(store, where, reads)
        )
        if problem:
            report.notes.append(problem)
        report.matrix_table = matrix
    if narrowed and table is not None and "metric" in table.columns:
        at = table.columns.index("metric")  # "bleu:gold" is bleu against gold references
        report.agreement_table = replace(
            table, rows=tuple(row for row in table.rows if str(row[at]).split(":")[0] in chosen)
        )


def _add_comparisons(
    report: BiasReport,
    dimension: str,
    pairs: Sequence[tuple[str, str]] | None,
    protocol: Protocol,
    cache: ReportCache,
) -> None:
    """The comparisons by ``dimension`` at the report's alpha, or a note on why there are
    none (the groups the session has of it)."""
    frame, chosen, settings = report.frame, report.metrics, report.settings
    results = _with_alpha(
        cache.get(
            ("compare", dimension, *protocol, None if pairs is None else tuple(pairs)),
            lambda: compare(frame, dimension, metrics=chosen, pairs=pairs, settings=settings),
        ),
        settings.alpha,
    )
    report.comparisons[dimension] = results
    if results:
        return
    picked = protocol[0]
    seen = cache.get(
        ("groups seen", dimension, picked, chosen),
        lambda: sorted(
            {
                str(group)
                for o in frame.observations
                if o.metric in chosen and (group := o.group(dimension)) is not None
            },
            key=lambda v: order_key(dimension, v),
        ),
    )
    report.notes.append(
        f"by {dimension}: nothing to compare; the session has "
        + (f"only {', '.join(seen)}" if seen else "no values")
        + (f" (asked for {', '.join(f'{a} vs {b}' for a, b in pairs)})" if pairs else "")
        + "."
    )


def correct(report: BiasReport) -> None:
    """Adjust every p-value of the report as one family (Settings.correction): the
    comparisons of every dimension, the study table's cells and the headlines; the
    significance marks then follow the corrected p-values."""
    raw: list[float] = []
    for results in report.comparisons.values():
        raw += [c.p_value for c in results if c.p_value is not None]
    cells = [
        cell
        for row in (report.study.rows if report.study else [])
        for cell in row.cells.values()
        if cell.p_value is not None
    ]
    raw += [cell.p_value for cell in cells]  # type: ignore[misc]
    raw += [c.p_value for c in report.headlines if c.p_value is not None]
    adjusted = iter(adjust_p_values(raw, report.settings.correction).tolist())
    report.tests_corrected = len(raw)
    alpha = report.settings.alpha

    def fixed(results: list[Comparison]) -> list[Comparison]:
        return [
            replace(c, p_adjusted=next(adjusted)) if c.p_value is not None else c for c in results
        ]

    for by, results in report.comparisons.items():
        report.comparisons[by] = fixed(results)
    for row in report.study.rows if report.study else []:
        for metric, cell in row.cells.items():
            if cell.p_value is not None:
                p = next(adjusted)
                row.cells[metric] = replace(cell, p_adjusted=p, significant=p < alpha)
    report.headlines = fixed(report.headlines)


def report_job(
    store: SessionStore,
    *,
    by: Sequence[str] = ("tier",),
    metrics: Sequence[str] | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    settings: Settings = DEFAULT_SETTINGS,
    runs: Sequence[int] | None = None,
    where: Sequence[str] = (),
    cache: ReportCache | None = None,
) -> Job[BiasReport]:
    """:func:`build_report` as a job (seconds at the scale of the TailNLG study)."""
    return Job(
        title="Bias report",
        kind="report",
        run=lambda ctx: build_report(
            store,
            by=by,
            metrics=metrics,
            pairs=pairs,
            settings=settings,
            ctx=ctx,
            runs=runs,
            where=where,
            cache=cache,
        ),
        params={
            "by": list(by),
            "metrics": list(metrics or []),
            "pairs": [list(p) for p in pairs or []],
            "runs": None if runs is None else list(runs),
            "where": list(where),
            **settings.__dict__,
        },
    )
