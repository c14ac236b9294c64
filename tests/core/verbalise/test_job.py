"""The verbalise job: run rows, batches, resume, cancel, out-of-memory halving."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from core.jobs import CancelToken, JobFailed, JobSucceeded, JobWasCancelled, Progress, run_job
from core.store import SessionStore
from core.store.models import Category, DataUnit, ModelRun, UnitTriple, Verbalisation
from core.verbalise.base import Candidate, GenerationParams, VerbaliseRequest
from core.verbalise.batch_loop import order_for_batching, prompt_lengths
from core.verbalise.job import verbalise_job
from core.verbalise.local import CausalVerbaliser, Seq2SeqVerbaliser
from core.verbalise.openai import OpenAIVerbaliser
from core.verbalise.outcome import VerbaliseError
from core.verbalise.run_records import find_resumable_run, owner_state, run_owner, run_parameters
from core.verbalise.selection import select_units, unit_triples
from core.verbalise.template import TemplateVerbaliser
from tests.fixtures.verbalise_units import add_units

# Loads models: in a parallel run its tests go to workers kept for them
# (tests/fixtures/worker_memory.py).
pytestmark = pytest.mark.loads_models


def rows(store: SessionStore, run_id: int | None = None) -> list[tuple[int, str, int]]:
    with store.unit_of_work() as db:
        query = select(Verbalisation.unit_id, Verbalisation.lang, Verbalisation.candidate_index)
        if run_id is not None:
            query = query.where(Verbalisation.run_id == run_id)
        return sorted(tuple(r) for r in db.execute(query))


def get_run(store: SessionStore, run_id: int) -> ModelRun:
    with store.unit_of_work() as db:
        run = db.get(ModelRun, run_id)
        db.expunge(run)
        return run


class CountingTemplate(TemplateVerbaliser):
    """The template verbaliser, recording batch sizes and failing on demand."""

    def __init__(self, fail: Any = None) -> None:
        super().__init__()
        self.batches: list[int] = []
        self.fail = fail

    def verbalise(self, requests: Sequence[VerbaliseRequest]) -> list[list[Candidate]]:
        self.batches.append(len(requests))
        if self.fail is not None:
            error = self.fail(len(requests))
            if error is not None:
                raise error
        return super().verbalise(requests)


def test_causal_run_records_everything(store: SessionStore, tiny_causal_lm: Path) -> None:
    ids = add_units(store, 3)
    verbaliser = CausalVerbaliser(
        tiny_causal_lm, GenerationParams(candidates=2, max_new_tokens=3, seed=11), device="cpu"
    )
    reports: list[Progress] = []
    outcome = run_job(
        verbalise_job(store, verbaliser, "all", ["en", "it"], batch_size=4),
        on_progress=reports.append,
    )
    assert isinstance(outcome, JobSucceeded), getattr(outcome, "traceback", "")
    summary = outcome.result
    assert (summary.units, summary.requests, summary.texts) == (3, 6, 12)
    assert summary.unparsable == 12  # a random model never writes the marker
    assert summary.tokens > 0 and summary.tokens_per_s > 0
    run = get_run(store, summary.run_id)
    assert (run.kind, run.model_id, run.status, run.seed) == (
        "causal",
        str(tiny_causal_lm),
        "finished",
        11,
    )
    assert run.system_name == "tiny-llama"
    assert run.model_fingerprint == verbaliser.fingerprint() and len(run.model_fingerprint) == 64
    params = run.parameters
    assert params["model_path"] == str(tiny_causal_lm)
    assert (params["device"], params["dtype"], params["batch_size"]) == ("cpu", "float32", 4)
    assert (params["candidates"], params["temperature"], params["top_p"]) == (2, 0.7, 0.9)
    assert (params["max_new_tokens"], params["langs"], params["units"]) == (3, ["en", "it"], "all")
    assert params["chat_template"] is True
    assert set(run.prompt_templates) == {"en", "it"}
    assert "La verbalizzazione finale è:" in run.prompt_templates["it"]
    assert {"python", "torch", "transformers", "taillens"} <= set(run.software)
    assert run.finished_at is not None
    assert rows(store) == [(u, lang, c) for u in ids for lang in ("en", "it") for c in (0, 1)]
    with store.unit_of_work() as db:
        stored = db.scalars(select(Verbalisation)).all()
        assert all(v.parse_ok is False and v.text is None for v in stored)
    assert reports[-1].done == reports[-1].total == 6
    assert "units" in reports[-1].message and "tokens/s" in reports[-1].message


def test_template_run_writes_one_text_per_unit_and_language(store: SessionStore) -> None:
    ids = add_units(store, 2)
    outcome = run_job(verbalise_job(store, TemplateVerbaliser(), "all"))
    assert isinstance(outcome, JobSucceeded)
    with store.unit_of_work() as db:
        texts = dict(
            db.execute(
                select(Verbalisation.lang, Verbalisation.text).where(
                    Verbalisation.unit_id == ids[1]
                )
            ).all()
        )
    assert texts == {
        "en": "Paris1 has France as its country and Anne Hidalgo as its mayor.",
        "it": "Parigi1 ha come paese Francia e come sindaco Anne Hidalgo.",
        "es": "París1 tiene como país Francia y como alcalde Anne Hidalgo.",
    }
    run = get_run(store, outcome.result.run_id)
    assert (run.kind, run.model_id, run.parameters["candidates"]) == ("template", "template", 1)


def test_cancel_keeps_finished_batches_and_resume_skips_them(store: SessionStore) -> None:
    ids = add_units(store, 5)
    token = CancelToken()

    def cancel_during_first_batch(size: int) -> None:
        token.cancel()  # as a user clicking Cancel while the batch generates

    first = CountingTemplate(cancel_during_first_batch)
    outcome = run_job(verbalise_job(store, first, "all", ["en"], batch_size=2), token)
    assert isinstance(outcome, JobWasCancelled)
    run_id = outcome.partial.run_id
    assert outcome.partial.requests == 2 and first.batches == [2]
    assert rows(store, run_id) == [(ids[0], "en", 0), (ids[1], "en", 0)]
    assert get_run(store, run_id).status == "cancelled"

    # Same model and parameters (another batch size is fine): the run continues.
    second = CountingTemplate()
    outcome = run_job(verbalise_job(store, second, "all", ["en"], batch_size=3))
    assert isinstance(outcome, JobSucceeded)
    summary = outcome.result
    assert (summary.run_id, summary.resumed, summary.skipped_done) == (run_id, True, 2)
    assert second.batches == [3]
    assert rows(store, run_id) == [(i, "en", 0) for i in ids]
    assert get_run(store, run_id).status == "finished"
    with store.unit_of_work() as db:
        assert db.scalar(select(func.count(ModelRun.id))) == 1

    # A finished run is not resumed by default: a new one starts.
    outcome = run_job(verbalise_job(store, CountingTemplate(), "ids:1", ["en"]))
    assert outcome.result.run_id != run_id and not outcome.result.resumed
    # ... but it may be named explicitly, and then nothing is left to do.
    outcome = run_job(verbalise_job(store, CountingTemplate(), "all", ["en"], resume_run_id=run_id))
    assert (outcome.result.requests, outcome.result.skipped_done) == (0, 5)


@pytest.mark.parametrize("kind", ["causal", "seq2seq"])
def test_a_cancel_mid_batch_stops_within_a_step_and_keeps_earlier_batches(
    store: SessionStore, kind: str, request: pytest.FixtureRequest
) -> None:
    import torch
    from transformers import StoppingCriteria

    ids = add_units(store, 3)
    model = request.getfixturevalue("tiny_causal_lm" if kind == "causal" else "tiny_seq2seq")
    verbaliser_class = CausalVerbaliser if kind == "causal" else Seq2SeqVerbaliser
    # 200 new tokens: seconds per batch here, minutes for a large model.
    verbaliser = verbaliser_class(
        model, GenerationParams(candidates=2, max_new_tokens=200), device="cpu"
    )
    token = CancelToken()
    steps: list[int] = []  # decoding steps per generate() call

    class CountSteps(StoppingCriteria):
        """Counts steps; in the second batch, after its first step, a user clicks Cancel
        (from another thread, as the GUI's)."""

        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            steps[-1] += 1
            if len(steps) == 2 and steps[-1] == 1:
                clicker = threading.Thread(target=token.cancel)
                clicker.start()
                clicker.join()
            return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)

    original = verbaliser._generate

    def generate(model: Any, **kwargs: Any) -> Any:
        steps.append(0)
        if len(steps) == 1:
            kwargs["max_new_tokens"] = 3  # the first batch ends early, complete
        kwargs["stopping_criteria"].append(CountSteps())  # after the job's own criterion
        return original(model, **kwargs)

    verbaliser._generate = generate  # type: ignore[method-assign]
    outcome = run_job(verbalise_job(store, verbaliser, "all", ["en"], batch_size=1), token)
    assert isinstance(outcome, JobWasCancelled), getattr(outcome, "traceback", "")
    # Cancelled after step 1 of the second batch; the job's criterion saw it at step 2.
    assert steps == [3, 2]
    summary = outcome.partial
    assert (summary.requests, summary.texts) == (1, 2)
    # The first batch (the longest prompt: unit 1 has two triples, the others one) is kept
    # whole; nothing of the cut-short second one is written.
    assert rows(store, summary.run_id) == [(ids[1], "en", 0), (ids[1], "en", 1)]
    assert get_run(store, summary.run_id).status == "cancelled"
    assert verbaliser.should_stop is None  # the job's callable does not outlive it


def test_a_cancel_between_server_requests_drops_that_batch(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = add_units(store, 4)
    token = CancelToken()
    verbaliser = OpenAIVerbaliser(
        "http://127.0.0.1:9/v1",
        server_model="served",
        params=GenerationParams(candidates=1),
        concurrency=1,
    )
    sent: list[str] = []

    def complete(prompt: str, n: int, seed: int) -> tuple[list[Candidate], int]:
        sent.append(prompt)
        if len(sent) == 3:
            token.cancel()  # while the second batch's first request is with the server
        return [verbaliser._candidate("The final verbalization is: [A sentence.]", {}, None)], 4

    monkeypatch.setattr(verbaliser, "_complete", complete)
    outcome = run_job(verbalise_job(store, verbaliser, "all", ["en"], batch_size=2), token)
    assert isinstance(outcome, JobWasCancelled), getattr(outcome, "traceback", "")
    assert len(sent) == 3  # the fourth request was never sent
    run_id = outcome.partial.run_id
    assert rows(store, run_id) == [(ids[0], "en", 0), (ids[1], "en", 0)]
    assert get_run(store, run_id).status == "cancelled"


# Units of 1 to 7 triples (METHODS §5), in a mixed order: their prompts differ in length.
SIZES = (3, 1, 7, 2, 5, 4, 6)
LONG_FACTS = [
    ("Paris", "country", "France"),
    ("Paris", "mayor", "Anne Hidalgo"),
    ("Anne Hidalgo", "place of birth", "San Fernando"),
    ("Paris", "population", "2102650"),
    ("San Fernando", "country", "Spain"),
    ("France", "capital", "Paris"),
    ("Spain", "currency", "euro"),
]


def add_sized_units(
    store: SessionStore, sizes: Sequence[int] = SIZES, langs: tuple[str, ...] = ("en", "it")
) -> list[int]:
    """Units of ``sizes[i]`` triples each (the same English facts in every language)."""
    ids = []
    with store.unit_of_work() as db:
        for i, size in enumerate(sizes):
            unit = DataUnit(uid=f"s{i}", size=size, origin="built", tier="head")
            unit.triples = [
                UnitTriple(lang=lang, position=p, subject=f"{s}{i}", predicate=pr, object=o)
                for lang in langs
                for p, (s, pr, o) in enumerate(LONG_FACTS[:size])
            ]
            db.add(unit)
            db.flush()
            ids.append(unit.id)
    return ids


class RecordingCausal(CausalVerbaliser):
    """The causal verbaliser, recording each batch's (unit, lang) keys and prompt lengths
    in tokens as the model is fed them (measured here, not by the job's own function)."""

    def __init__(self, model: Path, on_batch: Any = None) -> None:
        super().__init__(model, GenerationParams(candidates=1, max_new_tokens=2), device="cpu")
        self.batches: list[list[tuple[Any, int]]] = []
        self.on_batch = on_batch

    def verbalise(self, requests: Sequence[VerbaliseRequest]) -> list[list[Candidate]]:
        from core.local_models.loader import prompt_token_ids

        tokenizer = self._ready().tokenizer
        self.batches.append([(r.key, len(prompt_token_ids(tokenizer, r.prompt))) for r in requests])
        results = super().verbalise(requests)
        if self.on_batch is not None:
            self.on_batch(len(self.batches))
        return results


def test_batches_are_length_ordered_and_resume_still_gets_every_output(
    store: SessionStore, tiny_causal_lm: Path
) -> None:
    ids = add_sized_units(store)
    token = CancelToken()
    # Cancelled once its second batch is done: a cancel is seen between batches.
    first = RecordingCausal(tiny_causal_lm, lambda n: token.cancel() if n == 2 else None)
    outcome = run_job(verbalise_job(store, first, "all", ["en", "it"], batch_size=3), token)
    assert isinstance(outcome, JobWasCancelled), getattr(outcome, "traceback", "")
    run_id = outcome.partial.run_id
    assert [len(batch) for batch in first.batches] == [3, 3]
    lengths = [n for batch in first.batches for _, n in batch]
    assert lengths == sorted(lengths, reverse=True)
    # The first batch holds the three longest prompts of all 14, worked out here.
    from core.local_models.loader import load_tokenizer, prompt_token_ids

    triples = unit_triples(store, ids, ["en", "it"])
    tokenizer = load_tokenizer(tiny_causal_lm)
    every = sorted(
        (
            len(prompt_token_ids(tokenizer, first.prompt_for(t, lang)))
            for (u, lang), t in triples.items()
        ),
        reverse=True,
    )
    assert lengths[:3] == every[:3] and lengths == every[:6]
    by_size = dict(zip(SIZES, ids, strict=True))
    assert first.batches[0][0][0] == (by_size[7], "it")  # the Italian template is longer
    done = {key for batch in first.batches for key, _ in batch}
    assert {(u, lang) for u, lang, _ in rows(store, run_id)} == done

    # Resumed with another batch size: only the 8 pairs left, again longest first.
    second = RecordingCausal(tiny_causal_lm)
    outcome = run_job(verbalise_job(store, second, "all", ["en", "it"], batch_size=4))
    assert isinstance(outcome, JobSucceeded), getattr(outcome, "traceback", "")
    summary = outcome.result
    assert (summary.run_id, summary.resumed, summary.skipped_done) == (run_id, True, 6)
    left = {(u, lang) for u in ids for lang in ("en", "it")} - done
    assert (summary.requests, summary.units, summary.texts) == (8, len({u for u, _ in left}), 8)
    assert [len(batch) for batch in second.batches] == [4, 4]
    rest = [n for batch in second.batches for _, n in batch]
    assert rest == sorted(rest, reverse=True) and max(rest) <= min(lengths)
    assert {key for batch in second.batches for key, _ in batch} == left
    assert rows(store, run_id) == [(u, lang, 0) for u in ids for lang in ("en", "it")]
    # Each row keeps its own unit's prompt, whatever order the rows were written in.
    with store.unit_of_work() as db:
        for unit_id, lang, prompt in db.execute(
            select(Verbalisation.unit_id, Verbalisation.lang, Verbalisation.prompt)
        ):
            assert prompt == second.prompt_for(triples[(unit_id, lang)], lang)


def test_the_batching_order_per_kind(tiny_seq2seq: Path) -> None:
    seq2seq = Seq2SeqVerbaliser(tiny_seq2seq, GenerationParams(max_new_tokens=2), device="cpu")
    template = TemplateVerbaliser()
    for verbaliser in (seq2seq, template):
        requests = [
            VerbaliseRequest(
                (i, "en"),
                "en",
                tuple(LONG_FACTS[:size]),
                verbaliser.prompt_for(LONG_FACTS[:size], "en"),
            )
            for i, size in enumerate((2, 5, 1, 5, 7))
        ]
        # Not loaded (a local model) or a template: the order is kept as given.
        assert prompt_lengths(verbaliser, [r.prompt for r in requests]) is None
        assert order_for_batching(verbaliser, requests) == requests
    seq2seq.load()
    tokenizer = seq2seq.loaded.tokenizer
    expected = [len(tokenizer(r.prompt)["input_ids"]) for r in requests]
    assert prompt_lengths(seq2seq, [r.prompt for r in requests]) == expected
    # Longest first; the two 5-triple units' prompts tie, and keep their order (1, 3).
    assert [r.key[0] for r in order_for_batching(seq2seq, requests)] == [4, 1, 3, 0, 2]
    seq2seq.close()


def test_resume_refuses_a_run_with_other_parameters(
    store: SessionStore, tiny_causal_lm: Path
) -> None:
    add_units(store, 1)
    outcome = run_job(verbalise_job(store, TemplateVerbaliser(), "all", ["en"]))
    run_id = outcome.result.run_id
    verbaliser = CausalVerbaliser(tiny_causal_lm, GenerationParams(max_new_tokens=2), device="cpu")
    failed = run_job(verbalise_job(store, verbaliser, "all", ["en"], resume_run_id=run_id))
    assert isinstance(failed, JobFailed)
    assert isinstance(failed.error, VerbaliseError)
    assert f"run {run_id} was made with a different model" in failed.message
    missing = run_job(verbalise_job(store, TemplateVerbaliser(), "all", ["en"], resume_run_id=999))
    assert "no run 999" in missing.message


def test_find_resumable_run_matches_parameters_not_batch_size(store: SessionStore) -> None:
    add_units(store, 1)
    template = TemplateVerbaliser()
    templates = {"en": template.templates["en"]}
    with store.unit_of_work() as db:
        run = ModelRun(
            kind="template",
            model_id="template",
            status="failed",
            seed=0,
            model_fingerprint=template.fingerprint(),
            prompt_templates=templates,
            parameters=run_parameters(template, ["en"], 8, "all"),
        )
        db.add(run)
        db.flush()
        run_id = run.id
    assert (
        find_resumable_run(
            store, template, run_parameters(template, ["en"], 2, "tier:x"), templates
        )
        == run_id
    )
    assert (
        find_resumable_run(
            store, template, run_parameters(template, ["en", "it"], 8, "all"), templates
        )
        is None
    )


def _set_owner(
    store: SessionStore, run_id: int, owner: dict[str, Any] | None, status: str = "running"
) -> None:
    with store.unit_of_work() as db:
        run = db.get(ModelRun, run_id)
        software = {k: v for k, v in (run.software or {}).items() if k != "owner"}
        run.software = software if owner is None else {**software, "owner": owner}
        run.status = status


def _dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_run_another_live_job_is_writing_is_not_resumed(store: SessionStore) -> None:
    ids = add_units(store, 3)
    nested: list[Any] = []

    def second_job_while_the_first_runs(size: int) -> None:
        if nested:
            return
        # As `taillens verbalise` (resume by default) while the GUI runs the same run.
        nested.append(run_job(verbalise_job(store, CountingTemplate(), "all", ["en"])))
        nested.append(
            run_job(
                verbalise_job(store, CountingTemplate(), "all", ["en"], resume_run_id=first_run())
            )
        )

    def first_run() -> int:
        with store.unit_of_work() as db:
            return db.scalar(select(func.min(ModelRun.id)))

    first = CountingTemplate(second_job_while_the_first_runs)
    outcome = run_job(verbalise_job(store, first, "all", ["en"], batch_size=2))
    assert isinstance(outcome, JobSucceeded), getattr(outcome, "traceback", "")
    run_id = outcome.result.run_id
    assert run_id == first_run() and not outcome.result.resumed
    second, named = nested
    assert isinstance(second, JobSucceeded), getattr(second, "traceback", "")
    assert second.result.run_id != run_id and not second.result.resumed
    where = f"process {os.getpid()} on {socket.gethostname()}"
    assert second.result.not_resumed == [(run_id, f"still running in {where}")]
    assert isinstance(named, JobFailed) and isinstance(named.error, VerbaliseError)
    assert named.message.startswith(f"run {run_id} is still running in {where}: wait")
    # Both runs are whole and finished; no collision on their rows.
    assert rows(store, run_id) == rows(store, second.result.run_id) == [(i, "en", 0) for i in ids]
    for finished in (run_id, second.result.run_id):
        run = get_run(store, finished)
        assert run.status == "finished" and "owner" not in run.software


def test_a_run_left_running_by_a_killed_process_is_resumed(store: SessionStore) -> None:
    ids = add_units(store, 3)
    token = CancelToken()
    first = CountingTemplate(lambda size: token.cancel())
    outcome = run_job(verbalise_job(store, first, "all", ["en"], batch_size=2), token)
    run_id = outcome.partial.run_id
    # As if its process had been killed mid-run: still "running", owner gone.
    dead = {"pid": _dead_pid(), "host": socket.gethostname(), "job": "killed"}
    assert owner_state(dead) == "gone"
    _set_owner(store, run_id, dead)
    outcome = run_job(verbalise_job(store, CountingTemplate(), "all", ["en"]))
    assert isinstance(outcome, JobSucceeded), getattr(outcome, "traceback", "")
    assert (outcome.result.run_id, outcome.result.resumed) == (run_id, True)
    assert outcome.result.skipped_done == 2 and outcome.result.not_resumed == []
    assert rows(store, run_id) == [(i, "en", 0) for i in ids]
    assert get_run(store, run_id).status == "finished"

    # A run from before owners were recorded is resumed as before.
    template = TemplateVerbaliser()
    templates = {"en": template.templates["en"]}
    parameters = run_parameters(template, ["en"], 8, "all")
    _set_owner(store, run_id, None)
    assert find_resumable_run(store, template, parameters, templates) == run_id
    # Another host's owner cannot be checked: not resumed by default, but may be named.
    elsewhere = {"pid": os.getpid(), "host": socket.gethostname() + "-other", "job": "x"}
    assert owner_state(elsewhere) == "unknown"
    _set_owner(store, run_id, elsewhere)
    busy: list[tuple[int, str]] = []
    assert find_resumable_run(store, template, parameters, templates, busy) is None
    assert busy == [
        (run_id, f"may still be running in process {os.getpid()} on {socket.gethostname()}-other")
    ]
    named = run_job(verbalise_job(store, CountingTemplate(), "all", ["en"], resume_run_id=run_id))
    assert isinstance(named, JobSucceeded) and named.result.resumed


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs Linux /proc")
def test_a_reused_pid_of_another_program_is_not_an_owner() -> None:
    other = subprocess.Popen(["sleep", "30"])
    try:
        owner = {"pid": other.pid, "host": socket.gethostname(), "job": "x"}
        assert owner_state(owner) == "gone"  # alive, but not python / taillens
    finally:
        other.kill()
        other.wait()
    assert owner_state(run_owner()) == "alive"
    assert owner_state(None) == owner_state({"host": "h"}) == "none"


def test_a_failure_does_not_overwrite_a_run_another_owner_took(store: SessionStore) -> None:
    add_units(store, 2)
    other = {"pid": os.getpid(), "host": socket.gethostname(), "job": "the-other-job"}

    def taken_over_then_fail(size: int) -> Exception:
        with store.unit_of_work() as db:
            run_id = db.scalar(select(func.max(ModelRun.id)))
        _set_owner(store, run_id, other)  # e.g. named with --resume from another host
        return RuntimeError("UNIQUE constraint failed: verbalisations.run_id")

    outcome = run_job(verbalise_job(store, CountingTemplate(taken_over_then_fail), "all", ["en"]))
    assert isinstance(outcome, JobFailed) and "UNIQUE constraint" in outcome.message
    run = get_run(store, outcome_run(store))
    assert run.status == "running" and run.software["owner"] == other


def outcome_run(store: SessionStore) -> int:
    with store.unit_of_work() as db:
        [run_id] = db.scalars(select(ModelRun.id)).all()
        return run_id


def test_out_of_memory_halves_the_batch_and_everything_arrives(
    store: SessionStore, tiny_causal_lm: Path
) -> None:
    import torch

    ids = add_units(store, 4)
    verbaliser = CausalVerbaliser(
        tiny_causal_lm, GenerationParams(candidates=2, max_new_tokens=2), device="cpu"
    )
    original = verbaliser._generate
    batches: list[int] = []

    def generate(model: Any, **kwargs: Any) -> Any:
        size = kwargs["input_ids"].shape[0]
        batches.append(size)
        if size > 2:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return original(model, **kwargs)

    verbaliser._generate = generate  # type: ignore[method-assign]
    outcome = run_job(verbalise_job(store, verbaliser, "all", ["en"], batch_size=4))
    assert isinstance(outcome, JobSucceeded), getattr(outcome, "traceback", "")
    assert batches == [4, 2, 2]
    assert (outcome.result.oom_halvings, outcome.result.batch_size) == (1, 2)
    assert rows(store) == [(u, "en", c) for u in ids for c in (0, 1)]


def test_runtime_out_of_memory_at_batch_size_one_fails_clearly(store: SessionStore) -> None:
    add_units(store, 3)
    always = CountingTemplate(lambda n: RuntimeError("CUDA error: out of memory"))
    outcome = run_job(verbalise_job(store, always, "all", ["en"], batch_size=4))
    assert isinstance(outcome, JobFailed)
    assert "out of memory on the device even with one unit per batch" in outcome.message
    assert always.batches == [3, 2, 1]  # the chunk of 3 units, halved to 2, then 1
    with store.unit_of_work() as db:
        assert db.scalar(select(ModelRun.status)) == "failed"


def test_other_errors_are_not_retried(store: SessionStore) -> None:
    add_units(store, 2)
    broken = CountingTemplate(lambda n: RuntimeError("shape mismatch"))
    outcome = run_job(verbalise_job(store, broken, "all", ["en"], batch_size=4))
    assert isinstance(outcome, JobFailed) and outcome.message == "shape mismatch"
    assert broken.batches == [2]


def test_unit_selection(store: SessionStore) -> None:
    ids = add_units(store, 5)
    with store.unit_of_work() as db:
        imported = DataUnit(
            uid="tailnlg:1",
            size=1,
            origin="import",
            tier="long_tail",
            sub_tier="long_tail_it",
            attributes={"entry": {"category": "Cave"}},
        )
        db.add(imported)
        db.flush()
        imported_id = imported.id
    assert select_units(store, "all") == [*ids, imported_id]
    assert select_units(store, "tier:head") == ids[0::2]
    assert select_units(store, "tier:long_tail_it") == [imported_id]
    assert select_units(store, "category:City") == ids[0::2]
    assert select_units(store, "category:Cave") == [imported_id]
    assert select_units(store, f"ids:{ids[3]},{ids[1]}") == [ids[1], ids[3]]
    assert select_units(store, [ids[2]]) == [ids[2]]
    with pytest.raises(VerbaliseError, match="no unit"):
        select_units(store, "ids:999")
    with pytest.raises(VerbaliseError, match="unknown unit selection"):
        select_units(store, "shape:chain")
    with pytest.raises(VerbaliseError, match="must be integers"):
        select_units(store, "ids:a")
    with pytest.raises(VerbaliseError, match="no units match"):
        verbalise_job(store, TemplateVerbaliser(), "category:Nothing")
    with pytest.raises(VerbaliseError, match="languages must be among"):
        verbalise_job(store, TemplateVerbaliser(), "all", ["de"])


def test_triples_with_overrides_and_missing_languages(store: SessionStore) -> None:
    [only_en] = add_units(store, 1, langs=("en",))
    with store.unit_of_work() as db:
        row = db.scalar(select(UnitTriple).where(UnitTriple.unit_id == only_en))
        row.object_override = "the French Republic"
        db.add(Category(name="Unused", class_qid="Q1", pattern="?item wdt:P31 wd:Q1 ."))
    triples = unit_triples(store, [only_en], ["en", "it"])
    assert triples == {(only_en, "en"): (("Paris0", "country", "the French Republic"),)}
    outcome = run_job(verbalise_job(store, TemplateVerbaliser(), "all", ["en", "it"]))
    assert (outcome.result.requests, outcome.result.skipped_no_triples) == (1, 1)
    with store.unit_of_work() as db:
        assert db.scalar(select(Verbalisation.text)) == (
            "Paris0 has the French Republic as its country."
        )


def test_a_server_run_from_before_logprobs_were_asked_for_is_resumed(
    store: SessionStore,
) -> None:
    add_units(store, 1)
    verbaliser = OpenAIVerbaliser("http://127.0.0.1:9/v1", "m")  # never contacted
    parameters = run_parameters(verbaliser, ["en"], 8, "all")
    assert parameters["logprobs"] is True
    older = {k: v for k, v in parameters.items() if k != "logprobs"}
    with store.unit_of_work() as db:
        run = ModelRun(
            kind="openai",
            model_id=verbaliser.model_id,
            status="failed",
            seed=0,
            model_fingerprint=verbaliser.fingerprint(),
            prompt_templates={"en": verbaliser.templates["en"]},
            parameters=older,
        )
        db.add(run)
        db.flush()
        run_id = run.id
    assert (
        find_resumable_run(store, verbaliser, parameters, {"en": verbaliser.templates["en"]})
        == run_id
    )


def test_cuda_out_of_memory_backs_the_batch_off_says_so_and_records_it(
    store: SessionStore, tiny_causal_lm: Path
) -> None:
    """A fake generate raising torch.cuda.OutOfMemoryError for batches over 1: the run
    goes on at 1, says so in its progress, and records it in its placement."""
    import torch

    ids = add_units(store, 3)
    verbaliser = CausalVerbaliser(
        tiny_causal_lm, GenerationParams(candidates=1, max_new_tokens=2), device="cpu"
    )
    original = verbaliser._generate
    batches: list[int] = []

    def generate(model: Any, **kwargs: Any) -> Any:
        batches.append(kwargs["input_ids"].shape[0])
        if batches[-1] > 1:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 9 GiB")
        return original(model, **kwargs)

    verbaliser._generate = generate  # type: ignore[method-assign]
    seen: list[Progress] = []
    outcome = run_job(
        verbalise_job(store, verbaliser, "all", ["en"], batch_size=8), None, seen.append
    )
    assert isinstance(outcome, JobSucceeded), getattr(outcome, "traceback", "")
    assert batches == [3, 3, 2, 1, 1, 1]  # 3 units: batches of 8 and 4 hold all of them
    said = [p.message for p in seen if "out of memory" in p.message]
    assert said == [f"out of memory at batch {n}: going on with {n // 2}" for n in (8, 4, 2)]
    assert rows(store) == [(u, "en", 0) for u in ids]
    run = get_run(store, outcome.result.run_id)
    placed = run.parameters["placement"]
    assert placed["device"] == "cpu" and placed["threads"] >= 1
    assert (placed["batch_size"], placed["oom_backoffs"]) == (1, 3)
