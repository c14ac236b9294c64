"""Translation throughput of the references pipeline against the model's own ``generate``,
and the time per step extrapolated to TailNLG's 1,232 translations (METHODS §11).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/references_translate.py [--texts N]
[--batch B] [--model PATH] [--editor PATH] [--device cpu] [--runs 3]``.

The texts are TailNLG's English gold references (read in place from the shared data).
The translation job (``core.references.translate.translate_job``, what ``taillens
references translate`` runs: batching, language codes, cleaning, one transaction per
batch into a fresh session) is timed against a bare loop over the same batches that
tokenises, calls the same loaded model's ``generate`` with the same arguments and
decodes, with nothing stored. Pairs are interleaved, ``--runs`` of each (3), medians reported;
the model is loaded before either is timed. Ratio = bare time / job time (throughput
of the job relative to bare generate; ≥ 1.0 is the target).

Then the other steps, per text, on the same texts: QE (xCOMET with ``--qe-model``, in
this Python or in another environment's with ``--qe-python``; otherwise said),
post-editing with the F.1 prompt (``--editor``, a causal
LM; default a tiny random Llama). Each is extrapolated to 1,232 translations (TailNLG:
616 gold texts, each translated into the two other languages). With the default tiny
random models (built by ``tests/fixtures/tiny_models.py``), the figures measure the
pipeline's overhead, not a real model's speed: name real model folders for that.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core import heavy  # noqa: E402
from core.jobs import CancelToken, JobSucceeded, run_job  # noqa: E402
from core.references.postedit import EditParams, LocalEditor, postedit_job  # noqa: E402
from core.references.qe import CometScorer, qe_job, qe_status  # noqa: E402
from core.references.translate import (  # noqa: E402
    LocalTranslator,
    TranslateParams,
    clean_text,
    translate_job,
)
from core.store import SessionStore  # noqa: E402
from core.store.models import DataUnit, UnitReference  # noqa: E402
from tests.shared_data import TAILNLG, benchmark_input  # noqa: E402

TAILNLG_TRANSLATIONS = 1232


def gold_english(limit: int) -> list[str]:
    root = ET.parse(benchmark_input(*TAILNLG)).getroot()
    texts = [
        (lex.text or "").strip()
        for lex in root.iter("lex")
        if lex.get("lang") == "en" and lex.get("quality") == "gold" and (lex.text or "").strip()
    ]
    return texts[:limit]


def seed(path: Path, texts: list[str]) -> None:
    with SessionStore.create(path) as store, store.unit_of_work() as db:
        for n, text in enumerate(texts):
            unit = DataUnit(uid=f"b{n}", size=1, origin="built")
            db.add(unit)
            db.flush()
            db.add(UnitReference(unit_id=unit.id, lang="en", text=text, quality="gold"))


def run_ok(job):  # type: ignore[no-untyped-def]
    outcome = run_job(job, CancelToken(), lambda progress: None)
    assert isinstance(outcome, JobSucceeded), outcome
    return outcome.result


def bare(translator: LocalTranslator, texts: list[str], batch: int) -> float:
    """Tokenise, generate, decode: the same calls, nothing else."""
    with heavy.lock():
        import torch

    loaded = translator.load()
    tokenizer, model = loaded.tokenizer, loaded.model
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        chunk = texts[start : start + batch]
        inputs = tokenizer(chunk, padding=True, truncation=True, return_tensors="pt")
        inputs = {k: v.to(model.device) for k, v in inputs.items()}
        with torch.inference_mode():
            output = model.generate(
                **inputs,
                num_beams=translator.params.num_beams,
                max_new_tokens=translator.params.max_new_tokens,
                do_sample=False,
            )
        [clean_text(t) for t in tokenizer.batch_decode(output, skip_special_tokens=True)]
    return time.perf_counter() - started


def piped(
    translator: LocalTranslator, texts: list[str], params: TranslateParams, folder: Path, n: int
) -> float:
    session = folder / f"run{n}.taillens"
    seed(session, texts)
    with SessionStore.open(session) as store:
        started = time.perf_counter()
        summary = run_ok(translate_job(store, translator, "en", ["it"], params))
        elapsed = time.perf_counter() - started
    assert summary.translated == {"en→it": len(texts)}, summary.translated
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=64)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--beams", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--model", type=Path, help="a Marian/OPUS-MT folder (default tiny random)")
    parser.add_argument("--editor", type=Path, help="a causal LM folder (default tiny random)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--runs", type=int, default=3, help="pairs of runs (medians)")
    parser.add_argument("--qe-model", help="an xCOMET folder or .ckpt (QE is timed with it)")
    parser.add_argument("--qe-python", help="the Python of an environment with unbabel-comet")
    parser.add_argument("--qe-batch", type=int, default=8)
    parser.add_argument("--qe-gpus", type=int, default=0)
    args = parser.parse_args()

    texts = gold_english(args.texts)
    params = TranslateParams(
        num_beams=args.beams,
        max_new_tokens=args.max_new_tokens,
        batch=args.batch,
        device=args.device,
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        from tests.fixtures.tiny_models import build_tiny_causal_lm, build_tiny_marian

        model = args.model or build_tiny_marian(folder / "opus-mt-en-it")
        editor_path = args.editor or build_tiny_causal_lm(folder / "tiny-llama")
        # Keep the model loaded across runs: close() is what the job calls when done.
        translator = LocalTranslator(model, params)
        translator.load()
        translator.close = lambda: None  # type: ignore[method-assign]
        bare(translator, texts, args.batch)  # warm-up: every batch shape once (a GPU picks kernels)
        bares, jobs = [], []
        for n in range(args.runs):
            bares.append(bare(translator, texts, args.batch))
            jobs.append(piped(translator, texts, params, folder, n))
            print(f"run {n + 1}: bare {bares[-1]:.3f} s, job {jobs[-1]:.3f} s", flush=True)
        b, j = statistics.median(bares), statistics.median(jobs)
        print(f"model: {model} ({translator.family}), device {translator.load().device}")
        print(
            f"texts: {len(texts)} TailNLG English gold references, batch {args.batch}, "
            f"beams {args.beams}, max new tokens {args.max_new_tokens}; {args.runs} runs, medians"
        )
        print(f"bare generate : {b:.3f} s  ({len(texts) / b:.1f} texts/s)")
        print(f"translate job : {j:.3f} s  ({len(texts) / j:.1f} texts/s)")
        print(f"throughput ratio (job / bare generate): {b / j:.2f}x")

        per_translate = j / len(texts)
        problem = qe_status(args.qe_model, args.qe_python)
        session = folder / "run0.taillens"
        per_qe = None
        if problem is None:
            scorer = CometScorer(
                args.qe_model, batch=args.qe_batch, gpus=args.qe_gpus, python=args.qe_python
            )
            with SessionStore.open(session) as store:
                started = time.perf_counter()
                scored = run_ok(qe_job(store, scorer, batch=args.qe_batch))
                per_qe = (time.perf_counter() - started) / max(1, scored.scored)
            print(f"QE ({scorer.name}): {scored.scored} scored, bands {scored.bands}")
        with SessionStore.open(session) as store:
            editor = LocalEditor(
                editor_path,
                EditParams(max_new_tokens=args.max_new_tokens, batch=4, device=args.device),
            )
            started = time.perf_counter()
            summary = run_ok(postedit_job(store, editor, batch=4))
            per_edit = (time.perf_counter() - started) / len(texts)
        print(
            f"post-edit (F.1 prompt, {editor_path.name}): {summary.edited} parsed, "
            f"{summary.unparsable} unparsable"
        )
        print(f"\nper step, extrapolated to TailNLG's {TAILNLG_TRANSLATIONS} translations:")
        print(
            f"  translate : {per_translate * 1000:8.1f} ms/text  → "
            f"{per_translate * TAILNLG_TRANSLATIONS:8.1f} s"
        )
        if per_qe is None:
            print(f"  QE        : {problem}")
        else:
            print(
                f"  QE        : {per_qe * 1000:8.1f} ms/text  → "
                f"{per_qe * TAILNLG_TRANSLATIONS:8.1f} s (model loading included)"
            )
        print(
            f"  post-edit : {per_edit * 1000:8.1f} ms/text  → "
            f"{per_edit * TAILNLG_TRANSLATIONS:8.1f} s (model loading included)"
        )
        print("  review    : by people (TailNLG: 50 per pair, two annotators each)")


if __name__ == "__main__":
    main()
