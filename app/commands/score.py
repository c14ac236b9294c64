"""``taillens score`` and ``taillens import-outputs``: scoring texts from the command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.commands.arguments import comma_list, run_ids
from core.io import jsonio
from core.labels import plural

if TYPE_CHECKING:
    from core.store import SessionStore


def register(subparsers: argparse._SubParsersAction) -> None:
    score = _add_score(subparsers)
    _add_score_models(score)
    _add_score_handling(score)
    score.set_defaults(handler=run_score)
    _add_import_outputs(subparsers)


def _add_score(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """``taillens score``: what to score."""
    score = subparsers.add_parser(
        "score",
        help="score a session's verbalisations",
        description="Score the session's verbalisations against references of the same "
        "language (gold and silver apart) and from the input graph (METHODS §7). Scores "
        "are stored in the session; scoring again replaces them.",
    )
    score.add_argument("--session", type=Path, required=True)
    score.add_argument(
        "--metrics",
        default="default",
        help="comma-separated: bleu, chrf++ (or chrf), ter, meteor, rouge (rouge1, "
        "rouge2, rougeL), bertscore, ppl, entity_ppl, esa, hallucination, "
        "similarity; 'default' = all but the perplexities, 'all' = everything, "
        "'webnlg' = bleu, chrf++, ter, meteor (the WebNLG scripts' offline ones)",
    )
    score.add_argument("--runs", type=run_ids, help="only these run ids, e.g. 1,2")
    score.add_argument("--langs", type=comma_list, help="only these languages, e.g. en,it")
    score.add_argument(
        "--references",
        action="store_true",
        help="also score the reference texts with the reference-free metrics",
    )
    return score


def _add_score_models(score: argparse.ArgumentParser) -> None:
    """The models and rules the metrics use."""
    score.add_argument(
        "--bertscore-model",
        help="BERTScore model folder or cached HF id "
        "(default: bert-base-multilingual-cased if cached, else the packaged "
        "all-MiniLM-L6-v2, not rescaled)",
    )
    score.add_argument("--bertscore-layer", type=int, help="layer of the BERTScore model")
    score.add_argument(
        "--encoder",
        help="sentence-transformers model for graph-text "
        "similarity (default: the packaged all-MiniLM-L6-v2)",
    )
    score.add_argument(
        "--ppl-model",
        help="causal model for perplexity of every text "
        "(default: each run's own model; a server run's token "
        "log-probabilities where the server returned them)",
    )
    score.add_argument(
        "--esa-distance",
        type=float,
        default=0.4,
        help="normalised Levenshtein distance for ESA matches (default 0.4)",
    )
    score.add_argument(
        "--esa-config",
        choices=("paper", "taillens"),
        default="paper",
        help="ESA's detection rules: 'paper' (the ESA paper's rules, the default) or "
        "'taillens' (plus the second chance and group heads; dates and numbers by value "
        "only); the signature names it (docs/esa.md)",
    )


def _add_score_handling(score: argparse.ArgumentParser) -> None:
    """Partial runs, blank outputs, workers and what is printed."""
    score.add_argument(
        "--partial",
        action="store_true",
        help="also score a run another process is still writing, as far as "
        "it got (its corpus figures are marked partial); by default such a "
        "run is skipped with a note",
    )
    score.add_argument("--device", default="auto", help="auto, cpu, cuda, mps")
    score.add_argument(
        "--wordnet",
        metavar="DIR",
        help="WordNet 3.0 database folder for METEOR (default: $TAILLENS_WORDNET, "
        "nltk's data folders, /usr/share/wordnet of Debian's wordnet-base); "
        "without one METEOR is absent and a note says why",
    )
    score.add_argument(
        "--exclude-empty",
        action="store_true",
        help="leave empty outputs and unparsed replies out of every score "
        "(default: they are scored as empty texts, as the WebNLG scripts do)",
    )
    score.add_argument(
        "--exclude-unparsed",
        action="store_true",
        help="leave out only the replies no answer could be parsed from "
        "(empty outputs still count as empty texts)",
    )
    score.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="worker processes for BLEU, chrF++, TER and METEOR on large sessions "
        "(default: every core this process may use; 1: score in this process only)",
    )
    score.add_argument("--list-runs", action="store_true", help="list the session's runs")
    score.add_argument("--json", action="store_true", help="print JSON")
    score.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _add_import_outputs(subparsers: argparse._SubParsersAction) -> None:
    outputs = subparsers.add_parser(
        "import-outputs",
        help="import a system's outputs (one text per line) to score them",
        description="Read one text per line, line i for the i-th data unit of the session "
        "(units ordered by id, as WebNLG submissions align with the test set), and store "
        "them as an external run. A line count that differs from the unit count imports "
        "nothing.",
    )
    outputs.add_argument("file", type=Path)
    outputs.add_argument("--session", type=Path, required=True)
    outputs.add_argument("--system", required=True, help="the system's display name")
    outputs.add_argument("--lang", default="en", help="language of the texts (default en)")
    outputs.add_argument("--json", action="store_true", help="print JSON")
    outputs.set_defaults(handler=run_import_outputs)


def _format(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def _list_runs(store: SessionStore, as_json: bool) -> int:
    from core.verbalise.runs import list_runs

    runs = [
        {"id": r.id, "kind": r.kind, "name": r.model, "status": r.status, "texts": r.texts}
        for r in sorted(list_runs(store), key=lambda r: r.id)
    ]
    if as_json:
        print(jsonio.dumps(runs, indent=2, ensure_ascii=False))
    else:
        for run in runs:
            print(
                f"{run['id']:>4} {run['kind']:<9} {run['status']:<9} {run['texts']:>7,} "
                f"{run['name']}"
            )
    return 0


def run_score(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.errors import UserFacingError
    from core.metrics import MetricOptions
    from core.metrics.scoring import ScoringRequest, score_job
    from core.store import SessionStore

    if not 0.0 <= args.esa_distance < 1.0:
        raise UserFacingError("--esa-distance must be in [0, 1)")
    with SessionStore.open(args.session) as store:
        if args.list_runs:
            return _list_runs(store, args.json)
        options = MetricOptions(
            bertscore_model=args.bertscore_model,
            bertscore_layer=args.bertscore_layer,
            encoder=args.encoder,
            ppl_model=args.ppl_model,
            device=args.device,
            esa_distance=args.esa_distance,
            esa_config=args.esa_config,
            wordnet=args.wordnet,
        )
        request = ScoringRequest(
            metrics=tuple(comma_list(args.metrics)),
            run_ids=tuple(args.runs) if args.runs else None,
            langs=tuple(args.langs) if args.langs else None,
            references=args.references,
            options=options,
            exclude_empty=args.exclude_empty,
            exclude_unparsed=args.exclude_unparsed,
            partial=args.partial,
            workers=args.workers,
        )
        summary = run_in_terminal(score_job(store, request), quiet=args.quiet)
    # Every metric asked for was absent here (a model metric without the model stack,
    # METEOR without WordNet): nothing was written, and a script must be able to tell.
    # (A metric that ran but found no reference to score against is a note, not this.)
    nothing = not summary.rows_written
    if args.json:
        print(
            jsonio.dumps(
                {
                    "texts": summary.texts,
                    "rows_written": summary.rows_written,
                    "notes": summary.notes,
                    "corpus": [
                        {
                            "metric": c.metric,
                            "run": c.run_id,
                            "model": c.model,
                            "lang": c.lang,
                            "quality": c.quality,
                            "value": c.value,
                            "n": c.n,
                            "signature": c.signature,
                            "details": c.details,
                        }
                        for c in summary.corpus
                    ],
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return _nothing_scored(summary) if nothing else 0
    if nothing:
        return _nothing_scored(summary)
    print(
        f"scored {plural(summary.texts, 'text')}; rows written: "
        + ", ".join(f"{k} {v:,}" for k, v in summary.rows_written.items())
    )
    _print_table(summary.corpus)
    for note in summary.notes:
        print(f"note: {note}", file=sys.stderr)
    return 0


def _nothing_scored(summary: Any) -> int:
    """One line on stderr and exit 2: no metric asked for could be computed here."""
    reasons = "; ".join(dict.fromkeys(summary.absent.values())) or "no score could be computed"
    print(f"taillens: nothing scored: {reasons}", file=sys.stderr)
    return 2


def _print_table(corpus: list[Any]) -> None:
    """Corpus scores: one line per run × lang × quality, one column per metric."""
    metrics: list[str] = []
    table: dict[tuple[Any, ...], dict[str, float | None]] = {}
    for score in corpus:
        if score.metric not in metrics:
            metrics.append(score.metric)
        model = score.model + (" (partial)" if score.details.get("partial") else "")
        key = (
            score.run_id if score.run_id is not None else "-",
            model,
            score.lang,
            score.quality or "-",
        )
        table.setdefault(key, {})[score.metric] = score.value
    if not table:
        print("no corpus scores")
        return
    header = f"{'run':>4} {'model':<24} {'lang':<4} {'quality':<7} " + " ".join(
        f"{m:>13}" for m in metrics
    )
    print(header)
    # Runs in number order (run 10 after run 9); the references' rows ("-") first.
    for key in sorted(
        table,
        key=lambda k: (
            isinstance(k[0], int),
            k[0] if isinstance(k[0], int) else 0,
            str(k[1]),
            str(k[2]),
            str(k[3]),
        ),
    ):
        run_id, model, lang, quality = key
        print(
            f"{run_id!s:>4} {str(model)[:24]:<24} {lang or '-':<4} {quality:<7} "
            + " ".join(f"{_format(table[key].get(m)):>13}" for m in metrics)
        )


def run_import_outputs(args: argparse.Namespace) -> int:
    from core.formats.outputs import import_outputs
    from core.store import SessionStore

    with SessionStore.open(args.session) as store:
        result = import_outputs(store, args.file, system=args.system, lang=args.lang)
    if args.json:
        print(
            jsonio.dumps(
                {
                    "run": result.run_id,
                    "system": result.system,
                    "lang": result.lang,
                    "lines": result.lines,
                    "empty": result.empty,
                    "already_imported": result.already,
                },
                indent=2,
            )
        )
        return 0
    if result.already:
        print(
            f"already imported: the same {result.lines:,} {result.lang} outputs of "
            f"{result.system} are run {result.run_id}; nothing added"
        )
        return 0
    print(
        f"imported {result.lines:,} {result.lang} outputs of {result.system} as run "
        f"{result.run_id}"
        + (
            f" ({result.empty:,} empty lines: scored as empty texts "
            "unless taillens score --exclude-empty)"
            if result.empty
            else ""
        )
    )
    return 0
