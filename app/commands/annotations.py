"""``taillens annotations`` (aggregates, agreement, golden accuracy) and
``taillens annotators`` (list, add) from the command line (METHODS §9)."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from app.commands import add_output_arguments
from core.io import jsonio
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
    # --session is checked in the handler: the pack/merge/progress actions take their own.
    annotations.add_argument("--session", type=Path)
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
    _register_packs(annotations)

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

    if args.session is None:
        raise UserFacingError(
            "annotations needs --session SESSION (or an action: pack, merge, progress)."
        )
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
            added = add_annotator(store, args.add, source="taillens annotators")
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


# -- team packs (METHODS §13) -------------------------------------------------------------


def _register_packs(annotations: argparse.ArgumentParser) -> None:
    actions = annotations.add_subparsers(dest="action", metavar="{pack,merge,progress}")
    pack = actions.add_parser(
        "pack",
        help="write an annotation pack: a small session holding one annotator's texts",
        description="Write a session file holding only what one annotator needs: the "
        "texts, their units and references, the guidelines and golden items mixed in; no "
        "scores, and with --blind no model, tier or category names. The annotator opens it "
        "in TailLens and rates offline; 'annotations merge' brings the ratings back.",
    )
    pack.add_argument("--session", type=Path, required=True)
    pack.add_argument("--annotator", required=True, help="who the pack is for")
    pack.add_argument("--out", type=Path, required=True, help="the pack file to write")
    pack.add_argument("--units", help="unit ids, e.g. 1-50,60 (default: all)")
    pack.add_argument("--runs", help="run ids (default: all)")
    pack.add_argument("--lang", nargs="+", action="extend", help="languages (default: all)")
    pack.add_argument(
        "--target", choices=("verbalisations", "references"), default="verbalisations"
    )
    pack.add_argument(
        "--golden", type=int, default=0, metavar="N", help="mix in N golden items (default 0)"
    )
    pack.add_argument("--limit", type=int, metavar="N", help="at most N texts (a random sample)")
    pack.add_argument("--blind", action="store_true", help="hide model, tier and category")
    pack.add_argument("--guidelines", type=Path, help="a text file shown to the annotator")
    pack.add_argument("--seed", type=int, default=0)
    pack.add_argument(
        "--include-rated",
        action="store_true",
        help="also texts the annotator already rated in the session",
    )
    add_output_arguments(pack)
    pack.add_argument("--json", action="store_true", help="print JSON")
    pack.set_defaults(handler=run_pack)

    merge = actions.add_parser(
        "merge",
        help="bring the ratings of annotation packs back into the session",
        description="Merge ratings and corrections from packs made from this session. "
        "Idempotent: merging a pack twice adds nothing. A pack from another session, or "
        "with texts changed since it was made, is refused; a rating that differs from one "
        "the session holds is reported as a conflict and the session's is kept.",
    )
    merge.add_argument("--session", type=Path, required=True)
    merge.add_argument("packs", type=Path, nargs="+", metavar="PACK")
    merge.add_argument(
        "--skip-changed",
        action="store_true",
        help="merge the rest when some texts changed since packing",
    )
    merge.add_argument("--json", action="store_true", help="print JSON")
    merge.set_defaults(handler=run_merge)

    progress = actions.add_parser(
        "progress",
        help="per-annotator progress: done, remaining, golden accuracy, time per item",
    )
    progress.add_argument("--session", type=Path, required=True)
    progress.add_argument(
        "--break-s",
        type=float,
        default=900.0,
        help="gaps between ratings longer than this are breaks (default 900 s)",
    )
    progress.add_argument("--json", action="store_true", help="print JSON")
    progress.set_defaults(handler=run_progress)


def run_pack(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.annotation.packs import PackRequest, pack_job, parse_ids
    from core.errors import UserFacingError
    from core.io.files import read_text
    from core.store import SessionStore

    if args.golden < 0 or (args.limit is not None and args.limit < 1):
        raise UserFacingError("--golden takes 0 or more, --limit 1 or more.")
    guidelines = None
    if args.guidelines is not None:
        guidelines = read_text(args.guidelines, limit=1_000_000, what="the guidelines")
    request = PackRequest(
        annotator=args.annotator,
        out=args.out,
        units=parse_ids(args.units),
        runs=parse_ids(args.runs),
        langs=tuple(args.lang) if args.lang else None,
        target=args.target,
        golden=args.golden,
        blind=args.blind,
        guidelines=guidelines,
        seed=args.seed,
        limit=args.limit,
        include_rated=args.include_rated,
        force=args.force,
    )
    with SessionStore.open(args.session) as store:
        summary = run_in_terminal(pack_job(store, request), quiet=args.json)
    if args.json:
        print(jsonio.dumps(asdict(summary) | {"path": str(summary.path)}, indent=2))
        return 0
    print(
        f"wrote {summary.path}: {plural(summary.items, 'text')} of "
        f"{plural(summary.units, 'unit')} for {summary.annotator}"
        + (f", {summary.golden} golden" if summary.golden else "")
        + (", blind" if summary.blind else "")
    )
    for note in summary.notes:
        print(f"note: {note}")
    return 0


def run_merge(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.annotation.packs import merge_job
    from core.store import SessionStore

    with SessionStore.open(args.session) as store:
        reports = run_in_terminal(
            merge_job(
                store,
                args.packs,
                skip_changed=args.skip_changed,
                source="taillens annotations merge",
            ),
            quiet=args.json,
        )
    if args.json:
        print(
            jsonio.dumps(
                [
                    {
                        "pack": str(r.path),
                        "pack_uid": r.pack_uid,
                        "annotator": r.annotator,
                        "added": r.added,
                        "updated": r.updated,
                        "unchanged": r.unchanged,
                        "conflicts": [c.describe() for c in r.conflicts],
                        "skipped_changed": [list(i) for i in r.changed_texts],
                        "outside": r.outside,
                        "refused": list(r.refused),
                    }
                    for r in reports
                ],
                indent=2,
                ensure_ascii=False,
            )
        )
        return 0
    for r in reports:
        print(r.describe())
        for c in r.conflicts:
            print(f"  conflict: {c.describe()}")
        for reason in r.refused:
            print(f"  refused: {reason}")
    return 0


def run_progress(args: argparse.Namespace) -> int:
    from core.annotation.packs import overall_agreement, team_progress
    from core.store import SessionStore

    with SessionStore.open_read_only(args.session) as store:
        team = team_progress(store, break_s=args.break_s, agreement=overall_agreement)
    if args.json:
        payload = asdict(team)
        for row, p in zip(payload["annotators"], team.annotators, strict=True):
            row["remaining"] = p.remaining
        print(jsonio.dumps(payload, indent=2, ensure_ascii=False))
        return 0
    if not team.annotators:
        print("no packs made and no ratings yet")
        return 0
    print(
        f"{'annotator':<20} {'packs':>5} {'assigned':>8} {'done':>6} {'left':>6} "
        f"{'golden':>6} {'adequacy':>8} {'fluency':>8} {'s/item':>7}"
    )
    for p in team.annotators:
        print(
            f"{p.annotator:<20} {p.packs:>5} {p.assigned:>8} {p.done:>6} {p.remaining:>6} "
            f"{p.golden_items:>6} {_number(p.golden_adequacy, 2):>8} "
            f"{_number(p.golden_fluency, 2):>8} {_number(p.seconds_per_item, 1):>7}"
        )
    print(
        f"agreement over {plural(team.rated_items, 'rated item')}: Krippendorff's alpha "
        f"fluency {_number(team.alpha_fluency)}, adequacy {_number(team.alpha_adequacy)}"
    )
    return 0
