"""Graph ↔ text retrieval and its session cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import func, select

from core.errors import UserFacingError
from core.jobs import CancelToken, JobCancelled, JobContext
from core.metrics.encoder_training import (
    training_job,
)
from core.metrics.retrieval.encoders import open_encoder
from core.metrics.retrieval.encodings import encode_cached
from core.metrics.retrieval.job import RetrievalRequest, retrieval_job
from core.metrics.retrieval.pairs import load_pairs
from core.metrics.retrieval.ranking import evaluate, find_graphs, inversion_errors, ranks
from core.store import SessionStore
from core.store.models import Encoding
from tests.fixtures.scoring_session import REFS, TEXTS
from tests.fixtures.tiny_sentence_encoder import build_tiny_sentence_encoder

# Loads models, sentence-transformers or bert-score among them: in a parallel run its tests
# go to workers kept for them, and start on one that has not loaded torch yet
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models("encoders")


def _cached_rows(scoring_store: SessionStore) -> int:
    with scoring_store.unit_of_work() as db:
        return db.scalar(select(func.count()).select_from(Encoding))


def test_ranks_count_strictly_higher_wrong_candidates_and_take_the_best_positive() -> None:
    queries = np.array([[1.0, 0.0], [0.0, 1.0]], dtype="f4")
    candidates = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0], [1.0, 0.0]], dtype="f4")
    # Query 0: positive 1 scores 0.6; candidates 0 and 3 score 1.0 > 0.6 -> rank 3.
    # Query 1: positives {1, 2}: best is 2 (1.0); nothing above -> rank 1.
    got, best = ranks(queries, candidates, [[1], [1, 2]], chunk=1)
    assert got == [3, 1]
    assert best == pytest.approx([0.6, 1.0])
    # A tie with a wrong candidate counts for the correct one.
    got, _ = ranks(queries, candidates, [[0], [2]])
    assert got == [1, 1]


def test_pairs_follow_the_scoring_rule(scoring_store: SessionStore) -> None:
    pairs = load_pairs(scoring_store)
    assert len(pairs) == sum(len(texts) for texts in REFS.values())
    italian = [p for p in pairs if p.lang == "it"]
    assert italian and all(p.triples[1][2] == "matematica" for p in italian)  # override
    assert len(load_pairs(scoring_store, one_text_per_graph=True)) == 3  # ada en, ada it, rome en
    assert len(load_pairs(scoring_store, quality="silver")) == 1
    run_id = 1
    outputs = load_pairs(scoring_store, run_id=run_id)
    assert {p.text for p in outputs} == {t for (r, _u, _l), t in TEXTS.items() if r == run_id}
    with pytest.raises(UserFacingError, match="no such run"):
        load_pairs(scoring_store, run_id=99)


def test_evaluate_matches_a_brute_force_ranking_and_caches_encodings(
    scoring_store: SessionStore, tiny_encoder: Path
) -> None:
    encoder = open_encoder(str(tiny_encoder))
    pairs = load_pairs(scoring_store, langs=["en"])
    result = evaluate(pairs, encoder, scoring_store)
    graphs = sorted({p.graph for p in pairs})
    texts = sorted({p.text for p in pairs})
    assert (result.graphs, result.texts) == (len(graphs), len(texts))
    assert result.encoded == len(graphs) + len(texts) == _cached_rows(scoring_store)
    model = encoder.model()
    g = {s: v for s, v in zip(graphs, model.encode(graphs, normalize_embeddings=True), strict=True)}
    t = {s: v for s, v in zip(texts, model.encode(texts, normalize_embeddings=True), strict=True)}
    expected_ranks = []
    for text in texts:
        own = {p.graph for p in pairs if p.text == text}
        best = max(float(t[text] @ g[x]) for x in own)
        expected_ranks.append(
            1 + sum(float(t[text] @ g[x]) > best + 1e-6 for x in graphs if x not in own)
        )
    assert result.text_to_graph.queries == len(texts)
    assert result.text_to_graph.top1 == pytest.approx(
        sum(r == 1 for r in expected_ranks) / len(texts)
    )
    assert result.text_to_graph.mrr == pytest.approx(
        sum(1 / r for r in expected_ranks) / len(texts)
    )
    worst = result.worst(1)[0]
    assert worst.similarity == min(m.similarity for m in result.matches)
    again = evaluate(pairs, encoder, scoring_store)
    assert (
        again.encoded == 0 and again.as_dict()["text_to_graph"] == result.as_dict()["text_to_graph"]
    )
    with scoring_store.unit_of_work() as db:
        row = db.scalars(select(Encoding)).first()
        assert row.encoder == encoder.fingerprint and len(row.vector) == 4 * row.dim


def test_a_different_encoder_does_not_reuse_the_cache(
    scoring_store: SessionStore, tiny_encoder: Path, tmp_path: Path
) -> None:
    first = open_encoder(str(tiny_encoder))
    other = open_encoder(str(build_tiny_sentence_encoder(tmp_path / "other", seed=1)))
    assert first.fingerprint != other.fingerprint
    texts = ["Rome is in Italy.", "Rome is in Italy.", "Paris is a city."]
    a = encode_cached(scoring_store, first, texts, "text")
    b = encode_cached(scoring_store, other, texts, "text")
    assert a.shape == b.shape == (3, 32) and np.allclose(a[0], a[1])
    assert not np.allclose(a, b)
    assert _cached_rows(scoring_store) == 4


def test_cancel_stops_encoding_and_keeps_nothing_half_done(
    scoring_store: SessionStore, tiny_encoder: Path
) -> None:
    token = CancelToken()
    token.cancel()
    with pytest.raises(JobCancelled):
        encode_cached(
            scoring_store, open_encoder(str(tiny_encoder)), ["a text"], "text", JobContext(token)
        )
    assert _cached_rows(scoring_store) == 0


def test_job_reports_progress_and_inversion(
    scoring_store: SessionStore, tiny_encoder: Path
) -> None:
    seen = []
    job = retrieval_job(scoring_store, RetrievalRequest(encoder=str(tiny_encoder), langs=("en",)))
    summary = job.run(JobContext(on_progress=seen.append, min_interval_s=0))
    assert seen and seen[-1].done == seen[-1].total
    assert summary.inversion_tested == 0  # the test session has no 1-triple graphs
    hits = find_graphs(
        scoring_store,
        "Rome is the capital of Italy.",
        open_encoder(str(tiny_encoder)),
        lang="en",
        k=5,
    )
    assert len(hits) == 2 and hits[0].similarity >= hits[1].similarity


def test_inversion_errors_count_swapped_graphs_scored_higher(tiny_encoder: Path) -> None:
    from core.metrics.retrieval.pairs import RetrievalPair

    encoder = open_encoder(str(tiny_encoder))
    pairs = [
        RetrievalPair(
            1, "en", (("Rome", "country", "Italy"),), "Rome is in Italy.", 1, "reference"
        ),
        RetrievalPair(2, "en", (("Paris", "country", "Paris"),), "Paris.", 2, "reference"),
    ]
    above, tested = inversion_errors(pairs, encoder)
    assert tested == 1  # the reflexive triple cannot be inverted
    vectors = encoder.model().encode(
        ["Rome is in Italy.", "[S] Rome [P] country [O] Italy", "[S] Italy [P] country [O] Rome"],
        normalize_embeddings=True,
    )
    assert above == int(vectors[0] @ vectors[2] > vectors[0] @ vectors[1])


def test_bad_input_is_refused_before_anything_is_stored(
    tmp_path: Path, scoring_store: SessionStore
) -> None:
    not_a_model = tmp_path / "empty"
    not_a_model.mkdir()
    with pytest.raises(UserFacingError, match="not a model folder"):
        retrieval_job(scoring_store, RetrievalRequest(encoder=str(not_a_model)))
    empty = tmp_path / "empty.taillens"
    SessionStore.create(empty).close()
    with SessionStore.open(empty) as bare:
        job = retrieval_job(bare, RetrievalRequest())
        with pytest.raises(UserFacingError, match="no texts with a graph"):
            job.run(JobContext())
        with pytest.raises(UserFacingError, match="no references"):
            training_job(bare, tmp_path / "model")
        assert _cached_rows(bare) == 0
    assert not (tmp_path / "model").exists()
