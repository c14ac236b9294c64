"""Reading scores back: the queries the Scores panel, the report and the CLI read stored
scores with (sentence rows per text, the units × metrics table, corpus rows marked stale
when their run has grown, summaries by group). All read a WAL snapshot: they never wait
for a scoring job or any other writer."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.errors import UserFacingError
from core.groups import head_tier
from core.io.bounded import stored_json
from core.metrics.base import details_from_json
from core.metrics.details import MetricDetails
from core.metrics.scoring.request import CorpusScore
from core.metrics.signature import LegacySignature, Signature, read_signature
from core.vocab import run_name

if TYPE_CHECKING:
    from core.store import SessionStore


@dataclass(frozen=True)
class StoredScore:
    id: int
    metric: str
    level: str
    value: float | None
    quality: str | None
    signature: str | None  # its canonical text (or an old session's free-form text)
    details: MetricDetails  # the metric's typed details; where it came from in ``extra``
    run_id: int | None
    lang: str | None
    verbalisation_id: int | None
    reference_id: int | None

    @property
    def typed_signature(self) -> Signature | LegacySignature | None:
        return read_signature(self.signature, self.metric) if self.signature else None


def _stored(row: Any) -> StoredScore:
    details = details_from_json(row.metric, row.details)
    return StoredScore(
        row.id,
        row.metric,
        row.level,
        row.value,
        details.get("quality"),
        row.signature,
        details,
        row.run_id,
        row.lang,
        row.verbalisation_id,
        row.reference_id,
    )


def scores_of_verbalisation(store: SessionStore, verbalisation_id: int) -> list[StoredScore]:
    """Every sentence score of one text, with details (ESA mentions, missing entities,
    hallucination spans, BERTScore model and rescaling, inversion drop)."""
    from sqlalchemy import select

    from core.store.models import Score

    with store.snapshot() as db:
        return [
            _stored(r)
            for r in db.scalars(
                select(Score)
                .where(Score.verbalisation_id == verbalisation_id, Score.level == "sentence")
                .order_by(Score.metric, Score.id)
            )
        ]


@dataclass(frozen=True)
class SentenceScoreRow:
    """One verbalisation and its sentence scores: {column: value}, where a column is the
    metric name, or ``metric:quality`` for reference-based metrics (``bleu:gold``)."""

    verbalisation_id: int
    run_id: int
    model: str
    unit_id: int
    unit_uid: str
    tier: str | None
    sub_tier: str | None
    lang: str
    candidate_index: int
    text: str | None
    scores: dict[str, float | None]


def score_column(metric: str, quality: str | None) -> str:
    return f"{metric}:{quality}" if quality else metric


def sentence_score_table(
    store: SessionStore,
    *,
    run_ids: Sequence[int] | None = None,
    langs: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    verbalisation_ids: Collection[int] | None = None,
) -> list[SentenceScoreRow]:
    """Units × candidates × metrics: the Scores panel's table, one row per verbalisation
    (of ``verbalisation_ids`` only, where given: a reader that needs a few of them)."""
    from core.store.batching import in_chunks
    from core.store.models import Score, Verbalisation

    query, score_query = _sentence_queries(run_ids, langs, metrics)
    with store.snapshot() as db:
        by_text: dict[int, dict[str, float | None]] = defaultdict(dict)
        chunks = [None] if verbalisation_ids is None else in_chunks(sorted(verbalisation_ids))
        texts: list[Any] = []
        for chunk in chunks:
            scores, rows = score_query, query
            if chunk is not None:
                scores = scores.where(Score.verbalisation_id.in_(chunk))
                rows = rows.where(Verbalisation.id.in_(chunk))
            for vid, metric, value, quality in db.execute(scores):
                column = score_column(metric, quality if isinstance(quality, str) else None)
                by_text[vid][column] = value
            texts += db.execute(rows).all()
    if verbalisation_ids is not None:  # in the order of the whole table
        texts.sort(key=lambda r: (r.run_id, r.unit_id, r.lang, r.candidate_index))
    return [
        SentenceScoreRow(
            r.id,
            r.run_id,
            run_name(r.system_name, r.model_id),
            r.unit_id,
            r.uid,
            r.tier,
            r.sub_tier,
            r.lang,
            r.candidate_index,
            r.text,
            by_text.get(r.id, {}),
        )
        for r in texts
    ]


def _sentence_queries(
    run_ids: Sequence[int] | None, langs: Sequence[str] | None, metrics: Sequence[str] | None
) -> tuple[Any, Any]:
    """The texts (with their run and unit) and their sentence scores, filtered alike."""
    from sqlalchemy import func, select

    from core.store.models import DataUnit, ModelRun, Score, Verbalisation

    query = (
        select(
            Verbalisation.id,
            Verbalisation.run_id,
            Verbalisation.unit_id,
            Verbalisation.lang,
            Verbalisation.candidate_index,
            Verbalisation.text,
            ModelRun.system_name,
            ModelRun.model_id,
            DataUnit.uid,
            DataUnit.tier,
            DataUnit.sub_tier,
        )
        .join(ModelRun, ModelRun.id == Verbalisation.run_id)
        .join(DataUnit, DataUnit.id == Verbalisation.unit_id)
        .order_by(
            Verbalisation.run_id,
            Verbalisation.unit_id,
            Verbalisation.lang,
            Verbalisation.candidate_index,
        )
    )
    # Only the quality of the details, taken in SQL: parsing every row's details (ESA's
    # mentions, the sacrebleu statistics) was most of the time this read took.
    score_query = select(
        Score.verbalisation_id,
        Score.metric,
        Score.value,
        func.json_extract(Score.details, "$.quality"),
    ).where(Score.level == "sentence", Score.verbalisation_id.is_not(None))
    if run_ids is not None:
        query = query.where(Verbalisation.run_id.in_(list(run_ids)))
        score_query = score_query.where(Score.run_id.in_(list(run_ids)))
    if langs is not None:
        query = query.where(Verbalisation.lang.in_(list(langs)))
        score_query = score_query.where(Score.lang.in_(list(langs)))
    if metrics is not None:
        score_query = score_query.where(Score.metric.in_(list(metrics)))
    return query, score_query


def score_columns(
    store: SessionStore,
    *,
    run_ids: Sequence[int] | None = None,
    langs: Sequence[str] | None = None,
) -> list[str]:
    """The sentence score columns of the session's verbalisations (``esa``,
    ``bleu:gold``, …), as :func:`sentence_score_table` names them, sorted."""
    from sqlalchemy import func, select

    from core.store.models import Score

    query = (
        select(Score.metric, func.json_extract(Score.details, "$.quality"))
        .where(Score.level == "sentence", Score.verbalisation_id.is_not(None))
        .distinct()
    )
    if run_ids is not None:
        query = query.where(Score.run_id.in_(list(run_ids)))
    if langs is not None:
        query = query.where(Score.lang.in_(list(langs)))
    with store.snapshot() as db:
        return sorted(
            {
                score_column(metric, quality if isinstance(quality, str) else None)
                for metric, quality in db.execute(query)
            }
        )


def corpus_scores(
    store: SessionStore,
    *,
    run_ids: Sequence[int] | None = None,
    metrics: Sequence[str] | None = None,
) -> list[CorpusScore]:
    """The stored corpus rows (run × lang × quality), references' rows included."""
    from sqlalchemy import select

    from core.store.models import ModelRun, Score

    query = (
        select(Score, ModelRun.system_name, ModelRun.model_id)
        .outerjoin(ModelRun, ModelRun.id == Score.run_id)
        .where(Score.level == "corpus")
        .order_by(Score.run_id, Score.lang, Score.metric, Score.id)
    )
    if run_ids is not None:
        query = query.where(Score.run_id.in_(list(run_ids)))
    if metrics is not None:
        query = query.where(Score.metric.in_(list(metrics)))
    counts = _run_text_counts(store)
    with store.snapshot() as db:
        out = []
        for score, system_name, model_id in db.execute(query):
            details = dict(score.details or {})
            scored_texts = details.get("run_texts")
            if (
                score.run_id is not None
                and scored_texts is not None
                and counts.get((score.run_id, score.lang or ""), 0) != scored_texts
            ):
                details["stale"] = True  # the run changed since: score it again
            out.append(
                CorpusScore(
                    score.metric,
                    score.run_id,
                    run_name(system_name, model_id, "references"),
                    score.lang,
                    details.get("quality"),
                    score.value,
                    int(details.get("n") or 0),
                    score.signature,
                    details,
                )
            )
        return out


@dataclass(frozen=True)
class SentenceStatistics:
    """What a corpus score over some texts needs of one text's stored sentence score of a
    sacrebleu metric: its statistics (None for a score stored before they were), its
    reference count, and the signature it was made with."""

    statistics: tuple[float, ...] | None
    references: int | None
    signature: str | None


def sentence_statistics(
    store: SessionStore,
    metric: str,
    quality: str | None,
    verbalisation_ids: Collection[int] | None = None,
) -> dict[int, SentenceStatistics]:
    """Per verbalisation (of ``verbalisation_ids``, default all), its stored sentence
    statistics of ``metric`` against references of ``quality``: the details' few fields
    taken in SQL, not the whole details."""

    from sqlalchemy import bindparam, text

    from core.store.batching import in_chunks

    sql = _STATISTICS_SQL
    chunks: list[Any] = [None]
    if verbalisation_ids is not None:
        # By the texts' index: SQLite would otherwise walk every row of the metric.
        sql = sql.replace("FROM scores", "FROM scores INDEXED BY ix_scores_verbalisation_id")
        sql += " AND verbalisation_id IN :ids"
        chunks = list(in_chunks(sorted(verbalisation_ids)))
    query = text(sql + " ORDER BY id")  # should a text have two rows, the newest counts
    if verbalisation_ids is not None:
        query = query.bindparams(bindparam("ids", expanding=True))
    out: dict[int, SentenceStatistics] = {}
    with store.snapshot() as db:
        for chunk in chunks:
            parameters: dict[str, Any] = {"metric": metric, "quality": quality}
            if chunk is not None:
                parameters["ids"] = list(chunk)
            for vid, stats, references, signature in db.execute(query, parameters):
                counts = stored_json(stats, None)  # unreadable: as if none were stored
                out[int(vid)] = SentenceStatistics(
                    tuple(counts) if isinstance(counts, list) else None,
                    None if references is None else int(references),
                    signature,
                )
    return out


_STATISTICS_SQL = """
SELECT verbalisation_id, json_extract(details, '$.statistics'),
       json_extract(details, '$.references'), signature
FROM scores
WHERE level = 'sentence' AND metric = :metric AND verbalisation_id IS NOT NULL
  AND value IS NOT NULL AND json_extract(details, '$.quality') IS :quality"""


def _run_text_counts(store: SessionStore) -> dict[tuple[int, str], int]:
    """Verbalisations per (run, language), every candidate counted."""
    from sqlalchemy import func, select

    from core.store.models import Verbalisation

    with store.snapshot() as db:
        return {
            (run_id, lang): int(count)
            for run_id, lang, count in db.execute(
                select(Verbalisation.run_id, Verbalisation.lang, func.count()).group_by(
                    Verbalisation.run_id, Verbalisation.lang
                )
            )
        }


@dataclass(frozen=True)
class GroupScore:
    """Sentence scores of one group pooled: mean, median and count."""

    metric: str
    quality: str | None
    group: tuple[str | None, ...]  # values of the ``by`` keys, in order
    n: int
    mean: float | None
    median: float | None


GROUP_KEYS = ("model", "lang", "tier", "sub_tier", "run_id")


def summary_by_group(
    store: SessionStore,
    *,
    by: Sequence[str] = ("model", "lang", "tier"),
    run_ids: Sequence[int] | None = None,
    metrics: Sequence[str] | None = None,
) -> list[GroupScore]:
    """Sentence scores summarised by model × language × tier (or any of GROUP_KEYS).

    These are means of per-text scores (for BLEU and chrF++ not the corpus statistic;
    :func:`corpus_scores` has those). TailNLG's ``top_head`` counts as ``head``.
    """
    unknown = [k for k in by if k not in GROUP_KEYS]
    if unknown:
        raise UserFacingError(f"cannot group by {unknown}; choose from {GROUP_KEYS}")
    return summarise_rows(sentence_score_table(store, run_ids=run_ids, metrics=metrics), by=by)


def summarise_rows(
    rows: Iterable[SentenceScoreRow], *, by: Sequence[str] = ("model", "lang", "tier")
) -> list[GroupScore]:
    """:func:`summary_by_group` of rows already read (the Scores panel reads the table
    once per refresh and derives its summary from the same rows)."""
    import statistics

    unknown = [k for k in by if k not in GROUP_KEYS]
    if unknown:
        raise UserFacingError(f"cannot group by {unknown}; choose from {GROUP_KEYS}")
    pools: dict[tuple[str, str | None, tuple[Any, ...]], list[float]] = defaultdict(list)
    for row in rows:
        keys = {
            "model": row.model,
            "lang": row.lang,
            "tier": head_tier(row.tier),
            "sub_tier": row.sub_tier,
            "run_id": str(row.run_id),
        }
        group = tuple(keys[k] for k in by)
        for column, value in row.scores.items():
            metric, _, quality = column.partition(":")
            if value is not None:
                pools[(metric, quality or None, group)].append(value)
    return [
        GroupScore(
            metric,
            quality,
            group,
            len(values),
            statistics.fmean(values) if values else None,
            statistics.median(values) if values else None,
        )
        for (metric, quality, group), values in sorted(
            pools.items(),
            key=lambda kv: (kv[0][0], kv[0][1] or "", tuple(str(g) for g in kv[0][2])),
        )
    ]
