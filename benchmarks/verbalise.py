"""Batched against one-unit-at-a-time generation with the causal verbaliser.

The same units (a few triples each, en) go through :class:`CausalVerbaliser` twice:
in batches of ``--batch-size`` (left padding, N candidates per unit in one ``generate``
call) and one unit per call. Both give the same number of outputs; the figure is the
ratio of the times (target ≥ 3×). By default a tiny random Llama is built in a temporary
folder (the tests' model); ``--model`` times a real one, ``--device cuda`` on a GPU.

    .venv/bin/python benchmarks/verbalise.py [--units 48] [--batch-size 16] [--candidates 3]
        [--max-new-tokens 32] [--device auto|cpu|cuda|mps] [--dtype auto] [--model PATH]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.verbalise.base import GenerationParams, VerbaliseRequest  # noqa: E402
from core.verbalise.local import CausalVerbaliser  # noqa: E402

FACTS = [("Paris", "country", "France"), ("Paris", "mayor", "Anne Hidalgo"),
         ("Anne Hidalgo", "place of birth", "San Fernando"), ("Paris", "population", "2102650"),
         ("San Fernando", "country", "Spain")]


def units(count: int) -> list[tuple[tuple[str, str, str], ...]]:
    # 1 to 5 triples: prompts of different lengths, so the batches really are padded.
    return [tuple((f"{s} {i}", p, o) for s, p, o in FACTS[: i % len(FACTS) + 1])
            for i in range(count)]


def timed(verbaliser: CausalVerbaliser, requests: list[VerbaliseRequest],
          batch_size: int) -> tuple[float, int, int]:
    started = time.perf_counter()
    outputs = tokens = 0
    for start in range(0, len(requests), batch_size):
        for candidates in verbaliser.verbalise(requests[start:start + batch_size]):
            outputs += len(candidates)
            tokens += sum(c.tokens for c in candidates)
    if verbaliser.loaded is not None and verbaliser.loaded.device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()
    return time.perf_counter() - started, outputs, tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--units", type=int, default=48)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--candidates", type=int, default=3)
    parser.add_argument("--max-new-tokens", type=int, default=32)
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
        print(f"model {verbaliser.system_name} on {loaded.device} ({loaded.dtype}), loaded in "
              f"{time.perf_counter() - started:.1f} s; {args.units} units × {args.candidates} "
              f"candidates, ≤ {args.max_new_tokens} new tokens")
        requests = [VerbaliseRequest((i, "en"), "en", t, verbaliser.prompt_for(t, "en"))
                    for i, t in enumerate(units(args.units))]
        timed(verbaliser, requests[: args.batch_size], args.batch_size)  # warm-up
        batched = timed(verbaliser, requests, args.batch_size)
        single = timed(verbaliser, requests, 1)
        for name, (seconds, outputs, tokens) in ((f"batch {args.batch_size}", batched),
                                                 ("one unit per call", single)):
            print(f"  {name:<18} {seconds:7.2f} s  {outputs:5d} outputs  {tokens:7d} tokens  "
                  f"{tokens / seconds:9.0f} tokens/s  {args.units / seconds:7.1f} units/s")
        assert batched[1] == single[1], "both modes must give the same number of outputs"
        ratio = single[0] / batched[0]
        print(f"batched is {ratio:.1f}× faster than one unit at a time (target ≥ 3×)")
        verbaliser.close()


if __name__ == "__main__":
    main()
