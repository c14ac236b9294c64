"""``taillens likelihood``: the long tail as a model sees it (LINK, METHODS §3).

Scores a category's members under a local causal model (mean log-likelihood per token of
each label and of a templated statement), resuming where a previous run stopped; prints
the rank correlation with statement counts and sitelinks; with ``--cutoff`` stores the
``model_tail`` sub-tier, with ``--disagreements`` lists entities the two signals place
differently."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from pathlib import Path

from core.io import jsonio


def _cutoff(text: str) -> float | str:
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(
            f"a cut-off is a mean log-likelihood (e.g. -5.2) or 'auto', not {text!r}"
        ) from error


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "likelihood",
        help="model likelihood of a category's entities, and the model_tail sub-tier",
        description="Score CATEGORY's members under a local causal model: the mean "
        "log-likelihood per token of each entity's label and of a short statement built "
        "from its claims in the session (LINK, METHODS §3). Entities already scored under "
        "the same model and language are skipped, so an interrupted run resumes. Prints "
        "Spearman's rank correlation of the likelihood with statement counts and sitelinks.",
    )
    parser.add_argument("category")
    parser.add_argument("--session", type=Path, required=True)
    parser.add_argument("--model", required=True, help="causal LM folder or cached HF id")
    parser.add_argument("--lang", default="en", help="en, it or es (default en)")
    parser.add_argument("--qids", help="only these members, comma-separated")
    parser.add_argument("--batch", type=int, default=16, help="texts per forward pass")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, mps")
    parser.add_argument(
        "--signal",
        choices=("label", "statement"),
        default="label",
        help="which likelihood the cut-off and disagreements use",
    )
    parser.add_argument(
        "--cutoff",
        type=_cutoff,
        metavar="VALUE|auto",
        help="store the model_tail sub-tier: members below VALUE are "
        "model_tail; 'auto' makes the model's tail as large as the Wikidata "
        "long tail",
    )
    parser.add_argument(
        "--disagreements",
        action="store_true",
        help="list members head by counts but model_tail, and the reverse "
        "(by --cutoff, else the stored cut-off, else 'auto')",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(handler=run_likelihood)


def run_likelihood(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.store import SessionStore
    from core.tiers.likelihood import LikelihoodError, LikelihoodRequest, likelihood_job
    from core.tiers.model_tail import (
        CutoffSettings,
        correlations,
        disagreements,
        load_cutoff,
        load_likelihood_table,
        matched_cutoff,
        save_model_tail,
    )

    qids = [q.strip() for q in args.qids.split(",") if q.strip()] if args.qids else None
    with SessionStore.open(args.session) as store:
        request = LikelihoodRequest(
            args.category, args.model, args.lang, qids=qids, batch=args.batch, device=args.device
        )
        summary = run_in_terminal(likelihood_job(store, request), quiet=args.quiet)
        table = load_likelihood_table(store, args.category, summary.model, summary.lang)
        payload: dict = {
            "summary": {**asdict(summary), "seconds_per_entity": summary.seconds_per_entity},
            "correlations": [asdict(c) for c in correlations(table, args.signal)],
        }
        cutoff: float | None = None
        saved = load_cutoff(store, args.category)
        if args.cutoff is not None:
            cutoff = (
                matched_cutoff(table, args.signal) if args.cutoff == "auto" else float(args.cutoff)
            )
            if cutoff is None:
                raise LikelihoodError("no member is scored: nothing to cut")
            settings = CutoffSettings(summary.model, summary.lang, args.signal, cutoff)
            payload["model_tail"] = {
                **asdict(settings),
                "counts": save_model_tail(
                    store, args.category, settings, source="taillens likelihood"
                ),
            }
        elif args.disagreements:
            if (
                saved is not None
                and saved.model == summary.model
                and saved.lang == summary.lang
                and saved.signal == args.signal
            ):
                cutoff = saved.cutoff
            else:
                cutoff = matched_cutoff(table, args.signal)
        if args.disagreements and cutoff is not None:
            payload["cutoff"] = cutoff
            payload["disagreements"] = [
                asdict(d) for d in disagreements(table, cutoff, args.signal)
            ]
    if args.json:
        jsonio.dump(payload, sys.stdout, ensure_ascii=False, indent=2)
        print()
        return 0
    _print_likelihood(args, payload)
    return 0


def _print_likelihood(args: argparse.Namespace, payload: dict) -> None:
    """The run's summary, correlations, stored cut-off and disagreements as text."""
    s = payload["summary"]
    print(
        f"{args.category} ({s['lang']}), model {s['model']}: {s['scored']} scored, "
        f"{s['skipped']} already scored, {s['without_label']} without a label, "
        f"of {s['members']} members"
    )
    if s["seconds_per_entity"] is not None:
        print(f"  {s['seconds_per_entity'] * 1000:.1f} ms per entity")
    for c in payload["correlations"]:
        rho = "n/a" if c["rho"] is None else f"{c['rho']:+.3f} (p = {c['p_value']:.3g})"
        print(f"Spearman rho, {args.signal} likelihood vs {c['against']}: {rho}, n = {c['n']}")
    if "model_tail" in payload:
        m = payload["model_tail"]
        print(
            f"model_tail stored (cut-off {m['cutoff']:.4f}, {m['signal']}): "
            f"{m['counts']['model_tail']} model_tail, {m['counts']['model_head']} "
            f"model_head, {m['counts']['unscored']} unscored"
        )
    if "disagreements" in payload:
        found = payload["disagreements"]
        print(f"Disagreements at cut-off {payload['cutoff']:.4f}: {len(found)}")
        for d in found:
            print(
                f"  {d['qid']}  {d['label']}  {d['kind']}  statements {d['statements']}  "
                f"sitelinks {d['sitelinks']}  loglik {d['loglik']:.3f}"
            )
