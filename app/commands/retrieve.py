"""``taillens retrieve`` and ``taillens train-encoder``: graph ↔ text retrieval (EREDAT)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.commands.arguments import comma_list
from core.io import jsonio
from core.vocab import QUALITIES


def register(subparsers: argparse._SubParsersAction) -> None:
    retrieve = subparsers.add_parser(
        "retrieve",
        help="graph ↔ text retrieval over references or a run's outputs",
        description="Embed every unit's linearised graph and every text with a sentence "
        "encoder and report top-1 / top-5 accuracy and MRR of finding a text's graph among "
        "all graphs and a graph's text among all texts (METHODS §7, EREDAT). Encodings are "
        "cached in the session per encoder. With --text, list the graphs closest to a text.",
    )
    retrieve.add_argument("--session", type=Path, required=True)
    retrieve.add_argument("--run", type=int, help="a run's outputs (default: the references)")
    retrieve.add_argument("--langs", type=comma_list, help="only these languages, e.g. en,it")
    retrieve.add_argument("--quality", choices=QUALITIES, help="only references of this quality")
    retrieve.add_argument(
        "--one-text-per-graph",
        action="store_true",
        help="keep each unit's first text only (EREDAT's evaluation)",
    )
    retrieve.add_argument(
        "--encoder",
        help="sentence encoder folder or cached HF id (default: the packaged all-MiniLM-L6-v2)",
    )
    retrieve.add_argument("--batch-size", type=int, default=64)
    retrieve.add_argument("--device", default="cpu", help="cpu, cuda, mps or auto")
    retrieve.add_argument(
        "--worst",
        type=int,
        default=0,
        metavar="N",
        help="also list the N texts that match their own graph worst",
    )
    retrieve.add_argument("--text", help="find the graphs behind this text instead")
    retrieve.add_argument("--top", type=int, default=5, help="graphs listed with --text")
    retrieve.add_argument("--json", action="store_true", help="print JSON")
    retrieve.add_argument("--quiet", action="store_true", help="no progress on stderr")
    retrieve.set_defaults(handler=run_retrieve)

    trainer = subparsers.add_parser(
        "train-encoder",
        help="train a graph–text encoder on a session's references (EREDAT)",
        description="Contrastive training of a sentence encoder on the session's (graph, "
        "reference) pairs with in-batch, hard and inverted negatives (METHODS §7). The "
        "model folder is written complete or not at all, with taillens-encoder.json "
        "recording data and settings; use it with --encoder.",
    )
    trainer.add_argument("--session", type=Path, required=True)
    trainer.add_argument("--out", type=Path, required=True, help="new model folder")
    trainer.add_argument(
        "--base",
        help="starting encoder folder or cached HF id (default: the packaged all-MiniLM-L6-v2)",
    )
    trainer.add_argument("--epochs", type=int, default=1)
    trainer.add_argument("--batch-size", type=int, default=16)
    trainer.add_argument("--lr", type=float, default=2e-5)
    trainer.add_argument("--max-steps", type=int, help="stop after this many steps")
    trainer.add_argument("--max-seq-length", type=int, default=128)
    trainer.add_argument("--no-hard", action="store_true", help="no hard negatives")
    trainer.add_argument("--no-inverted", action="store_true", help="no inverted negatives")
    trainer.add_argument("--langs", type=comma_list, help="only references in these languages")
    trainer.add_argument("--quality", choices=QUALITIES)
    trainer.add_argument("--seed", type=int, default=0)
    trainer.add_argument("--device", default="cpu", help="cpu, cuda, mps or auto")
    trainer.add_argument("--json", action="store_true", help="print JSON")
    trainer.add_argument("--quiet", action="store_true", help="no progress on stderr")
    trainer.set_defaults(handler=run_train_encoder)


def run_retrieve(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.errors import UserFacingError
    from core.jobs import Job
    from core.metrics.retrieval import (
        RetrievalRequest,
        find_graphs,
        linearise,
        open_encoder,
        retrieval_job,
    )
    from core.store import SessionStore

    if args.batch_size < 1 or args.top < 1 or args.worst < 0:
        raise UserFacingError("--batch-size and --top must be at least 1, --worst at least 0")
    with SessionStore.open(args.session) as store:
        if args.text is not None:
            encoder = open_encoder(args.encoder, device=args.device, batch_size=args.batch_size)
            lang = args.langs[0] if args.langs else None
            hits = run_in_terminal(
                Job(
                    "Find the graph behind a text",
                    lambda ctx: find_graphs(
                        store, args.text, encoder, lang=lang, k=args.top, ctx=ctx
                    ),
                    kind="retrieval",
                ),
                quiet=args.quiet,
            )
            if args.json:
                print(
                    jsonio.dumps(
                        [
                            {
                                "unit": h.unit_id,
                                "lang": h.lang,
                                "similarity": h.similarity,
                                "triples": h.triples,
                            }
                            for h in hits
                        ],
                        indent=2,
                        ensure_ascii=False,
                    )
                )
            else:
                for rank, hit in enumerate(hits, 1):
                    print(
                        f"{rank:>3} {hit.similarity:.4f} unit {hit.unit_id} {hit.lang} "
                        f"{linearise(hit.triples)}"
                    )
            return 0
        request = RetrievalRequest(
            run_id=args.run,
            langs=tuple(args.langs or ()) or None,
            quality=args.quality,
            one_text_per_graph=args.one_text_per_graph,
            encoder=args.encoder,
            device=args.device,
            batch_size=args.batch_size,
        )
        summary = run_in_terminal(retrieval_job(store, request), quiet=args.quiet)
    worst = summary.result.worst(args.worst) if args.worst else []
    if args.json:
        out = summary.as_dict()
        if worst:
            out["worst"] = [
                {
                    "unit": m.pair.unit_id,
                    "lang": m.pair.lang,
                    "text_id": m.pair.text_id,
                    "source": m.pair.source,
                    "similarity": m.similarity,
                    "rank": m.rank,
                    "text": m.pair.text,
                }
                for m in worst
            ]
        print(jsonio.dumps(out, indent=2, ensure_ascii=False))
        return 0
    result = summary.result
    print(
        f"encoder {result.encoder} ({result.fingerprint}); {result.pairs:,} texts with a "
        f"graph: {result.graphs:,} unique graphs, {result.texts:,} unique texts; "
        f"{result.encoded:,} encoded now, the rest from the session cache"
    )
    for name, scores in (
        ("text → graph", result.text_to_graph),
        ("graph → text", result.graph_to_text),
    ):
        print(
            f"{name}: top-1 {scores.top1:.1%}  top-5 {scores.top5:.1%}  "
            f"MRR {scores.mrr:.3f}  ({scores.queries:,} queries)"
        )
    if summary.inversion_tested:
        print(
            f"inverted 1-triple graphs scored above the correct one: "
            f"{summary.inverted_above}/{summary.inversion_tested} = "
            f"{summary.inverted_above / summary.inversion_tested:.1%}"
        )
    for match in worst:
        print(
            f"{match.similarity:.4f} rank {match.rank:>4} {match.pair.source} "
            f"{match.pair.text_id} unit {match.pair.unit_id}: {match.pair.text[:80]}"
        )
    return 0


def run_train_encoder(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.metrics.encoder_training import TrainingSettings, training_job
    from core.store import SessionStore

    settings = TrainingSettings(
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.lr,
        max_steps=args.max_steps,
        max_seq_length=args.max_seq_length,
        hard_negatives=not args.no_hard,
        inverted_negatives=not args.no_inverted,
        seed=args.seed,
        device=args.device,
    )
    with SessionStore.open(args.session) as store:
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
                    "pairs": result.pairs,
                    "graphs": result.graphs,
                    "steps": result.steps,
                    "losses": result.losses,
                    "elapsed_s": result.elapsed_s,
                },
                indent=2,
            )
        )
        return 0
    print(
        f"trained {result.base} on {result.pairs:,} pairs ({result.graphs:,} graphs), "
        f"{result.steps} steps in {result.elapsed_s:.0f} s; saved to {result.out}"
    )
    if result.losses:
        print(f"loss {result.losses[0]:.4f} → {result.losses[-1]:.4f}", file=sys.stderr)
    return 0
