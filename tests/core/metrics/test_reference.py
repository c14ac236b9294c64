"""BLEU and chrF++ against sacrebleu called directly; ROUGE on hand-worked cases."""

from __future__ import annotations

import pytest
import sacrebleu

from core.metrics import create_metric
from core.metrics.base import BLEU, CHRF, ROUGE1, ROUGE2, ROUGEL, ScoringItem
from core.metrics.reference import Bleu, ChrF, Rouge

HYPS = ["The cat sat on the mat.", "Rome is the capital of Italy.", "Il gatto è nero."]
REFS = [
    ("The cat is sitting on the mat.", "A cat sat on the mat."),
    ("Rome is Italy's capital.",),
    ("Il gatto era nero.", "Un gatto nero."),
]


def items() -> list[ScoringItem]:
    return [ScoringItem(h, "en", references=r) for h, r in zip(HYPS, REFS, strict=True)]


def streams() -> list[list[str | None]]:
    return [[r[0] for r in REFS], [r[1] if len(r) > 1 else None for r in REFS]]


def test_corpus_bleu_and_chrf_equal_sacrebleu_with_variable_references() -> None:
    bleu = Bleu().corpus_score(items())
    assert bleu is not None and bleu.value == pytest.approx(
        sacrebleu.corpus_bleu(HYPS, streams()).score
    )
    chrf = ChrF().corpus_score(items())
    assert chrf is not None and chrf.value == pytest.approx(
        sacrebleu.corpus_chrf(HYPS, streams(), word_order=2).score
    )
    assert bleu.signature is not None and chrf.signature is not None
    assert bleu.signature["nrefs"] == "var" and bleu.signature.version.startswith("2.")
    assert bleu.signature.library == "sacrebleu" and bleu.signature.metric == "bleu"
    assert chrf.signature["nw"] == "2"  # chrF++ = word order 2, said in the signature
    assert chrf.details["n"] == 3


def test_sentence_scores_equal_sacrebleu_and_missing_references_are_absent() -> None:
    scored = items() + [ScoringItem("no reference here", "en")]
    bleu = Bleu().sentence_scores(scored)
    for value, hyp, refs in zip(bleu, HYPS, REFS, strict=False):
        assert value.value == pytest.approx(sacrebleu.sentence_bleu(hyp, list(refs)).score)
        assert value.signature is not None and value.signature["eff"] == "yes"
    chrf = ChrF().sentence_scores(scored)
    for value, hyp, refs in zip(chrf, HYPS, REFS, strict=False):
        assert value.value == pytest.approx(
            sacrebleu.sentence_chrf(hyp, list(refs), word_order=2).score
        )
    assert bleu[-1].value is None and chrf[-1].value is None  # absent, not 0
    assert "no reference" in bleu[-1].details["note"]
    assert Bleu().corpus_score([ScoringItem("x", "en")]).value is None  # type: ignore[union-attr]


def test_signature_before_any_score() -> None:
    assert str(Bleu().signature()).startswith("metric:bleu|nrefs:var|case:mixed|eff:no|tok:13a")


def test_rouge_hand_worked_with_accented_words() -> None:
    # Tokens: [la, città, è, bella] against [la, città, era, bella].
    item = ScoringItem("La città è bella", "it", references=("la città era bella",))
    assert Rouge(ROUGE1).sentence_scores([item])[0].value == pytest.approx(75.0)
    assert Rouge(ROUGE2).sentence_scores([item])[0].value == pytest.approx(100 / 3)
    assert Rouge(ROUGEL).sentence_scores([item])[0].value == pytest.approx(75.0)
    # rouge-score's own tokenizer turns both "città" and "citta" into "citt"; ours does not.
    accent = ScoringItem("città", "it", references=("citta",))
    assert Rouge(ROUGE1).sentence_scores([accent])[0].value == 0.0
    assert Rouge(ROUGE1).signature()["tok"] == "unicode-lower"


def test_rouge_takes_the_best_reference_and_corpus_is_the_mean() -> None:
    best = ScoringItem(
        "La città è bella", "it", references=("niente a che vedere", "la città era bella")
    )
    other = ScoringItem("a b", "it", references=("a b",))
    metric = Rouge(ROUGE1)
    values = metric.sentence_scores([best, other])
    assert [v.value for v in values] == pytest.approx([75.0, 100.0])
    corpus = metric.corpus_score([best, other])
    assert corpus is not None and corpus.value == pytest.approx(87.5)


def test_registry_builds_reference_metrics() -> None:
    assert create_metric(BLEU).name == BLEU
    assert create_metric(CHRF).name == CHRF
    assert create_metric(ROUGEL).name == ROUGEL
