"""Time per entity of the LINK likelihood job (core.tiers.likelihood) on CPU, tiny model.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/likelihood.py [--limit N] [--model PATH]``.

Members of the demo category City (the embedded snapshot, offline) are fetched into a
temporary session; each is scored (label + "X is a city." statement, English) by the
job the CLI and the Browser run, with a tiny random Llama built by
``tests/fixtures/tiny_models.py`` unless ``--model`` names a folder. Each batch size runs
three times on fresh rows (median); the figure is scoring time per entity, model loading
reported apart. The rank correlation printed is of a random model, so only its
presence is meaningful, not its value.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.cli import main as cli  # noqa: E402
from core.jobs import JobSucceeded, run_job  # noqa: E402
from core.store import SessionStore  # noqa: E402
from core.store.models import EntityLikelihood  # noqa: E402
from core.tiers.likelihood import LikelihoodRequest, likelihood_job  # noqa: E402
from core.tiers.model_tail import correlations, load_likelihood_table  # noqa: E402

RUNS = 3
BATCHES = (1, 16, 64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=500, help="members fetched (default 500)")
    parser.add_argument("--model", type=Path, help="causal LM folder (default: tiny random)")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        model = args.model
        if model is None:
            from tests.fixtures.tiny_models import build_tiny_causal_lm

            model = build_tiny_causal_lm(folder / "tiny-llama")
        session = folder / "bench.taillens"
        SessionStore.create(session).close()
        assert (
            cli(["fetch", "City", "--session", str(session), "--limit", str(args.limit), "--quiet"])
            == 0
        )
        with SessionStore.open(session) as store:
            for batch in BATCHES:
                per_entity, loads, n = [], [], 0
                for _run in range(RUNS):
                    with store.unit_of_work() as db:
                        db.query(EntityLikelihood).delete()
                    outcome = run_job(
                        likelihood_job(
                            store, LikelihoodRequest("City", model, "en", batch=batch, device="cpu")
                        )
                    )
                    assert isinstance(outcome, JobSucceeded), outcome
                    summary = outcome.result
                    n = summary.scored
                    per_entity.append(summary.seconds_per_entity or 0.0)
                    loads.append(summary.load_s)
                print(
                    f"batch {batch:>3}: {n} entities, "
                    f"{statistics.median(per_entity) * 1000:.2f} ms per entity "
                    f"(label + statement; median of {RUNS}), model load "
                    f"{statistics.median(loads):.2f} s"
                )
            table = load_likelihood_table(store, "City", summary.model, "en")
            for c in correlations(table):
                rho = "n/a" if c.rho is None else f"{c.rho:+.4f}"
                print(f"Spearman rho (label likelihood, {c.against}): {rho}, n = {c.n}")
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads; command: "
        f"PYTHONPATH=. python benchmarks/likelihood.py --limit {args.limit}"
        + (f" --model {args.model}" if args.model else "")
    )


if __name__ == "__main__":
    main()
