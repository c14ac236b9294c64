"""EREDAT's retrieval and inversion figures before and after training the encoder.

Run (figures in the report were made with the settings printed at the end):

    PYTHONPATH=$PWD .venv/bin/python benchmarks/train_encoder.py \\
        [--data DATA/webnlg2017-enriched/en] [--work DIR] [--epochs 1] \\
        [--batch-size 16] [--max-steps N] [--max-minutes M] [--max-seq-length 128] \\
        [--lr 2e-5] [--threads 1] [--shared-negatives] [--eval-every 50] [--eval-log FILE]

The data is read through the importer (``taillens import DIR --session S``: en/train and
en/dev into two sessions under ``--work``, kept there with their encoding caches when
``--work`` is given). Training uses every (graph, reference) pair of en/train; evaluation
uses en/dev with one text per graph (its first reference). Printed: top-1 / top-5 / MRR
in both directions and the share of inverted 1-triple graphs scored above the correct
one, for the base encoder and the trained one, and the training time.
EREDAT (Le Scao & Gardent): top-1 about 80 % after training; 14 % inversion errors.

``--eval-every N`` evaluates the model being trained on en/dev every N steps and after the
last (in memory, no cache; it draws on none of the training's random state, so the model
learns the same): the same figures, printed and appended as a JSON line to ``--eval-log``
(default ``WORK/eval.jsonl``) with the step, the wall and process CPU seconds since the
training started. ``--max-minutes`` stops the training after that much training time and
saves the model as it is (the learning-rate schedule is the one planned for the full
run). On a shared 2-core machine ``--threads 1`` is several times faster than 2 (no
spinning threads waiting for each other).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.metrics.encoder_training import TrainingSettings, train  # noqa: E402
from core.metrics.retrieval.encoders import Encoder, LoadedEncoder, open_encoder  # noqa: E402
from core.metrics.retrieval.pairs import RetrievalPair, load_pairs  # noqa: E402
from core.metrics.retrieval.ranking import evaluate, inversion_errors  # noqa: E402
from core.store import SessionStore  # noqa: E402
from tests.shared_data import ENRICHED_EN, data_path  # noqa: E402

DATA = data_path(*ENRICHED_EN)  # $TAILLENS_DATA, else ../shared/data beside the checkout


def _import(folder: Path, session: Path) -> None:
    if session.exists():
        return
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [sys.executable, "-m", "app", "import", str(folder), "--session", str(session), "--quiet"],
        check=True,
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )


def _measure(pairs: list[RetrievalPair], encoder: Encoder, store: object) -> dict:
    started = time.perf_counter()
    result = evaluate(pairs, encoder, store)
    above, tested = inversion_errors(pairs, encoder, store)
    t2g, g2t = result.text_to_graph, result.graph_to_text
    return {
        "text_to_graph": t2g.as_dict(),
        "graph_to_text": g2t.as_dict(),
        "inverted_above": above,
        "inversion_tested": tested,
        "graphs": result.graphs,
        "texts": result.texts,
        "encoded": result.encoded,
        "eval_s": round(time.perf_counter() - started, 1),
    }


def _line(label: str, found: dict) -> str:
    t2g, g2t = found["text_to_graph"], found["graph_to_text"]
    above, tested = found["inverted_above"], found["inversion_tested"]
    return (
        f"{label:<8} text→graph top-1 {t2g['top1']:6.1%} top-5 {t2g['top5']:6.1%} "
        f"MRR {t2g['mrr']:.3f} | graph→text top-1 {g2t['top1']:6.1%} top-5 {g2t['top5']:6.1%} "
        f"MRR {g2t['mrr']:.3f} | inverted above correct {above}/{tested} = "
        f"{above / max(1, tested):5.1%}  ({found['graphs']} graphs, {found['texts']} texts; "
        f"{found['encoded']} encoded now, {found['eval_s']:.0f} s)"
    )


def _figures(label: str, dev: Path, encoder_arg: str | None) -> dict:
    encoder = open_encoder(encoder_arg, batch_size=64)
    with SessionStore.open(dev) as store:
        pairs = load_pairs(store, one_text_per_graph=True)
        found = _measure(pairs, encoder, store)
    print(_line(label, found), flush=True)
    return found


def _append(log: Path, entry: dict) -> None:
    with log.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--work", type=Path, help="keep sessions and the model here")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-steps", type=int)
    parser.add_argument("--max-minutes", type=float, help="stop and save after this long")
    parser.add_argument("--max-seq-length", type=int, default=128)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, help="torch threads (1 on a busy machine)")
    parser.add_argument(
        "--shared-negatives",
        action="store_true",
        help="every text's row holds all the batch's negatives (3B, the old loss)",
    )
    parser.add_argument("--eval-every", type=int, default=0, help="evaluate every N steps")
    parser.add_argument("--eval-log", type=Path, help="JSON lines (default WORK/eval.jsonl)")
    args = parser.parse_args()
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    if not (args.data / "train").is_dir() or not (args.data / "dev").is_dir():
        print(f"{args.data}: needs train/ and dev/ folders", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        train_session, dev_session = work / "train.tls", work / "dev.tls"
        started = time.perf_counter()
        _import(args.data / "train", train_session)
        _import(args.data / "dev", dev_session)
        print(
            f"import: {time.perf_counter() - started:.0f} s; {os.cpu_count()} CPU cores "
            f"visible, load average {os.getloadavg()[0]:.1f} (shared machine)"
        )
        log = args.eval_log or work / "eval.jsonl"
        command = "PYTHONPATH=$PWD .venv/bin/python benchmarks/train_encoder.py " + " ".join(
            sys.argv[1:]
        )
        before = _figures("before", dev_session, None)
        _append(log, {"command": command, "step": 0, "label": "untrained", **before})
        settings = TrainingSettings(
            epochs=args.epochs,
            batch_size=args.batch_size,
            learning_rate=args.lr,
            max_steps=args.max_steps,
            max_minutes=args.max_minutes,
            max_seq_length=args.max_seq_length,
            device=args.device,
            threads=args.threads,
            shared_negatives=args.shared_negatives,
        )
        out = work / f"eredat-minilm-{time.strftime('%Y%m%d-%H%M%S')}"
        with SessionStore.open(train_session) as store:
            pairs = load_pairs(store)
        with SessionStore.open(dev_session) as store:
            dev_pairs = load_pairs(store, one_text_per_graph=True)
        wall0, cpu0 = time.perf_counter(), time.process_time()

        def on_evaluate(step: int, model: object) -> dict:
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            encoder = LoadedEncoder(
                Path(f"<training step {step}>"),
                f"step {step}",
                f"training-{out.name}-step-{step}",
                args.device,
                64,
                loaded=model,
            )
            found = _measure(dev_pairs, encoder, None)
            print(
                _line(f"step {step}", found) + f" [wall {wall:.0f} s, CPU {cpu:.0f} s, "
                f"load {os.getloadavg()[0]:.1f}]",
                flush=True,
            )
            entry = {"step": step, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), **found}
            _append(log, {"command": command, **entry})
            return entry

        result = train(
            pairs,
            None,
            out,
            settings,
            source={"session": str(train_session), "data": str(args.data)},
            evaluate_every=args.eval_every,
            on_evaluate=on_evaluate if args.eval_every else None,
        )
        first = sum(result.losses[:10]) / max(1, len(result.losses[:10]))
        last = sum(result.losses[-10:]) / max(1, len(result.losses[-10:]))
        record = json.loads((out / "taillens-encoder.json").read_text(encoding="utf-8"))
        print(
            f"training: {result.pairs:,} pairs, {result.graphs:,} graphs, {result.steps} of "
            f"{record['planned_steps']} planned steps of {settings.batch_size}"
            + (f" (stopped: {record['stopped']})" if record["stopped"] else "")
            + f", {result.elapsed_s:.0f} s on {settings.device} without the "
            f"{record['evaluation_s']:.0f} s of evaluations (load average "
            f"{os.getloadavg()[0]:.1f}); loss {first:.3f} → {last:.3f}",
            flush=True,
        )
        after = _figures("after", dev_session, str(out))
        _append(log, {"command": command, "step": result.steps, "label": "saved", **after})
        print(f"model: {out}; evaluations in {log}")
    print("command: " + command)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
