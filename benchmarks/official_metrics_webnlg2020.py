"""The official metrics at a challenge's scale: WebNLG 2020's 16 English systems.

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/official_metrics_webnlg2020.py
[--cache DIR] [--baseline-sample N | --baseline-all] [--workers N]``.

The session is the one a user builds (``taillens import`` of the test set with references,
``import-outputs`` of each system's ``primary.en``: 16 × 1,779 = 28,464 texts, 1 to 5
references each). With ``--cache DIR`` it is built once into ``DIR/imported.taillens`` and
reused (a copy is scored, the cached file stays unscored).

Two timings of BLEU, chrF++, TER and METEOR (nltk, WordNet from this machine):

* **baseline**: sacrebleu's and nltk's own sentence-level scoring, one text after another
  in one process (``BLEU(effective_order=True).sentence_score``,
  ``CHRF(word_order=2).sentence_score``, ``TER().sentence_score``, nltk's
  ``meteor_score``), the metrics one after another. With ``--baseline-sample N`` (default
  2,000) it is timed on N texts drawn at random (seed 0) and its time for all texts is
  extrapolated (printed as such); ``--baseline-all`` times every text.
* **TailLens**: the scoring job (``taillens score --metrics bleu,chrf++,ter,meteor``) over
  every text: sentence rows, corpus rows from the sentence pass's statistics, the
  sentence pass spread over ``--workers`` processes (default: every usable core).

It then checks that the stored sentence values of the baseline's texts are the very
numbers sacrebleu and nltk gave (exact equality) and prints the cores used, and both sides'
CPU time (the job's with its worker processes'), which a loaded machine distorts less than
the wall-clock ratio.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import shared_data  # noqa: E402


def build_session(path: Path) -> None:
    from app.cli import main

    test = shared_data.benchmark_input(*shared_data.WEBNLG2020_TEST)
    submissions = shared_data.benchmark_input(*shared_data.WEBNLG2020_SUBMISSIONS)
    assert main(["import", str(test), "--session", str(path)]) == 0
    for output in sorted(submissions.glob("*/primary.en")):
        status = main(
            ["import-outputs", str(output), "--system", output.parent.name, "--session", str(path)]
        )
        assert status == 0


def session_texts(
    path: Path, runs: tuple[int, ...] | None = None
) -> list[tuple[int, str, list[str]]]:
    """(verbalisation id, text, references) of every output, as the scoring job pairs them."""
    from sqlalchemy import select

    from core.metrics.scoring.material import unit_references
    from core.store import SessionStore
    from core.store.models import Verbalisation

    with SessionStore.open(path) as store:
        with store.unit_of_work() as db:
            rows = db.execute(
                select(
                    Verbalisation.id, Verbalisation.unit_id, Verbalisation.lang, Verbalisation.text
                ).where(Verbalisation.run_id.in_(runs) if runs else True)
            ).all()
        references = unit_references(store, sorted({unit for _, unit, _, _ in rows}))
    out = []
    for vid, unit, lang, text in rows:
        refs = [ref for _, ref in references.get((unit, lang, "gold"), [])]
        out.append((vid, text or "", refs))
    return out


def _cpu_with_children() -> float:
    """CPU seconds of this process and of its ended child processes (the scoring job's
    workers are counted once the job has shut its pool down)."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def baseline(
    texts: list[tuple[int, str, list[str]]], wordnet: Path | None
) -> dict[str, tuple[float, dict[int, float]]]:
    """Each metric's seconds and values, sacrebleu's and nltk's own sentence scoring."""
    import sacrebleu

    results: dict[str, tuple[float, dict[int, float]]] = {}
    scorers = {
        "bleu": sacrebleu.BLEU(effective_order=True),
        "chrf++": sacrebleu.CHRF(word_order=2),
        "ter": sacrebleu.TER(),
    }
    for name, scorer in scorers.items():
        started = time.perf_counter()
        values = {vid: scorer.sentence_score(text, refs).score for vid, text, refs in texts}
        results[name] = (time.perf_counter() - started, values)
    if wordnet is not None:
        from nltk.translate.meteor_score import meteor_score

        from core.metrics.meteor import Meteor, load_wordnet

        reader = load_wordnet(wordnet)
        tokens = Meteor(wordnet)._tokens  # lowercased 13a tokens, as the scoring job reads
        started = time.perf_counter()
        values = {
            vid: meteor_score([tokens(r) for r in refs], tokens(text), wordnet=reader) * 100
            for vid, text, refs in texts
        }
        results["meteor"] = (time.perf_counter() - started, values)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, help="build the imported session once here")
    parser.add_argument("--baseline-sample", type=int, default=2_000)
    parser.add_argument("--baseline-all", action="store_true")
    parser.add_argument("--workers", type=int)
    parser.add_argument(
        "--systems",
        type=int,
        help="only the first N systems (runs) on both sides, for a quick measure",
    )
    args = parser.parse_args()

    from core.jobs import JobSucceeded, run_job
    from core.local_models.placement import cpu_count
    from core.metrics import MetricOptions
    from core.metrics.meteor import wordnet_status
    from core.metrics.scoring import ScoringRequest, corpus_scores, score_job
    from core.metrics.scoring.pool import workers_for
    from core.store import SessionStore

    work = Path(tempfile.mkdtemp(prefix="taillens-official-"))
    try:
        cached = (args.cache / "imported.taillens") if args.cache else work / "imported.taillens"
        if not cached.exists():
            cached.parent.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            build_session(cached)
            print(f"session built in {time.perf_counter() - started:.1f} s: {cached}")
        session = work / "scored.taillens"
        shutil.copyfile(cached, session)

        status = wordnet_status()
        wordnet = status.folder if status.found else None
        metrics = ("bleu", "chrf++", "ter", "meteor") if wordnet else ("bleu", "chrf++", "ter")
        if wordnet is None:
            print(f"METEOR left out of both sides: {status.reason}")

        runs = None
        if args.systems:
            from sqlalchemy import select

            from core.store.models import ModelRun

            with SessionStore.open(session) as store, store.unit_of_work() as db:
                runs = tuple(db.scalars(select(ModelRun.id).order_by(ModelRun.id)))[: args.systems]
        texts = session_texts(session, runs)
        sample = texts
        if not args.baseline_all and args.baseline_sample < len(texts):
            sample = random.Random(0).sample(texts, args.baseline_sample)
        print(
            f"{len(texts):,} texts, {sum(len(r) for _, _, r in texts):,} references; "
            f"baseline on {len(sample):,} texts"
            + ("" if sample is texts else " (time extrapolated to all texts)")
        )
        cpu = time.process_time()
        base = baseline(sample, wordnet)
        base_cpu = time.process_time() - cpu
        scale = len(texts) / len(sample)

        workers = workers_for(args.workers)
        request = ScoringRequest(
            metrics=metrics,
            options=MetricOptions(wordnet=str(wordnet) if wordnet else None),
            workers=args.workers,
        )
        with SessionStore.open(session) as store:
            started = time.perf_counter()
            cpu_started = _cpu_with_children()
            outcome = run_job(score_job(store, request))
            ours = time.perf_counter() - started
            ours_cpu = _cpu_with_children() - cpu_started
            if not isinstance(outcome, JobSucceeded):
                print(f"scoring failed: {outcome}")
                return 1
            from sqlalchemy import select

            from core.store.models import Score

            with store.unit_of_work() as db:
                stored = {
                    (metric, vid): value
                    for metric, vid, value in db.execute(
                        select(Score.metric, Score.verbalisation_id, Score.value).where(
                            Score.level == "sentence"
                        )
                    )
                }
            corpus = corpus_scores(store)

        print(f"\ncores usable: {cpu_count()}, workers: {workers}, os.cpu_count: {os.cpu_count()}")
        print(f"{'metric':<8} {'baseline s':>11} {'(all texts)':>12} {'equal':>8}")
        total_base = 0.0
        for name in metrics:
            seconds, values = base[name]
            whole = seconds * scale
            total_base += whole
            equal = sum(stored.get((name, vid)) == value for vid, value in values.items())
            print(f"{name:<8} {seconds:>11.1f} {whole:>12.1f} {equal:>5}/{len(values)}")
        print(
            f"\nbaseline, all texts{' (extrapolated)' if sample is not texts else ''}: "
            f"{total_base:.1f} s"
        )
        print(f"TailLens scoring job, all texts (sentence and corpus rows): {ours:.1f} s")
        print(f"speed-up: {total_base / ours:.2f}x")
        print(
            f"CPU time: baseline {base_cpu:.1f} s on {len(sample):,} texts "
            f"({base_cpu * scale:.1f} s for all texts), TailLens job {ours_cpu:.1f} s "
            f"(this process and its workers): {base_cpu * scale / ours_cpu:.2f}x less"
        )
        print(
            f"baseline CPU time (this process): {base_cpu:.1f} s; load average "
            f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}"
        )
        ter = [c for c in corpus if c.metric == "ter"]
        print(f"corpus rows: {len(corpus)} (TER of {len(ter)} runs from the sentence statistics)")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
