"""Perplexity recomputed by hand from the tiny model's logits (log_softmax, gather).

The metric's own tests hand it a text and a prompt. The last tests run the real
verbalise job and the real scoring job, and recompute the stored value from what the
session holds: the raw reply (what the model generated), after the prompt stored at
generation in the model's chat template (METHODS §7).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select, update

from core.jobs import JobSucceeded, run_job
from core.local_models.loader import ModelError, load_model, prompt_token_ids
from core.metrics.base import EntityInfo, Metric, ScoringItem
from core.metrics.perplexity import EntityPerplexity, Perplexity
from core.metrics.scoring import ScoringRequest, ScoringSummary, score_job
from core.store import SessionStore
from core.store.models import DataUnit, Score, UnitTriple, Verbalisation
from core.verbalise.base import GenerationParams
from core.verbalise.job import verbalise_job
from core.verbalise.local import CausalVerbaliser

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models

PROMPT = "Write about Paris.\n[Paris, country, France]"
TEXTS = [
    "Paris is the capital of France.",
    "Roma è la capitale d'Italia.",
    "Anne Hidalgo was born in San Fernando, Spain.",
]


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
    assert str(metric.signature()).startswith("metric:ppl|model:")
    assert metric.signature()["temperature"] == "1" and metric.signature()["context"] == "prompt"


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
    items = [
        ScoringItem(text=t, lang="en", prompt=PROMPT if i % 2 else None)
        for i, t in enumerate(TEXTS)
    ]
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
    entities = (
        EntityInfo("Paris", is_root=True),
        EntityInfo("Anne Hidalgo"),
        EntityInfo("1959", value_type="time"),
    )
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
    # A DBpedia identifier is scored as the words it stands for.
    [webnlg] = metric.sentence_scores(
        [ScoringItem(text="", lang="en", entities=(EntityInfo("Anne_Hidalgo", is_root=True),))]
    )
    assert webnlg.details["entities"][0]["label"] == "Anne Hidalgo"
    assert webnlg.value == pytest.approx(expected["Anne Hidalgo"], rel=1e-5)


def test_wrong_or_missing_model_fails_before_scoring(tiny_seq2seq: Path, tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="not a causal LM"):
        Perplexity(tiny_seq2seq)
    with pytest.raises(ModelError, match="no model folder"):
        Perplexity(tmp_path / "absent")


# --- the verbalise job, then the scoring job --------------------------------------------

TRIPLES = [("Paris", "country", "France"), ("Anne Hidalgo", "mayor of", "Paris")]


@pytest.fixture
def verbalised(tmp_path: Path, tiny_causal_lm: Path) -> Iterator[tuple[SessionStore, int]]:
    """A session with two one-triple units verbalised in English by the tiny model (two
    candidates each); yields the store and the run id."""
    store = SessionStore.create(tmp_path / "ppl.taillens")
    with store.unit_of_work() as db:
        for i, (subject, predicate, obj) in enumerate(TRIPLES):
            unit = DataUnit(uid=f"u{i}", size=1, origin="built", tier="head")
            unit.triples = [
                UnitTriple(lang="en", position=0, subject=subject, predicate=predicate, object=obj)
            ]
            db.add(unit)
    verbaliser = CausalVerbaliser(
        tiny_causal_lm, GenerationParams(candidates=2, max_new_tokens=12, seed=5), device="cpu"
    )
    outcome = run_job(verbalise_job(store, verbaliser, "all", ["en"], batch_size=2))
    assert isinstance(outcome, JobSucceeded), getattr(outcome, "traceback", outcome)
    try:
        yield store, outcome.result.run_id
    finally:
        store.close()


def score_ppl(store: SessionStore) -> tuple[dict[int, Score], ScoringSummary]:
    outcome = run_job(score_job(store, ScoringRequest(metrics=("ppl",))))
    assert isinstance(outcome, JobSucceeded), getattr(outcome, "traceback", outcome)
    with store.unit_of_work() as db:
        rows = {
            r.verbalisation_id: r
            for r in db.scalars(
                select(Score).where(Score.metric == "ppl", Score.level == "sentence")
            )
        }
        db.expunge_all()
    return rows, outcome.result


def outputs(store: SessionStore) -> list[Verbalisation]:
    with store.unit_of_work() as db:
        rows = list(db.scalars(select(Verbalisation).order_by(Verbalisation.id)))
        db.expunge_all()
    return rows


def test_scoring_job_gives_the_ppl_of_the_raw_reply_after_the_stored_prompt(
    verbalised: tuple[SessionStore, int], tiny_causal_lm: Path
) -> None:
    store, _run_id = verbalised
    made = outputs(store)
    assert len(made) == 4
    # A parsed answer is a part of the reply, not what was generated: give one output a
    # parsed text (the random model never writes the marker) that the model never wrote.
    with store.unit_of_work() as db:
        db.execute(
            update(Verbalisation)
            .where(Verbalisation.id == made[0].id)
            .values(text="Paris is in France.", parse_ok=True)
        )
    rows, _ = score_ppl(store)

    loaded = load_model(tiny_causal_lm, device="cpu")
    tokenizer = loaded.tokenizer
    verbaliser = CausalVerbaliser(tiny_causal_lm, device="cpu")
    checked = 0
    for v in outputs(store):
        unit_index = int(v.unit_id) - 1
        # The prompt stored is the user message prompt_for() rendered for the unit.
        assert v.prompt == verbaliser.prompt_for([TRIPLES[unit_index]], "en")
        if not v.raw_output.strip():
            assert v.id not in rows  # nothing generated but special tokens: no value
            continue
        context = prompt_token_ids(tokenizer, v.prompt)
        assert tokenizer.decode(context).startswith("<|user|>\n")  # the chat template
        nll, n = by_hand(tiny_causal_lm, context, v.raw_output)
        row = rows[v.id]
        assert row.value == pytest.approx(math.exp(nll / n), rel=1e-5)
        assert row.details["tokens"] == n
        assert (row.details["prompt"], row.details["scored"]) == ("stored", "raw reply")
        assert row.details["parse_ok"] is (v.id == made[0].id)
        checked += 1
    assert checked >= 3
    # The parsed text alone would have given another value.
    nll, n = by_hand(
        tiny_causal_lm, prompt_token_ids(tokenizer, made[0].prompt), "Paris is in France."
    )
    assert rows[made[0].id].value != pytest.approx(math.exp(nll / n), rel=1e-3)


def test_an_override_edited_after_the_run_does_not_change_the_ppl(
    verbalised: tuple[SessionStore, int],
) -> None:
    store, _run_id = verbalised
    before, _ = score_ppl(store)
    assert before
    with store.unit_of_work() as db:
        db.execute(
            update(UnitTriple).where(UnitTriple.unit_id == 1).values(subject_override="Lutetia")
        )
    after, summary = score_ppl(store)
    assert {k: r.value for k, r in after.items()} == pytest.approx(
        {k: r.value for k, r in before.items()}, rel=1e-6
    )
    assert not any("rebuilt" in note for note in summary.notes)

    # Outputs from before prompts were stored: the prompt is rebuilt from today's triples
    # (so the edited unit's context changes), and the rows and notes say so.
    with store.unit_of_work() as db:
        db.execute(update(Verbalisation).values(prompt=None))
    rebuilt, summary = score_ppl(store)
    assert any("rebuilt from the run's template" in note for note in summary.notes)
    assert all(r.details["prompt"] == "rebuilt" for r in rebuilt.values())
    unit_of = {v.id: v.unit_id for v in outputs(store)}
    for vid, row in rebuilt.items():
        if unit_of[vid] == 1:
            # The tiny random model barely reacts to one changed label: "changed" means
            # beyond the tolerance that "unchanged" allows below.
            assert row.value != pytest.approx(before[vid].value, rel=1e-6)
        else:  # unedited: the rebuilt prompt is the one the model saw
            assert row.value == pytest.approx(before[vid].value, rel=1e-6)
