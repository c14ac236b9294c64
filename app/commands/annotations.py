"""``taillens annotations`` (aggregates, agreement, golden accuracy) and
``taillens annotators`` (list, add) from the command line (METHODS §9)."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from core import jsonio
from core.labels import plural

GROUPS = ("category", "tier", "subtier", "model", "lang")


def register(subparsers: argparse._SubParsersAction) -> None:
    annotations = subparsers.add_parser(
        "annotations",
        help="aggregate human ratings and measure agreement",
        description="Per-item aggregates (fluency mean and median, adequacy majority vote "
        "and share of Yes); group figures average the per-item aggregates, each item once "
        "(pooled figures beside them); Krippendorff's alpha (interval for fluency, nominal "
        "for adequacy) with --agreement; each annotator's accuracy on golden items with "
        "--golden.",
    )
    annotations.add_argument("--session", type=Path, required=True)
    annotations.add_argument(
        "--aggregate", action="store_true", help="aggregate the ratings (the default action)"
    )
    annotations.add_argument(
        "--by",
        nargs="+",
        action="extend",
        choices=GROUPS,
        help="group figures by these (several: their combinations)",
    )
    annotations.add_argument(
        "--agreement", action="store_true", help="Krippendorff's alpha per group and overall"
    )
    annotations.add_argument("--items", action="store_true", help="list per-item aggregates")
    annotations.add_argument(
        "--weighted",
        action="store_true",
        help="weight each item's figures by its WDV sampling_weight "
        "(WDV's weighted per-theme figures; items without one count 1)",
    )
    annotations.add_argument(
        "--golden", action="store_true", help="each annotator's accuracy on golden items"
    )
    annotations.add_argument("--json", action="store_true", help="print JSON")
    annotations.set_defaults(handler=run_annotations)

    annotators = subparsers.add_parser("annotators", help="list or add annotators")
    annotators.add_argument("--session", type=Path, required=True)
    annotators.add_argument("--add", metavar="NAME", help="add a named annotator")
    annotators.add_argument("--json", action="store_true", help="print JSON")
    annotators.set_defaults(handler=run_annotators)


def _number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def run_annotations(args: argparse.Namespace) -> int:
    from core.annotation import aggregate_annotations, golden_accuracy
    from core.errors import UserFacingError
    from core.store import SessionStore

    by = tuple(dict.fromkeys(args.by or ()))
    # Read-only: a WAL snapshot, so an import or run writing meanwhile never blocks it.
    with SessionStore.open_read_only(args.session) as store:
        summary = aggregate_annotations(
            store, by=by, agreement=args.agreement, weighted=args.weighted
        )
        golden = golden_accuracy(store) if args.golden else []
    if not summary.items:
        raise UserFacingError(
            f"{args.session.name} holds no ratings to aggregate: rate verbalisations in the "
            "Annotate panel, or import WDV records with their crowd scores."
        )
    if args.json:
        payload = {
            "by": list(by),
            "agreement": args.agreement,
            "weighted": summary.weighted,
            "columns": list(summary.columns),
            "overall": asdict(summary.overall) | {"label": summary.overall.label},
            "groups": [asdict(g) | {"label": g.label} for g in summary.groups],
        }
        if args.items:
            payload["items"] = [asdict(i) | {"item": list(i.item)} for i in summary.items]
        if args.golden:
            payload["golden"] = [
                asdict(g)
                | {"adequacy_accuracy": g.adequacy_accuracy, "fluency_accuracy": g.fluency_accuracy}
                for g in golden
            ]
        print(jsonio.dumps(payload, indent=2, ensure_ascii=False))
        return 0
    from app.commands.report import print_table
    from core.report.compare import Table

    print_table(
        Table(
            "annotations",
            "Human ratings" + (f" by {', '.join(by)}" if by else ""),
            summary.columns,
            tuple(tuple(r) for r in summary.rows()),
            note=(
                "figures average per-item aggregates, each item weighted by its sampling weight"
                if summary.weighted
                else "figures average per-item aggregates (each item once)"
            )
            + "; pooled_* pool every rating; adequacy_yes (WDV's adequacy "
            "percentage) and majority_yes are shares 0-1",
        )
    )
    if args.items:
        for i in summary.items:
            print(
                f"{i.item.kind} {i.item.id:>6}  {i.model:<16} {i.lang} {i.tier:<10} "
                f"ratings {i.ratings}  fluency mean {_number(i.fluency_mean, 2)} median "
                f"{_number(i.fluency_median, 1)}  adequacy majority "
                f"{'-' if i.adequacy_majority is None else i.adequacy_majority}  "
                f"yes {_number(i.adequacy_yes, 2)}"
            )
    if args.golden:
        if not golden:
            print("no golden items rated (or none set)")
        for g in golden:
            print(
                f"golden: {g.annotator:<20} items {g.items}  adequacy "
                f"{g.adequacy_correct}/{g.adequacy_checked}  fluency within "
                f"±{g.fluency_tolerance}: {g.fluency_within}/{g.fluency_checked}  "
                f"MAE {_number(g.fluency_mae, 2)}"
            )
    return 0


def run_annotators(args: argparse.Namespace) -> int:
    from core.annotation import add_annotator, list_annotators
    from core.store import SessionStore

    opener = SessionStore.open if args.add is not None else SessionStore.open_read_only
    with opener(args.session) as store:
        if args.add is not None:
            added = add_annotator(store, args.add)
            if not args.json:
                print(f"added annotator {added.name} (id {added.id})")
        annotators = list_annotators(store)
    if args.json:
        print(jsonio.dumps([asdict(a) for a in annotators], indent=2, ensure_ascii=False))
        return 0
    if args.add is None:
        for a in annotators:
            kind = "anonymous" if a.is_anonymous else "named"
            print(
                f"{a.id:>5}  {a.name:<24} {kind:<9} {a.ratings:>6} ratings"
                + (f", {a.golden_answers} golden answers" if a.golden_answers else "")
            )
        print(plural(len(annotators), "annotator"))
    return 0
