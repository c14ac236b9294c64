"""Model likelihood of entities (LINK, METHODS §3): scoring, the job, the model_tail
sub-tier and the disagreement list, on a tiny random Llama and a real session file."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select

from core.errors import UserFacingError
from core.jobs import CancelToken, JobSucceeded, JobWasCancelled, run_job
from core.local_models.loader import load_model
from core.store import SessionStore
from core.store.models import CategoryMember, Entity, EntityLikelihood
from core.tiers.likelihood import (
    HEAD_BY_COUNTS,
    MODEL_HEAD,
    MODEL_TAIL,
    TAIL_BY_COUNTS,
    LikelihoodRequest,
    likelihood_job,
    load_targets,
    model_key,
    sequence_loglik,
    text_logliks,
)
from core.tiers.model_tail import (
    CutoffSettings,
    disagreements,
    load_cutoff,
    load_likelihood_table,
    matched_cutoff,
    rank_correlation,
    save_model_tail,
)
from tests.fixtures.likelihood_session import CITIES, seed_city_session

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models


@pytest.fixture
def session(tmp_path: Path) -> Path:
    return seed_city_session(tmp_path / "cities.taillens", empty_category=True)


@pytest.fixture(scope="module")
def loaded(tiny_causal_lm: Path):
    return load_model(tiny_causal_lm, device="cpu")


def _rows(path: Path) -> list[EntityLikelihood]:
    with SessionStore.open(path) as store, store.unit_of_work() as db:
        rows = list(db.scalars(select(EntityLikelihood).order_by(EntityLikelihood.entity_id)))
        db.expunge_all()
    return rows


def _by_hand(loaded, text: str) -> float:
    """Mean log p(token | prefix) from the logits of one unpadded forward pass."""
    import torch

    ids = [
        loaded.tokenizer.bos_token_id,
        *loaded.tokenizer(text, add_special_tokens=False)["input_ids"],
    ]
    with torch.inference_mode():
        logits = loaded.model(input_ids=torch.tensor([ids])).logits[0]
    log_probs = torch.log_softmax(logits.double(), dim=-1)
    return sum(float(log_probs[i, ids[i + 1]]) for i in range(len(ids) - 1)) / (len(ids) - 1)


def test_mean_loglik_matches_a_hand_computation_from_logits(loaded) -> None:
    texts = ["Paris is a city in France.", "Rome", "La verbalizzazione finale è: [Roma]", ""]
    # Batched (right-padded with texts of other lengths) and one at a time agree with the
    # computation by hand.
    batched = sequence_loglik(loaded.model, loaded.tokenizer, texts, batch=4)
    for text, value in zip(texts[:3], batched[:3], strict=True):
        assert value == pytest.approx(_by_hand(loaded, text), abs=1e-5)
        assert sequence_loglik(loaded.model, loaded.tokenizer, [text], 1)[0] == pytest.approx(
            value, abs=1e-5
        )
    assert batched[3] is None  # nothing to score
    counts = text_logliks(loaded.model, loaded.tokenizer, texts[:2])
    assert counts[1].tokens == len(loaded.tokenizer("Rome", add_special_tokens=False)["input_ids"])


def test_targets_build_statements_from_the_sessions_claims(session: Path) -> None:
    with SessionStore.open(session) as store:
        en = load_targets(store, "City", "en")
        it = load_targets(store, "City", "it")
    by_qid = {t.qid: t for t in en.targets}
    assert by_qid["Q1001"].statement == "Paris is a city in France."
    assert by_qid["Q1006"].statement == "Cádiz is a city."  # no place claim
    assert {t.qid: t.statement for t in it.targets}["Q1002"] == "Roma è un città in Italia."
    assert en.without_label == []
    assert sorted(it.without_label) == sorted(c[0] for c in CITIES if c[2] is None)


def test_job_scores_every_member_and_a_second_run_skips_them(
    session, tiny_causal_lm, loaded
) -> None:
    with SessionStore.open(session) as store:
        outcome = run_job(
            likelihood_job(
                store, LikelihoodRequest("City", tiny_causal_lm, "en", batch=4, device="cpu")
            )
        )
        assert isinstance(outcome, JobSucceeded)
        assert (outcome.result.scored, outcome.result.skipped) == (len(CITIES), 0)
        again = run_job(
            likelihood_job(
                store,
                LikelihoodRequest("City", tiny_causal_lm, "en", device="cpu"),
                loader=_never_load,
            )
        )
        assert isinstance(again, JobSucceeded)
        assert (again.result.scored, again.result.skipped) == (0, len(CITIES))
    rows = _rows(session)
    assert len(rows) == len(CITIES)
    paris = next(r for r in rows if r.label == "Paris")
    assert paris.model == model_key(tiny_causal_lm) and paris.lang == "en"
    assert paris.statement == "Paris is a city in France."
    assert paris.label_loglik == pytest.approx(_by_hand(loaded, "Paris"), abs=1e-5)
    assert paris.statement_loglik == pytest.approx(_by_hand(loaded, paris.statement), abs=1e-5)


def _never_load(*_args, **_kwargs):
    raise AssertionError("the model was loaded although every entity was scored")


class _CancelAfter(CancelToken):
    """Cancelled from the n-th check on: the job stops at a batch boundary."""

    def __init__(self, checks: int) -> None:
        super().__init__()
        self.checks = checks

    @property
    def cancelled(self) -> bool:
        self.checks -= 1
        return self.checks < 0


def test_cancel_keeps_finished_batches_and_resume_scores_the_rest(session, tiny_causal_lm) -> None:
    with SessionStore.open(session) as store:
        outcome = run_job(
            likelihood_job(
                store, LikelihoodRequest("City", tiny_causal_lm, "en", batch=3, device="cpu")
            ),
            _CancelAfter(1),
        )
        assert isinstance(outcome, JobWasCancelled)
        assert outcome.partial.scored == 3
        assert len(_rows(session)) == 3
        first = {r.entity_id: r.label_loglik for r in _rows(session)}
        resumed = run_job(
            likelihood_job(
                store, LikelihoodRequest("City", tiny_causal_lm, "en", batch=3, device="cpu")
            )
        )
        assert isinstance(resumed, JobSucceeded)
        assert (resumed.result.scored, resumed.result.skipped) == (len(CITIES) - 3, 3)
    rows = _rows(session)
    assert len(rows) == len(CITIES)
    assert {r.entity_id: r.label_loglik for r in rows if r.entity_id in first} == first


def test_a_selection_scores_only_those_members(session, tiny_causal_lm) -> None:
    with SessionStore.open(session) as store:
        outcome = run_job(
            likelihood_job(
                store,
                LikelihoodRequest(
                    "City", tiny_causal_lm, "it", qids=["Q1002", "Q1004"], device="cpu"
                ),
            )
        )
    assert isinstance(outcome, JobSucceeded)
    assert outcome.result.scored == 1 and outcome.result.without_label == 1  # Q1004: no it
    assert [r.label for r in _rows(session)] == ["Roma"]


@pytest.mark.parametrize(
    "case",
    ["not a model", "no members", "no labels", "unknown lang", "unknown category", "seq2seq"],
)
def test_bad_input_is_refused_before_anything_is_stored(
    case, session, tiny_causal_lm, tiny_seq2seq, tmp_path
) -> None:
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"architectures": ["BertModel"]}))
    request = {
        "not a model": LikelihoodRequest("City", folder),
        "seq2seq": LikelihoodRequest("City", tiny_seq2seq),
        "no members": LikelihoodRequest("Town", tiny_causal_lm),
        "no labels": LikelihoodRequest("City", tiny_causal_lm, "es"),
        "unknown lang": LikelihoodRequest("City", tiny_causal_lm, "fr"),
        "unknown category": LikelihoodRequest("Nowhere", tiny_causal_lm),
    }[case]
    words = {
        "not a model": "not a text generation model",
        "seq2seq": "not a causal LM",
        "no members": "no members",
        "no labels": "no member of 'City' has a label in 'es'",
        "unknown lang": "unknown language",
        "unknown category": "no category 'Nowhere'",
    }
    with SessionStore.open(session) as store, pytest.raises(UserFacingError, match=words[case]):
        likelihood_job(store, request)
    assert _rows(session) == []


def _scored_table(session: Path, tiny_causal_lm: Path):
    with SessionStore.open(session) as store:
        assert isinstance(
            run_job(
                likelihood_job(store, LikelihoodRequest("City", tiny_causal_lm, "en", device="cpu"))
            ),
            JobSucceeded,
        )
        return load_likelihood_table(store, "City", model_key(tiny_causal_lm), "en")


def test_cutoff_defines_the_model_tail_sub_tier(session, tiny_causal_lm) -> None:
    table = _scored_table(session, tiny_causal_lm)
    values = table.values("label")
    cutoff = float(np.sort(values)[4])  # an entity exactly at the cut-off is head (ties)
    settings = CutoffSettings(table.model, "en", "label", cutoff)
    with SessionStore.open(session) as store:
        counts = save_model_tail(store, "City", settings)
        assert load_cutoff(store, "City") == settings
        with store.unit_of_work() as db:
            stored = dict(
                db.execute(
                    select(Entity.qid, CategoryMember.model_tier).join(
                        CategoryMember, CategoryMember.entity_id == Entity.id
                    )
                ).all()
            )
    expected = {
        q: MODEL_TAIL if v < cutoff else MODEL_HEAD for q, v in zip(table.qids, values, strict=True)
    }
    assert stored == expected
    assert counts == {MODEL_TAIL: 4, MODEL_HEAD: len(CITIES) - 4, "unscored": 0}
    at_cutoff = table.qids[int(np.flatnonzero(values == cutoff)[0])]
    assert stored[at_cutoff] == MODEL_HEAD

    # A recorded edit: undone, the category has no cut-off and no model tier again.
    from core.edits import history, redo_edit, undo_edit

    with SessionStore.open(session) as store:
        (entry,) = history(store, kinds=["model tail"])
        undo_edit(store, entry.id)
        assert load_cutoff(store, "City") is None
        with store.snapshot() as db:
            assert set(db.execute(select(CategoryMember.model_tier)).scalars()) == {None}
        redo_edit(store, entry.id)
        assert load_cutoff(store, "City") == settings


def test_save_model_tail_refuses_an_unscored_model(session) -> None:
    with SessionStore.open(session) as store:
        with pytest.raises(UserFacingError, match="run taillens likelihood first"):
            save_model_tail(store, "City", CutoffSettings("/no/such/model", "en", "label", -3))
        assert load_cutoff(store, "City") is None


def test_disagreements_list_head_by_counts_tail_by_model_and_the_reverse(
    session, tiny_causal_lm
) -> None:
    table = _scored_table(session, tiny_causal_lm)
    values = table.values("label")
    # Wikidata tiers under the default settings: a Pareto head, the rest long tail.
    assert set(table.tiers) == {"head", "long_tail"}
    cutoff = matched_cutoff(table)
    assert sum(v < cutoff for v in values) == table.tiers.count("long_tail")
    found = disagreements(table, cutoff)
    expected = {
        (q, HEAD_BY_COUNTS)
        for q, t, v in zip(table.qids, table.tiers, values, strict=True)
        if t == "head" and v < cutoff
    }
    expected |= {
        (q, TAIL_BY_COUNTS)
        for q, t, v in zip(table.qids, table.tiers, values, strict=True)
        if t == "long_tail" and v >= cutoff
    }
    assert {(d.qid, d.kind) for d in found} == expected
    # Equal tail sizes: every head entity pushed into the model's tail swaps with one tail
    # entity pulled into the model's head.
    kinds = [d.kind for d in found]
    assert kinds.count(HEAD_BY_COUNTS) == kinds.count(TAIL_BY_COUNTS)
    assert kinds == sorted(kinds, key=lambda k: k != HEAD_BY_COUNTS)


def test_rank_correlation_is_spearmans_rho_with_average_ranks() -> None:
    likelihood = np.array([-3.0, -2.0, -2.0, np.nan, -5.0, -1.0])
    counts = np.array([10, 30, 20, 99, 10, 5])

    def ranks(values):
        order = np.argsort(values, kind="stable")
        out = np.empty(len(values))
        for value in np.unique(values):
            where = np.flatnonzero(values == value)
            out[where] = np.mean([np.flatnonzero(order == i)[0] + 1 for i in where])
        return out

    keep = np.isfinite(likelihood)
    expected = np.corrcoef(ranks(likelihood[keep]), ranks(counts[keep].astype(float)))[0, 1]
    result = rank_correlation(likelihood, counts, "statements")
    assert result.n == 5 and math.isclose(result.rho, expected, abs_tol=1e-12)
    assert rank_correlation(np.array([1.0, 1.0, 1.0]), np.array([1, 2, 3]), "x").rho is None


def test_the_view_shows_the_wanted_pair_else_the_saved_cutoffs_else_the_first(
    session, tiny_causal_lm
) -> None:
    from core.tiers.model_tail import load_likelihood_view, scored_models

    with SessionStore.open(session) as store:
        assert load_likelihood_view(store, "City") is None  # nothing scored yet
        for lang in ("en", "it"):
            request = LikelihoodRequest("City", tiny_causal_lm, lang, device="cpu")
            assert isinstance(run_job(likelihood_job(store, request)), JobSucceeded)
        model = model_key(tiny_causal_lm)
        pairs = [(m, lang) for m, lang, _n in scored_models(store, "City")]
        assert sorted(pairs) == [(model, "en"), (model, "it")]
        first = load_likelihood_view(store, "City")
        assert first is not None and (first.table.model, first.table.lang) == pairs[0]
        assert first.saved is None
        other = next(p for p in pairs if p != pairs[0])
        save_model_tail(store, "City", CutoffSettings(model, other[1], "label", -3.0))
        saved = load_likelihood_view(store, "City", ("/not/scored", "en"))
        assert saved is not None and (saved.table.model, saved.table.lang) == other
        wanted = load_likelihood_view(store, "City", pairs[0])
        assert wanted is not None and (wanted.table.model, wanted.table.lang) == pairs[0]
        assert wanted.saved == load_cutoff(store, "City")
