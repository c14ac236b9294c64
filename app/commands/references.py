"""``taillens references``: TailNLG's reference pipeline (METHODS §11).

``translate`` (gold → silver, resumable), ``qe`` (xCOMET bands and spans, where
unbabel-comet and a checkpoint are present), ``postedit`` (Appendix F.1 prompt),
``sample`` (translations below Good to review, N per pair), ``write`` (a gold reference
by an annotator), ``review`` (an F.2 review, its correction promoted to gold) and
``review-report`` (Table 1 figures and agreement per pair). Export with
``taillens export --format tailnlg``."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from core.io import jsonio


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "references",
        help="references for new units: translate, estimate quality, post-edit, review",
        description="TailNLG's reference pipeline (METHODS §11): gold references are "
        "machine-translated into silver ones, scored by xCOMET where it is installed, "
        "post-edited with the Appendix F.1 prompt, and a sample below Good is reviewed.",
    )
    steps = parser.add_subparsers(dest="step", required=True, metavar="STEP")
    _add_translate(steps)
    _add_qe(steps)
    _add_postedit(steps)
    _add_sample(steps)
    _add_write(steps)
    _add_review(steps)
    _add_review_report(steps)


def _add_translate(steps: argparse._SubParsersAction) -> None:
    """``translate``: gold references into other languages, stored as silver."""
    t = steps.add_parser(
        "translate",
        help="translate gold references into other languages (stored as silver)",
        description="Translate every gold reference in --from into each --to language, "
        "for units with no gold reference there; each translation is a silver reference "
        "with its source reference, model and parameters. Sources already translated "
        "with the same model and parameters are skipped, so an interrupted run resumes.",
    )
    t.add_argument("--session", type=Path, required=True)
    t.add_argument("--from", dest="source", required=True, help="source language, e.g. en")
    t.add_argument("--to", dest="targets", required=True, help="target languages, e.g. it,es")
    t.add_argument(
        "--model",
        required=True,
        help="a local model folder or cached hub id (Marian/OPUS-MT, NLLB, M2M100, MADLAD, "
        "or a causal LM), or an OpenAI-compatible server URL",
    )
    t.add_argument("--server-model", help="with a server URL: the model it should use")
    t.add_argument("--beams", type=int, default=4, help="beam search width (default 4)")
    t.add_argument("--max-new-tokens", type=int, default=256)
    t.add_argument("--batch", type=int, default=16, help="texts per generate call")
    t.add_argument("--device", default="auto", help="auto, cpu, cuda, mps")
    t.add_argument("--units", help="only these unit uids, comma-separated")
    _common(t)
    t.set_defaults(handler=run_translate)


def _add_qe(steps: argparse._SubParsersAction) -> None:
    """``qe``: xCOMET scores, bands and error spans of the translations."""
    q = steps.add_parser(
        "qe",
        help="estimate translation quality with xCOMET (score, band, error spans)",
        description="Score every translation not yet scored by this checkpoint. Needs "
        "unbabel-comet (here, or in another environment: --qe-python) and a local xCOMET "
        "checkpoint; without them it says so and changes nothing (every translation then "
        "goes to post-editing without a band).",
    )
    q.add_argument("--session", type=Path, required=True)
    q.add_argument("--qe-model", help="xCOMET model folder or .ckpt (never downloaded)")
    q.add_argument(
        "--qe-python",
        default=os.environ.get("TAILLENS_COMET_PYTHON") or None,
        help="the Python of an environment that has unbabel-comet (it needs transformers<5, "
        "so it usually cannot live beside TailLens's models); default $TAILLENS_COMET_PYTHON, "
        "else this Python",
    )
    q.add_argument(
        "--qe-timeout", type=_positive_seconds, default=900.0, help="seconds a batch may take"
    )
    q.add_argument("--batch", type=int, default=8)
    _common(q)
    q.set_defaults(handler=run_qe)


def _add_postedit(steps: argparse._SubParsersAction) -> None:
    """``postedit``: the translations post-edited by an LLM (Appendix F.1)."""
    p = steps.add_parser(
        "postedit",
        help="post-edit translations with an LLM and the Appendix F.1 prompt",
        description="Give each translation not yet post-edited by MODEL to it with "
        "TailNLG's Appendix F.1 prompt (verbatim); keep both versions, the reference's text "
        "becoming the correction where the reply could be parsed.",
    )
    p.add_argument("--session", type=Path, required=True)
    p.add_argument("--model", required=True, help="causal LM folder or server URL")
    p.add_argument("--server-model")
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--max-new-tokens", type=int, default=512)
    p.add_argument("--device", default="auto")
    p.add_argument("--redo", action="store_true", help="post-edit again what MODEL did")
    _common(p)
    p.set_defaults(handler=run_postedit)


def _add_sample(steps: argparse._SubParsersAction) -> None:
    """``sample``: the translations to review, N per pair."""
    s = steps.add_parser(
        "sample",
        help="the translations to review: N per language pair, below Good",
        description="Draw up to N translations per source→target pair from those xCOMET "
        "scored below Good (all translations where none has a band), with --seed.",
    )
    s.add_argument("--session", type=Path, required=True)
    s.add_argument("-n", type=int, default=50, help="per pair (default 50, as TailNLG)")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--json", action="store_true")
    s.set_defaults(handler=run_sample)


def _add_write(steps: argparse._SubParsersAction) -> None:
    """``write``: a gold reference written by an annotator."""
    w = steps.add_parser("write", help="store a gold reference written by an annotator")
    w.add_argument("--session", type=Path, required=True)
    w.add_argument("--annotator", required=True, help="name or id (see annotators)")
    w.add_argument("--unit", required=True, help="the unit's uid")
    w.add_argument("--lang", required=True)
    w.add_argument("--text", required=True)
    w.set_defaults(handler=run_write)


def _add_review(steps: argparse._SubParsersAction) -> None:
    """``review``: an Appendix F.2 review of a translation."""
    r = steps.add_parser(
        "review",
        help="record an Appendix F.2 review of a translation",
        description="Flags (1 where given, 0 otherwise) for Accuracy (terminology, "
        "mistranslation, omission, addition, untranslated) and Fluency (grammar, style, "
        "spelling, typography, unintelligible), and an optional corrected translation, "
        "promoted to a gold reference.",
    )
    r.add_argument("--session", type=Path, required=True)
    r.add_argument("--annotator", required=True)
    r.add_argument("--reference", type=int, required=True, help="the translation's id")
    r.add_argument("--accuracy", default="", help="flagged subcategories, comma-separated")
    r.add_argument("--fluency", default="", help="flagged subcategories, comma-separated")
    r.add_argument("--corrected", help="the corrected translation")
    r.set_defaults(handler=run_review)


def _add_review_report(steps: argparse._SubParsersAction) -> None:
    """``review-report``: Table 1 figures and agreement per pair."""
    rr = steps.add_parser(
        "review-report",
        help="TailNLG Table 1 figures of the reviews, and agreement per pair",
    )
    rr.add_argument("--session", type=Path, required=True)
    rr.add_argument("--json", action="store_true")
    rr.set_defaults(handler=run_review_report)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _print_json(payload: Any) -> None:
    jsonio.dump(payload, sys.stdout, ensure_ascii=False, indent=2)
    print()


def run_translate(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.references.languages import check_language, parse_languages
    from core.references.translate import TranslateParams, make_translator, translate_job
    from core.store import SessionStore

    source = check_language(args.source)
    targets = parse_languages(args.targets)
    params = TranslateParams(
        num_beams=args.beams,
        max_new_tokens=args.max_new_tokens,
        batch=args.batch,
        device=args.device,
    )
    params.check()
    units = [u.strip() for u in args.units.split(",") if u.strip()] if args.units else None
    translator = make_translator(args.model, params, server_model=args.server_model)
    with SessionStore.open(args.session) as store:
        job = translate_job(store, translator, source, targets, params, units=units)
        summary = run_in_terminal(job, quiet=args.quiet)
    if args.json:
        _print_json(summary.as_dict())
        return 0
    for pair, count in summary.translated.items() or {f"{source}→{t}": 0 for t in targets}.items():
        print(f"{pair}: {count} translated, {summary.skipped.get(pair, 0)} already were")
    per = summary.seconds_per_text
    print(
        f"model {summary.model} ({summary.family})"
        + ("" if per is None else f", {per * 1000:.1f} ms per text")
    )
    return 0


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def run_qe(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.references.qe import THRESHOLDS_SOURCE, CometScorer, qe_job, qe_status
    from core.store import SessionStore

    problem = qe_status(args.qe_model, args.qe_python)
    scorer = (
        None
        if problem
        else CometScorer(
            args.qe_model, batch=args.batch, python=args.qe_python, timeout_s=args.qe_timeout
        )
    )
    with SessionStore.open(args.session) as store:
        summary = run_in_terminal(
            qe_job(store, scorer, batch=args.batch, note=problem), quiet=args.quiet
        )
    if args.json:
        _print_json({**asdict(summary), "bands_from": THRESHOLDS_SOURCE})
        return 0
    if summary.note:
        print(summary.note)
        return 0
    bands = ", ".join(f"{k} {v}" for k, v in sorted(summary.bands.items())) or "none"
    print(f"{summary.scored} translations scored ({bands}), {summary.skipped} already were")
    print(f"bands: {THRESHOLDS_SOURCE}")
    return 0


def run_postedit(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.references.postedit import EditParams, make_editor, postedit_job
    from core.store import SessionStore

    params = EditParams(max_new_tokens=args.max_new_tokens, batch=args.batch, device=args.device)
    editor = make_editor(args.model, server_model=args.server_model, params=params)
    with SessionStore.open(args.session) as store:
        summary = run_in_terminal(
            postedit_job(store, editor, batch=args.batch, redo=args.redo), quiet=args.quiet
        )
    if args.json:
        _print_json(asdict(summary))
        return 0
    print(
        f"{summary.edited} post-edited (correction kept), {summary.unparsable} unparsable "
        f"(original kept), {summary.skipped} already were; model {summary.model}"
    )
    return 0


def run_sample(args: argparse.Namespace) -> int:
    from core.references.review import sample_for_review
    from core.store import SessionStore

    with SessionStore.open_read_only(args.session) as store:
        sample = sample_for_review(store, args.n, seed=args.seed)
    if args.json:
        _print_json(asdict(sample))
        return 0
    if sample.note:
        print(sample.note)
    for pair, count in sample.per_pair.items():
        print(f"{pair}: {count} of {sample.eligible[pair]} to review")
    for item in sample.items:
        band = item.band or "no band"
        print(f"  {item.reference_id}\t{item.pair}\t{band}\t{item.translation}")
    return 0


def _annotator_id(store: Any, name: str) -> int:
    from core.annotation.annotators import find_annotator

    return int(find_annotator(store, int(name) if name.isdigit() else name).id)


def run_write(args: argparse.Namespace) -> int:
    from sqlalchemy import select

    from core.references.review import ReviewError, write_reference
    from core.store import SessionStore
    from core.store.models import DataUnit

    with SessionStore.open(args.session) as store:
        with store.snapshot() as db:
            unit_id = db.scalar(select(DataUnit.id).where(DataUnit.uid == args.unit))
        if unit_id is None:
            raise ReviewError(f"there is no unit {args.unit!r} in {args.session}")
        ref = write_reference(
            store,
            _annotator_id(store, args.annotator),
            unit_id,
            args.lang,
            args.text,
            source="taillens references write",
        )
    print(f"gold reference {ref} stored for unit {args.unit} ({args.lang})")
    return 0


def run_review(args: argparse.Namespace) -> int:
    from core.references.review import save_review
    from core.store import SessionStore

    def names(text: str) -> list[str]:
        return [n.strip() for n in text.split(",") if n.strip()]

    with SessionStore.open(args.session) as store:
        annotation, gold = save_review(
            store,
            _annotator_id(store, args.annotator),
            args.reference,
            {"accuracy": names(args.accuracy), "fluency": names(args.fluency)},
            args.corrected,
            source="taillens references review",
        )
    print(
        f"review {annotation} saved"
        + ("" if gold is None else f"; correction stored as gold reference {gold}")
    )
    return 0


def run_review_report(args: argparse.Namespace) -> int:
    from core.references.review import review_report
    from core.store import SessionStore

    with SessionStore.open_read_only(args.session) as store:
        report = review_report(store)
    if args.json:
        _print_json(asdict(report))
        return 0

    def pm(mean: float | None, sd: float | None) -> str:
        return "—" if mean is None else f"{mean:.2f} ± {(sd or 0):.2f}"

    def num(value: float | None) -> str:
        return "—" if value is None else f"{value:+.2f}"

    print("pair     reviews  items  Accuracy       Fluency        flagged  rho    r      alpha")
    for p in report.pairs:
        share = "—" if p.flagged_share is None else f"{p.flagged_share:.0%}"
        print(
            f"{p.pair:<8} {p.reviews:>7}  {p.items:>5}  {pm(p.accuracy_mean, p.accuracy_sd):<13}  "
            f"{pm(p.fluency_mean, p.fluency_sd):<13}  {share:>7}  {num(p.spearman):<5}  "
            f"{num(p.pearson):<5}  {num(p.alpha)}"
        )
    if not report.pairs:
        print("no reviews yet (taillens references sample, then review)")
    print(report.formula)
    return 0
