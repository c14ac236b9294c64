"""Batched against one-unit-at-a-time generation with the causal verbaliser.

The same units (1 to 7 triples each, the METHODS §5 sizes, in a mixed order; en) go
through :class:`CausalVerbaliser` three times: in batches of ``--batch-size`` (left
padding, N candidates per unit in one ``generate`` call) ordered as the verbalise job
orders them (``core.verbalise.batch_loop.order_for_batching``: by prompt length in tokens,
longest first), in batches in the given order (every batch mixes short and long prompts
and is padded to its longest), and one unit per call. All give the same number of
outputs; the figures are the ratios of the times (target ≥ 3× for batched against one
unit at a time). By default a tiny random Llama is built in a temporary
folder (the tests' model); ``--model`` times a real one, ``--device cuda`` on a GPU.

    .venv/bin/python benchmarks/verbalise.py [--units 48] [--batch-size 16] [--candidates 3]
        [--max-new-tokens 32] [--repeats 3] [--device auto|cpu|cuda|mps] [--dtype auto]
        [--model PATH]

Each mode is timed ``--repeats`` times, the modes taking turns, and its fastest time kept
(a shared machine's other work only ever adds time, and taking turns spreads a busy spell
over all modes rather than one).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.verbalise.base import GenerationParams, VerbaliseRequest
from core.verbalise.batch_loop import order_for_batching
from core.verbalise.local import CausalVerbaliser

FACTS = [
    ("Paris", "country", "France"),
    ("Paris", "mayor", "Anne Hidalgo"),
    ("Anne Hidalgo", "place of birth", "San Fernando"),
    ("Paris", "population", "2102650"),
    ("San Fernando", "country", "Spain"),
    ("France", "capital", "Paris"),
    ("Spain", "currency", "euro"),
]


def units(count: int) -> list[tuple[tuple[str, str, str], ...]]:
    # 1 to 7 triples in turn: prompts of different lengths, so batches in the given order
    # really are padded (each batch of 7 or more holds every size).
    return [
        tuple((f"{s} {i}", p, o) for s, p, o in FACTS[: i % len(FACTS) + 1]) for i in range(count)
    ]


def timed(
    verbaliser: CausalVerbaliser, requests: list[VerbaliseRequest], batch_size: int
) -> tuple[float, int, int]:
    started = time.perf_counter()
    outputs = tokens = 0
    for start in range(0, len(requests), batch_size):
        for candidates in verbaliser.verbalise(requests[start : start + batch_size]):
            outputs += len(candidates)
            tokens += sum(c.tokens for c in candidates)
    if verbaliser.loaded is not None and verbaliser.loaded.device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()
    return time.perf_counter() - started, outputs, tokens


def fastest(
    verbaliser: CausalVerbaliser, modes: list[tuple[list[VerbaliseRequest], int]], repeats: int
) -> list[tuple[float, int, int]]:
    """For each (requests, batch size) mode, the fastest of ``repeats`` timings, the modes
    taking turns (same seed per batch, so every repeat gives the same outputs)."""
    best: list[tuple[float, int, int] | None] = [None] * len(modes)
    for _ in range(max(1, repeats)):
        for index, (requests, batch_size) in enumerate(modes):
            result = timed(verbaliser, requests, batch_size)
            current = best[index]
            if current is None or result[0] < current[0]:
                best[index] = result
    return [result for result in best if result is not None]


def padding(
    verbaliser: CausalVerbaliser, requests: list[VerbaliseRequest], batch_size: int
) -> float:
    """The share of the padded prompt tokens that are padding, batching in this order."""
    from core.local_models.loader import prompt_token_ids

    assert verbaliser.loaded is not None
    tokenizer = verbaliser.loaded.tokenizer
    lengths = [len(prompt_token_ids(tokenizer, r.prompt)) for r in requests]
    padded = sum(
        max(lengths[i : i + batch_size]) * len(lengths[i : i + batch_size])
        for i in range(0, len(lengths), batch_size)
    )
    return 1 - sum(lengths) / padded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--units", type=int, default=48)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--candidates", type=int, default=3)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--model", help="a causal model folder or cached HF id (default: tiny)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        model = args.model
        if model is None:
            from tests.fixtures.tiny_models import build_tiny_causal_lm

            model = str(build_tiny_causal_lm(Path(folder) / "tiny-llama"))
        params = GenerationParams(candidates=args.candidates, max_new_tokens=args.max_new_tokens)
        verbaliser = CausalVerbaliser(model, params, device=args.device, dtype=args.dtype)
        started = time.perf_counter()
        verbaliser.load()
        loaded = verbaliser.loaded
        assert loaded is not None
        print(
            f"model {verbaliser.system_name} on {loaded.device} ({loaded.dtype}), loaded in "
            f"{time.perf_counter() - started:.1f} s; {args.units} units × {args.candidates} "
            f"candidates, ≤ {args.max_new_tokens} new tokens"
        )
        requests = [
            VerbaliseRequest((i, "en"), "en", t, verbaliser.prompt_for(t, "en"))
            for i, t in enumerate(units(args.units))
        ]
        started = time.perf_counter()
        ordered = order_for_batching(verbaliser, requests)
        ordering_s = time.perf_counter() - started
        timed(verbaliser, requests[: args.batch_size], args.batch_size)  # warm-up
        in_job_order, in_given_order, single = fastest(
            verbaliser,
            [(ordered, args.batch_size), (requests, args.batch_size), (requests, 1)],
            args.repeats,
        )
        print(
            f"  padding: {padding(verbaliser, ordered, args.batch_size):.0%} of prompt "
            f"tokens in job order, {padding(verbaliser, requests, args.batch_size):.0%} in "
            f"the given order; ordering took {ordering_s * 1000:.0f} ms"
        )
        for name, (seconds, outputs, tokens) in (
            (f"batch {args.batch_size}, job order", in_job_order),
            (f"batch {args.batch_size}, given order", in_given_order),
            ("one unit per call", single),
        ):
            print(
                f"  {name:<24} {seconds:7.2f} s  {outputs:5d} outputs  {tokens:7d} tokens  "
                f"{tokens / seconds:9.0f} tokens/s  {args.units / seconds:7.1f} units/s"
            )
        assert in_job_order[1] == in_given_order[1] == single[1], (
            "every mode must give the same number of outputs"
        )
        print(
            f"batched in job order is {single[0] / in_job_order[0]:.1f}× faster than one "
            f"unit at a time (target ≥ 3×); in the given order "
            f"{single[0] / in_given_order[0]:.1f}×; job order against given order "
            f"{in_given_order[0] / in_job_order[0]:.2f}×"
        )
        verbaliser.close()


if __name__ == "__main__":
    main()
