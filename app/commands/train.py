"""``taillens train-verbaliser``: fine-tune a graph-to-text model on a session's references."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.commands.arguments import comma_list
from core.io import jsonio
from core.vocab import QUALITIES


def register(subparsers: argparse._SubParsersAction) -> None:
    # Defaults are TrainingSettings' (an option not given is left out); nothing heavy is
    # imported here, so `taillens --version` stays fast.
    trainer = subparsers.add_parser(
        "train-verbaliser",
        help="fine-tune a graph-to-text model (T5, BART, mT5; a causal LM with LoRA) on a "
        "session's references",
        description="Fine-tune a seq2seq model on the session's (graph, reference) pairs with "
        "WDV's input (the task prefix, then <H> s <R> p <T> o), or a causal LM with LoRA "
        "adapters (needs peft) on the chat prompt. Train and dev are split by entry; BLEU and "
        "chrF++ on dev every --eval-every steps, early stopping after --patience evaluations "
        "without a better --stop-on. The folder gets checkpoint.pt as it goes: the same "
        "command resumes a killed or cancelled training. When done it is a model folder "
        "(README.md model card, taillens-training.json) that Verbalise lists.",
    )
    trainer.add_argument("--session", type=Path, required=True)
    trainer.add_argument("--base", required=True, help="model folder or cached HF id")
    trainer.add_argument(
        "--out", type=Path, required=True, help="new (or empty) folder; the same one resumes"
    )
    trainer.add_argument("--epochs", type=int, help="default 100 (METHODS §12)")
    trainer.add_argument("--batch-size", type=int, help="default 4 (METHODS §12)")
    trainer.add_argument("--lr", type=float, help="default 3e-5 (METHODS §12)")
    trainer.add_argument("--max-steps", type=int, help="stop after this many steps")
    trainer.add_argument(
        "--eval-every", type=int, help="steps between evaluations (default 200; 0: at the end)"
    )
    trainer.add_argument(
        "--patience",
        type=int,
        help="evaluations without improvement before stopping (default 15, METHODS §12; 0: never)",
    )
    trainer.add_argument(
        "--stop-on", choices=("chrf", "bleu", "loss"), help="default chrf (chrF++)"
    )
    trainer.add_argument(
        "--sampling",
        choices=("wdv", "all"),
        help="each epoch: wdv (default, METHODS §12) one example per entry, a reference at "
        "random (WebNLG's good ones where marked), its triples shuffled; all: every "
        "reference, triples in stored order",
    )
    trainer.add_argument("--dev-share", type=float, help="share of entries held out (default 0.1)")
    trainer.add_argument(
        "--eval-limit",
        type=int,
        help="dev graphs verbalised per evaluation (default 200; 0: all)",
    )
    trainer.add_argument("--max-source-tokens", type=int)
    trainer.add_argument("--max-target-tokens", type=int)
    trainer.add_argument("--num-beams", type=int)
    trainer.add_argument("--max-new-tokens", type=int)
    trainer.add_argument(
        "--task-prefix",
        help="seq2seq input prefix (default WDV's 'translate from Graph to Text: ')",
    )
    trainer.add_argument("--prompt-preset", help="causal models")
    trainer.add_argument("--lora-r", type=int)
    trainer.add_argument("--langs", type=comma_list, help="only references in these languages")
    trainer.add_argument("--quality", choices=QUALITIES)
    trainer.add_argument("--seed", type=int, help="default 0")
    trainer.add_argument("--device", help="auto (default), cpu, cuda or mps")
    trainer.add_argument("--threads", type=int, help="torch threads while training")
    trainer.add_argument("--json", action="store_true", help="print JSON")
    trainer.add_argument("--quiet", action="store_true", help="no progress on stderr")
    trainer.set_defaults(handler=run_train_verbaliser)


def run_train_verbaliser(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.store import SessionStore
    from core.verbalise.training import TrainingSettings, training_job

    given = {
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "learning_rate": args.lr,
        "max_steps": args.max_steps,
        "eval_every": args.eval_every,
        "patience": args.patience,
        "stop_metric": args.stop_on,
        "sampling": args.sampling,
        "dev_share": args.dev_share,
        "eval_limit": args.eval_limit,
        "max_source_tokens": args.max_source_tokens,
        "max_target_tokens": args.max_target_tokens,
        "num_beams": args.num_beams,
        "max_new_tokens": args.max_new_tokens,
        "task_prefix": args.task_prefix,
        "prompt_preset": args.prompt_preset,
        "lora_r": args.lora_r,
        "seed": args.seed,
        "device": args.device,
        "threads": args.threads,
    }
    settings = TrainingSettings(**{k: v for k, v in given.items() if v is not None})
    with SessionStore.open_read_only(args.session) as store:
        job = training_job(
            store,
            args.out,
            base=args.base,
            settings=settings,
            langs=args.langs,
            quality=args.quality,
            session_name=str(args.session),
        )
    result = run_in_terminal(job, quiet=args.quiet)
    if args.json:
        print(
            jsonio.dumps(
                {
                    "out": str(result.out),
                    "base": result.base,
                    "kind": result.kind,
                    "train_texts": result.train_texts,
                    "dev_texts": result.dev_texts,
                    "steps": result.steps,
                    "resumed_from": result.resumed_from,
                    "stopped": result.stopped,
                    "best": result.best,
                    "evaluations": result.evaluations,
                    "tokens_per_s": result.tokens_per_s,
                    "device": result.device,
                },
                indent=2,
            )
        )
        return 0
    resumed = f" (resumed from step {result.resumed_from})" if result.resumed_from else ""
    print(
        f"trained {result.base} ({result.kind}) on {result.train_texts:,} texts of "
        f"{result.train_entries:,} entries, {result.steps} steps{resumed} on {result.device}, "
        f"{result.tokens_per_s:,.0f} tokens/s; saved to {result.out}"
    )
    if result.stopped:
        print(result.stopped)
    if result.best:
        last = next(e for e in result.evaluations if e["step"] == result.best["step"])
        print(
            f"kept step {last['step']}: dev loss {last['loss']:.4f}, BLEU {last['bleu']:.2f}, "
            f"chrF++ {last['chrf']:.2f} ({result.dev_texts:,} dev texts of "
            f"{result.dev_entries:,} entries)"
        )
    if not result.listed:
        print("(its folder was already among the model folders)", file=sys.stderr)
    return 0
