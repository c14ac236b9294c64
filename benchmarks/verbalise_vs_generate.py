"""Tokens/s of the verbalise job against the same model's own ``generate``,
and an out-of-memory back-off on a real GPU.

Run (on a GPU machine; CPU works, slowly, with a small ``--hidden``):

    PYTHONPATH=$PWD python benchmarks/verbalise_vs_generate.py [--units 256] \\
        [--batch-size 32] [--max-new-tokens 64] [--hidden 2048] [--layers 16] \\
        [--repeats 2] [--device auto] [--oom-check]

The model is a random Llama (``--hidden`` wide, ``--layers`` deep, 16 heads: about 0.8
billion parameters by default; the tests' BPE tokenizer, a vocabulary of a few hundred),
built in a temporary folder and loaded through ``CausalVerbaliser``, i.e. through
``core.local_models.placement`` as every run loads it (dtype, device and threads chosen there and
printed). The units are synthetic, 1 to 7 triples (the METHODS §5 sizes), en, one
candidate each, sampling with the app's defaults (temperature 0.7, top-p 0.9).

Three ways, taking turns ``--repeats`` times, the fastest of each kept:

* **job**: ``verbalise_job`` into a session, what ``taillens verbalise`` runs (prompts
  ordered by length, batches, decoding, one transaction per batch); a new run each time.
  Time = the job's wall clock, model already loaded.
* **generate, given order**: a plain loop over the same prompts in the units' order:
  tokenise the batch (the same chat-templated ids), pad, ``model.generate`` with the
  same arguments, decode. Nothing stored.
* **generate, job order**: the same loop over the batches the job makes, so the
  difference to the job is the job's own overhead (ordering, writing, progress).

Tokens are the generated tokens up to the first end of sequence, counted the same way
for all three. With ``--oom-check`` the job then runs again with
``torch.cuda.set_per_process_memory_fraction`` capping the GPU at the weights plus
``--oom-headroom-gib`` and a batch that cannot fit, and the run's progress lines and
recorded placement (batch size it settled on, back-offs) are printed: a real CUDA
out-of-memory error, not a simulated one.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.verbalise import FACTS  # noqa: E402 (the same facts as that benchmark)
from core import heavy  # noqa: E402
from core.jobs import CancelToken, JobSucceeded, Progress, run_job  # noqa: E402
from core.local_models.loader import prompts_token_ids  # noqa: E402
from core.store import SessionStore  # noqa: E402
from core.store.models import DataUnit, ModelRun, UnitTriple  # noqa: E402
from core.verbalise.base import GenerationParams, VerbaliseRequest  # noqa: E402
from core.verbalise.batch_loop import order_for_batching  # noqa: E402
from core.verbalise.job import verbalise_job  # noqa: E402
from core.verbalise.local import CausalVerbaliser, _eos_ids, _until_eos  # noqa: E402
from core.verbalise.selection import unit_triples  # noqa: E402


def seed_session(path: Path, count: int) -> list[int]:
    """``count`` units of 1 to 7 triples in turn (en), their ids in order."""
    ids = []
    with SessionStore.create(path) as store, store.unit_of_work() as db:
        for i in range(count):
            size = i % len(FACTS) + 1
            unit = DataUnit(uid=f"b{i}", root_qid=f"Q{i + 1}", size=size, origin="built")
            unit.triples = [
                UnitTriple(lang="en", position=p, subject=f"{s} {i}", predicate=pr, object=o)
                for p, (s, pr, o) in enumerate(FACTS[:size])
            ]
            db.add(unit)
            db.flush()
            ids.append(unit.id)
    return ids


def sync(device: str) -> None:
    if device.startswith("cuda"):
        with heavy.lock():
            import torch

        torch.cuda.synchronize()


def plain_generate(
    verbaliser: CausalVerbaliser, requests: list[VerbaliseRequest], batch_size: int
) -> tuple[float, int]:
    """A plain loop over ``model.generate``: the same ids, arguments and decoding."""
    with heavy.lock():
        import torch

    loaded = verbaliser.loaded
    assert loaded is not None
    tokenizer, model, params = loaded.tokenizer, loaded.model, verbaliser.params
    eos = _eos_ids(model, tokenizer)
    tokens = 0
    sync(loaded.device)
    started = time.perf_counter()
    for start in range(0, len(requests), batch_size):
        ids = prompts_token_ids(tokenizer, [r.prompt for r in requests[start : start + batch_size]])
        batch = tokenizer.pad({"input_ids": ids}, return_tensors="pt")
        batch = {k: v.to(model.device) for k, v in batch.items()}
        torch.manual_seed(params.seed)
        with torch.inference_mode():
            output = model.generate(
                **batch,
                do_sample=True,
                temperature=params.temperature,
                top_p=params.top_p,
                top_k=0,
                max_new_tokens=params.max_new_tokens,
                num_return_sequences=params.candidates,
                pad_token_id=tokenizer.pad_token_id,
            )
        for row in output[:, batch["input_ids"].shape[1] :].cpu().tolist():
            kept = _until_eos(row, eos, tokenizer.pad_token_id)
            tokenizer.decode(kept, skip_special_tokens=True)
            tokens += len(kept)
    sync(loaded.device)
    return time.perf_counter() - started, tokens


def job_run(
    store: SessionStore,
    verbaliser: CausalVerbaliser,
    batch_size: int,
    units: Any = "all",
    seen: list[Progress] | None = None,
) -> tuple[float, Any]:
    assert verbaliser.loaded is not None
    sync(verbaliser.loaded.device)
    started = time.perf_counter()
    outcome = run_job(
        verbalise_job(
            store,
            verbaliser,
            units,
            ["en"],
            batch_size=batch_size,
            resume=False,
            close_when_done=False,
        ),
        CancelToken(),
        (seen.append if seen is not None else lambda progress: None),
    )
    sync(verbaliser.loaded.device)
    elapsed = time.perf_counter() - started
    assert isinstance(outcome, JobSucceeded), getattr(outcome, "traceback", outcome)
    return elapsed, outcome.result


def oom_check(store: SessionStore, verbaliser: CausalVerbaliser, args: argparse.Namespace) -> None:
    with heavy.lock():
        import torch

    loaded = verbaliser.loaded
    assert loaded is not None
    if not loaded.device.startswith("cuda"):
        print("out-of-memory check: needs a CUDA device, skipped")
        return
    weights = sum(p.numel() * p.element_size() for p in loaded.model.parameters())
    total = torch.cuda.get_device_properties(0).total_memory
    cap = weights + args.oom_headroom_gib * 2**30
    torch.cuda.empty_cache()
    torch.cuda.set_per_process_memory_fraction(cap / total, 0)
    verbaliser.params = GenerationParams(
        candidates=args.oom_candidates, max_new_tokens=args.max_new_tokens, seed=0
    )
    units = args.unit_ids[: args.oom_units]
    seen: list[Progress] = []
    try:
        elapsed, summary = job_run(store, verbaliser, args.oom_batch, units, seen)
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0, 0)
    with store.snapshot() as db:
        run = db.get(ModelRun, summary.run_id)
        placement = dict((run.parameters or {}).get("placement") or {})
    print(
        f"out-of-memory check: GPU capped at {cap / 2**30:.1f} GiB (weights "
        f"{weights / 2**30:.2f} GiB + {args.oom_headroom_gib} GiB), {len(units)} units x "
        f"{args.oom_candidates} candidates, asked batch {args.oom_batch}"
    )
    for line in dict.fromkeys(p.message for p in seen if "out of memory" in p.message):
        print(f"  progress: {line}")
    print(
        f"  finished in {elapsed:.1f} s: {summary.texts} texts, batch settled at "
        f"{summary.batch_size} after {summary.oom_halvings} halvings; the run records "
        f"batch_size={placement.get('batch_size')} oom_backoffs={placement.get('oom_backoffs')}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=2048)
    parser.add_argument("--layers", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--oom-check", action="store_true")
    parser.add_argument("--oom-units", type=int, default=32)
    parser.add_argument("--oom-candidates", type=int, default=8)
    parser.add_argument("--oom-batch", type=int, default=32)
    parser.add_argument("--oom-headroom-gib", type=float, default=4.0)
    args = parser.parse_args()

    from tests.fixtures.tiny_models import build_tiny_causal_lm

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        model = build_tiny_causal_lm(
            folder / "llama",
            hidden_size=args.hidden,
            layers=args.layers,
            heads=16 if args.hidden >= 256 else 4,
            kv_heads=16 if args.hidden >= 256 else 2,
            max_positions=4096,
            dtype="bfloat16" if args.hidden > 64 else "float32",
        )
        built_s = time.perf_counter() - started
        ids = seed_session(folder / "bench.taillens", args.units)
        args.unit_ids = ids
        params = GenerationParams(candidates=1, max_new_tokens=args.max_new_tokens, seed=0)
        verbaliser = CausalVerbaliser(model, params, device=args.device, dtype=args.dtype)
        started = time.perf_counter()
        verbaliser.load()
        loaded = verbaliser.loaded
        assert loaded is not None
        count = sum(p.numel() for p in loaded.model.parameters())
        print(
            f"model: random Llama, {count / 1e6:,.0f} M parameters ({args.layers} layers x "
            f"{args.hidden}), built in {built_s:.1f} s, loaded in "
            f"{time.perf_counter() - started:.1f} s"
        )
        with SessionStore.open(folder / "bench.taillens") as store:
            triples = unit_triples(store, ids, ["en"])
            requests = [
                VerbaliseRequest(key, "en", triples[key], verbaliser.prompt_for(triples[key], "en"))
                for key in ((i, "en") for i in ids)
            ]
            ordered = order_for_batching(verbaliser, requests)
            prompts = [r.prompt for r in requests]
            lengths = [len(ids) for ids in prompts_token_ids(loaded.tokenizer, prompts)]
            # Warm-up: every batch shape once. On a GPU the first pass over new shapes
            # pays for loading and picking kernels (about 2x), whichever way runs first.
            plain_generate(verbaliser, ordered, args.batch_size)
            times: dict[str, list[tuple[float, int]]] = {"job": [], "given": [], "ordered": []}
            placement: dict[str, Any] = {}
            for n in range(args.repeats):
                elapsed, summary = job_run(store, verbaliser, args.batch_size)
                placement = summary.placement
                times["job"].append((elapsed, summary.tokens))
                times["given"].append(plain_generate(verbaliser, requests, args.batch_size))
                times["ordered"].append(plain_generate(verbaliser, ordered, args.batch_size))
                print(
                    f"  repeat {n + 1}: job {times['job'][-1][0]:.2f} s, generate (given "
                    f"order) {times['given'][-1][0]:.2f} s, generate (job order) "
                    f"{times['ordered'][-1][0]:.2f} s",
                    flush=True,
                )
            print(f"placement the run recorded: {placement}")
            print(
                f"{args.units} units (prompts {min(lengths)}-{max(lengths)} tokens, median "
                f"{statistics.median(lengths):.0f}), batch {args.batch_size}, <= "
                f"{args.max_new_tokens} new tokens, 1 candidate; fastest of {args.repeats}"
            )
            best = {k: min(v) for k, v in times.items()}
            for key, label in (
                ("job", "verbalise job"),
                ("given", "generate, given order"),
                ("ordered", "generate, job order"),
            ):
                seconds, tokens = best[key]
                print(
                    f"  {label:<22} {seconds:7.2f} s {tokens:8,d} tokens "
                    f"{tokens / seconds:9,.0f} tokens/s"
                )
            rate = {key: tokens / seconds for key, (seconds, tokens) in best.items()}
            print(
                f"job / generate (given order): {rate['job'] / rate['given']:.2f}x; "
                f"job / generate (job order): {rate['job'] / rate['ordered']:.2f}x (tokens/s)"
            )
            if args.oom_check:
                oom_check(store, verbaliser, args)
        verbaliser.close()


if __name__ == "__main__":
    main()
