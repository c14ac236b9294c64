"""Perplexity recomputed by hand from the tiny model's logits (log_softmax, gather)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from core.metrics.base import EntityInfo, Metric, ScoringItem
from core.metrics.perplexity import EntityPerplexity, Perplexity
from core.models import ModelError, load_model, prompt_token_ids

PROMPT = "Write about Paris.\n[Paris, country, France]"
TEXTS = ["Paris is the capital of France.", "Roma è la capitale d'Italia.",
         "Anne Hidalgo was born in San Fernando, Spain."]


@pytest.fixture(scope="module")
def metric(tiny_causal_lm: Path) -> Perplexity:
    return Perplexity(tiny_causal_lm, device="cpu", batch_size=3)


def by_hand(folder: Path, context: list[int], text: str) -> tuple[float, int]:
    """Summed NLL of ``text``'s tokens after ``context``, one sequence, no batching."""
    import torch

    loaded = load_model(folder, device="cpu")
    target = loaded.tokenizer(text, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([context + target])
    with torch.no_grad():
        logits = loaded.model(input_ids=ids).logits[0]
    log_probs = torch.log_softmax(logits.double(), dim=-1)
    nll = 0.0
    for position in range(len(context), len(context) + len(target)):
        nll -= float(log_probs[position - 1, ids[0, position]])
    return nll, len(target)


def test_is_a_metric(metric: Perplexity) -> None:
    assert isinstance(metric, Metric)
    assert metric.signature().startswith("ppl|model:")
    assert "temperature:1" in metric.signature() and "context:prompt" in metric.signature()


def test_given_its_prompt_in_the_chat_template(metric: Perplexity, tiny_causal_lm: Path) -> None:
    tokenizer = load_model(tiny_causal_lm, device="cpu").tokenizer
    context = prompt_token_ids(tokenizer, PROMPT)
    assert tokenizer.decode(context).startswith("<|user|>\n")  # as at generation
    items = [ScoringItem(text=t, lang="en", prompt=PROMPT) for t in TEXTS]
    values = metric.sentence_scores(items)
    for text, value in zip(TEXTS, values, strict=True):
        nll, n = by_hand(tiny_causal_lm, context, text)
        assert value.value == pytest.approx(math.exp(nll / n), rel=1e-5)
        assert value.details["tokens"] == n and value.details["conditioned"] is True
        assert value.details["chat_template"] is True
    # A random model over a few hundred tokens: perplexity near the vocabulary size.
    assert all(50 < v.value < 2000 for v in values)


def test_alone_after_bos(metric: Perplexity, tiny_causal_lm: Path) -> None:
    tokenizer = load_model(tiny_causal_lm, device="cpu").tokenizer
    [value] = metric.sentence_scores([ScoringItem(text=TEXTS[0], lang="en")])
    nll, n = by_hand(tiny_causal_lm, [tokenizer.bos_token_id], TEXTS[0])
    assert value.value == pytest.approx(math.exp(nll / n), rel=1e-5)
    assert value.details["conditioned"] is False


def test_batching_and_padding_change_nothing(tiny_causal_lm: Path, metric: Perplexity) -> None:
    items = [ScoringItem(text=t, lang="en", prompt=PROMPT if i % 2 else None)
             for i, t in enumerate(TEXTS)]
    one_by_one = Perplexity(tiny_causal_lm, device="cpu", batch_size=1).sentence_scores(items)
    batched = metric.sentence_scores(items)
    for a, b in zip(one_by_one, batched, strict=True):
        assert a.value == pytest.approx(b.value, rel=1e-5)


def test_corpus_pools_tokens(metric: Perplexity, tiny_causal_lm: Path) -> None:
    tokenizer = load_model(tiny_causal_lm, device="cpu").tokenizer
    context = prompt_token_ids(tokenizer, PROMPT)
    items = [ScoringItem(text=t, lang="en", prompt=PROMPT) for t in TEXTS]
    sums = [by_hand(tiny_causal_lm, context, t) for t in TEXTS]
    corpus = metric.corpus_score(items)
    total_nll, total_n = sum(s[0] for s in sums), sum(s[1] for s in sums)
    assert corpus.value == pytest.approx(math.exp(total_nll / total_n), rel=1e-5)
    assert corpus.details == {"n": 3, "tokens": total_n}


def test_empty_text_has_no_value(metric: Perplexity) -> None:
    [value] = metric.sentence_scores([ScoringItem(text="", lang="en", prompt=PROMPT)])
    assert value.value is None and value.details["tokens"] == 0
    assert metric.corpus_score([ScoringItem(text="", lang="en")]) is None


def test_entity_perplexity_scores_labels_alone(tiny_causal_lm: Path) -> None:
    tokenizer = load_model(tiny_causal_lm, device="cpu").tokenizer
    metric = EntityPerplexity(tiny_causal_lm, device="cpu")
    assert metric.name == "entity_ppl"
    entities = (EntityInfo("Paris", is_root=True), EntityInfo("Anne Hidalgo"),
                EntityInfo("1959", value_type="time"))
    item = ScoringItem(text="ignored", lang="en", entities=entities, prompt=PROMPT)
    [value] = metric.sentence_scores([item])
    expected = {}
    for label in ("Paris", "Anne Hidalgo"):  # item-valued entities only; the prompt unused
        nll, n = by_hand(tiny_causal_lm, [tokenizer.bos_token_id], label)
        expected[label] = math.exp(nll / n)
    got = {e["label"]: e["ppl"] for e in value.details["entities"]}
    assert got == pytest.approx(expected, rel=1e-5)
    assert value.value == pytest.approx(sum(expected.values()) / 2, rel=1e-5)
    # No entities: the text is the label.
    [alone] = metric.sentence_scores([ScoringItem(text="Paris", lang="en")])
    assert alone.value == pytest.approx(expected["Paris"], rel=1e-5)


def test_wrong_or_missing_model_fails_before_scoring(tiny_seq2seq: Path, tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="not a causal LM"):
        Perplexity(tiny_seq2seq)
    with pytest.raises(ModelError, match="no model folder"):
        Perplexity(tmp_path / "absent")
