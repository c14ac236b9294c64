"""Metric speed over the TailNLG lexicalisations (targets: ESA < 2 s, BLEU+chrF+++ROUGE < 5 s).

Run: ``.venv/bin/python benchmarks/metrics.py [FILE]``. TailNLG is imported into a
temporary session; each of its 1,845 lexicalisations is treated as a text to score
against its own unit (subjects and objects built by the scoring job's own code, from
``unit_triples`` of the text's language).

* ESA (+ ESI corpus figures) over all lexicalisations, median of 3.
* BLEU, chrF++, ROUGE-1/2/L, sentence and corpus, median of 3. References: the other
  references of the same unit and language; TailNLG v1.0 has exactly one lex per unit and
  language, so where there is none the template verbaliser's text of the unit's triples
  is the reference (a realistic "does it say the template's words" comparison).
* Hallucination candidates over all lexicalisations.
* Graph–text similarity throughput with the packaged all-MiniLM-L6-v2 on CPU (each text
  costs three encodings: text, graph, graph with one triple inverted).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.formats import import_webnlg  # noqa: E402
from core.metrics.base import ScoringItem  # noqa: E402
from core.store import SessionStore  # noqa: E402
from tests.shared_data import TAILNLG, benchmark_input  # noqa: E402

RUNS = 3
SIMILARITY_TEXTS = 512


def _template_text(triples: tuple[tuple[str, str, str], ...], lang: str) -> str:
    try:
        from core.verbalise.template import verbalise_triples
    except ImportError:
        return " ".join(f"{s} {p} {o}." for s, p, o in triples)
    return verbalise_triples(triples, lang)


def build_items(store: SessionStore) -> tuple[list[ScoringItem], int]:
    from sqlalchemy import select

    from core.metrics.scoring import _UnitMaterial
    from core.store.models import DataUnit

    with store.unit_of_work() as db:
        unit_ids = list(db.scalars(select(DataUnit.id).order_by(DataUnit.id)))
    material = _UnitMaterial(store, unit_ids)
    by_unit_lang: dict[tuple[int, str], list[tuple[int, str]]] = defaultdict(list)
    for ref in material.reference_rows:
        assert ref.reference_id is not None
        by_unit_lang[(ref.unit_id, ref.lang)].append((ref.reference_id, ref.text))
    items: list[ScoringItem] = []
    fallback = 0
    for ref in material.reference_rows:
        key = (ref.unit_id, ref.lang)
        triples = tuple(material.triples.get(key, ()))
        others = tuple(text for rid, text in by_unit_lang[key] if rid != ref.reference_id)
        if not others:
            fallback += 1
            others = (_template_text(triples, ref.lang),) if triples else ()
        items.append(
            ScoringItem(
                ref.text,
                ref.lang,
                references=others,
                triples=triples,
                entities=material.entities.get(key, ()),
                key=ref.reference_id,
            )
        )
    return items, fallback


def timed(function, runs: int = RUNS) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main() -> int:
    from core.metrics.esa.hallucination import HallucinationCandidates
    from core.metrics.esa.metric import EntityAdequacy
    from core.metrics.reference import Bleu, ChrF, Rouge

    source = Path(sys.argv[1]) if len(sys.argv) > 1 else benchmark_input(*TAILNLG)
    if not source.is_file():
        print(f"no benchmark file at {source}")
        return 1
    with (
        tempfile.TemporaryDirectory() as folder,
        SessionStore.create(Path(folder) / "bench.taillens") as store,
    ):
        import_webnlg(store, source)
        started = time.perf_counter()
        items, fallback = build_items(store)
        built = time.perf_counter() - started
    print(
        f"{source.name}: {len(items):,} lexicalisations; units' entities loaded in "
        f"{built:.2f} s; {fallback:,} texts use the template text as reference"
    )

    esa = EntityAdequacy()

    def run_esa() -> object:
        values = esa.sentence_scores(items)
        return esa.corpus_from_sentences(items, values)

    seconds, corpus = timed(run_esa)
    d = corpus.details  # type: ignore[attr-defined]
    print(
        f"ESA: median {seconds:.3f} s of {RUNS} ({len(items) / seconds:,.0f} texts/s)  "
        f"target < 2 s: {'ok' if seconds < 2 else 'MISSED'}"
    )
    print(
        f"     mean ESA {d['esa_mean']:.4f}  ESI@1 {d['esi@1']:.4f}  ESI@2 {d['esi@2']:.4f}  "
        f"ESA(>=1 missing) {d['esa_mean_ge1']:.4f}  ESA(>=2 missing) {d['esa_mean_ge2']:.4f}"
    )

    metrics = [Bleu(), ChrF(), Rouge("rouge1"), Rouge("rouge2"), Rouge("rougeL")]

    def run_reference() -> dict[str, float]:
        out = {}
        for metric in metrics:
            metric.sentence_scores(items)
            corpus = metric.corpus_score(items)
            out[metric.name] = corpus.value if corpus is not None else float("nan")
        return out

    seconds, values = timed(run_reference)
    print(
        f"BLEU + chrF++ + ROUGE-1/2/L (sentence and corpus): median {seconds:.3f} s of "
        f"{RUNS}  target < 5 s: {'ok' if seconds < 5 else 'MISSED'}"
    )
    print("     corpus: " + "  ".join(f"{k} {v:.2f}" for k, v in values.items()))  # type: ignore[union-attr]

    hallucination = HallucinationCandidates()
    seconds, values = timed(lambda: hallucination.sentence_scores(items))
    flagged = sum(1 for v in values if v.value)  # type: ignore[union-attr]
    print(
        f"hallucination candidates: median {seconds:.3f} s of {RUNS}; "
        f"{flagged:,} of {len(items):,} texts have at least one"
    )

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from core.metrics.similarity import GraphTextSimilarity

    similarity = GraphTextSimilarity(device="cpu")
    similarity.sentence_scores(items[:8])  # load the encoder outside the timing
    sample = items[:SIMILARITY_TEXTS]
    seconds, values = timed(lambda: similarity.sentence_scores(sample), runs=1)
    scored = [v for v in values if v.value is not None]  # type: ignore[union-attr]
    drops = [
        v.details["inversion_drop"] for v in scored if v.details.get("inversion_drop") is not None
    ]
    print(
        f"graph-text similarity (all-MiniLM-L6-v2, CPU, {torch.get_num_threads()} threads): "
        f"{len(sample) / seconds:,.0f} texts/s over {len(sample)} texts "
        f"({3 * len(sample) / seconds:,.0f} encodings/s); mean similarity "
        f"{statistics.fmean(v.value for v in scored):.3f}, mean inversion drop "
        f"{statistics.fmean(drops):.4f}; load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} CPUs"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
