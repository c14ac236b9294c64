"""Training throughput of ``train-verbaliser``'s loop against the same training written
plainly with ``transformers``' ``Seq2SeqTrainer``.

Run:

    PYTHONPATH=$PWD .venv/bin/python benchmarks/train_verbaliser.py \\
        [--work DIR] [--steps 60] [--batch-size 16] [--d-model 64] [--threads 1] \\
        [--repeats 2] [--device cpu|cuda] [--warm-up]

Data: enriched WebNLG 2017 en/dev imported into a session (``--work``, kept there), every
reference with its graph; a random T5 (2 + 2 layers, ``--d-model`` wide) whose BPE
tokenizer is trained on those texts (tests/fixtures). Both sides train the same model
from the same weights on the same examples (the split's train side, WDV's input from
``seq2seq_input``, the same truncation), the same batch size, learning rate, linear
schedule, AdamW and clipping at 1, for ``--steps`` steps, with ``--threads`` torch threads;
no evaluation and no saving inside the measured time. On a GPU both train under bf16
autocast (ours by itself, the Trainer with ``bf16=True``). Tokens are the real (not padding)
input and label tokens of the batches each side trained on, counted in its own collator
(ours in the loop, the Trainer's by wrapping ``DataCollatorForSeq2Seq``). Time: ours is the
loop's step time (``train_s`` of the record); the Trainer's is its own ``train_runtime``
(its loop, data loading included). "ours ungrouped" is our loop with plain shuffled
batches (``group_by_length=False``), as the Trainer batches by default: it shows what
the length grouping gives and what the rest of the loop does. The sides alternate,
``--repeats`` times each; medians are printed with every run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.store import SessionStore  # noqa: E402
from core.verbalise.training.data import load_examples, split_by_entry  # noqa: E402
from core.verbalise.training.launch import train  # noqa: E402
from core.verbalise.training.settings import TrainingSettings  # noqa: E402
from tests.shared_data import ENRICHED_DEV, benchmark_input  # noqa: E402


def _session(work: Path) -> Path:
    session = work / "webnlg-dev.taillens"
    if not session.exists():
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
    return session


def ours(split: Any, base: Path, work: Path, settings: TrainingSettings) -> dict[str, float]:
    out = Path(tempfile.mkdtemp(dir=work)) / "ours"
    began = time.perf_counter()
    result = train(split, str(base), out, settings)
    wall = time.perf_counter() - began
    import json

    record = json.loads((out / "taillens-training.json").read_text(encoding="utf-8"))
    return {
        "tokens": record["tokens"],
        "seconds": record["train_s"],
        "tokens_per_s": record["tokens"] / record["train_s"],
        "wall_s": wall,
        "last_loss": result.losses[-1],
    }


def plain(split: Any, base: Path, work: Path, settings: TrainingSettings) -> dict[str, float]:
    """The same training as one would write it with Seq2SeqTrainer."""
    import torch
    from transformers import (
        AutoModelForSeq2SeqLM,
        AutoTokenizer,
        DataCollatorForSeq2Seq,
        Seq2SeqTrainer,
        Seq2SeqTrainingArguments,
    )

    from core.verbalise.prompts import seq2seq_input

    tokenizer = AutoTokenizer.from_pretrained(base)
    torch.manual_seed(settings.seed)
    model = AutoModelForSeq2SeqLM.from_pretrained(base, dtype=torch.float32)
    data = []
    for example in split.train:
        features = tokenizer(
            seq2seq_input(example.triples, example.lang),
            truncation=True,
            max_length=settings.max_source_tokens,
        )
        target = tokenizer(
            text_target=example.text, truncation=True, max_length=settings.max_target_tokens
        )
        data.append({"input_ids": features["input_ids"], "labels": target["input_ids"]})
    collator = DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100)
    counted = [0]

    def collate(features: list[dict[str, Any]]) -> Any:
        counted[0] += sum(len(f["input_ids"]) + len(f["labels"]) for f in features)
        return collator(features)

    arguments = Seq2SeqTrainingArguments(
        output_dir=str(Path(tempfile.mkdtemp(dir=work)) / "plain"),
        per_device_train_batch_size=settings.batch_size,
        learning_rate=settings.learning_rate,
        weight_decay=settings.weight_decay,
        warmup_steps=int(settings.max_steps * settings.warmup_share),
        lr_scheduler_type="linear",
        max_grad_norm=1.0,
        max_steps=settings.max_steps,
        save_strategy="no",
        eval_strategy="no",
        logging_strategy="no",
        report_to=[],
        disable_tqdm=True,
        use_cpu=settings.device == "cpu",
        # ours trains under bf16 autocast on a GPU that has it: the Trainer the same way
        bf16=settings.device.startswith("cuda") and torch.cuda.is_bf16_supported(),
        seed=settings.seed,
        dataloader_num_workers=0,
    )
    trainer = Seq2SeqTrainer(model=model, args=arguments, train_dataset=data, data_collator=collate)
    began = time.perf_counter()
    output = trainer.train()
    wall = time.perf_counter() - began
    seconds = float(output.metrics["train_runtime"])
    return {
        "tokens": counted[0],
        "seconds": seconds,
        "tokens_per_s": counted[0] / seconds,
        "wall_s": wall,
        "last_loss": float(output.training_loss),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, help="keeps the session between runs")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--warm-up",
        action="store_true",
        help="run each side once, untimed, first (a GPU's first steps pick kernels)",
    )
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="train-verbaliser-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TAILLENS_HOME", str(work / "home"))  # the model list's settings
    import torch

    torch.set_num_threads(args.threads)
    session = _session(work)
    from tests.fixtures.train_data import build_webnlg_model

    base = work / f"t5-d{args.d_model}"
    if not (base / "config.json").is_file():
        build_webnlg_model(session, base, d_model=args.d_model)
    settings = TrainingSettings(
        batch_size=args.batch_size,
        learning_rate=1e-3,
        max_steps=args.steps,
        epochs=1000,
        eval_every=0,
        eval_limit=1,
        max_new_tokens=1,
        num_beams=1,
        device=args.device,
        threads=args.threads,
        sampling="all",  # every reference each epoch, as the Trainer side is fed
    )
    with SessionStore.open_read_only(session) as store:
        split = split_by_entry(load_examples(store), settings.dev_share, settings.seed)
    print(
        f"data: {len(split.train):,} train texts of enriched WebNLG 2017 en/dev; model: "
        f"random T5 d_model={args.d_model}, 2+2 layers ({base}); {args.steps} steps x "
        f"{args.batch_size}; torch {torch.__version__}, {args.threads} thread(s), {args.device}"
    )
    ungrouped = replace(settings, group_by_length=False)
    sides = (
        ("ours", lambda: ours(split, base, work, settings)),
        ("ours ungrouped", lambda: ours(split, base, work, ungrouped)),
        ("Seq2SeqTrainer", lambda: plain(split, base, work, settings)),
    )
    runs: dict[str, list[dict[str, float]]] = {name: [] for name, _fn in sides}
    if args.warm_up:
        for _name, fn in sides:
            fn()
        print("  (each side ran once untimed first)", flush=True)
    for repeat in range(args.repeats):
        for name, fn in sides:
            figures = fn()
            runs[name].append(figures)
            print(
                f"  run {repeat + 1} {name:>15}: {figures['tokens']:>8,} tokens in "
                f"{figures['seconds']:6.2f} s = {figures['tokens_per_s']:8,.0f} tokens/s "
                f"(wall {figures['wall_s']:.1f} s, last loss {figures['last_loss']:.3f})",
                flush=True,
            )
    median = {k: statistics.median(r["tokens_per_s"] for r in v) for k, v in runs.items()}
    trainer = median["Seq2SeqTrainer"]
    print(
        f"median tokens/s: ours {median['ours']:,.0f} ({median['ours'] / trainer:.2f}x), "
        f"ours without length grouping {median['ours ungrouped']:,.0f} "
        f"({median['ours ungrouped'] / trainer:.2f}x), Seq2SeqTrainer {trainer:,.0f}"
    )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
