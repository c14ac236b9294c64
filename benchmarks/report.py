"""Bias report and annotation figures at the scale of the TailNLG study.

    .venv/bin/python benchmarks/report.py [CANDIDATES]

Imports TailNLG v1.0 (615 entries; read in place from tailnlg/ in the data folder:
$TAILLENS_DATA, else ../shared/data) into a temporary session, adds 6 synthetic runs ×
3 languages × CANDIDATES (default 3) verbalisations per unit with sentence scores for
the six reference-based metrics (gold and silver) plus PPL and entity PPL (synthetic
values, long tail a little worse), and 1,500 ratings by 3 annotators. Prints the time to:
* load the per-item values (``load_frame``);
* build the report by tier, sub-tier, language, model and quality (Mann–Whitney
  protocol: 10 repetitions of samples of 500);
* write the HTML report and the CSV files;
* build an annotation queue over every verbalisation, save one rating (median of 50),
  aggregate the ratings with Krippendorff's alpha by tier.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from sqlalchemy import insert, select

from core.annotation import (
    QueueFilter,
    Rating,
    add_annotator,
    aggregate_annotations,
    build_queue,
    save_rating,
)
from core.formats import import_webnlg
from core.report import build_report, write_csv, write_html
from core.report.data import load_frame
from core.store import SessionStore
from core.store.models import (
    Annotation,
    DataUnit,
    ModelRun,
    Score,
    Verbalisation,
)
from core.vocab import LANGUAGES, QUALITIES
from tests.shared_data import TAILNLG, benchmark_input

MODELS = ("Llama-3.2-3B", "Llama-3.1-8B", "Qwen2.5-3B", "Qwen2.5-7B", "Gemma-3-4B", "Gemma-3-12B")
LANGS = LANGUAGES
REFERENCE_METRICS = ("bertscore", "bleu", "chrf++", "rouge1", "rouge2", "rougeL")


def timed(label: str, fn):
    started = time.perf_counter()
    result = fn()
    print(f"{label:<58} {time.perf_counter() - started:8.2f} s")
    return result


def populate(store: SessionStore, candidates: int) -> int:
    rng = np.random.default_rng(0)
    with store.unit_of_work() as db:
        units = db.execute(select(DataUnit.id, DataUnit.tier)).all()
        rows = []
        for model in MODELS:
            run = ModelRun(
                kind="causal",
                model_id=f"/models/{model}",
                system_name=model,
                status="finished",
                seed=0,
                parameters={"temperature": 0.7},
                prompt_templates={lang: "..." for lang in LANGS},
            )
            db.add(run)
            db.flush()
            for unit_id, _tier in units:
                for lang in LANGS:
                    for c in range(candidates):
                        rows.append(
                            {
                                "run_id": run.id,
                                "unit_id": unit_id,
                                "lang": lang,
                                "candidate_index": c,
                                "raw_output": "x",
                                "text": "x",
                                "parse_ok": True,
                            }
                        )
        ids = db.scalars(
            insert(Verbalisation).returning(
                Verbalisation.id,
                Verbalisation.run_id,
                Verbalisation.unit_id,
                Verbalisation.lang,
                sort_by_parameter_order=True,
            ),
            rows,
        ).all()
    tiers = dict(units)
    with store.unit_of_work() as db:
        verbalisations = db.execute(
            select(
                Verbalisation.id, Verbalisation.run_id, Verbalisation.unit_id, Verbalisation.lang
            )
        ).all()
        scores = []
        for vid, run_id, unit_id, lang in verbalisations:
            shift = -0.05 if tiers[unit_id] == "long_tail" else 0.0
            for metric in REFERENCE_METRICS:
                for quality in QUALITIES:
                    scores.append(
                        {
                            "metric": metric,
                            "value": float(rng.beta(4, 4) + shift),
                            "level": "sentence",
                            "verbalisation_id": vid,
                            "run_id": run_id,
                            "lang": lang,
                            "details": {"quality": quality},
                            "signature": metric,
                        }
                    )
            for metric in ("ppl", "entity_ppl"):
                scores.append(
                    {
                        "metric": metric,
                        "value": float(np.exp(rng.normal(2 - 5 * shift, 0.6))),
                        "level": "sentence",
                        "verbalisation_id": vid,
                        "run_id": run_id,
                        "lang": lang,
                        "details": {},
                        "signature": metric,
                    }
                )
        db.execute(insert(Score), scores)
    return len(ids)


def main() -> None:
    candidates = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    tailnlg = benchmark_input(*TAILNLG)
    with (
        tempfile.TemporaryDirectory() as folder,
        SessionStore.create(Path(folder) / "bench.taillens") as store,
    ):
        timed("import TailNLG", lambda: import_webnlg(store, tailnlg))
        count = timed(
            f"add {len(MODELS)} runs × 3 langs × {candidates} candidates + scores",
            lambda: populate(store, candidates),
        )
        annotators = [add_annotator(store, name).id for name in ("a", "b", "c")]
        with store.unit_of_work() as db:
            vids = db.scalars(select(Verbalisation.id).limit(500)).all()
            rng = np.random.default_rng(1)
            db.execute(
                insert(Annotation),
                [
                    {
                        "annotator_id": a,
                        "verbalisation_id": v,
                        "fluency": int(rng.integers(2, 6)),
                        "adequacy": int(rng.choice(3, p=[0.7, 0.2, 0.1])),
                    }
                    for v in vids
                    for a in annotators
                ],
            )
        with store.unit_of_work() as db:
            n_scores = db.scalar(select(Score.id).order_by(Score.id.desc()).limit(1))
        print(f"{count:,} verbalisations, {n_scores:,} sentence scores, 1,500 ratings")
        frame = timed("load_frame (per-item values)", lambda: load_frame(store))
        print(f"  {len(frame.observations):,} per-item values")
        report = timed(
            "build_report by tier/subtier/lang/model/quality",
            lambda: build_report(
                store, by=("tier", "subtier", "lang", "model", "quality"), frame=frame
            ),
        )
        print(f"  {sum(len(v) for v in report.comparisons.values()):,} comparisons")
        written = timed("write_html", lambda: write_html(report, Path(folder) / "r.html"))
        size = written.path.stat().st_size / 1e6
        print(f"  {written.tables} tables, {written.plots} plots, {size:.1f} MB")
        timed("write_csv", lambda: write_csv(report, Path(folder) / "csv"))
        queue = timed(
            "build_queue over every verbalisation",
            lambda: build_queue(store, annotators[0], QueueFilter(disagreements_first=True)),
        )
        print(f"  {len(queue):,} items")
        times = []
        for index in range(50):
            started = time.perf_counter()
            save_rating(store, annotators[0], queue[index], Rating(fluency=4, adequacy=0))
            times.append((time.perf_counter() - started) * 1000)
        print(f"{'save one rating (median of 50)':<58} {statistics.median(times):8.2f} ms")
        timed("queue.progress()", queue.progress)
        timed(
            "aggregate_annotations by tier with alpha",
            lambda: aggregate_annotations(store, by=("tier",), agreement=True),
        )


if __name__ == "__main__":
    main()
