"""Graph-text similarity with the packaged all-MiniLM-L6-v2 and its inversion check."""

from __future__ import annotations

import pytest

from core.errors import UserFacingError
from core.metrics.base import ScoringItem
from core.metrics.similarity import GraphTextSimilarity, linearise, swapped
from tests.fixtures.signatures import check_round_trip

# Loads models, sentence-transformers or bert-score among them: in a parallel run its tests
# go to workers kept for them, and start on one that has not loaded torch yet
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models("encoders")

TRIPLES = (
    ("Ada Lovelace", "occupation", "mathematician"),
    ("Ada Lovelace", "place of birth", "London"),
)


def test_linearisation_and_swap() -> None:
    assert linearise(TRIPLES[:1]) == "[S] Ada Lovelace [P] occupation [O] mathematician"
    assert swapped(TRIPLES) == (("mathematician", "occupation", "Ada Lovelace"), TRIPLES[1])
    assert swapped((("A", "same as", "A"),)) is None


def test_similarity_ranks_a_faithful_text_above_an_unrelated_one() -> None:
    metric = GraphTextSimilarity(device="cpu")
    items = [
        ScoringItem("Ada Lovelace was a mathematician born in London.", "en", triples=TRIPLES),
        ScoringItem("Stock prices fell sharply on Monday.", "en", triples=TRIPLES),
        ScoringItem("No graph.", "en"),
    ]
    faithful, unrelated, empty = metric.sentence_scores(items)
    assert faithful.value is not None and unrelated.value is not None
    assert faithful.value > unrelated.value + 0.2
    assert -1.0 <= unrelated.value <= faithful.value <= 1.0
    drop = faithful.details["inversion_drop"]
    assert drop == pytest.approx(faithful.value - faithful.details["inverted_similarity"], abs=1e-5)
    assert empty.value is None
    corpus = metric.corpus_from_sentences(items, [faithful, unrelated, empty])
    assert corpus is not None and corpus.details["n"] == 2
    assert metric.signature()["encoder"] == "all-MiniLM-L6-v2"


def test_an_encoder_that_is_not_here_is_refused() -> None:
    with pytest.raises(UserFacingError, match="neither a folder nor"):
        GraphTextSimilarity("no-such-org/no-such-encoder").signature()


def test_one_encoder_is_kept_at_a_time_and_forgetting_lets_it_go(tmp_path) -> None:
    """An encoder stays loaded for the next run with the same settings, but loading
    another lets it go, and ``forget_loaded_models`` lets the last one go."""
    import gc
    import weakref

    from core.metrics import forget_loaded_models
    from core.metrics.bertscore import packaged_minilm
    from core.metrics.similarity import load_encoder
    from tests.fixtures.tiny_sentence_encoder import build_tiny_sentence_encoder

    minilm = weakref.ref(load_encoder(packaged_minilm()))
    assert load_encoder(packaged_minilm()) is minilm()  # kept: loaded once
    tiny = weakref.ref(load_encoder(build_tiny_sentence_encoder(tmp_path / "tiny")))
    gc.collect()
    assert minilm() is None and tiny() is not None
    forget_loaded_models()
    gc.collect()
    assert tiny() is None


def test_similarity_signature_names_the_encoder() -> None:
    pytest.importorskip("sentence_transformers")
    signature = GraphTextSimilarity(device="cpu").signature()
    check_round_trip(signature)
    assert signature["encoder"] == "all-MiniLM-L6-v2"
