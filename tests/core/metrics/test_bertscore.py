"""BERTScore with the packaged all-MiniLM-L6-v2 (a real model, offline) and the rescaling."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import UserFacingError
from core.metrics.base import ScoringItem
from core.metrics.bertscore import (
    BertScore,
    baseline_file,
    read_baseline,
    rescale,
    resolve_model,
)
from tests.fixtures.signatures import check_round_trip

# Loads models, sentence-transformers or bert-score among them: in a parallel run its tests
# go to workers kept for them, and start on one that has not loaded torch yet
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models("encoders")


@pytest.fixture(scope="module")
def minilm() -> BertScore:
    return BertScore(None, device="cpu")


def test_rescaling_hand_worked() -> None:
    assert rescale(0.8, 0.6) == pytest.approx(0.5)  # (0.8 - 0.6) / (1 - 0.6)
    assert rescale(0.6, 0.6) == 0.0 and rescale(1.0, 0.6) == 1.0


def test_baseline_files_of_bert_score_are_read_per_layer() -> None:
    path = baseline_file("it", "bert-base-multilingual-cased")
    assert path is not None
    # bert_score's own table: row LAYER=9 of it/bert-base-multilingual-cased.tsv
    lines = path.read_text().splitlines()
    row = next(line for line in lines[1:] if line.split(",")[0] == "9")
    assert read_baseline(path, 9) == pytest.approx(float(row.split(",")[3]))
    assert baseline_file("it", "all-MiniLM-L6-v2") is None


def test_default_is_the_packaged_minilm_not_rescaled_without_mbert(minilm: BertScore) -> None:
    if minilm.resolved.name != "all-MiniLM-L6-v2":
        pytest.skip("bert-base-multilingual-cased is in the local cache here")
    items = [
        ScoringItem("The cat sat on the mat.", "en", references=("The cat sat on the mat.",)),
        ScoringItem(
            "The cat sat on the mat.", "en", references=("Stock prices fell sharply on Monday.",)
        ),
        ScoringItem("A text.", "en"),
    ]
    same, unrelated, none = minilm.sentence_scores(items)
    assert same.value == pytest.approx(1.0, abs=1e-4)
    assert unrelated.value is not None and unrelated.value < same.value - 0.3
    assert none.value is None and "no reference" in none.details["note"]
    assert same.details["rescaled"] is False and same.details["model"] == "all-MiniLM-L6-v2"
    assert same.signature is not None and same.signature["rescaled"] == "no"
    assert same.signature["model"] == "all-MiniLM-L6-v2"
    corpus = minilm.corpus_from_sentences(items, [same, unrelated, none])
    assert corpus is not None and corpus.value == pytest.approx((same.value + unrelated.value) / 2)
    assert corpus.details["rescaled"] is False and corpus.details["n"] == 2


def test_best_reference_counts(minilm: BertScore) -> None:
    multi = ScoringItem(
        "The cat sat on the mat.",
        "en",
        references=("Stock prices fell sharply on Monday.", "The cat sat on the mat."),
    )
    assert minilm.sentence_scores([multi])[0].value == pytest.approx(1.0, abs=1e-4)


def test_a_named_model_that_is_not_here_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserFacingError, match="nor in the local Hugging Face cache"):
        resolve_model("no-such-org/no-such-model")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserFacingError, match="no config.json"):
        resolve_model(tmp_path / "empty")


def test_one_scorer_is_kept_at_a_time_and_forgetting_lets_it_go() -> None:
    """As for the similarity's encoder: the scorer last built is kept, another lets it
    go, and ``forget_loaded_models`` lets the last one go."""
    import gc
    import weakref

    from core.metrics import forget_loaded_models

    layer_2, layer_3 = (
        BertScore(None, layer=2, device="cpu"),
        BertScore(None, layer=3, device="cpu"),
    )
    first = weakref.ref(layer_2._scorer())
    assert layer_2._scorer() is first()
    second = weakref.ref(layer_3._scorer())
    gc.collect()
    assert first() is None and second() is not None
    forget_loaded_models()
    gc.collect()
    assert second() is None


def test_an_empty_output_gets_bertscores_rule_of_zero_raw_scores() -> None:
    metric = BertScore(device="cpu")
    empty, text = metric.sentence_scores(
        [
            ScoringItem("", "en", ("Rome is the capital of Italy.",)),
            ScoringItem("Rome is the capital of Italy.", "en", ("Rome is the capital of Italy.",)),
        ]
    )
    assert empty.details["empty_text"] and empty.details["f1_raw"] == 0.0
    baseline = empty.details.get("baseline_f")
    assert empty.value == (rescale(0.0, baseline) if baseline is not None else 0.0)
    assert text.value > empty.value and not text.details.get("empty_text")


def test_bertscore_signature_names_model_layer_and_rescaling() -> None:
    pytest.importorskip("bert_score")
    plain = BertScore(None, layer=6, device="cpu")
    check_round_trip(plain.signature())
    check_round_trip(plain.signature_for("en"))
    other_layer = BertScore(None, layer=5, device="cpu").signature()
    assert plain.signature()["layer"] == "6" and other_layer["layer"] == "5"
    assert plain.signature() != other_layer
    assert plain.signature()["idf"] == "no" and plain.signature()["rescaled"] == "no"
    assert plain.signature()["model"] == plain.resolved.name
