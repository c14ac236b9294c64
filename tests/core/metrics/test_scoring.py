"""The scoring job on a real session: rows per CONVENTIONS.md, replacement, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
import sacrebleu
from sqlalchemy import func, select, update

from core.errors import UserFacingError
from core.jobs import CancelToken, JobSucceeded, JobWasCancelled, Progress, run_job
from core.metrics import MetricOptions
from core.metrics.base import EntityInfo
from core.metrics.scoring import (
    ScoringRequest,
    UnitMaterial,
    corpus_scores,
    score_job,
    scores_of_verbalisation,
    sentence_score_table,
    summary_by_group,
    unit_material,
)
from core.metrics.signature import Signature
from core.store import SessionStore
from core.store.models import ModelRun, Score, UnitReference, UnitTriple
from core.verbalise.selection import unit_triples
from tests.fixtures.scoring_session import REFS, TEXTS, Ids, build_session
from tests.fixtures.tiny_models import build_tiny_causal_lm

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models


@pytest.fixture
def session(tmp_path: Path) -> tuple[SessionStore, Ids]:
    ids = build_session(tmp_path / "s.taillens")
    store = SessionStore.open(tmp_path / "s.taillens")
    yield store, ids
    store.close()


def score(store: SessionStore, **request: object) -> object:
    outcome = run_job(score_job(store, ScoringRequest(**request)))  # type: ignore[arg-type]
    assert isinstance(outcome, JobSucceeded), outcome
    return outcome.result


def rows(store: SessionStore, **where: object) -> list[Score]:
    with store.unit_of_work() as db:
        query = select(Score)
        for name, value in where.items():
            query = query.where(getattr(Score, name) == value)
        result = list(db.scalars(query.order_by(Score.id)))
        db.expunge_all()
        return result


def reference_ids(store: SessionStore, unit_id: int, lang: str, quality: str) -> list[int]:
    with store.unit_of_work() as db:
        return list(
            db.scalars(
                select(UnitReference.id)
                .where(
                    UnitReference.unit_id == unit_id,
                    UnitReference.lang == lang,
                    UnitReference.quality == quality,
                )
                .order_by(UnitReference.id)
            )
        )


def test_unit_material_per_language(session) -> None:
    store, ids = session
    ada, rome = ids.units
    gold, silver = (
        reference_ids(store, ada, "en", "gold"),
        reference_ids(store, ada, "en", "silver"),
    )
    assert unit_material(store, ada, "en") == UnitMaterial(
        ada,
        "en",
        (
            ("Ada Lovelace", "date of birth", "10 December 1815"),
            ("Ada Lovelace", "occupation", "mathematician"),
        ),
        (
            # The label is shown, so only the other term of Q7259 is an alias.
            EntityInfo("Ada Lovelace", ("Augusta Ada King",), "Q7259", is_root=True),
            EntityInfo("10 December 1815", (), None, value_type="time"),
            EntityInfo("Ada Lovelace", ("Augusta Ada King",), "Q7259", is_root=True),
            EntityInfo("mathematician", (), "Q170790", value_type="item"),
        ),
        {
            "gold": tuple(zip(gold, REFS[(1, "en", "gold")], strict=True)),
            "silver": tuple(zip(silver, REFS[(1, "en", "silver")], strict=True)),
        },
    )
    # Italian: the object override wins; Q7259 has no Italian terms; gold only.
    italian = unit_material(store, ada, "it")
    assert italian.triples == (
        ("Ada Lovelace", "data di nascita", "10 dicembre 1815"),
        ("Ada Lovelace", "occupazione", "matematica"),
    )
    assert [e.aliases for e in italian.entities] == [(), (), (), ()]
    assert italian.references == {
        "gold": ((reference_ids(store, ada, "it", "gold")[0], REFS[(1, "it", "gold")][0]),)
    }
    # Rome has Italian triples but no Italian reference; no unit has Spanish anything.
    assert unit_material(store, rome, "it").references == {}
    assert unit_material(store, rome, "it").triples[0] == ("Roma", "paese", "Italia")
    assert unit_material(store, rome, "es") == UnitMaterial(rome, "es", (), (), {})
    assert unit_material(store, 9999, "en") == UnitMaterial(9999, "en", (), (), {})


def test_reference_rows_per_quality_and_corpus_bleu_equals_sacrebleu(session) -> None:
    store, ids = session
    summary = score(store, metrics=("bleu",))
    template, _ = ids.runs
    sentence = rows(store, metric="bleu", level="sentence", run_id=template)
    # run 1: en unit 1 (gold, silver), en unit 2 (gold), it unit 1 (gold); it unit 2 none
    got = sorted((r.verbalisation_id, r.lang, r.details["quality"]) for r in sentence)
    v = ids.verbalisations
    assert got == sorted(
        [
            (v[(1, 1, "en")], "en", "gold"),
            (v[(1, 1, "en")], "en", "silver"),
            (v[(1, 2, "en")], "en", "gold"),
            (v[(1, 1, "it")], "it", "gold"),
        ]
    )
    assert all(r.signature and "eff:yes" in r.signature for r in sentence)
    corpus = {
        (r.lang, r.details["quality"]): r
        for r in rows(store, metric="bleu", level="corpus", run_id=template)
    }
    assert set(corpus) == {("en", "gold"), ("en", "silver"), ("it", "gold")}
    hyps = [TEXTS[(1, 1, "en")], TEXTS[(1, 2, "en")]]
    gold = [REFS[(1, "en", "gold")], REFS[(2, "en", "gold")]]
    streams = [[g[k] if k < len(g) else None for g in gold] for k in range(2)]
    assert corpus[("en", "gold")].value == pytest.approx(sacrebleu.corpus_bleu(hyps, streams).score)
    assert corpus[("en", "gold")].details["n"] == 2
    assert corpus[("en", "gold")].verbalisation_id is None
    stored = Signature.parse(corpus[("en", "gold")].signature)
    assert stored.metric == "bleu" and stored["nrefs"] == "var"
    assert any("no gold reference" in n and "absent (not 0)" in n for n in summary.notes)


def test_rescoring_replaces_rows_and_esa_corpus_details(session) -> None:
    store, ids = session
    score(store, metrics=("esa", "chrf"))
    first = len(rows(store))
    score(store, metrics=("esa", "chrf"))
    assert len(rows(store)) == first
    template, external = ids.runs
    esa = {r.verbalisation_id: r for r in rows(store, metric="esa", level="sentence")}
    ada = esa[ids.verbalisations[(1, 1, "en")]]
    assert ada.value == 1.0 and ada.details["missing"] == []
    # run 2 names Ada by her alias from `terms`, and does not give her birth date
    alias = esa[ids.verbalisations[(2, 1, "en")]]
    assert alias.details["missing"] == ["10 December 1815"]
    assert any(m["via"] == "alias" for m in alias.details["mentions"])
    # the Italian object override ("matematica") is what is looked for
    it = esa[ids.verbalisations[(1, 1, "it")]]
    assert "matematica" in it.details["detected"]
    corpus = rows(store, metric="esa", level="corpus", run_id=external, lang="en")[0]
    # run 2: Ada text misses 1 of 3, "Paris is a city." misses both Rome and Italy
    assert corpus.details["esi@1"] == 1.0 and corpus.details["esi@2"] == 0.5
    assert corpus.value == pytest.approx((2 / 3 + 0) / 2)
    assert corpus.details["n"] == 2 and "quality" not in corpus.details


def test_filters_and_panel_queries(session) -> None:
    store, ids = session
    template, external = ids.runs
    score(store, metrics=("rouge", "hallucination"), run_ids=(external,), langs=("en",))
    assert {r.run_id for r in rows(store)} == {external}
    assert {r.metric for r in rows(store)} == {"rouge1", "rouge2", "rougeL", "hallucination"}
    table = sentence_score_table(store, run_ids=[external])
    paris = next(r for r in table if r.verbalisation_id == ids.verbalisations[(2, 2, "en")])
    assert paris.scores["hallucination"] == 1.0 and "rouge1:gold" in paris.scores
    assert paris.model == "other" and paris.tier == "head"
    details = scores_of_verbalisation(store, paris.verbalisation_id)
    spans = next(s for s in details if s.metric == "hallucination").details["spans"]
    assert [s["text"] for s in spans] == ["Paris"]
    summary = summary_by_group(store, by=("model", "lang", "tier"), metrics=["hallucination"])
    assert {(g.group, g.n) for g in summary} == {
        (("other", "en", "long_tail"), 1),
        (("other", "en", "head"), 1),
    }
    assert {c.metric for c in corpus_scores(store)} == {
        "rouge1",
        "rouge2",
        "rougeL",
        "hallucination",
    }


def test_reference_texts_are_scored_apart(session) -> None:
    store, _ = session
    score(store, metrics=("esa",), run_ids=(), references=True)
    refs = rows(store, metric="esa", level="sentence")
    assert len(refs) == sum(len(v) for v in REFS.values())
    assert all(
        r.reference_id and r.run_id is None and r.details["texts"] == "references" for r in refs
    )
    corpus = rows(store, metric="esa", level="corpus")
    assert {(r.lang, r.details["quality"]) for r in corpus} == {
        ("en", "gold"),
        ("en", "silver"),
        ("it", "gold"),
    }


@pytest.mark.parametrize(
    ("request_args", "message"),
    [
        ({"metrics": ("bleu", "cider")}, "unknown metric 'cider'"),
        ({"run_ids": (99,)}, "no run 99 in this session"),
        ({"langs": ("english",)}, "not a language code"),
        ({"metrics": ("ppl",), "options": MetricOptions(ppl_model="/no/such/model")}, "/no/such"),
    ],
)
def test_bad_input_is_refused_and_the_session_is_unchanged(session, request_args, message) -> None:
    store, _ = session
    score(store, metrics=("esa",))
    before = [(r.id, r.value) for r in rows(store)]
    with pytest.raises(UserFacingError, match=message):
        job = score_job(store, ScoringRequest(**request_args))
        outcome = run_job(job)
        if not isinstance(outcome, JobSucceeded):
            raise outcome.error  # type: ignore[union-attr]
    assert [(r.id, r.value) for r in rows(store)] == before


def test_cancel_keeps_whole_metrics_only(session) -> None:
    store, _ = session
    token = CancelToken()

    def on_progress(progress: Progress) -> None:
        if progress.message.startswith("hallucination"):
            token.cancel()  # ESA is written by then; hallucination must not be, even in part

    job = score_job(store, ScoringRequest(metrics=("esa", "hallucination")))
    assert isinstance(run_job(job, token, on_progress), JobWasCancelled)
    assert {r.metric for r in rows(store)} == {"esa"}


def test_perplexity_of_a_causal_run_uses_its_model_and_prompt(session, tiny_causal_lm) -> None:
    store, ids = session
    with store.unit_of_work() as db:
        run = db.get(ModelRun, ids.runs[0])
        assert run is not None
        run.kind = "causal"
        run.model_id = "tiny"
        run.parameters = {"model_path": str(tiny_causal_lm)}
        run.prompt_templates = {"en": "Describe:\n{triples}", "it": "Descrivi:\n{triples}"}
    summary = score(store, metrics=("ppl",), run_ids=(ids.runs[0],), langs=("en",))
    ppl = rows(store, metric="ppl", level="sentence")
    assert len(ppl) == 2 and all(r.value and r.value > 1 for r in ppl)
    assert all(r.details["conditioned"] for r in ppl)  # given the rebuilt prompt
    assert all(r.details["prompt"] == "rebuilt" for r in ppl)  # rows store none
    assert all(r.details["model"] == str(tiny_causal_lm) for r in ppl)
    corpus = rows(store, metric="ppl", level="corpus")[0]
    import math

    tokens = sum(r.details["tokens"] for r in ppl)
    pooled = math.exp(sum(r.details["mean_nll"] * r.details["tokens"] for r in ppl) / tokens)
    assert corpus.value == pytest.approx(pooled)
    # the template run has no model of its own: skipped with a note, unless --ppl-model
    assert summary.rows_written["ppl"] == 3
    assert not any("has no causal model" in n for n in summary.notes)
    skipped = score(store, metrics=("ppl",), run_ids=(ids.runs[1],))
    assert any("run 2 (external) has no causal model" in n for n in skipped.notes)
    with store.unit_of_work() as db:
        assert db.scalar(select(func.count()).select_from(Score)) == 3


def test_overrides_are_read_as_the_verbalise_job_reads_them(session) -> None:
    """One rule (UnitTriple.shown): a set override wins, an empty one included."""
    store, ids = session
    with store.unit_of_work() as db:
        row = db.scalars(
            select(UnitTriple).where(
                UnitTriple.unit_id == ids.units[1],
                UnitTriple.lang == "en",
                UnitTriple.position == 0,
            )
        ).one()
        row.subject_override = ""
        row.predicate_override = "located in"
    for unit_id in ids.units:
        for lang in ("en", "it"):
            assert (
                unit_material(store, unit_id, lang).triples
                == unit_triples(store, [unit_id], [lang])[(unit_id, lang)]
            )
    assert unit_material(store, ids.units[1], "en").triples[0] == ("", "located in", "Italy")


def _causal_runs(store: SessionStore, ids: Ids, models: tuple[Path, Path]) -> None:
    with store.unit_of_work() as db:
        for run_id, model in zip(ids.runs, models, strict=True):
            run = db.get(ModelRun, run_id)
            assert run is not None
            run.kind, run.model_id = "causal", model.name
            run.parameters = {"model_path": str(model)}
            run.prompt_templates = {"en": "Describe:\n{triples}", "it": "Descrivi:\n{triples}"}


def test_each_perplexity_model_is_loaded_once_and_freed_before_the_next(
    session, tiny_causal_lm, tmp_path, monkeypatch
) -> None:
    """ppl and entity_ppl share one copy of a model; a model is freed before the next one
    loads and at the end, also when scoring fails."""
    import core.local_models.loader
    import core.metrics.perplexity as perplexity

    store, ids = session
    other = build_tiny_causal_lm(tmp_path / "other-llama", seed=1)
    _causal_runs(store, ids, (tiny_causal_lm, other))
    events: list[str] = []
    real_load, real_free = perplexity.load_model, core.local_models.loader.free_device_memory

    def load(path, **kwargs):
        assert events.count("load") == events.count("free"), "two models held at once"
        events.append("load")
        return real_load(path, **kwargs)

    def free(device):
        events.append("free")
        real_free(device)

    monkeypatch.setattr(perplexity, "load_model", load)
    monkeypatch.setattr(core.local_models.loader, "free_device_memory", free)
    summary = score(store, metrics=("ppl", "entity_ppl"))
    assert events == ["load", "free", "load", "free"]  # two models, each once for both
    assert summary.rows_written == {"ppl": 9, "entity_ppl": 9}  # 6 texts + 3 corpus rows
    models = {r.run_id: r.details["model"] for r in rows(store, level="sentence")}
    assert models == {ids.runs[0]: str(tiny_causal_lm), ids.runs[1]: str(other)}

    # A failure while the first model is loaded: it is freed, and nothing is written.
    events.clear()
    calls = 0
    real_score = perplexity.Perplexity.score_texts

    def failing(self, texts, prompts=None):
        nonlocal calls
        calls += 1
        if calls == 2:
            raise RuntimeError("device lost")
        return real_score(self, texts, prompts)

    monkeypatch.setattr(perplexity.Perplexity, "score_texts", failing)
    before = [(r.id, r.value) for r in rows(store)]
    outcome = run_job(score_job(store, ScoringRequest(metrics=("ppl", "entity_ppl"))))
    assert not isinstance(outcome, JobSucceeded)
    assert events == ["load", "free"]
    assert [(r.id, r.value) for r in rows(store)] == before


def test_esa_uses_the_sessions_synonym_table(session) -> None:
    from core.metrics.esa.synonyms import add_synonym, starter_rows

    store, ids = session
    paris = ids.verbalisations[(2, 2, "en")]  # "Paris is a city." for the Rome unit
    score(store, metrics=("esa",))
    before = {r.verbalisation_id: r for r in rows(store, metric="esa", level="sentence")}
    assert "Rome" in before[paris].details["missing"]
    starter = len(starter_rows())
    assert f"synonyms:{starter}@" in rows(store, metric="esa", level="corpus")[0].signature
    add_synonym(store, "Rome", "Paris", "en")  # the user's table, right or wrong, is used
    score(store, metrics=("esa",))
    after = {r.verbalisation_id: r for r in rows(store, metric="esa", level="sentence")}
    assert "Rome" not in after[paris].details["missing"]
    assert any(m["via"] == "synonym" for m in after[paris].details["mentions"])
    corpus = rows(store, metric="esa", level="corpus")[0]
    assert f"synonyms:{starter + 1}@" in corpus.signature


def _all_scores(store: SessionStore) -> list[tuple]:
    return sorted(
        (
            (
                r.metric,
                r.level,
                r.verbalisation_id,
                r.reference_id,
                r.run_id,
                r.lang,
                r.value,
                repr(sorted(r.details.items())),
                r.signature,
            )
            for r in rows(store)
        ),
        key=repr,
    )


def test_scores_are_the_same_with_a_tiny_batch_size(
    session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Items are built a chunk at a time, rows inserted and corpus statistics read a
    batch at a time: with one text per chunk and batch, every stored score (corpus
    values and signatures included) is the same."""
    import core.metrics.reference as reference
    import core.metrics.scoring.job as scoring_job

    store, _ = session
    request = {"metrics": ("bleu", "chrf++", "esa", "ter", "hallucination"), "references": True}
    default = score(store, **request)
    expected = _all_scores(store)
    assert len(expected) > 20
    monkeypatch.setattr(scoring_job, "CHUNK", 1)
    monkeypatch.setattr(scoring_job, "ROW_BATCH", 1)
    monkeypatch.setattr(reference, "CORPUS_BATCH", 1)
    build_session(tmp_path / "other.taillens")  # the same session, built again
    with SessionStore.open(tmp_path / "other.taillens") as tiny_store:
        tiny = score(tiny_store, **request)
        assert _all_scores(tiny_store) == expected
    assert tiny.rows_written == default.rows_written
    assert [(c.metric, c.run_id, c.lang, c.quality, c.value, c.n) for c in tiny.corpus] == [
        (c.metric, c.run_id, c.lang, c.quality, c.value, c.n) for c in default.corpus
    ]


def test_other_writers_and_readers_go_on_while_a_metric_is_scored(session) -> None:
    """Rows are staged outside the session file while a metric is scored: another
    connection writes (a short busy timeout: it must not wait) and reads meanwhile, and
    the metric appears only when it is committed, whole."""
    from core.metrics.esa.metric import EntityAdequacy

    store, ids = session
    seen: list[int] = []  # the metric's rows another reader sees, at each chunk
    real = EntityAdequacy.sentence_scores

    def scores_then_probe(self, items):
        values = real(self, items)
        with SessionStore.open(store.path, busy_timeout_s=0.2) as other:
            with other.unit_of_work() as db:  # would raise SessionLockedError if locked
                db.execute(
                    update(ModelRun)
                    .where(ModelRun.id == ids.runs[0])
                    .values(system_name=f"renamed {len(seen)}")
                )
            with other.snapshot() as db:
                seen.append(len(db.scalars(select(Score.id).where(Score.metric == "esa")).all()))
        return values

    import core.metrics.scoring.job as scoring_job

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(EntityAdequacy, "sentence_scores", scores_then_probe)
        patch.setattr(scoring_job, "CHUNK", 1)
        patch.setattr(scoring_job, "ROW_BATCH", 1)
        summary = score(store, metrics=("esa",))
    assert len(seen) == summary.rows_written["esa"] - len(summary.corpus) > 3
    assert set(seen) == {0}  # nothing of the metric until its commit
    assert len(rows(store, metric="esa")) == summary.rows_written["esa"]
    with store.unit_of_work() as db:
        assert db.get(ModelRun, ids.runs[0]).system_name == f"renamed {len(seen) - 1}"


KILLED_SCORING = """
import sys, time
from pathlib import Path

import core.metrics.scoring.job as scoring_job
from core.jobs import run_job
from core.metrics.esa.metric import EntityAdequacy
from core.metrics.scoring import ScoringRequest, score_job
from core.store import SessionStore

signal = Path(sys.argv[2])
real = EntityAdequacy.sentence_scores
calls = []


def slow(self, items):
    calls.append(len(items))
    if len(calls) == 4:  # three chunks' rows staged: say so, then wait to be killed
        signal.write_text("staged")
        time.sleep(60)
    return real(self, items)


EntityAdequacy.sentence_scores = slow
scoring_job.CHUNK = 1
scoring_job.ROW_BATCH = 1
with SessionStore.open(sys.argv[1]) as store:
    run_job(score_job(store, ScoringRequest(metrics=("bleu", "esa"))))
"""


def test_a_kill_while_a_metric_is_staged_leaves_it_wholly_old(tmp_path: Path) -> None:
    """A scoring process killed (SIGKILL) in the middle of a metric, some of its rows
    staged: that metric keeps every old row and no new one; the metric committed before
    it is wholly new; nothing is left beside the session, and scoring again works."""
    import os
    import signal as signals
    import subprocess
    import sys
    import time

    path = tmp_path / "s.taillens"
    build_session(path)
    with SessionStore.open(path) as store:
        score(store, metrics=("bleu", "esa"))
        old = {m: [(r.id, r.value) for r in rows(store, metric=m)] for m in ("bleu", "esa")}
    assert old["bleu"] and old["esa"]
    signal = tmp_path / "staged"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_SCORING, str(path), str(signal)], env=env
    )
    try:
        deadline = time.monotonic() + 120
        while not signal.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert signal.exists(), "the scoring process never reached its fourth chunk"
        child.send_signal(signals.SIGKILL)
        child.wait(30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(30)
    with SessionStore.open(path) as store:
        esa = [(r.id, r.value) for r in rows(store, metric="esa")]
        bleu = [(r.id, r.value) for r in rows(store, metric="bleu")]
        assert esa == old["esa"]  # wholly old: the same rows, none new
        assert [v for _, v in bleu] == [v for _, v in old["bleu"]]  # wholly new ...
        assert not {i for i, _ in bleu} & {i for i, _ in old["bleu"]}  # ... rows
        summary = score(store, metrics=("esa",))
        assert len(rows(store, metric="esa")) == summary.rows_written["esa"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.taillens", "staged"]


def test_scoring_reads_while_another_writer_holds_the_lock(session) -> None:
    """What scoring reads (runs, texts, unit material) comes from a WAL snapshot: with a
    0.2 s busy timeout, a read that took the write lock would raise SessionLockedError."""
    import sqlite3

    from core.metrics.scoring import (
        ScoringSummary,
        _load_verbalisations,
        _UnitMaterial,
        validate_request,
    )
    from core.store import SessionLockedError

    store, ids = session
    holder = sqlite3.connect(store.path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with SessionStore.open(store.path, busy_timeout_s=0.2) as waiting:
            request = ScoringRequest(metrics=("bleu", "esa"))
            runs = validate_request(waiting, request)
            assert sorted(runs) == sorted(ids.runs)
            texts, _replies = _load_verbalisations(waiting, runs, request, ScoringSummary())
            assert len(texts) == len(TEXTS)
            material = _UnitMaterial(waiting, list(ids.units), langs={"en"})
            assert set(material.triples) == {(unit, "en") for unit in ids.units}
            assert unit_material(waiting, ids.units[0], "it").triples
            with pytest.raises(SessionLockedError):  # a write still waits, and says so
                waiting.set_meta("probe", "1")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
