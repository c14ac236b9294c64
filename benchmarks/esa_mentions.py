"""ESA mention detection against the human mentions of the enriched WebNLG 2017 dev set.

The ESA paper (Faille, Gatt and Gardent 2021, §4) measured its entity-mention detection
on the enriched WebNLG (Castro Ferreira et al. 2018), whose every text lists its entity
mentions (``references/reference``: the entity, its type name / description / pronoun /
demonstrative, and the words). This script runs TailLens' detection
(:func:`core.metrics.esa.detect.esa_of_text`) on each dev text against the subjects and objects
of its entry's modified triples and counts, per text and entity:

* gold: every ``reference`` element (all types, pronouns included: the paper attributes
  pronouns to the root entity, so they are mentions it detects). The paper's text was
  not at hand when this was written; the counting with pronouns and demonstratives left
  out of both sides is printed too, to show how much the choice matters;
* predicted: every detected mention (label, variant, alias, synonym, date, number or
  pronoun);
* a predicted mention is correct when it pairs one-to-one with a gold mention of the same
  entity whose words are identical (``exact``), or within normalised Levenshtein 0.2
  (``ed<=0.2``); pairs are made closest first.

Precision = correct / predicted, recall = correct / gold, over the whole set. It then
times ESA itself on all dev texts (best of three, one process: wall and CPU time, with
the load average, since a shared machine's wall time says more about the neighbours).

The XML is read directly (no session): the files stay where they are, never copied.

    PYTHONPATH=$PWD python benchmarks/esa_mentions.py [DEV_DIR] [--no-synonyms]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import defusedxml.ElementTree as ET

from core.metrics.esa.detect import TextIndex, entities_of_triples, esa_of_text, synonym_index
from core.metrics.esa.text import normalised_distance
from core.surface import surface
from tests.shared_data import ENRICHED_DEV, benchmark_input

PAPER = {"exact": (0.74, 0.75), "ed<=0.2": (0.82, 0.83)}  # (recall, precision)


def read_texts(folder: Path) -> tuple[list[dict], int]:
    """Every ``lex`` with a text, and how many have none (6 in the dev set)."""
    texts = []
    skipped = 0
    for path in sorted(folder.rglob("*.xml")):
        for entry in ET.parse(path).getroot().iter("entry"):
            triples = []
            for mtriple in entry.iter("mtriple"):
                parts = [p.strip() for p in (mtriple.text or "").split("|")]
                if len(parts) == 3:
                    triples.append(tuple(parts))
            for lex in entry.iter("lex"):
                text_element = lex.find("text")
                if text_element is None or not (text_element.text or "").strip():
                    skipped += 1
                    continue
                gold = [
                    (r.get("entity", ""), (r.text or "").strip(), r.get("type", ""))
                    for r in lex.iter("reference")
                ]
                texts.append(
                    {
                        "file": f"{path.parent.name}/{path.name}",
                        "eid": entry.get("eid"),
                        "lid": lex.get("lid"),
                        "text": text_element.text.strip(),
                        "triples": triples,
                        "gold": gold,
                    }
                )
    return texts, skipped


_PIECES = re.compile(r"\w+|[^\w\s]")


def _tokens(words: str) -> str:
    """Words and punctuation apart, single spaces: the enriched WebNLG's mentions are
    tokenised ("Harrietstown , New York", "Aarhus Airport 's"), the texts are not."""
    return " ".join(_PIECES.findall(words.replace("’", "'")))


def _pairs(predicted: list[str], gold: list[str], limit: float) -> set[int]:
    """A one-to-one pairing, closest pairs first, distance within ``limit``: the gold
    mentions paired."""
    predicted = [_tokens(p) for p in predicted]
    gold = [_tokens(g) for g in gold]
    options = sorted(
        (normalised_distance(p, g), i, j)
        for i, p in enumerate(predicted)
        for j, g in enumerate(gold)
    )
    used_p: set[int] = set()
    used_g: set[int] = set()
    for distance, i, j in options:
        if distance > limit:
            break
        if i in used_p or j in used_g:
            continue
        used_p.add(i)
        used_g.add(j)
    return used_g


def _measure(texts: list[dict], synonyms, args: argparse.Namespace, rules: dict, show: bool):
    """Mention counts for one configuration of the detection: (counts per rule, the same
    without pronouns and demonstratives, recall counts per mention type, texts with at
    least one undetected entity)."""
    counts = {rule: Counter() for rule in PAPER}
    # The same counting with pronouns and demonstratives out of both sides (gold and ours):
    # how much the figures depend on the one counting choice the paper's text leaves open.
    names_only = {rule: Counter() for rule in PAPER}
    by_type: dict[str, Counter] = defaultdict(Counter)
    shown_errors = 0
    flagged = 0
    for item in texts:
        entities = entities_of_triples(item["triples"])
        result = esa_of_text(
            item["text"],
            entities,
            "en",
            synonyms=synonyms,
            noun_phrases=not args.bare_spans,
            **rules,
        )
        flagged += bool(result.missing)
        predicted: dict[str, list[str]] = defaultdict(list)
        predicted_names: dict[str, list[str]] = defaultdict(list)
        for mention in result.mentions:
            predicted[mention.entity].append(item["text"][mention.start : mention.end])
            if mention.via != "pronoun":
                predicted_names[mention.entity].append(item["text"][mention.start : mention.end])
        gold: dict[str, list[str]] = defaultdict(list)
        kinds: dict[str, list[str]] = defaultdict(list)
        gold_names: dict[str, list[str]] = defaultdict(list)
        for entity, words, kind in item["gold"]:
            gold[surface(entity)].append(words)
            if kind not in ("pronoun", "demonstrative"):
                gold_names[surface(entity)].append(words)
            kinds[surface(entity)].append(kind or "?")
            by_type[kind or "?"]["gold"] += 1
        for rule, limit in (("exact", 0.0), ("ed<=0.2", 0.2)):
            c = counts[rule]
            c["predicted"] += sum(len(v) for v in predicted.values())
            c["gold"] += sum(len(v) for v in gold.values())
            for entity in set(predicted) | set(gold):
                paired = _pairs(predicted.get(entity, []), gold.get(entity, []), limit)
                c["correct"] += len(paired)
                for j in paired:
                    by_type[kinds[entity][j]][rule] += 1
            n = names_only[rule]
            n["predicted"] += sum(len(v) for v in predicted_names.values())
            n["gold"] += sum(len(v) for v in gold_names.values())
            for entity in set(predicted_names) | set(gold_names):
                n["correct"] += len(
                    _pairs(predicted_names.get(entity, []), gold_names.get(entity, []), limit)
                )
        if show and args.show_errors and shown_errors < args.show_errors:
            pairs = sorted((e, w) for e, ws in predicted.items() for w in ws)
            wanted = sorted((surface(e), w) for e, w, _k in item["gold"])
            if pairs != wanted:
                shown_errors += 1
                print(f"--- {item['file']} {item['eid']} {item['lid']}: {item['text']}")
                print("    gold:", wanted)
                print("    ours:", pairs)
    return counts, names_only, by_type, flagged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "folder",
        nargs="?",
        type=Path,
        help="default: webnlg2017-enriched/en/dev in the data folder",
    )
    parser.add_argument(
        "--no-synonyms", action="store_true", help="without the bundled starter synonym table"
    )
    parser.add_argument(
        "--bare-spans",
        action="store_true",
        help="mentions as matched, without the article, possessive or unit",
    )
    parser.add_argument(
        "--show-errors", type=int, default=0, metavar="N", help="print N texts with misses"
    )
    args = parser.parse_args(argv)
    if args.folder is None:
        args.folder = benchmark_input(*ENRICHED_DEV)
    if not args.folder.is_dir():
        print(f"no enriched WebNLG dev folder at {args.folder}", file=sys.stderr)
        return 2
    synonyms = None
    if not args.no_synonyms:
        from core.metrics.esa.synonyms import starter_rows

        synonyms = synonym_index(starter_rows())
    texts, skipped = read_texts(args.folder)
    # ESA v2 and each of v3's detection changes, on the same texts and counting.
    configurations = (
        ("before (ESA v2)", {"second_chance": False, "group_names": False}),
        ("+ group names only", {"second_chance": False, "group_names": True}),
        ("+ second chance only", {"second_chance": True, "group_names": False}),
        ("after (ESA v3)", {"second_chance": True, "group_names": True}),
        # The named configurations (core.metrics.esa.detect.ESA_CONFIGS): "taillens" is
        # ESA v3; "paper" is v2 with dates and numbers also matched as written.
        (
            "config 'paper'",
            {"second_chance": False, "group_names": False, "literal_strings": True},
        ),
    )
    measured = {
        label: _measure(texts, synonyms, args, rules, show=label.startswith("after"))
        for label, rules in configurations
    }
    counts, names_only, by_type, flagged = measured["after (ESA v3)"]
    print(
        f"enriched WebNLG 2017 dev: {len(texts):,} texts ({skipped} lex without text "
        "skipped), "
        f"{counts['exact']['gold']:,} human mentions "
        + "("
        + ", ".join(f"{k or '?'} {v['gold']:,}" for k, v in sorted(by_type.items()))
        + ")"
    )
    print(
        f"synonyms: {'none' if synonyms is None else 'bundled starter set'}; mention spans: "
        f"{'as matched' if args.bare_spans else 'with article, possessive and unit'}"
    )
    print(
        "recall by mention type (after): "
        + "; ".join(
            f"{kind} {v['exact'] / v['gold']:.2f} exact, {v['ed<=0.2'] / v['gold']:.2f} ed<=0.2"
            for kind, v in sorted(by_type.items())
            if v["gold"]
        )
    )
    print(
        f"{'configuration':<22} {'exact R':>7} {'exact P':>7} {'<=0.2 R':>7} {'<=0.2 P':>7}"
        f"   {'no-pronoun exact R/P':>20}   texts flagged (ESI@1)"
    )
    paper = "ESA paper"
    print(
        f"{paper:<22} {PAPER['exact'][0]:7.2f} {PAPER['exact'][1]:7.2f} "
        f"{PAPER['ed<=0.2'][0]:7.2f} {PAPER['ed<=0.2'][1]:7.2f}"
    )
    for label, (c, n, _types, flagged) in measured.items():
        figures = []
        for rule in PAPER:
            figures.append(c[rule]["correct"] / c[rule]["gold"] if c[rule]["gold"] else 0.0)
            figures.append(
                c[rule]["correct"] / c[rule]["predicted"] if c[rule]["predicted"] else 0.0
            )
        plain = n["exact"]
        print(
            f"{label:<22} "
            + " ".join(f"{value:7.3f}" for value in figures)
            + f"   {plain['correct'] / plain['gold']:9.3f} / "
            + f"{plain['correct'] / plain['predicted']:.3f}"
            + f"   {flagged:,} of {len(texts):,} ({flagged / len(texts):.1%})"
        )
    timings = []
    cpu = []
    prepared = [(t["text"], entities_of_triples(t["triples"])) for t in texts]
    for _ in range(3):
        began, began_cpu = time.perf_counter(), time.process_time()
        for text, entities in prepared:
            esa_of_text(
                text,
                entities,
                "en",
                synonyms=synonyms,
                index=TextIndex(text),
                noun_phrases=not args.bare_spans,
            )
        timings.append(time.perf_counter() - began)
        cpu.append(time.process_time() - began_cpu)
    print(
        f"ESA time, all {len(texts):,} dev texts, one process (one core): "
        f"{min(timings):.2f} s wall, {min(cpu):.2f} s CPU (best of 3; wall "
        f"{', '.join(f'{t:.2f}' for t in timings)}; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    print(
        "command: PYTHONPATH=$PWD python benchmarks/esa_mentions.py"
        + (" --no-synonyms" if args.no_synonyms else "")
        + (" --bare-spans" if args.bare_spans else "")
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
