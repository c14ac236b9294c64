"""Scoring a session's texts, and reading the scores back.

* :mod:`~core.metrics.scoring.request`: what a job is asked for (:class:`ScoringRequest`),
  what it reports (:class:`ScoringSummary`, :class:`CorpusScore`), the runs it scores;
* :mod:`~core.metrics.scoring.material`: the texts and each unit's triples, entities and
  references, read from the session;
* :mod:`~core.metrics.scoring.job`: the job (:func:`score_job`) that scores;
  :mod:`~core.metrics.scoring.corpus_groups` the groups it scores (items, rows, corpus
  figures), :mod:`~core.metrics.scoring.write` how their rows are staged and written;
* :mod:`~core.metrics.scoring.queries`: the stored scores read back (Scores panel,
  report, CLI), from a WAL snapshot.

Every name callers use is re-exported here, so ``from core.metrics.scoring import X``
works as it did when this was one module.
"""

from __future__ import annotations

from core.metrics.scoring.corpus_groups import _corpus_of, _Group, _LazyItems, _pooled_perplexity
from core.metrics.scoring.job import CHUNK, ROW_BATCH, SERVER_LOGPROBS, _Scorer, score_job
from core.metrics.scoring.material import (
    UnitMaterial,
    _aliases,
    _all_unit_ids,
    _load_verbalisations,
    _logprob_values,
    _TripleRow,
    _UnitMaterial,
    unit_material,
)
from core.metrics.scoring.queries import (
    GROUP_KEYS,
    GroupScore,
    SentenceScoreRow,
    SentenceStatistics,
    StoredScore,
    _run_text_counts,
    corpus_scores,
    score_column,
    score_columns,
    scores_of_verbalisation,
    sentence_score_table,
    sentence_statistics,
    summarise_rows,
    summary_by_group,
)
from core.metrics.scoring.request import (
    CorpusScore,
    ScoringRequest,
    ScoringSummary,
    _Run,
    _Text,
    load_runs,
    unfinished_runs,
    validate_request,
)

__all__ = [
    "CHUNK",
    "GROUP_KEYS",
    "ROW_BATCH",
    "SERVER_LOGPROBS",
    "CorpusScore",
    "GroupScore",
    "ScoringRequest",
    "ScoringSummary",
    "SentenceScoreRow",
    "SentenceStatistics",
    "StoredScore",
    "UnitMaterial",
    "_Group",
    "_LazyItems",
    "_Run",
    "_Scorer",
    "_Text",
    "_TripleRow",
    "_UnitMaterial",
    "_aliases",
    "_all_unit_ids",
    "_corpus_of",
    "_load_verbalisations",
    "_logprob_values",
    "_pooled_perplexity",
    "_run_text_counts",
    "corpus_scores",
    "load_runs",
    "score_column",
    "score_columns",
    "score_job",
    "scores_of_verbalisation",
    "sentence_score_table",
    "sentence_statistics",
    "summarise_rows",
    "summary_by_group",
    "unfinished_runs",
    "unit_material",
    "validate_request",
]
