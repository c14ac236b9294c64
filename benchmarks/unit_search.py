"""δ per template and time per unit of the knowledge beam search (core.units.beam_search).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/unit_search.py [--model PATH] [--beam 200]
[--units 20]``.

Each template is searched in both directions (tail: lowest likelihood first; head:
highest first; top 75 % kept, at most the beam) over the embedded demo snapshot
(synthetic, offline), with a tiny random Llama built by ``tests/fixtures/tiny_models.py``
unless ``--model`` names a folder, by the job ``taillens units search`` runs, into a
temporary session. δ = mean log-likelihood(head set) − mean log-likelihood(tail set) of
the saved units. The model is random, so δ measures how far the search separates what
the model scores, not what a real model knows. Time per unit: the job's time (both
directions, the saving included, the model loaded once beforehand and reported apart)
divided by the units saved.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.jobs import JobSucceeded, run_job  # noqa: E402
from core.store import SessionStore  # noqa: E402
from core.units.beam_search import SearchRequest, search_job  # noqa: E402

TEMPLATES = (
    ("?x P17 ?a . ?a P36 ?b", "Q515"),  # chain: city, its country, the country's capital
    ("?x P19 ?a . ?a P17 ?b", "Q5"),  # chain: person, birthplace, its country
    ("?x P106 ?o . ?x P27 ?c", "Q5"),  # sibling: person's occupation and citizenship
    ("?x P69 ?u . ?u P131 ?p", "Q5"),  # chain: person, school, where it is
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, help="a causal LM folder (default: tiny random)")
    parser.add_argument("--beam", type=int, default=200)
    parser.add_argument("--units", type=int, default=20)
    args = parser.parse_args()
    from core.local_models.loader import load_model
    from core.wikidata.open_source import load_demo_source

    with tempfile.TemporaryDirectory() as tmp:
        folder = args.model
        if folder is None:
            from tests.fixtures.tiny_models import build_tiny_causal_lm

            folder = build_tiny_causal_lm(Path(tmp) / "tiny-llama")
        started = time.perf_counter()
        source = load_demo_source()
        demo_s = time.perf_counter() - started
        started = time.perf_counter()
        loaded = load_model(folder, device="cpu")
        load_s = time.perf_counter() - started
        print(
            f"demo snapshot loaded in {demo_s:.1f} s; model loaded in {load_s:.1f} s "
            f"({'tiny random Llama' if args.model is None else folder})"
        )
        print(
            f"{'template':<26} {'class':<6} {'roots':>6} {'units':>5} {'tail':>8} "
            f"{'head':>8} {'delta':>7} {'s/unit':>7}"
        )
        deltas = []
        for n, (template, class_qid) in enumerate(TEMPLATES):
            path = Path(tmp) / f"s{n}.taillens"
            with SessionStore.create(path) as store:
                job = search_job(
                    store,
                    source,
                    SearchRequest(
                        template, str(folder), class_qid=class_qid, beam=args.beam, units=args.units
                    ),
                    loader=lambda *_a, **_k: loaded,
                )
                outcome = run_job(job)
                if not isinstance(outcome, JobSucceeded):
                    raise SystemExit(f"{template}: {outcome}")
                s = outcome.result
            deltas.append(s.delta)
            print(
                f"{template:<26} {class_qid:<6} {s.roots:>6} {len(s.unit_ids):>5} "
                f"{s.results['tail']['mean']:>8.4f} {s.results['head']['mean']:>8.4f} "
                f"{s.delta:>7.4f} {s.seconds_per_unit:>7.3f}"
            )
        print(
            f"mean delta over {len(deltas)} templates: {sum(deltas) / len(deltas):.4f} "
            f"(beam {args.beam}, keep 0.75, {args.units} units per direction)"
        )
    print(
        "command: PYTHONPATH=. .venv/bin/python benchmarks/unit_search.py " + " ".join(sys.argv[1:])
    )


if __name__ == "__main__":
    main()
