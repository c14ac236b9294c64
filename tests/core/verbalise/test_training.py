"""``train-verbaliser``'s core: a tiny random T5 fine-tuned on a handful of real WebNLG
units (enriched WebNLG 2017, en/dev, Astronaut and ComicsCharacter 1-triple entries),
loaded through the users' own path (a folder named as the base)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from core.errors import UserFacingError
from core.jobs import CancelToken, JobCancelled, JobContext, Progress, run_job
from core.local_models.loader import discover_models
from core.store import SessionStore
from core.verbalise.training.data import (
    Example,
    Split,
    epoch_examples,
    load_examples,
    split_by_entry,
)
from core.verbalise.training.folder import (
    BEST,
    CARD,
    CHECKPOINT,
    RECORD,
    OutFolder,
    check_resumable,
)
from core.verbalise.training.launch import train, training_job
from core.verbalise.training.settings import TrainingSettings
from tests.fixtures.train_data import build_webnlg_model, build_webnlg_session
from tests.shared_data import ENRICHED_DEV, needs

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = [needs(*ENRICHED_DEV), pytest.mark.loads_models]

# Few steps, a high learning rate: a 32-wide random T5 learns the data's words at once.
FAST = TrainingSettings(
    epochs=30,
    batch_size=8,
    learning_rate=3e-3,
    warmup_share=0.0,
    max_steps=12,
    eval_every=4,
    patience=0,
    dev_share=0.2,
    eval_limit=4,
    num_beams=1,
    max_new_tokens=12,
    device="cpu",
    threads=1,
)


@pytest.fixture(scope="module")
def webnlg(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(session, tiny T5 whose tokenizer was trained on the session's texts)."""
    folder = tmp_path_factory.mktemp("webnlg-train")
    session = build_webnlg_session(folder / "webnlg.taillens")
    return session, build_webnlg_model(session, folder / "tiny-t5")


def split_of(session: Path, settings: TrainingSettings = FAST) -> Split:
    with SessionStore.open(session) as store:
        return split_by_entry(load_examples(store), settings.dev_share, settings.seed)


def context(on_step: Callable[[Progress], None] | None = None) -> JobContext:
    token = CancelToken()
    ctx = JobContext(token, on_step, min_interval_s=0)
    return ctx


def test_split_holds_no_entry_and_no_graph_on_both_sides() -> None:
    graph_a = (("A", "p", "B"),)
    graph_b = (("C", "p", "D"),)
    examples = [
        Example(1, "en", graph_a, "A p B.", 1),
        Example(1, "en", graph_a, "B is A's p.", 2),
        Example(2, "en", graph_a, "Same graph, other unit.", 3),  # must go with unit 1
        *(Example(u, "en", ((f"S{u}", "p", "O"),), f"S{u} p O.", 10 + u) for u in range(3, 23)),
        Example(30, "en", graph_b, "C p D.", 40),
    ]
    for seed in range(20):
        split = split_by_entry(examples, 0.25, seed)
        assert split.train and split.dev
        assert not Split.entries(split.train) & Split.entries(split.dev)
        assert not {e.triples for e in split.train} & {e.triples for e in split.dev}
        assert len(split.train) + len(split.dev) == len(examples)
        assert 1 <= len(Split.entries(split.dev)) <= 7
    assert split_by_entry(examples, 0.25, 3) == split_by_entry(examples, 0.25, 3)
    with pytest.raises(UserFacingError, match="at least 2 entries"):
        split_by_entry(examples[:3], 0.5, 0)


def test_a_wdv_epoch_is_one_example_per_entry_drawn_by_seed_and_epoch() -> None:
    graph = tuple((f"S{i}", f"p{i}", f"O{i}") for i in range(6))
    examples = [
        Example(u, lang, graph, f"{u} {lang} text {r}", 100 * u + 10 * (lang == "it") + r)
        for u in range(1, 21)
        for lang in ("en", "it")
        for r in range(4)
    ]
    epoch0 = epoch_examples(examples, "wdv", 0, 0)
    # One example per entry (unit and language), each one of that entry's references.
    assert sorted((e.unit_id, e.lang) for e in epoch0) == sorted(
        {(e.unit_id, e.lang) for e in examples}
    )
    by_id = {e.reference_id: e for e in examples}
    for drawn in epoch0:
        stored = by_id[drawn.reference_id]
        assert (drawn.unit_id, drawn.lang, drawn.text) == (stored.unit_id, stored.lang, stored.text)
        assert sorted(drawn.triples) == sorted(graph)  # the same triples, reordered
    # Deterministic per (seed, epoch), whatever order the examples come in.
    assert epoch_examples(list(reversed(examples)), "wdv", 0, 0) == epoch0
    # Another epoch or seed draws other references and other triple orders.
    epoch1 = epoch_examples(examples, "wdv", 0, 1)
    assert [e.reference_id for e in epoch1] != [e.reference_id for e in epoch0]
    assert [e.triples for e in epoch1] != [e.triples for e in epoch0]
    assert epoch_examples(examples, "wdv", 1, 0) != epoch0
    # The triples are shuffled: most draws are not in the stored order.
    assert sum(e.triples != graph for e in epoch0) > len(epoch0) // 2
    # Over epochs every reference of an entry is drawn.
    drawn_ids = {
        e.reference_id for epoch in range(30) for e in epoch_examples(examples, "wdv", 0, epoch)
    }
    assert drawn_ids == set(by_id)
    # "all": every reference, the triples as stored.
    assert epoch_examples(examples, "all", 0, 3) == examples


def test_a_wdv_epoch_draws_only_references_webnlg_marks_good_where_an_entry_has_any() -> None:
    graph = (("A", "p", "B"), ("B", "q", "C"))
    examples = [
        Example(1, "en", graph, "good one", 1, "good"),
        Example(1, "en", graph, "bad one", 2, "bad"),
        Example(1, "en", graph, "to fix", 3, "toFix"),
        Example(1, "en", graph, "good two", 4, "good"),
        Example(2, "en", graph, "unmarked", 5),  # no comment at all: drawn from all
        Example(2, "en", graph, "unmarked too", 6),
        Example(3, "en", graph, "only bad", 7, "bad"),  # no good one: drawn from all
    ]
    draws = [epoch_examples(examples, "wdv", 0, epoch) for epoch in range(40)]
    assert {d[0].text for d in draws} == {"good one", "good two"}
    assert {d[1].text for d in draws} == {"unmarked", "unmarked too"}
    assert {d[2].text for d in draws} == {"only bad"}


def test_load_examples_keeps_the_webnlg_lex_comment(tmp_path: Path) -> None:
    from core.formats.webnlg.importer import import_webnlg

    xml = tmp_path / "tiny.xml"
    lex = "".join(
        f'<lex comment="{c}" lid="Id{i}">Alan Bean text {i}.</lex>'
        for i, c in enumerate(("good", "bad", "toFix", "good"), 1)
    )
    xml.write_text(
        '<?xml version="1.0" ?><benchmark><entries>'
        '<entry category="Astronaut" eid="Id1" size="1"><originaltripleset>'
        "<otriple>Alan_Bean | occupation | Test_pilot</otriple></originaltripleset>"
        "<modifiedtripleset><mtriple>Alan_Bean | occupation | Test_pilot</mtriple>"
        f'</modifiedtripleset>{lex}<lex lid="Id5">No comment.</lex></entry>'
        "</entries></benchmark>",
        encoding="utf-8",
    )
    with SessionStore.create(tmp_path / "s.taillens") as store:
        import_webnlg(store, xml)
        examples = load_examples(store)
    assert [(e.text, e.comment) for e in examples] == [
        ("Alan Bean text 1.", "good"),
        ("Alan Bean text 2.", "bad"),
        ("Alan Bean text 3.", "toFix"),
        ("Alan Bean text 4.", "good"),
        ("No comment.", None),
    ]
    drawn = {epoch_examples(examples, "wdv", 0, e)[0].text for e in range(30)}
    assert drawn == {"Alan Bean text 1.", "Alan Bean text 4."}


def test_a_training_from_before_sampling_resumes_only_as_all(tmp_path: Path) -> None:
    identity = {"kind": "seq2seq", "base_fingerprint": "b", "data_fingerprint": "d"}
    old = {k: v for k, v in vars(FAST).items() if k not in ("sampling", "device", "threads")}
    folder = OutFolder(tmp_path, 6, {"identity": {**identity, "settings": old}})
    check_resumable(folder, {**identity, "settings": {**old, "sampling": "all"}})
    with pytest.raises(UserFacingError, match="sampling 'all' → 'wdv'"):
        check_resumable(folder, {**identity, "settings": {**old, "sampling": "wdv"}})


def test_training_lowers_dev_loss_and_writes_a_model_verbalise_lists_and_uses(
    webnlg: tuple[Path, Path], tmp_path: Path
) -> None:
    session, base = webnlg
    split = split_of(session)
    assert not Split.entries(split.train) & Split.entries(split.dev)
    messages: list[str] = []
    out = tmp_path / "t5-webnlg"
    result = train(
        split, str(base), out, FAST, context(lambda p: messages.append(p.message)), {"session": "s"}
    )
    assert result.steps == 12 and result.resumed_from is None
    losses = [e["loss"] for e in result.evaluations]
    assert [e["step"] for e in result.evaluations] == [4, 8, 12]
    assert losses[-1] < losses[0], losses
    assert any("loss" in m and "ETA" in m for m in messages)
    assert any(m.startswith("evaluating on dev") for m in messages)
    # A model like any other: config.json, weights, tokenizer, the card; no checkpoint.
    assert (out / "config.json").is_file() and (out / CARD).is_file()
    assert not (out / CHECKPOINT).exists() and not (out / BEST).exists()
    card = (out / CARD).read_text(encoding="utf-8")
    assert "| step | dev loss | BLEU | chrF++ | graphs |" in card and "split by entry" in card
    record = json.loads((out / RECORD).read_text(encoding="utf-8"))
    assert record["finished"] and record["data"]["dev_entry_ids"] == sorted(
        Split.entries(split.dev)
    )
    assert result.listed and out.resolve() in [m.path.resolve() for m in discover_models()]

    from core.verbalise import open_verbaliser
    from core.verbalise.base import GenerationParams, VerbaliseRequest

    verbaliser = open_verbaliser(
        str(out), GenerationParams(max_new_tokens=8, candidates=1), device="cpu"
    )
    assert verbaliser.kind == "seq2seq"
    example = split.dev[0]
    prompt = verbaliser.prompt_for(example.triples, "en")
    assert prompt.startswith("translate from Graph to Text: <H> ")
    [[candidate]] = verbaliser.verbalise(
        [VerbaliseRequest(example.unit_id, "en", example.triples, prompt)]
    )
    assert candidate.tokens > 0


def test_a_cancelled_training_keeps_a_checkpoint_that_resumes_where_it_stopped(
    webnlg: tuple[Path, Path], tmp_path: Path
) -> None:
    session, base = webnlg
    split = split_of(session)
    whole = train(split, str(base), tmp_path / "whole", FAST, context())

    out = tmp_path / "cut"
    token = CancelToken()

    def cancel_after_step_7(progress: Progress) -> None:
        # mid-epoch: 18 entries in batches of 8 make 3 steps an epoch (sampling "wdv")
        if progress.done >= 7:
            token.cancel()

    with pytest.raises(JobCancelled):
        train(split, str(base), out, FAST, JobContext(token, cancel_after_step_7, 0))
    assert (out / CHECKPOINT).is_file() and not (out / "config.json").exists()
    record = json.loads((out / RECORD).read_text(encoding="utf-8"))
    assert record["steps"] == 7 and not record["finished"]
    assert [e["step"] for e in record["evaluations"]] == [4]
    # The other settings are refused, the same ones resume from step 7.
    assert FAST.sampling == "wdv", "the resume below replays WDV's per-epoch draws"
    with pytest.raises(UserFacingError, match="another setup.*learning_rate"):
        train(split, str(base), out, TrainingSettings(**{**FAST.__dict__, "learning_rate": 1e-3}))
    with pytest.raises(UserFacingError, match="another setup.*sampling 'wdv' → 'all'"):
        train(split, str(base), out, TrainingSettings(**{**FAST.__dict__, "sampling": "all"}))
    resumed = train(split, str(base), out, FAST, context())
    assert resumed.resumed_from == 7 and resumed.steps == 12
    # The resumed training learnt what the uninterrupted one did.
    assert resumed.losses == pytest.approx(whole.losses, rel=1e-4)
    assert [e["loss"] for e in resumed.evaluations] == pytest.approx(
        [e["loss"] for e in whole.evaluations], rel=1e-4
    )
    assert (out / "config.json").is_file() and not (out / CHECKPOINT).exists()


def test_the_job_refuses_bad_input_before_any_work(
    webnlg: tuple[Path, Path], tmp_path: Path, tiny_causal_lm: Path
) -> None:
    session, base = webnlg
    with SessionStore.open(session) as store:
        (tmp_path / "full").mkdir()
        (tmp_path / "full" / "notes.txt").write_text("mine", encoding="utf-8")
        with pytest.raises(UserFacingError, match="not empty"):
            training_job(store, tmp_path / "full", base=str(base), settings=FAST)
        with pytest.raises(UserFacingError, match="already holds a model"):
            training_job(store, base, base=str(base), settings=FAST)
        with pytest.raises(UserFacingError, match="no such folder"):
            training_job(store, tmp_path / "a" / "b", base=str(base), settings=FAST)
        with pytest.raises(UserFacingError, match="no references with triples in it"):
            training_job(store, tmp_path / "m", base=str(base), settings=FAST, langs=["it"])
        with pytest.raises(UserFacingError, match="--dev-share"):
            TrainingSettings(dev_share=1.5).check()
        job = training_job(store, tmp_path / "m", base=str(base), settings=FAST)
    assert job.kind == "train-verbaliser" and not (tmp_path / "m").exists()


def test_a_causal_model_trains_lora_adapters_merged_into_a_plain_model(
    webnlg: tuple[Path, Path], tmp_path: Path, tiny_causal_lm: Path
) -> None:
    pytest.importorskip("peft")
    session, _base = webnlg
    split = split_of(session)
    settings = TrainingSettings(
        **{**FAST.__dict__, "max_steps": 4, "eval_every": 0, "eval_limit": 2}
    )
    out = tmp_path / "llama-lora"
    result = train(split, str(tiny_causal_lm), out, settings, context())
    assert result.kind == "causal" and result.steps == 4
    assert [e["step"] for e in result.evaluations] == [4]
    assert not list(out.glob("adapter_*")), "the adapters are merged: a plain model folder"
    from core.local_models.loader import check_model_folder

    assert check_model_folder(out) == "causal"


def test_without_peft_a_causal_model_is_refused_saying_so(
    webnlg: tuple[Path, Path], tmp_path: Path, tiny_causal_lm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "peft" else real(name, *a)
    )
    session, _base = webnlg
    with SessionStore.open(session) as store, pytest.raises(UserFacingError, match="peft"):
        training_job(store, tmp_path / "m", base=str(tiny_causal_lm), settings=FAST)


def test_run_job_outcome_of_a_cancel_is_cancelled(
    webnlg: tuple[Path, Path], tmp_path: Path
) -> None:
    session, base = webnlg
    with SessionStore.open(session) as store:
        job = training_job(store, tmp_path / "m", base=str(base), settings=FAST)
    token = CancelToken()
    token.cancel()
    outcome = run_job(job, token)
    assert type(outcome).__name__ == "JobWasCancelled"
    assert (tmp_path / "m" / CHECKPOINT).is_file()


def test_a_second_training_into_the_same_folder_is_refused_while_the_first_runs(
    webnlg: tuple[Path, Path], tmp_path: Path
) -> None:
    """Two trainings writing one folder would corrupt its checkpoint: while one holds the
    folder (here: this process, as a second GUI job would find it), another is refused
    saying who holds it, and nothing is written; once released, the folder trains."""
    import os

    from core.io.folder_lock import FolderBusy, FolderLock

    session, base = webnlg
    out = tmp_path / "model"
    settings = replace(FAST, max_steps=2, eval_every=0)
    busy = f"another training is writing here \\(process {os.getpid()}"
    with FolderLock(out, "training"):
        with pytest.raises(FolderBusy, match=busy):
            train(split_of(session), base, out, settings, context())
        assert [p.name for p in out.iterdir()] == [".taillens.lock"]
    result = train(split_of(session), base, out, settings, context())
    assert (out / "config.json").is_file() and result.steps == 2
