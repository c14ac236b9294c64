"""Correlation with human judgments on a WDV import, scored with the similarity metric
(a sentence encoder loaded in this process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.agreement.correlate import CorrelationRequest, correlate
from core.metrics.scoring import sentence_score_table
from core.store import SessionStore
from tests.fixtures.lazy_modules import scipy_stats as stats

# Loads models, sentence-transformers or bert-score among them: in a parallel run its tests
# go to workers kept for them, and start on one that has not loaded torch yet
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models("encoders")


def test_wdv_crowd_scores_are_human_judgments(tmp_path: Path) -> None:
    from core.formats.wdv.importer import import_wdv
    from core.jobs import JobSucceeded, run_job
    from core.metrics.scoring import ScoringRequest, score_job
    from tests.fixtures.wdv_records import wdv_records, write_wdv

    records = wdv_records()
    with SessionStore.create(tmp_path / "w.taillens") as store:
        import_wdv(store, write_wdv(tmp_path / "wdv.json", records))
        outcome = run_job(score_job(store, ScoringRequest(metrics=("hallucination", "similarity"))))
        assert isinstance(outcome, JobSucceeded), outcome
        result = correlate(store, CorrelationRequest(levels=("text",)))
        rows = {(r.metric, r.human): r for r in result.rows}
        table = {r.text: r.scores for r in sentence_score_table(store)}
    assert set(rows) == {
        (m, h) for m in ("hallucination", "similarity") for h in ("fluency", "adequacy")
    }
    # No candidate in any of the three texts: a constant side has no coefficient.
    assert rows[("hallucination", "fluency")].note == "one side is constant"
    xs = [table[r["verbalisation"]]["similarity"] for r in records]
    fluency = [
        sum(r["annotations"]["fluency_scores"]) / len(r["annotations"]["fluency_scores"])
        for r in records
    ]
    adequacy = [
        r["annotations"]["adequacy_scores"].count(0) / len(r["annotations"]["adequacy_scores"])
        for r in records
    ]
    row = rows[("similarity", "fluency")]
    assert row.n == 3 and (row.pearson, row.pearson_p) == pytest.approx(
        tuple(stats.pearsonr(xs, fluency))
    )
    assert rows[("similarity", "adequacy")].kendall == pytest.approx(
        stats.kendalltau(xs, adequacy)[0]
    )
