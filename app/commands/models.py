"""``taillens models pull|list|remove``: models from the Hugging Face hub, in its standard
cache (``HF_HUB_CACHE``), which every other tool shares (``core.local_models.hub``)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "models",
        help="pull a model from the Hugging Face hub, list the models here, remove one",
        description="Models live in the Hugging Face cache (HF_HUB_CACHE, else "
        "~/.cache/huggingface/hub), shared with every other tool, and in the folders named in "
        "TAILLENS_MODEL_DIRS. A gated model needs its licence accepted on the hub and a token "
        "(HF_TOKEN, or 'hf auth login').",
    )
    # 'taillens models [--folder F] [--json]' (no action) lists, as it always did.
    _list_arguments(parser)
    parser.set_defaults(handler=run_list)
    commands = parser.add_subparsers(dest="models_command", metavar="ACTION")

    pull = commands.add_parser(
        "pull",
        help="download ORG/NAME into the cache (resumes a pull that was stopped)",
        description="Download every file of ORG/NAME at REVISION into the Hugging Face cache. "
        "The size is read from the hub first and the free disk checked; a pull stopped by "
        "Ctrl+C, a kill or a dropped connection resumes where it stopped when run again.",
    )
    pull.add_argument("repo_id", metavar="ORG/NAME")
    pull.add_argument("--revision", help="branch, tag or commit (default main)")
    pull.add_argument("--dry-run", action="store_true", help="only say what would be pulled")
    pull.add_argument("--json", action="store_true", help="print the result as JSON")
    pull.add_argument("--quiet", action="store_true", help="no progress on stderr")
    pull.set_defaults(handler=run_pull)

    listing = commands.add_parser(
        "list",
        help="models here: kind, languages, size on disk, where (the default action)",
        description="Models in the Hugging Face cache and in model folders "
        "(TAILLENS_MODEL_DIRS, or --folder): kind (causal, seq2seq, encoder, translation, QE) "
        "from the config and the model card, the card's languages, size on disk, where.",
    )
    _list_arguments(listing)
    listing.set_defaults(handler=run_list)

    remove = commands.add_parser(
        "remove",
        help="delete ORG/NAME from the Hugging Face cache",
        description="Delete every revision of ORG/NAME from the Hugging Face cache (and any "
        "partial download of it). Folders named in TAILLENS_MODEL_DIRS are never deleted.",
    )
    remove.add_argument("repo_id", metavar="ORG/NAME")
    remove.set_defaults(handler=run_remove)


def _list_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--folder", type=Path, action="append", help="also look in this folder (repeatable)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def run_pull(args: argparse.Namespace) -> int:
    from app.terminal import run_in_terminal
    from core.io import jsonio
    from core.local_models import hub
    from core.local_models.loader import human_size

    if args.dry_run:
        plan = hub.plan_pull(args.repo_id, args.revision)
        print(plan.describe())
        hub.check_disk(plan)
        return 0
    result = run_in_terminal(hub.pull_job(args.repo_id, args.revision), quiet=args.quiet)
    if args.json:
        print(
            jsonio.dumps(
                {
                    "repo_id": result.repo_id,
                    "commit": result.commit,
                    "path": str(result.path),
                    "downloaded_bytes": result.downloaded_bytes,
                    "resumed_bytes": result.resumed_bytes,
                    "seconds": result.seconds,
                    "files": result.files,
                },
                indent=2,
            )
        )
        return 0
    resumed = f", resumed from {human_size(result.resumed_bytes)}" if result.resumed_bytes else ""
    speed = f" at {human_size(int(result.bytes_per_s))}/s" if result.downloaded_bytes else ""
    print(
        f"{result.repo_id} @ {result.commit[:10]}: {result.files} files, "
        f"{human_size(result.downloaded_bytes)} downloaded{speed}{resumed}; in {result.path}"
    )
    return 0


def run_list(args: argparse.Namespace) -> int:
    from core.io import jsonio
    from core.local_models import hub
    from core.local_models.loader import configured_model_folders, human_size

    models = hub.list_models(configured_model_folders() + list(args.folder or []))
    if args.json:
        print(jsonio.dumps(hub.as_json(models), indent=2, ensure_ascii=False))
        return 0
    if not models:
        print(f"no models in {hub.hf_cache_dir()}; 'taillens models pull ORG/NAME' fetches one")
    width = max([len(m.name) for m in models] + [20])
    for m in models:
        languages = ",".join(m.languages[:6]) + ("…" if len(m.languages) > 6 else "")
        print(
            f"{m.name:<{width}}  {m.kind:<11}  {human_size(m.size_bytes):>9}  "
            f"{languages or '-':<12}  {m.source:<8}  {m.path}"
        )
    print(f"{len(models):,} model" + ("" if len(models) == 1 else "s"))
    return 0


def run_remove(args: argparse.Namespace) -> int:
    from core.local_models import hub
    from core.local_models.loader import human_size

    freed = hub.remove_model(args.repo_id)
    print(f"removed {args.repo_id}: {human_size(freed)} freed")
    return 0
