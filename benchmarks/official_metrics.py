"""The WebNLG scripts' offline metrics on the enriched WebNLG 2017 dev set (872 entries).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/official_metrics.py [DEV_FOLDER] [EMPTY]``.

Every file of the dev folder is imported into a temporary session. A "system" file is
written with one line per unit: the unit's first reference with its last word dropped,
and EMPTY lines (default 15, every 58th unit) left empty, as a submission with failures.
It is imported with ``import-outputs`` and scored by the scoring job (BLEU, chrF++, TER,
METEOR where WordNet is on this machine) against all the unit's references; the same
file is then scored by sacrebleu called directly. Printed: both figures side by side
(they must agree), the figures with the empty lines left out (``--exclude-empty``, the
old, silently flattering behaviour), and the time of each metric.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.formats import import_webnlg  # noqa: E402
from core.formats.outputs import import_outputs  # noqa: E402
from core.jobs import JobSucceeded, run_job  # noqa: E402
from core.metrics.meteor import wordnet_status  # noqa: E402
from core.metrics.scoring import ScoringRequest, corpus_scores, score_job  # noqa: E402
from core.store import SessionStore  # noqa: E402
from tests.shared_data import ENRICHED_DEV, benchmark_input  # noqa: E402


def main() -> None:
    dev = Path(sys.argv[1]) if len(sys.argv) > 1 else benchmark_input(*ENRICHED_DEV)
    empty = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    if not dev.is_dir():
        print(f"{dev}: not found; nothing measured")
        return
    import sacrebleu
    from sqlalchemy import select

    from core.store.models import UnitReference

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.taillens"
        with SessionStore.create(path) as store:
            errors = 0
            for file in sorted(dev.rglob("*.xml")):
                errors += len(import_webnlg(store, file).errors)
            with store.unit_of_work() as db:
                refs: dict[int, list[str]] = {}
                for unit_id, text in db.execute(
                    select(UnitReference.unit_id, UnitReference.text)
                    .where(UnitReference.lang == "en")
                    .order_by(UnitReference.unit_id, UnitReference.id)
                ):
                    refs.setdefault(unit_id, []).append(text)
            units = sorted(refs)
            step = max(1, len(units) // max(empty, 1))
            blank = set(units[::step][:empty])
            lines = ["" if u in blank else " ".join(refs[u][0].split()[:-1]) for u in units]
            system = Path(tmp) / "system.txt"
            system.write_text("\n".join(lines) + "\n", encoding="utf-8")
            run_id = import_outputs(store, system, system="perturbed-first-reference").run_id
            streams = [
                [r[k] if k < len(r) else None for r in (refs[u] for u in units)]
                for k in range(max(len(r) for r in refs.values()))
            ]
            direct = {
                "bleu": sacrebleu.metrics.BLEU().corpus_score(lines, streams).score,
                "chrf++": sacrebleu.metrics.CHRF(word_order=2).corpus_score(lines, streams).score,
                "ter": sacrebleu.metrics.TER().corpus_score(lines, streams).score,
            }
            status = wordnet_status()
            metrics = ("bleu", "chrf++", "ter") + (("meteor",) if status.found else ())
            timings = {}
            for metric in metrics:
                start = time.perf_counter()
                outcome = run_job(score_job(store, ScoringRequest(metrics=(metric,))))
                assert isinstance(outcome, JobSucceeded), outcome
                timings[metric] = time.perf_counter() - start
            counted = {c.metric: c for c in corpus_scores(store, run_ids=[run_id])}
            outcome = run_job(score_job(store, ScoringRequest(metrics=metrics, exclude_empty=True)))
            assert isinstance(outcome, JobSucceeded), outcome
            left_out = {c.metric: c for c in corpus_scores(store, run_ids=[run_id])}
    print(
        f"{len(units)} units from {dev} ({errors} entries not imported), "
        f"{len(blank)} empty lines; "
        f"{status.message()}"
    )
    print(
        f"{'metric':<8} {'TailLens':>10} {'sacrebleu':>10} {'n':>5} "
        f"{'empty left out':>15} {'n':>5} {'time s':>7}"
    )
    for metric in metrics:
        c, x = counted[metric], left_out[metric]
        print(
            f"{metric:<8} {c.value:>10.4f} "
            f"{direct[metric] if metric in direct else float('nan'):>10.4f} {c.n:>5} "
            f"{x.value:>15.4f} {x.n:>5} {timings[metric]:>7.2f}"
        )
    print(
        "command: PYTHONPATH=. .venv/bin/python benchmarks/official_metrics.py "
        + " ".join(sys.argv[1:])
    )


if __name__ == "__main__":
    main()
