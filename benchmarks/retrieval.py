"""Encoding speed of retrieval against sentence-transformers' own ``encode``.

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/retrieval.py [--session S] [-n 512]
[--batch-size 64] [--repeats 3]``. Without ``--session`` the en/dev references of
enriched WebNLG 2017 are imported into a temporary session (``taillens import``).

The strings are a session's texts and linearised graphs as retrieval encodes them: each
text once per reference, each graph once per text (so the duplicates a session really has
are kept). Timed, alternately, ``repeats`` times each (best kept):

* ``SentenceTransformer.encode`` on all the strings, batch size B, normalised;
* ``core.metrics.retrieval.encode_cached`` on the same strings into an empty cache (a
  fresh session each time), same encoder and batch size: hashing, the cache look-up, the
  encoding of the unique strings, and the vectors written to the session.

Prints encodings per second for both and their ratio (target ≥ 1), for the strings as the
session has them and for the unique strings only (no help from de-duplication); a second
call on the warm cache is timed too.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.metrics.retrieval.encoders import open_encoder  # noqa: E402
from core.metrics.retrieval.encodings import encode_cached  # noqa: E402
from core.metrics.retrieval.pairs import load_pairs  # noqa: E402
from core.store import SessionStore  # noqa: E402
from tests.shared_data import ENRICHED_DEV, benchmark_input  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--session", type=Path)
    parser.add_argument("-n", type=int, default=512, help="texts taken from the session")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--encoder", help="default: the packaged all-MiniLM-L6-v2")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        session = args.session
        if session is None:
            session = Path(scratch) / "dev.taillens"
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "app",
                    "import",
                    str(benchmark_input(*ENRICHED_DEV)),
                    "--session",
                    str(session),
                    "--quiet",
                ],
                check=True,
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                stdout=subprocess.DEVNULL,
            )
        with SessionStore.open(session) as store:
            pairs = load_pairs(store)[: args.n]
        strings = [p.text for p in pairs] + [p.graph for p in pairs]
        encoder = open_encoder(args.encoder, batch_size=args.batch_size)
        model = encoder.model()
        model.encode(strings[: args.batch_size], batch_size=args.batch_size)  # warm up
        print(
            f"encoder {encoder.name}; batch {args.batch_size}; {os.cpu_count()} CPU cores "
            f"visible, load average {os.getloadavg()[0]:.1f} (shared machine)"
        )
        cases = (
            ("as the session has them", strings),
            ("unique strings only", list(dict.fromkeys(strings))),
        )
        for label, case in cases:
            theirs, ours, warm = [], [], []
            for repeat in range(args.repeats):
                started = time.perf_counter()
                model.encode(
                    case,
                    batch_size=args.batch_size,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
                theirs.append(time.perf_counter() - started)
                cache = Path(scratch) / f"cache-{len(case)}-{repeat}.taillens"
                with SessionStore.create(cache) as fresh:
                    started = time.perf_counter()
                    encode_cached(fresh, encoder, case, "text")
                    ours.append(time.perf_counter() - started)
                    started = time.perf_counter()
                    encode_cached(fresh, encoder, case, "text")
                    warm.append(time.perf_counter() - started)
            n = len(case)
            st_rate, our_rate = n / min(theirs), n / min(ours)
            print(
                f"{label}: {n:,} strings ({len(set(case)):,} unique), best of "
                f"{args.repeats}: sentence-transformers {st_rate:.1f}/s, retrieval "
                f"{our_rate:.1f}/s (warm cache {n / min(warm):.0f}/s); "
                f"ratio {our_rate / st_rate:.2f}"
            )
    print(
        "command: PYTHONPATH=$PWD .venv/bin/python benchmarks/retrieval.py "
        + " ".join(sys.argv[1:])
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
