"""The model card (``README.md``) of a finished training's folder, from its record
(``taillens-training.json``): Hugging Face's front matter, then the data, the settings
and the figures in words and tables, each part built by a function of its own."""

from __future__ import annotations

from typing import Any

from core.verbalise.training.settings import METRIC_NAMES


def model_card(record: dict[str, Any]) -> str:
    """README.md of a trained folder."""
    parts = (_front_matter, _title, _data, _settings, _figures, _evaluations)
    return "\n".join(line for part in parts for line in part(record)) + "\n"


def _front_matter(record: dict[str, Any]) -> list[str]:
    kind = record["identity"]["kind"]
    langs = record["data"].get("langs") or []
    lines = [
        "---",
        f"base_model: {record['base']}",
        "library_name: transformers",
        "pipeline_tag: " + ("text-generation" if kind == "causal" else "text2text-generation"),
        "tags: [graph-to-text, data-to-text, webnlg, taillens]",
    ]
    if langs:
        lines.append(f"language: [{', '.join(langs)}]")
    return [*lines, "---"]


def _title(record: dict[str, Any]) -> list[str]:
    return [
        "",
        f"# Graph-to-text verbaliser fine-tuned from {record['base']}",
        "",
        f"Trained with TailLens `train-verbaliser`: {record['method']}.",
        "Use it in TailLens's Verbalise panel or with `taillens verbalise --model` this folder.",
    ]


def _data(record: dict[str, Any]) -> list[str]:
    data = record["data"]
    langs = data.get("langs") or []
    return [
        "",
        "## Data",
        "",
        f"- session: {data.get('session') or '(not named)'}; languages: "
        f"{', '.join(langs) or 'all'}; references: {data.get('quality') or 'gold and silver'}",
        f"- train: {data['train_texts']:,} texts of {data['train_entries']:,} entries; "
        f"dev: {data['dev_texts']:,} texts of {data['dev_entries']:,} entries "
        "(split by entry: no entry, and no graph, in both)",
        _epoch_line(record),
        _input_line(record),
    ]


def _epoch_line(record: dict[str, Any]) -> str:
    data = record["data"]
    if record["settings"].get("sampling", "all") != "wdv":
        return "- each epoch: every reference, the triples in their stored order"
    good = data.get("train_good_texts", 0)
    return (
        f"- each epoch: {data.get('examples_per_epoch', 0):,} examples, one per entry "
        "(WDV §4.1): one of its references at random"
        + (f" (among the {good:,} WebNLG marks good, where an entry has any)" if good else "")
        + ", its triples in a random order"
    )


def _input_line(record: dict[str, Any]) -> str:
    settings = record["settings"]
    if record["identity"]["kind"] == "causal":
        return (
            f"- input: the {settings['prompt_preset']} chat prompt; reply: answer marker + [text]"
        )
    prefix = settings.get("task_prefix")
    added = record["added_tokens"]
    return (
        "- input: "
        + (repr(prefix) if prefix is not None else "WDV's 'translate from Graph to Text: '")
        + " then `<H> subject <R> predicate <T> object` per triple"
        + (f"; tokens added: {' '.join(added)}" if added else "")
    )


def _settings(record: dict[str, Any]) -> list[str]:
    return [
        "",
        "## Settings",
        "",
        "| setting | value |",
        "| --- | --- |",
        *(f"| {k} | {v} |" for k, v in record["settings"].items()),
        f"| device | {record['device']} ({record['precision']}) |",
    ]


def _figures(record: dict[str, Any]) -> list[str]:
    lines = [
        "",
        "## Figures",
        "",
        f"- steps: {record['steps']:,} of {record['planned_steps']:,} planned"
        + (f" ({record['stopped']})" if record.get("stopped") else ""),
        f"- training time: {record['train_s']:.0f} s, {record['tokens']:,} tokens"
        + (f", {record['tokens_per_s']:,.0f} tokens/s" if record.get("tokens_per_s") else ""),
    ]
    best = record.get("best") or {}
    if best:
        lines.append(
            f"- kept: the weights of step {best['step']} (best dev "
            f"{METRIC_NAMES[best['metric']]} {best['value']})"
        )
    losses = record["losses"]
    if losses:
        lines.append(f"- training loss: {losses[0]:.4f} at step 1, {losses[-1]:.4f} at the last")
    return lines


def _evaluations(record: dict[str, Any]) -> list[str]:
    if not record["evaluations"]:
        return []
    return [
        "",
        "Dev set (BLEU and chrF++ by sacrebleu, corpus level, all references of a graph):",
        "",
        "| step | dev loss | BLEU | chrF++ | graphs |",
        "| ---: | ---: | ---: | ---: | ---: |",
        *(
            f"| {e['step']} | {e['loss']:.4f} | {e['bleu']:.2f} | {e['chrf']:.2f} | {e['graphs']} |"
            for e in record["evaluations"]
        ),
    ]
