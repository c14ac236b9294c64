"""Typed signatures and details of every metric: the canonical text reads back to the
same value, a setting that changes the numbers changes the signature, stored rows carry
it, and an old session's free-form text still reads."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import select, update

from core.jobs import JobSucceeded, run_job
from core.metrics.base import (
    DETAILS,
    ESA,
    REFERENCE_BASED,
    EntityInfo,
    Metric,
    ScoringItem,
    details_from_json,
)
from core.metrics.details import (
    BleuDetails,
    EsaDetails,
    HallucinationDetails,
    MetricDetails,
    PerplexityDetails,
    Span,
)
from core.metrics.esa.hallucination import HallucinationCandidates
from core.metrics.esa.metric import EntityAdequacy
from core.metrics.meteor import Meteor
from core.metrics.perplexity import EntityPerplexity, Perplexity, ServerLogprobPerplexity
from core.metrics.reference import Bleu, ChrF, Rouge, Ter
from core.metrics.scoring import (
    ScoringRequest,
    corpus_scores,
    score_job,
    scores_of_verbalisation,
)
from core.metrics.signature import (
    LegacySignature,
    Signature,
    SignatureError,
    read_signature,
)
from core.store import SessionStore
from core.store.models import Score
from tests.fixtures.scoring_session import build_session
from tests.fixtures.signatures import check_round_trip
from tests.fixtures.tiny_wordnet import write_tiny_wordnet

ITEMS = [
    ScoringItem(
        "Ada Lovelace was a mathematician born in London in 1815.",
        "en",
        references=("Ada Lovelace, born in 1815 in London, was a mathematician.",),
        triples=(
            ("Ada Lovelace", "occupation", "mathematician"),
            ("Ada Lovelace", "born", "Paris"),
        ),
        entities=(EntityInfo("Ada Lovelace", is_root=True), EntityInfo("Paris")),
        prompt="Write about Ada Lovelace.",
    ),
    ScoringItem("Rome.", "en"),
]


# (metric made with defaults, the same metric with one setting that changes its numbers)
PAIRS: dict[str, tuple[Callable[[], Metric], Callable[[], Metric]]] = {
    "bleu": (Bleu, lambda: Bleu(tokenize="intl")),
    "chrf++": (ChrF, lambda: ChrF(word_order=0)),
    "ter": (Ter, Ter),  # TER has no setting here: only checked to round-trip
    "rouge": (Rouge, Rouge),  # its one setting, the variant, is another metric name
    "esa": (EntityAdequacy, lambda: EntityAdequacy(pronouns=False)),
    "esa-distance": (EntityAdequacy, lambda: EntityAdequacy(max_distance=0.1)),
    "esa-synonyms": (EntityAdequacy, lambda: EntityAdequacy(synonyms=[("Rome", "Roma", "")])),
    "hallucination": (HallucinationCandidates, lambda: HallucinationCandidates(max_distance=0.0)),
    "server-ppl": (
        lambda: ServerLogprobPerplexity("llama-3"),
        lambda: ServerLogprobPerplexity("qwen|2.5"),  # a "|" in a value round-trips
    ),
}


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_each_signature_round_trips_and_follows_its_settings(name: str) -> None:
    default, changed = PAIRS[name]
    first, second = default().signature(), changed().signature()
    check_round_trip(first)
    check_round_trip(second)
    assert first.metric == second.metric
    if name not in ("ter", "rouge"):
        assert first != second and str(first) != str(second)
    assert default().signature() == first  # the same settings: the same signature


def test_sacrebleu_signatures_keep_sacrebleu_settings() -> None:
    bleu = Bleu().signature()
    assert (bleu.library, bleu["tok"], bleu["smooth"], bleu["nrefs"]) == (
        "sacrebleu",
        "13a",
        "exp",
        "var",
    )
    (value,) = Bleu().sentence_scores(ITEMS[:1])
    assert value.signature is not None and value.signature["eff"] == "yes"
    assert value.signature["nrefs"] == "1"
    assert Ter().signature()["tok"] == "tercom"
    assert ChrF().signature()["nw"] == "2"
    assert Rouge("rouge1").signature()["type"] == "rouge1"
    assert Rouge("rouge1").signature() != Rouge("rouge2").signature()


def test_meteor_signature_says_whether_wordnet_was_there(tmp_path: Path) -> None:
    absent = Meteor(tmp_path / "no-wordnet-here").signature()
    found = Meteor(write_tiny_wordnet(tmp_path / "wordnet")).signature()
    for signature in (absent, found):
        check_round_trip(signature)
    assert absent["wordnet"] == "absent" and found["wordnet"] == "3.0"
    assert found["lang"] == "en" and found.library == "nltk"


def test_perplexity_signatures_name_model_fingerprint_and_context(tiny_causal_lm: Path) -> None:
    given = Perplexity(tiny_causal_lm, device="cpu").signature()
    alone = Perplexity(tiny_causal_lm, device="cpu", use_prompt=False).signature()
    entity = EntityPerplexity(tiny_causal_lm, device="cpu").signature()
    for signature in (given, alone, entity):
        check_round_trip(signature)
    assert (given["context"], alone["context"]) == ("prompt", "none")
    assert given != alone and entity.metric == "entity_ppl"
    assert given["fp"] and given["model"] == str(tiny_causal_lm)


def test_parse_refuses_what_is_not_canonical_and_legacy_text_reads_as_it_was() -> None:
    for text in ("nrefs:1|case:mixed|tok:13a|v:2.6", "ppl|given-prompt", "esa:2|match:x", ""):
        with pytest.raises(SignatureError):
            Signature.parse(text)
        legacy = read_signature(text, "bleu")
        assert isinstance(legacy, LegacySignature) and str(legacy) == text
        assert legacy.to_json() == {"metric": "bleu", "legacy": text}
    with pytest.raises(ValueError):
        Signature("bleu", "sacrebleu", "2", (("version", "3"),))  # a reserved name


def test_details_of_every_metric_round_trip_through_json() -> None:
    values = {
        "bleu": Bleu().sentence_scores(ITEMS),
        "ter": Ter().sentence_scores(ITEMS),
        "rougeL": Rouge().sentence_scores(ITEMS),
        "esa": EntityAdequacy().sentence_scores(ITEMS),
        "hallucination": HallucinationCandidates().sentence_scores(ITEMS),
        "ppl": ServerLogprobPerplexity("m").sentence_scores(
            [ScoringItem("x", "en", token_logprobs=(-1.0, -2.0)), ScoringItem("y", "en")]
        ),
    }
    for metric, found in values.items():
        for value in found:
            assert type(value.details) is DETAILS[metric]
            back = details_from_json(metric, value.details.to_json())
            assert type(back) is type(value.details)
            assert back.to_json() == value.details.to_json()
    bleu = values["bleu"][0].details
    assert isinstance(bleu, BleuDetails) and bleu.references == 1 and bleu.precisions
    assert values["bleu"][1].details.note  # no reference: a note, no value
    esa = values["esa"][0].details
    assert isinstance(esa, EsaDetails) and esa.missing == ("Paris",) and esa.entities == 2
    spans = values["hallucination"][0].details
    assert isinstance(spans, HallucinationDetails) and Span("London", 41, 47) in (spans.spans or ())
    ppl = values["ppl"][0].details
    assert isinstance(ppl, PerplexityDetails) and ppl.tokens == 2 and ppl.source


def test_details_keep_what_the_scoring_job_adds_and_read_as_a_mapping() -> None:
    stored = {"precisions": [50.0, 25.0], "bp": 1.0, "quality": "gold", "output": "empty"}
    details = details_from_json("bleu", stored)
    assert isinstance(details, BleuDetails) and details.precisions == (50.0, 25.0)
    assert details.extra == {"quality": "gold", "output": "empty"}
    assert details.to_json() == stored and dict(details) == stored
    assert details.get("quality") == "gold" and details["bp"] == 1.0
    unknown = details_from_json("a-metric-of-tomorrow", {"x": 1})
    assert type(unknown) is MetricDetails and unknown.to_json() == {"x": 1}
    corpus = EntityAdequacy().corpus_from_sentences(ITEMS, EntityAdequacy().sentence_scores(ITEMS))
    assert corpus is not None and corpus.details["esi@1"] == 1.0  # a JSON name kept as it was
    assert details_from_json(ESA, corpus.details.to_json()).to_json() == corpus.details.to_json()


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    build_session(tmp_path / "s.taillens")
    store = SessionStore.open(tmp_path / "s.taillens")
    yield store
    store.close()


def test_stored_rows_carry_the_canonical_signature_and_old_text_still_reads(
    store: SessionStore,
) -> None:
    outcome = run_job(score_job(store, ScoringRequest(metrics=("bleu", "esa"))))
    assert isinstance(outcome, JobSucceeded), outcome
    with store.unit_of_work() as db:
        stored = [(m, s) for m, s in db.execute(select(Score.metric, Score.signature))]
    assert stored and all(s for _, s in stored)
    for metric, text in stored:
        signature = Signature.parse(text)
        assert signature.metric == metric
        assert signature.library == ("sacrebleu" if metric in REFERENCE_BASED else "taillens-esa")
    corpus = corpus_scores(store)
    assert all(isinstance(c.typed_signature, Signature) for c in corpus)
    # An old session's rows, scored before signatures were typed: shown as they were.
    old = "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.4.0"
    with store.unit_of_work() as db:
        db.execute(update(Score).where(Score.metric == "bleu").values(signature=old))
    for score in corpus_scores(store):
        if score.metric == "bleu":
            assert score.signature == old
            assert score.typed_signature == LegacySignature("bleu", old)
    rows = scores_of_verbalisation(store, store_text_ids(store)[0])
    bleu = [r for r in rows if r.metric == "bleu"]
    esa = [r for r in rows if r.metric == "esa"]
    assert bleu and all(isinstance(r.typed_signature, LegacySignature) for r in bleu)
    assert esa and all(isinstance(r.typed_signature, Signature) for r in esa)
    assert all(isinstance(r.details, EsaDetails) for r in esa)
    assert all(isinstance(r.details, BleuDetails) and r.details.get("quality") for r in bleu)


def store_text_ids(store: SessionStore) -> list[int]:
    with store.unit_of_work() as db:
        return list(
            db.scalars(
                select(Score.verbalisation_id)
                .where(Score.metric == "bleu", Score.verbalisation_id.is_not(None))
                .distinct()
            )
        )
