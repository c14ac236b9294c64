"""The Scores panel's table, a page at a time: filtered, sorted, counted and summarised in SQL.

The session holds one row per verbalisation (a text) and one ``scores`` row per text ×
metric (× reference quality): at study scale ~50k texts × ~13 columns. The panel shows a
page of texts (:func:`read_page`, ``LIMIT``/``OFFSET``) and the next one when the table
is scrolled to its end, so opening a session never reads every text:

* the filter (:class:`ScoresFilter`: run, language, tier, a text search) is a ``WHERE``;
* the sort (:class:`ScoreSort`: any key column or score column, either way) is an
  ``ORDER BY`` with missing values last in both directions and the text's id as the
  tie-break, so equal values keep one order from page to page;
* the count, the texts with a score, each score column's range (its colour scale) and
  the summary (mean, median and count of each metric by model × language × tier, as
  :func:`core.metrics.scoring.summarise_rows` computes them from rows) are aggregates.

A score column is named as in :func:`core.metrics.scoring.sentence_score_table`: the
metric, or ``metric:quality`` for a reference-based metric (``bleu:gold``). Every value a
user chooses is a bound parameter; a sort column is looked up, never put into the SQL.
Each function reads inside one WAL snapshot (``SessionStore.snapshot``): it never waits
for a writer. Qt-free; the panel's wiring is app/scores.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.errors import UserFacingError
from core.groups import HEAD_WORDS
from core.metrics import ALL_METRICS
from core.metrics.scoring import GROUP_KEYS, GroupScore, SentenceScoreRow
from core.vocab import QUALITIES

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from core.store import SessionStore

# The texts table's key columns by name (a ScoreSort.column), in the table's order; the
# score columns sit between "tier" and "text".
KEY_COLUMNS = ("unit", "model", "lang", "#", "tier", "text")
PAGE_SIZE = 200  # texts per page: a screenful many times over, a few ms to read
NO_TEXT = "(no parsed text)"  # what the table shows for an empty output
_QUALITY_RANK = {"": 0, **{quality: i for i, quality in enumerate(QUALITIES, 1)}}

# What the table shows in each key column, as SQL over v (verbalisations), r (model_runs)
# and u (data_units); the sort orders by the value shown.
_MODEL = (
    "CASE WHEN r.system_name IS NULL OR r.system_name = '' THEN r.model_id ELSE r.system_name END"
)
_KEY_SQL = {
    "unit": "u.uid",
    "model": _MODEL,
    "lang": "v.lang",
    "#": "v.candidate_index",
    # The sub-tier where it says more than the tier, else the tier ("" when none).
    "tier": "CASE WHEN u.sub_tier IS NOT NULL AND u.sub_tier != '' AND u.sub_tier IS NOT u.tier "
    "THEN u.sub_tier ELSE coalesce(u.tier, '') END",
    "text": f"CASE WHEN v.text IS NULL OR v.text = '' THEN '{NO_TEXT}' "
    "ELSE replace(v.text, char(10), ' ') END",
}
_HEAD = ", ".join(f"'{w}'" for w in sorted(HEAD_WORDS))
_HEAD_TIER = f"CASE WHEN u.tier IN ({_HEAD}) THEN 'head' ELSE u.tier END"
_GROUP_SQL = {
    "model": _MODEL,
    "lang": "v.lang",
    "tier": _HEAD_TIER,
    "sub_tier": "u.sub_tier",
    "run_id": "CAST(v.run_id AS TEXT)",
}
_QUALITY = "coalesce(json_extract(s.details, '$.quality'), '')"
_JOINS = "JOIN model_runs r ON r.id = v.run_id JOIN data_units u ON u.id = v.unit_id"
_TEXTS = f"FROM verbalisations v {_JOINS}"
_SCORES = f"FROM scores s JOIN verbalisations v ON v.id = s.verbalisation_id {_JOINS}"
_TEXT_COLUMNS = (
    f"v.id, v.run_id, {_MODEL} AS model, v.unit_id, u.uid, u.tier, u.sub_tier, v.lang, "
    "v.candidate_index, v.text"
)
_DEFAULT_ORDER = "v.run_id, v.unit_id, v.lang, v.candidate_index, v.id"


@dataclass(frozen=True)
class ScoresFilter:
    """Which texts the Scores panel shows (None / empty: all)."""

    run_id: int | None = None
    lang: str | None = None
    tier: str | None = None  # a unit's tier; TailNLG's top_head counts as head
    search: str = ""  # words in the text or the unit's id (case-insensitive for ASCII)


@dataclass(frozen=True)
class ScoreSort:
    """A sort of the texts: a key column (:data:`KEY_COLUMNS`) or a score column
    (``esa``, ``bleu:gold``), ascending or descending; missing values come last either
    way and equal values in the order of the texts' ids."""

    column: str
    descending: bool = False


@dataclass(frozen=True)
class ScoresOverview:
    """The filters' choices: what the session holds texts of."""

    runs: list[tuple[int, str, int]]  # (run id, model, texts), by run id
    langs: list[str]
    tiers: list[str]  # head tiers (top_head counts as head), sorted
    total: int  # every text in the session


@dataclass(frozen=True)
class ScoresPage:
    """One read for the panel: the first page of the filtered, sorted texts and the
    figures of every text that passes the filter (not only the page's)."""

    rows: list[SentenceScoreRow]
    matching: int  # texts that pass the filter
    scored: int  # of those, texts with at least one score
    columns: list[str]  # the score columns any of them has, in :func:`column_order`
    ranges: dict[str, tuple[float, float]]  # each column's lowest and highest value
    sorted_by: ScoreSort | None  # None: the session's order (the sort's column is absent)
    summary: list[GroupScore] = field(default_factory=list)  # by model × language × tier


def column_order(column: str) -> tuple[int, int, str]:
    """Sort key of a score column: the metrics registry's order, then gold, silver."""
    metric, _, quality = column.partition(":")
    position = ALL_METRICS.index(metric) if metric in ALL_METRICS else len(ALL_METRICS)
    return position, _QUALITY_RANK.get(quality, 3), column


def _column(metric: str, quality: str | None) -> str:
    return f"{metric}:{quality}" if quality else metric


def _kept(db: Session, table: str, alias: str) -> str:
    """SQL keeping the rows of ``table`` that are not damaged (core.store.integrity)."""
    from core.store.integrity import usable_rows

    return usable_rows(db, table, alias)


def _where(db: Session, flt: ScoresFilter, params: dict[str, Any], *, scores: bool = False) -> str:
    """The filter as a WHERE clause over v / r / u (and s, with ``scores``); its values go
    into ``params``. Damaged rows are left out, as every read of a session leaves them
    (core.store.integrity)."""
    clauses = [_kept(db, "verbalisations", "v")]
    if scores:
        clauses.append(_kept(db, "scores", "s"))
    if flt.run_id is not None:
        clauses.append("v.run_id = :f_run")
        params["f_run"] = int(flt.run_id)
    if flt.lang is not None:
        clauses.append("v.lang = :f_lang")
        params["f_lang"] = flt.lang
    if flt.tier is not None:
        tiers = sorted(HEAD_WORDS) if flt.tier == "head" else [flt.tier]
        names = [f"f_tier{i}" for i in range(len(tiers))]
        clauses.append(f"u.tier IN ({', '.join(':' + n for n in names)})")
        params.update(zip(names, tiers, strict=True))
    search = flt.search.strip()
    if search:
        escaped = search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        clauses.append("(v.text LIKE :f_search ESCAPE '\\' OR u.uid LIKE :f_search ESCAPE '\\')")
        params["f_search"] = f"%{escaped}%"
    return " AND ".join(clauses)


def _sort_sql(db: Session, sort: ScoreSort | None, params: dict[str, Any]) -> str:
    """ORDER BY for ``sort``: missing (NULL) last both ways, then the text's id."""
    if sort is None:
        return _DEFAULT_ORDER
    expression = _KEY_SQL.get(sort.column)
    if expression is None:  # a score column: its value for this text (the newest row)
        metric, _, quality = sort.column.partition(":")
        params["o_metric"], params["o_quality"] = metric, quality
        expression = (
            "(SELECT s.value FROM scores s WHERE s.verbalisation_id = v.id "
            "AND s.level = 'sentence' AND s.metric = :o_metric "
            f"AND {_QUALITY} = :o_quality AND {_kept(db, 'scores', 's')} "
            "ORDER BY s.id DESC LIMIT 1)"
        )
    direction = "DESC" if sort.descending else "ASC"
    return f"({expression}) IS NULL, ({expression}) {direction}, v.id"


def _run(db: Session, sql: str, params: dict[str, Any]) -> Any:
    from sqlalchemy import text

    return db.execute(text(sql), params)


def _rows(db: Session, flt: ScoresFilter, sort: ScoreSort | None, offset: int, limit: int):
    params: dict[str, Any] = {"limit": max(0, int(limit)), "offset": max(0, int(offset))}
    where = _where(db, flt, params)
    order = _sort_sql(db, sort, params)
    texts = _run(
        db,
        f"SELECT {_TEXT_COLUMNS} {_TEXTS} WHERE {where} ORDER BY {order} "
        "LIMIT :limit OFFSET :offset",
        params,
    ).all()
    return _with_scores(db, texts)


def _with_scores(db: Session, texts: Sequence[Any]) -> list[SentenceScoreRow]:
    """``texts`` (rows of :data:`_TEXT_COLUMNS`) with their sentence scores."""
    from core.store.batching import in_chunks

    scores: dict[int, dict[str, float | None]] = {t.id: {} for t in texts}
    ids = list(scores)
    for chunk in in_chunks(ids):
        names = {f"i{i}": vid for i, vid in enumerate(chunk)}
        for vid, metric, quality, value in _run(
            db,
            f"SELECT s.verbalisation_id, s.metric, {_QUALITY}, s.value FROM scores s "
            f"WHERE s.level = 'sentence' AND {_kept(db, 'scores', 's')} "
            f"AND s.verbalisation_id IN ({', '.join(':' + n for n in names)}) ORDER BY s.id",
            names,
        ):
            scores[vid][_column(metric, quality)] = value  # the newest row wins
    return [
        SentenceScoreRow(
            t.id,
            t.run_id,
            t.model,
            t.unit_id,
            t.uid,
            t.tier,
            t.sub_tier,
            t.lang,
            t.candidate_index,
            t.text,
            scores[t.id],
        )
        for t in texts
    ]


def _columns(db: Session, flt: ScoresFilter) -> list[str]:
    params: dict[str, Any] = {}
    where = _where(db, flt, params, scores=True)
    found = _run(
        db,
        f"SELECT DISTINCT s.metric, {_QUALITY} {_SCORES} WHERE s.level = 'sentence' AND {where}",
        params,
    )
    return sorted({_column(m, q) for m, q in found}, key=column_order)


def _usable(sort: ScoreSort | None, columns: Sequence[str]) -> ScoreSort | None:
    """``sort`` when its column is in the table (a key column or one of ``columns``)."""
    if sort is None or sort.column in KEY_COLUMNS or sort.column in columns:
        return sort
    return None


def read_page(
    store: SessionStore,
    flt: ScoresFilter = ScoresFilter(),  # noqa: B008 (frozen)
    sort: ScoreSort | None = None,
    *,
    offset: int = 0,
    limit: int = PAGE_SIZE,
    columns: Sequence[str] | None = None,
) -> list[SentenceScoreRow]:
    """``limit`` texts from ``offset`` of the filtered texts in ``sort``'s order, each
    with its sentence scores ({column: value}). A score column absent from the filtered
    texts sorts nothing: the texts come in the session's order (run, unit, language,
    candidate). ``columns``: the filtered texts' score columns when known (a
    :class:`ScoresPage`'s), saving the scan that finds them."""
    with store.snapshot() as db:
        if sort is not None and sort.column not in KEY_COLUMNS:
            sort = _usable(sort, _columns(db, flt) if columns is None else columns)
        return _rows(db, flt, sort, offset, limit)


def read_scores(
    store: SessionStore,
    flt: ScoresFilter = ScoresFilter(),  # noqa: B008 (frozen)
    sort: ScoreSort | None = None,
    *,
    limit: int = PAGE_SIZE,
) -> ScoresPage:
    """The first page of the filtered texts and the figures of all of them (one
    snapshot): how many, how many scored, the score columns, their ranges and the
    summary by model × language × tier (:func:`read_summary`'s; one scan of the scores
    gives the columns, the ranges and the summary)."""
    by = ("model", "lang", "tier")
    with store.snapshot() as db:
        params: dict[str, Any] = {}
        where = _where(db, flt, params)
        matching = _run(db, f"SELECT count(*) {_TEXTS} WHERE {where}", params).scalar_one()
        scored = _run(
            db,
            f"SELECT count(DISTINCT s.verbalisation_id) {_SCORES} WHERE s.level = 'sentence' "
            f"AND s.value IS NOT NULL AND {_where(db, flt, params, scores=True)}",
            params,
        ).scalar_one()
        grouped = _grouped(db, flt, by)
        columns = sorted({_column(g[0], g[1]) for g in grouped}, key=column_order)
        ranges: dict[str, tuple[float, float]] = {}
        for g in grouped:
            if g[2 + len(by)]:  # values, not only missing ones
                column = _column(g[0], g[1])
                low, high = float(g[5 + len(by)]), float(g[6 + len(by)])
                if column in ranges:
                    low, high = min(low, ranges[column][0]), max(high, ranges[column][1])
                ranges[column] = (low, high)
        used = _usable(sort, columns)
        rows = _rows(db, flt, used, 0, limit)
    return ScoresPage(
        rows, int(matching), int(scored), columns, ranges, used, _group_scores(grouped, by)
    )


def read_overview(store: SessionStore) -> ScoresOverview:
    """The runs (with their texts), languages and tiers the session has texts of."""
    with store.snapshot() as db:
        runs = [
            (int(run_id), str(model), int(n))
            for run_id, model, n in _run(
                db,
                f"SELECT v.run_id, {_MODEL}, count(*) FROM verbalisations v "
                "JOIN model_runs r ON r.id = v.run_id "
                "WHERE EXISTS (SELECT 1 FROM data_units u WHERE u.id = v.unit_id) "
                f"AND {_kept(db, 'verbalisations', 'v')} "
                "GROUP BY v.run_id ORDER BY v.run_id",
                {},
            )
        ]
        usable = _kept(db, "verbalisations", "v")
        langs = [
            lang for (lang,) in _run(db, f"SELECT DISTINCT v.lang {_TEXTS} WHERE {usable}", {})
        ]
        tiers = {
            t for (t,) in _run(db, f"SELECT DISTINCT {_HEAD_TIER} {_TEXTS} WHERE {usable}", {}) if t
        }
    return ScoresOverview(runs, sorted(langs), sorted(tiers), sum(n for _r, _m, n in runs))


def read_row(store: SessionStore, verbalisation_id: int) -> SentenceScoreRow | None:
    """One text with its sentence scores (None: no such text)."""
    with store.snapshot() as db:
        return _one(db, int(verbalisation_id))


def _one(db: Session, verbalisation_id: int) -> SentenceScoreRow | None:
    params: dict[str, Any] = {"vid": verbalisation_id}
    usable = _kept(db, "verbalisations", "v")
    texts = _run(
        db, f"SELECT {_TEXT_COLUMNS} {_TEXTS} WHERE v.id = :vid AND {usable}", params
    ).all()
    found = _with_scores(db, texts)
    return found[0] if found else None


class _Median:
    """SQLite aggregate ``taillens_median(value)``: the median as ``statistics.median``
    takes it (the mean of the middle two of an even count). SQLite has no median and its
    window functions sort every value of the table again (3x the time of this)."""

    def __init__(self) -> None:
        self.values: list[float] = []

    def step(self, value: float | None) -> None:
        if value is not None:
            self.values.append(value)

    def finalize(self) -> float | None:
        import statistics

        return statistics.median(self.values) if self.values else None


def _with_median(db: Session) -> None:
    """Register :class:`_Median` on the snapshot's SQLite connection."""
    raw = db.connection().connection.dbapi_connection
    if raw is None:  # pragma: no cover - a snapshot always holds a live connection
        raise RuntimeError("no SQLite connection")
    raw.create_aggregate("taillens_median", 1, _Median)


def _grouped(db: Session, flt: ScoresFilter, by: Sequence[str]) -> list[Any]:
    """One scan of the filtered texts' sentence scores, grouped by metric, quality and
    ``by``: (metric, quality, *group, count, mean, median, min, max) of the values (a
    group whose values are all missing has count 0: its column still shows)."""
    params: dict[str, Any] = {}
    where = _where(db, flt, params, scores=True)
    groups_sql = "".join(f", {_GROUP_SQL[k]}" for k in by)
    sql = (
        f"SELECT s.metric, {_QUALITY}{groups_sql}, count(s.value), avg(s.value), "
        f"taillens_median(s.value), min(s.value), max(s.value) {_SCORES} "
        f"WHERE s.level = 'sentence' AND {where} "
        f"GROUP BY {', '.join(str(i + 1) for i in range(2 + len(by)))}"
    )
    _with_median(db)
    return list(_run(db, sql, params).all())


def _group_scores(grouped: Sequence[Any], by: Sequence[str]) -> list[GroupScore]:
    groups = [
        GroupScore(
            row[0],
            row[1] or None,
            tuple(row[2 : 2 + len(by)]),
            int(row[2 + len(by)]),
            float(row[3 + len(by)]),
            float(row[4 + len(by)]),
        )
        for row in grouped
        if row[2 + len(by)]
    ]
    groups.sort(key=lambda g: (g.metric, g.quality or "", tuple(str(v) for v in g.group)))
    return groups


def read_summary(
    store: SessionStore,
    flt: ScoresFilter = ScoresFilter(),  # noqa: B008 (frozen)
    *,
    by: Sequence[str] = ("model", "lang", "tier"),
) -> list[GroupScore]:
    """Sentence scores of the filtered texts pooled by ``by`` (of GROUP_KEYS): count,
    mean and median of each metric's values, as :func:`summarise_rows` computes them
    from the rows (the median of an even count is the mean of the middle two), by SQL
    aggregates (one GROUP BY; the median an aggregate of our own); in summarise_rows'
    order."""
    unknown = [k for k in by if k not in GROUP_KEYS]
    if unknown:
        raise UserFacingError(f"cannot group by {unknown}; choose from {GROUP_KEYS}")
    with store.snapshot() as db:
        return _group_scores(_grouped(db, flt, by), by)
