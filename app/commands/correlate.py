"""``taillens correlate`` and ``taillens import-judgments``: metrics against human judgments."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from app.commands.arguments import comma_list, run_ids
from core.io import jsonio


def register(subparsers: argparse._SubParsersAction) -> None:
    correlate = subparsers.add_parser(
        "correlate",
        help="correlate automatic metrics with human judgments",
        description="Pearson, Spearman and Kendall (tau-b), with two-sided p-values and n, "
        "between each automatic metric stored in the session and each human rating, per "
        "text and per system (run). Human ratings: the session's annotations (fluency, "
        "adequacy; WDV imports included) and WebNLG 2020 human-evaluation files imported "
        "with taillens import-judgments (webnlg:correctness, webnlg:data_coverage, "
        "webnlg:fluency, webnlg:relevance, webnlg:text_structure).",
    )
    correlate.add_argument("--session", type=Path, required=True)
    correlate.add_argument(
        "--metrics",
        type=comma_list,
        help="score columns, e.g. esa,bleu:gold,chrf++:gold (default: all)",
    )
    correlate.add_argument(
        "--human",
        type=comma_list,
        help="human ratings, e.g. fluency,webnlg:correctness (default: all)",
    )
    correlate.add_argument(
        "--level",
        choices=("text", "system", "both"),
        default="both",
        help="text level, system level or both (default)",
    )
    correlate.add_argument("--runs", type=run_ids, help="only these run ids, e.g. 1,2")
    correlate.add_argument(
        "--langs", "--language", type=comma_list, help="only these languages, e.g. en"
    )
    correlate.add_argument(
        "--tier", type=comma_list, help="only texts of these tiers or sub-tiers, e.g. long_tail"
    )
    correlate.add_argument(
        "--system", type=comma_list, help="only these systems (run system or model names)"
    )
    correlate.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="EXPR",
        help="only texts where FIELD OP VALUE holds (repeat: all must hold); FIELD is tier, "
        "sub_tier, lang, system, run, unit, a score column (esa, bleu:gold) or a score's "
        "detail (esa.undetected); OP is = != < <= > >=. The ESA paper's subset: "
        "--where 'esa.undetected>=1'",
    )
    correlate.add_argument(
        "--system-scores",
        choices=("mean", "corpus", "both"),
        default="both",
        help="system level from the mean of per-text scores (system), the metric's corpus "
        "score over the same texts (system-corpus: BLEU, chrF++, TER, as WebNLG reports), "
        "or both (default)",
    )
    correlate.add_argument(
        "--zscore",
        action="store_true",
        help="z-score each rater's WebNLG ratings first (as the WebNLG 2020 analysis did)",
    )
    correlate.add_argument(
        "--matrix",
        action="store_true",
        help="the ESA paper's Table 3 layout instead: each --metrics column (default esa) "
        "against every other score column and human rating (or --against), per text over "
        "the judged texts, for all texts and those with >=1 and >=2 undetected entities; "
        "Pearson, Spearman and Kendall blocks",
    )
    correlate.add_argument(
        "--against",
        type=comma_list,
        help="with --matrix: the columns, e.g. bleu:gold,chrf++:gold,webnlg:correctness",
    )
    correlate.add_argument(
        "--every-text",
        action="store_true",
        help="with --matrix: every text, not only the judged ones",
    )
    correlate.add_argument("--json", action="store_true", help="print JSON")
    correlate.add_argument("--quiet", action="store_true", help="no progress on stderr")
    correlate.set_defaults(handler=run_correlate)

    judgments = subparsers.add_parser(
        "import-judgments",
        help="import WebNLG 2020 human-evaluation files, in any layout they were published in",
        description="Read the WebNLG 2020 human evaluation as published, files or folders "
        "(searched at any depth): human_eval_id_<SYSTEM>.json (GenerationEval), "
        "results/en/<SYSTEM>/primary.json (challenge-2020) and the all-teams list "
        "english_humeval_data_all_teams.json (z-scores). Each system's ratings go to the run "
        "named like it (or --run), each sample id N to that run's text of WebNLG entry IdN "
        "(else its N-th text). Entries with no ratings are skipped and counted; systems of "
        "the all-teams file with no run are left out and listed. Importing a run again "
        "replaces its ratings. Any other error stores nothing.",
    )
    judgments.add_argument("paths", type=Path, nargs="+", help="files or folders")
    judgments.add_argument("--session", type=Path, required=True)
    judgments.add_argument(
        "--run",
        action="append",
        default=[],
        metavar="RUN|SYSTEM=RUN",
        help="the run (id or name) of the one system given, or SYSTEM=RUN for each system "
        "whose run is named otherwise (repeat)",
    )
    judgments.set_defaults(handler=run_import_judgments)


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "—"
    return f"{value:.{digits}f}" if abs(value) >= 10**-digits or value == 0 else f"{value:.1e}"


def run_correlate(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.correlate import CorrelationRequest, correlation_job
    from core.store import SessionStore

    if args.matrix:
        return _run_matrix(args)
    levels = ("text", "system") if args.level == "both" else (args.level,)
    request = CorrelationRequest(
        metrics=tuple(args.metrics) if args.metrics else None,
        humans=tuple(args.human) if args.human else None,
        levels=levels,
        run_ids=tuple(args.runs) if args.runs else None,
        langs=tuple(args.langs) if args.langs else None,
        zscore=args.zscore,
        tiers=tuple(args.tier) if args.tier else None,
        systems=tuple(args.system) if args.system else None,
        where=tuple(args.where),
        system_scores=("mean", "corpus") if args.system_scores == "both" else (args.system_scores,),
    )
    with SessionStore.open(args.session) as store:
        result = run_in_terminal(correlation_job(store, request), quiet=args.quiet)
    if args.json:
        print(
            jsonio.dumps(
                {
                    "rows": [row.__dict__ for row in result.rows],
                    "notes": result.notes,
                    "humans": result.humans,
                    "metrics": result.metrics,
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return 0
    _print(result.rows)
    for note in result.notes:
        print(f"note: {note}")
    return 0


def _run_matrix(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.correlate_matrix import MatrixRequest, matrix_job, matrix_lines
    from core.store import SessionStore

    request = MatrixRequest(
        rows=tuple(args.metrics) if args.metrics else ("esa",),
        columns=tuple(args.against) if args.against else None,
        judged_only=not args.every_text,
        run_ids=tuple(args.runs) if args.runs else None,
        langs=tuple(args.langs) if args.langs else None,
        zscore=args.zscore,
        where=tuple(args.where),
    )
    with SessionStore.open(args.session) as store:
        result = run_in_terminal(matrix_job(store, request), quiet=args.quiet)
    if args.json:
        print(jsonio.dumps(result.to_json(), indent=2, ensure_ascii=False))
        return 0
    for line in matrix_lines(result):
        print(line)
    return 0


def _print(rows: list[Any]) -> None:
    if not rows:
        print("no metric and human rating share a text")
        return
    print(
        f"{'level':<13} {'metric':<16} {'human rating':<24} {'n':>6} "
        f"{'pearson':>8} {'p':>8} {'spearman':>8} {'p':>8} {'kendall':>8} {'p':>8}"
    )
    for r in rows:
        print(
            f"{r.level:<13} {r.metric[:16]:<16} {r.human[:24]:<24} {r.n:>6,} "
            f"{_fmt(r.pearson):>8} {_fmt(r.pearson_p):>8} {_fmt(r.spearman):>8} "
            f"{_fmt(r.spearman_p):>8} {_fmt(r.kendall):>8} {_fmt(r.kendall_p):>8}"
            + (f"  ({r.note})" if r.note else "")
        )


def run_import_judgments(args: argparse.Namespace) -> int:
    from core.correlate import import_webnlg_judgments
    from core.store import SessionStore

    with SessionStore.open(args.session) as store:
        result = import_webnlg_judgments(store, args.paths, runs=args.run)
    for line in result.summary_lines():
        print(line)
    return 0
