"""Perplexity of a server run from the token log-probabilities the server returned:
stored with each verbalisation, scored without a local model, and
equal to ``exp(-mean(logprobs))`` computed by hand from what the server sent."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select, update

from core.jobs import JobSucceeded, run_job
from core.metrics.scoring import ScoringRequest, score_job
from core.store import SessionStore
from core.store.models import Score, Verbalisation
from core.verbalise import GenerationParams, open_verbaliser
from core.verbalise.job import verbalise_job
from tests.fixtures.fake_openai_server import FakeServer, served_logprobs
from tests.fixtures.verbalise_units import add_units


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    yield fake
    fake.close()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    with SessionStore.create(tmp_path / "server-ppl.taillens") as session:
        yield session


def verbalise(store: SessionStore, server: FakeServer) -> int:
    verbaliser = open_verbaliser(
        server.url, GenerationParams(candidates=2), server_model="tiny-served"
    )
    outcome = run_job(verbalise_job(store, verbaliser, "all", ["en", "es"]))
    assert isinstance(outcome, JobSucceeded), getattr(outcome, "traceback", outcome)
    return outcome.result.run_id


def by_hand(logprobs: list[float]) -> float:
    return math.exp(-sum(logprobs) / len(logprobs))


def ppl_rows(store: SessionStore, level: str) -> list[Score]:
    with store.unit_of_work() as db:
        rows = list(
            db.scalars(
                select(Score)
                .where(Score.metric == "ppl", Score.level == level)
                .order_by(Score.verbalisation_id, Score.lang)
            )
        )
        db.expunge_all()
        return rows


def test_logprobs_are_stored_with_each_candidate(store: SessionStore, server: FakeServer) -> None:
    add_units(store, 2, langs=("en", "es"))
    run_id = verbalise(store, server)
    with store.unit_of_work() as db:
        rows = list(db.scalars(select(Verbalisation).where(Verbalisation.run_id == run_id)))
        stored = [(v.candidate_index, v.token_logprobs) for v in rows]
    assert len(stored) == 2 * 2 * 2
    for index, logprobs in stored:
        assert logprobs == {
            "tokens": [t for t, _ in served_logprobs(index)],
            "logprobs": [v for _, v in served_logprobs(index)],
        }


def test_ppl_of_a_server_run_is_computed_from_its_logprobs(
    store: SessionStore, server: FakeServer
) -> None:
    add_units(store, 2, langs=("en", "es"))
    run_id = verbalise(store, server)
    # No --ppl-model, and the run has no local model: the stored log-probabilities serve.
    outcome = run_job(score_job(store, ScoringRequest(metrics=("ppl",))))
    assert isinstance(outcome, JobSucceeded), outcome
    assert not any("--ppl-model" in note for note in outcome.result.notes)
    with store.unit_of_work() as db:
        index_of = {
            vid: index
            for vid, index in db.execute(select(Verbalisation.id, Verbalisation.candidate_index))
        }
    sentences = ppl_rows(store, "sentence")
    assert len(sentences) == 8
    for row in sentences:
        expected = by_hand([v for _, v in served_logprobs(index_of[row.verbalisation_id])])
        assert row.value == pytest.approx(expected, rel=1e-12)
        assert row.details["source"] == "server logprobs"
        assert row.details["tokens"] == len(served_logprobs(0))
        assert row.details["model"] == "tiny-served"
        assert "source:server-logprobs" in row.signature
    # Corpus rows per language: every token of every reply pooled.
    corpus = {row.lang: row for row in ppl_rows(store, "corpus")}
    pooled = [v for index in (0, 1) for _ in range(2) for _, v in served_logprobs(index)]
    for lang in ("en", "es"):
        assert corpus[lang].run_id == run_id
        assert corpus[lang].value == pytest.approx(by_hand(pooled), rel=1e-12)
        assert corpus[lang].details["n"] == 4


def test_a_reply_without_logprobs_gets_no_value_and_says_why(
    store: SessionStore, server: FakeServer
) -> None:
    add_units(store, 1, langs=("en",))
    run_id = verbalise(store, server)
    with store.unit_of_work() as db:
        db.execute(
            update(Verbalisation)
            .where(Verbalisation.run_id == run_id, Verbalisation.candidate_index == 1)
            .values(token_logprobs=None)
        )
    outcome = run_job(score_job(store, ScoringRequest(metrics=("ppl",), langs=("en",))))
    assert isinstance(outcome, JobSucceeded)
    values = [(row.value, row.details.get("reason")) for row in ppl_rows(store, "sentence")]
    assert values == [
        (pytest.approx(by_hand([v for _, v in served_logprobs(0)])), None),
        (None, "the server returned no token log-probabilities with this reply"),
    ]
    [corpus] = ppl_rows(store, "corpus")
    assert corpus.value == pytest.approx(by_hand([v for _, v in served_logprobs(0)]))


def test_a_server_run_without_any_logprobs_still_needs_a_model(
    store: SessionStore, server: FakeServer
) -> None:
    server.logprobs = False
    add_units(store, 1, langs=("en",))
    run_id = verbalise(store, server)
    outcome = run_job(score_job(store, ScoringRequest(metrics=("ppl",))))
    assert isinstance(outcome, JobSucceeded)
    assert any(
        f"run {run_id} (openai) has no causal model of its own and its server returned "
        "no token log-probabilities" in note
        for note in outcome.result.notes
    )
    assert ppl_rows(store, "sentence") == []
