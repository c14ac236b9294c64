"""``taillens verbalise`` and ``taillens models``: running verbalisers from the command line."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from core.io import jsonio

UNITS_HELP = "all (default), tier:NAME (tier or sub-tier), category:NAME or ids:1,2,3"


def register(subparsers: argparse._SubParsersAction) -> None:
    verbalise = subparsers.add_parser(
        "verbalise",
        help="verbalise a session's units with a model, the templates or a server",
        description="Run a verbaliser over the session's units (METHODS §6) and keep every "
        "output. --model is 'template' (no weights), a model folder, a Hugging Face id in the "
        "local cache, or the URL of an OpenAI-compatible server (vLLM, TGI, llama.cpp). An "
        "unfinished run with the same model and parameters is resumed.",
    )
    verbalise.add_argument("--session", type=Path, required=True)
    verbalise.add_argument("--model", default="template", help="PATH | HF-ID | template | URL")
    verbalise.add_argument(
        "--server-model",
        help="the model name a server serves (URL only; default: the first it lists)",
    )
    verbalise.add_argument("--langs", default="en,it,es", help="comma-separated (en,it,es)")
    verbalise.add_argument("--candidates", type=int, default=3)
    verbalise.add_argument("--temperature", type=float, default=0.7)
    verbalise.add_argument("--top-p", type=float, default=0.9)
    verbalise.add_argument("--max-new-tokens", type=int, default=256)
    verbalise.add_argument("--beams", type=int, default=3, help="beam width (seq2seq models)")
    verbalise.add_argument(
        "--batch-size",
        type=int,
        default=8,
        help="units per generate call (halved on out-of-memory)",
    )
    verbalise.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda", "mps"))
    verbalise.add_argument(
        "--dtype", default="auto", choices=("auto", "float32", "bfloat16", "float16")
    )
    verbalise.add_argument(
        "--quantize",
        default="auto",
        choices=("auto", "none", "8bit", "4bit"),
        help="load a local model 8- or 4-bit (bitsandbytes, CUDA); auto: only when it does "
        "not fit the GPU's free memory (default)",
    )
    verbalise.add_argument("--seed", type=int, default=0)
    verbalise.add_argument("--units", default="all", help=UNITS_HELP)
    verbalise.add_argument(
        "--prompt-template",
        action="append",
        default=[],
        metavar="LANG=FILE",
        help="use FILE as the LANG prompt template (must contain {triples}; repeatable)",
    )
    verbalise.add_argument(
        "--prompt-preset",
        default="tailnlg",
        choices=("tailnlg", "taillens"),
        help="bundled prompts: tailnlg = the TailNLG study's Appendix H "
        "texts, verbatim (default); taillens = TailLens's own wording",
    )
    verbalise.add_argument(
        "--seq2seq-prefix",
        metavar="TEXT",
        help="task prefix of a seq2seq model, before the <H> <R> <T> "
        "triples (default WDV's 'translate from Graph to Text: '; "
        "{language} becomes the language's name); recorded with the run",
    )
    resume = verbalise.add_mutually_exclusive_group()
    resume.add_argument(
        "--resume", type=int, metavar="RUN_ID", help="continue this run (same model and parameters)"
    )
    resume.add_argument(
        "--new-run",
        action="store_true",
        help="start a new run even if an unfinished matching one exists",
    )
    verbalise.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        help="seconds per server request, its retries and waits included, however slowly "
        "the reply arrives (URL only; default 120)",
    )
    verbalise.add_argument(
        "--max-response-mb",
        type=float,
        default=16.0,
        help="largest server reply read, in MB; a longer one stops the run (URL only; default 16)",
    )
    verbalise.add_argument(
        "--max-reply-chars",
        type=int,
        help="longest text stored per candidate; a longer reply is cut and the cut is "
        "recorded with the run (URL only; default 32 per --max-new-tokens)",
    )
    verbalise.add_argument("--json", action="store_true", help="print JSON")
    verbalise.add_argument("--quiet", action="store_true", help="no progress on stderr")
    verbalise.set_defaults(handler=run_verbalise)


def _templates(specs: list[str]) -> dict[str, str]:
    from core.errors import UserFacingError
    from core.io import files

    templates = {}
    for spec in specs:
        lang, sep, file_name = spec.partition("=")
        if not sep or not lang.strip() or not file_name.strip():
            raise UserFacingError(f"--prompt-template wants LANG=FILE, got {spec!r}")
        templates[lang.strip()] = files.read_text(
            Path(file_name.strip()), limit=files.TEMPLATE_LIMIT, what="the prompt template"
        )
    return templates


def run_verbalise(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.errors import UserFacingError
    from core.store import SessionStore
    from core.verbalise import GenerationParams, open_verbaliser
    from core.verbalise.job import IncompleteRun, verbalise_job
    from core.verbalise.prompts import PromptError

    langs = [lang.strip() for lang in args.langs.split(",") if lang.strip()]
    params = GenerationParams(
        candidates=args.candidates,
        temperature=args.temperature,
        top_p=args.top_p,
        max_new_tokens=args.max_new_tokens,
        seed=args.seed,
        num_beams=args.beams,
    )
    params.check()
    try:
        templates = _templates(args.prompt_template)
        options: dict[str, Any] = {}
        if str(args.model).startswith(("http://", "https://")):
            if not 0 < args.max_response_mb <= 4096:
                raise UserFacingError(
                    f"--max-response-mb must be in (0, 4096], got {args.max_response_mb:g}"
                )
            options["timeout_s"] = args.timeout
            options["max_response_bytes"] = int(args.max_response_mb * 1024 * 1024)
            options["max_reply_chars"] = args.max_reply_chars
        # Built before the session is touched: a missing or broken model fails here.
        verbaliser = open_verbaliser(
            args.model,
            params,
            templates,
            device=args.device,
            dtype=args.dtype,
            quantize=args.quantize,
            server_model=args.server_model,
            prompt_preset=args.prompt_preset,
            task_prefix=args.seq2seq_prefix,
            **options,
        )
    except PromptError as exc:
        raise UserFacingError(str(exc)) from None
    with SessionStore.open(args.session) as store:
        job = verbalise_job(
            store,
            verbaliser,
            args.units,
            langs,
            batch_size=args.batch_size,
            resume_run_id=args.resume,
            resume=not args.new_run,
        )
        try:
            summary = run_in_terminal(job, quiet=args.quiet)
        except IncompleteRun as incomplete:
            # Some units got no usable text: say what was done, then why it is unfinished.
            _print_summary(args, verbaliser, incomplete.summary)
            raise
    _print_summary(args, verbaliser, summary)
    return 0


def _print_summary(args: argparse.Namespace, verbaliser: Any, summary: Any) -> None:
    result = {
        "run_id": summary.run_id,
        "model": verbaliser.model_id,
        "kind": verbaliser.kind,
        "resumed": summary.resumed,
        "units": summary.units,
        "requests": summary.requests,
        "texts": summary.texts,
        "unparsable": summary.unparsable,
        "skipped_done": summary.skipped_done,
        "skipped_no_triples": summary.skipped_no_triples,
        "tokens": summary.tokens,
        "tokens_per_s": round(summary.tokens_per_s, 1),
        "batch_size": summary.batch_size,
        "oom_halvings": summary.oom_halvings,
        "failed": summary.failed,
        "failures": summary.failures,
        "truncated": summary.truncated,
        "replaced_surrogates": summary.replaced_surrogates,
        "usage_unusable": summary.usage_unusable,
        "warnings": summary.warnings,
        "not_resumed": [{"run_id": rid, "why": why} for rid, why in summary.not_resumed],
        "placement": summary.placement or None,
    }
    if args.json:
        print(jsonio.dumps(result, indent=2))
        return
    rows = [
        ("run", f"{summary.run_id}" + (" (resumed)" if summary.resumed else "")),
        ("model", f"{verbaliser.model_id} ({verbaliser.kind})"),
        ("units", f"{summary.units:,}"),
        ("texts", f"{summary.texts:,}"),
        ("unparsable", f"{summary.unparsable:,}"),
    ]
    if summary.tokens:
        rows.append(("tokens/s", f"{summary.tokens_per_s:,.1f}"))
    if result["placement"]:
        from core.local_models.placement import Placement

        placed = {k: v for k, v in result["placement"].items() if k in Placement.__annotations__}
        rows.append(("placement", Placement(**placed).summary()))
    for other, why in summary.not_resumed:
        # A matching unfinished run another process still writes: never resumed under it.
        rows.append(
            (
                "not resumed",
                f"run {other}: {why}; started run {summary.run_id} "
                f"instead (--resume {other} once that process is gone)",
            )
        )
    if summary.skipped_done:
        rows.append(("already done", f"{summary.skipped_done:,} unit-languages"))
    if summary.skipped_no_triples:
        rows.append(("no triples", f"{summary.skipped_no_triples:,} unit-languages"))
    if summary.oom_halvings:
        rows.append(
            (
                "batch size",
                f"{summary.batch_size} after {summary.oom_halvings} out-of-memory halvings",
            )
        )
    if summary.failed:
        rows.append(("failed", f"{summary.failed:,} unit-languages got no usable text"))
    for count, what in (
        (summary.truncated, "cut at --max-reply-chars"),
        (summary.replaced_surrogates, "lone surrogates replaced by U+FFFD"),
        (summary.usage_unusable, "the server's token count unusable"),
    ):
        if count:
            rows.append(("reply notes", f"{count:,} texts: {what}"))
    rows += [("warning", line) for line in summary.warnings]
    for label, value in rows:
        print(f"{label:<12} {value}")
