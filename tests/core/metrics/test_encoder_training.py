"""EREDAT-style training of a sentence encoder for graph ↔ text retrieval: hard and inverted
negatives, the loss, cancelling and saving, and what periodic evaluation may not change."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from core.errors import UserFacingError
from core.jobs import CancelToken, JobCancelled, JobContext
from core.metrics.encoder_training import (
    RECORD,
    TrainingSettings,
    hard_negative,
    inverted_negative,
    role_pools,
    train,
    training_job,
)
from core.metrics.retrieval.encoders import open_encoder
from core.metrics.retrieval.pairs import load_pairs
from core.metrics.retrieval.ranking import evaluate
from core.store import SessionStore

# Loads models, sentence-transformers or bert-score among them: in a parallel run its tests
# go to workers kept for them, and start on one that has not loaded torch yet
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models("encoders")


def test_negatives_change_exactly_what_they_should() -> None:
    graphs = [
        (("Rome", "country", "Italy"), ("Italy", "capital", "Rome")),
        (("Paris", "country", "France"),),
    ]
    pools = role_pools(graphs)
    rng = random.Random(3)
    for _ in range(30):
        negative = hard_negative(graphs[0], pools, rng)
        assert negative is not None and negative != graphs[0]
        changed = [(i, r) for i in range(2) for r in range(3) if negative[i][r] != graphs[0][i][r]]
        assert len(changed) == 1
        index, role = changed[0]
        assert negative[index][role] in pools[role]
        inverted = inverted_negative(graphs[0], rng)
        assert inverted is not None and sorted(inverted) != sorted(graphs[0])
        assert any(
            inverted[i] == (graphs[0][i][2], graphs[0][i][1], graphs[0][i][0]) for i in range(2)
        )
    assert inverted_negative((("A", "p", "A"),), rng) is None


def _pairs(scoring_store: SessionStore) -> list:
    return load_pairs(scoring_store)


def test_training_lowers_the_loss_and_writes_a_complete_usable_folder(
    scoring_store: SessionStore, tiny_encoder: Path, tmp_path: Path
) -> None:
    out = tmp_path / "trained"
    settings = TrainingSettings(epochs=12, batch_size=4, learning_rate=5e-3, warmup_share=0)
    result = train(_pairs(scoring_store), str(tiny_encoder), out, settings)
    assert result.steps == 12 and len(result.losses) == 12
    assert sum(result.losses[-3:]) / 3 < sum(result.losses[:3]) / 3
    record = json.loads((out / RECORD).read_text())
    assert record["settings"]["batch_size"] == 4 and record["data"]["pairs"] == len(
        _pairs(scoring_store)
    )
    assert record["losses"] == result.losses
    assert [p.name for p in tmp_path.iterdir() if ".partial-" in p.name] == []
    trained = open_encoder(str(out))
    assert trained.fingerprint != open_encoder(str(tiny_encoder)).fingerprint
    assert evaluate(load_pairs(scoring_store), trained, scoring_store).pairs == len(
        _pairs(scoring_store)
    )
    with pytest.raises(UserFacingError, match="already exists"):
        train(_pairs(scoring_store), str(tiny_encoder), out, settings)


def test_cancelled_training_leaves_no_folder(
    scoring_store: SessionStore, tiny_encoder: Path, tmp_path: Path
) -> None:
    token = CancelToken()

    def on_progress(progress: object) -> None:
        if progress.done >= 2:
            token.cancel()

    models = tmp_path / "models"
    models.mkdir()
    with pytest.raises(JobCancelled):
        train(
            _pairs(scoring_store),
            str(tiny_encoder),
            models / "cancelled",
            TrainingSettings(epochs=5, batch_size=4),
            JobContext(token, on_progress, 0),
        )
    assert list(models.iterdir()) == []


def test_a_save_interrupted_halfway_leaves_no_folder(
    scoring_store: SessionStore, tiny_encoder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sentence_transformers import SentenceTransformer

    def half_save(self: object, path: str, *args: object, **kwargs: object) -> None:
        (Path(path) / "config.json").write_text("{}")
        raise JobCancelled()

    monkeypatch.setattr(SentenceTransformer, "save", half_save)
    models = tmp_path / "models"
    models.mkdir()
    with pytest.raises(JobCancelled):
        train(
            _pairs(scoring_store),
            str(tiny_encoder),
            models / "m",
            TrainingSettings(max_steps=1, batch_size=4),
        )
    assert list(models.iterdir()) == []


def test_training_refuses_bad_settings_and_bad_models(
    scoring_store: SessionStore, tmp_path: Path
) -> None:
    with pytest.raises(UserFacingError, match="batch-size"):
        training_job(scoring_store, tmp_path / "m", settings=TrainingSettings(batch_size=1))
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "config.json").write_text("{}")
    with pytest.raises(UserFacingError, match="cannot load"):
        train(_pairs(scoring_store), str(tmp_path / "junk"), tmp_path / "m", TrainingSettings())
    assert not (tmp_path / "m").exists()


def _loaded(tiny_encoder: Path) -> object:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(tiny_encoder), device="cpu")


def test_bucketed_embedding_equals_one_padded_pass(tiny_encoder: Path) -> None:
    import torch

    from core.metrics.encoder_training import embed_bucketed

    model = _loaded(tiny_encoder)
    model.eval()
    strings = [
        "a",
        "[S] Rome [P] country [O] Italy [S] Italy [P] capital [O] Rome",
        "Rome is in Italy.",
        "x y z " * 9,
        "[S] Paris [P] country [O] France",
    ]
    with torch.no_grad():
        whole = torch.nn.functional.normalize(
            model(dict(model.preprocess(strings)))["sentence_embedding"], dim=-1
        )
        for size in (1, 2, 5):
            bucketed = embed_bucketed(model, strings, "cpu", size)
            assert bucketed.shape == whole.shape
            assert torch.allclose(bucketed, whole, atol=1e-5)


def _row_loss(text: object, candidates: object, scale: float) -> object:
    import torch

    logits = scale * candidates @ text
    return -torch.log_softmax(logits, dim=0)[0]


def test_each_text_row_holds_its_graph_the_batch_and_its_own_negatives(
    tiny_encoder: Path,
) -> None:
    """The loss, recomputed by hand: for text i, the softmax over [its graph, the other
    graphs, its hard negative, its inverted negative]; 1-triple graphs get an inverted
    negative (subject and object swapped)."""
    import torch

    from core.metrics.encoder_training import batch_loss, batch_negatives, embed_bucketed
    from core.metrics.similarity import linearise

    model = _loaded(tiny_encoder)
    model.eval()  # no dropout: the loss is a function of the strings
    batch = [
        ((("Rome", "country", "Italy"),), "Rome is in Italy."),
        ((("Paris", "country", "France"), ("France", "capital", "Paris")), "Paris, France."),
        ((("Oslo", "country", "Norway"),), "Oslo lies in Norway."),
    ]
    graphs = [g for g, _t in batch]
    pools = role_pools(graphs)
    for shared in (False, True):
        settings = TrainingSettings(symmetric=False, shared_negatives=shared, bucket_size=2)
        hard, inverted = batch_negatives(batch, pools, settings, random.Random(5))
        assert inverted[0] == (("Italy", "country", "Rome"),)
        assert inverted[2] == (("Norway", "country", "Oslo"),)
        with torch.no_grad():
            loss = batch_loss(model, batch, pools, settings, random.Random(5))
            graph_vec = embed_bucketed(model, [linearise(g) for g in graphs], "cpu", 8)
            hard_vec = embed_bucketed(model, [linearise(g) for g in hard], "cpu", 8)
            inv_vec = embed_bucketed(model, [linearise(g) for g in inverted], "cpu", 8)
            text_vec = embed_bucketed(model, [t for _g, t in batch], "cpu", 8)
        expected = []
        for i in range(3):
            others = [graph_vec[j] for j in range(3) if j != i]
            if shared:
                negatives = [*others, *hard_vec, *inv_vec]
            else:
                negatives = [*others, hard_vec[i], inv_vec[i]]
            candidates = torch.stack([graph_vec[i], *negatives])
            expected.append(_row_loss(text_vec[i], candidates, settings.scale))
        assert float(loss) == pytest.approx(float(torch.stack(expected).mean()), rel=1e-4)


def test_a_pair_without_negatives_keeps_them_out_of_its_row(tiny_encoder: Path) -> None:
    import torch

    from core.metrics.encoder_training import batch_loss

    model = _loaded(tiny_encoder)
    model.eval()
    batch = [((("A", "p", "A"),), "A p A."), ((("B", "p", "C"),), "B p C.")]
    pools = (["A"], ["p"], ["A"])  # nothing to replace A or p with: no hard negative
    settings = TrainingSettings(symmetric=False)
    with torch.no_grad():
        loss = batch_loss(model, batch, pools, settings, random.Random(0))
    assert torch.isfinite(loss)


def test_periodic_evaluation_and_time_limit_do_not_change_what_is_learned(
    scoring_store: SessionStore, tiny_encoder: Path, tmp_path: Path
) -> None:
    import torch

    from core.metrics.retrieval.encoders import LoadedEncoder

    settings = TrainingSettings(epochs=3, batch_size=4, learning_rate=5e-3, threads=1)
    calls: list[int] = []
    threads = torch.get_num_threads()

    def on_evaluate(step: int, model: object) -> dict:
        calls.append(step)
        assert torch.get_num_threads() == 1 and not model.training
        encoder = LoadedEncoder(Path("."), f"step {step}", f"t-{step}", loaded=model)
        return {"top1": evaluate(load_pairs(scoring_store), encoder, None).text_to_graph.top1}

    plain = train(_pairs(scoring_store), str(tiny_encoder), tmp_path / "plain", settings)
    watched = train(
        _pairs(scoring_store),
        str(tiny_encoder),
        tmp_path / "watched",
        settings,
        evaluate_every=2,
        on_evaluate=on_evaluate,
    )
    assert torch.get_num_threads() == threads
    assert watched.losses == plain.losses and plain.steps == 3
    assert calls == [2, 3] and [e["step"] for e in watched.evaluations] == [2, 3]
    record = json.loads((tmp_path / "watched" / RECORD).read_text())
    assert [e["step"] for e in record["evaluations"]] == [2, 3]
    assert record["planned_steps"] == 3 and record["stopped"] is None

    stopped = train(
        _pairs(scoring_store),
        str(tiny_encoder),
        tmp_path / "stopped",
        TrainingSettings(epochs=3, batch_size=4, max_minutes=1e-9),
    )
    record = json.loads((tmp_path / "stopped" / RECORD).read_text())
    assert stopped.steps == 0 and record["planned_steps"] == 3
    assert record["stopped"].startswith("time limit")
    assert open_encoder(str(tmp_path / "stopped")).fingerprint
