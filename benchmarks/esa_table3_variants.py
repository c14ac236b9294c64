"""How the ESA paper's Table 3 row moves with each reading of ESA's rules, and which texts move.

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/esa_table3_variants.py [--cache DIR]``
after ``benchmarks/esa_table3_webnlg2020.py --cache DIR`` has built
``DIR/table3-base.taillens`` (the published data imported by the app's own commands, BLEU
and chrF++ scored, the judgments imported).

Over the judged texts of that session it runs ESA's detection (``esa_of_text``, the
``paper`` configuration's rules, the session's starter synonym table) once per variant:
one rule the paper states left out, or read another way (no pronouns, no synonym table,
dates and numbers by value only, no label variants, case-sensitive comparison, a lower
distance threshold). Per variant: n (judged texts with at least one undetected entity;
paper 470) and the Pearson row against BLEU, chrF++ and the five criteria beside the
paper's. Then, for the pronoun and synonym rules, the texts that only that rule keeps out of
the subset. Last, chrF++ computed as the WebNLG challenge's evaluation script computes it
(Maja Popović's chrF++: punctuation split from a word's either end, F averaged over all 8
orders, best reference) and a few other chrF settings, to show whether the chrF++ entry
depends on the implementation.
"""

from __future__ import annotations

import argparse
import string
import sys
import unicodedata
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import shared_data  # noqa: E402

COLUMNS = (
    "bleu:gold",
    "chrf++:gold",
    "webnlg:correctness",
    "webnlg:data_coverage",
    "webnlg:fluency",
    "webnlg:relevance",
    "webnlg:text_structure",
)
PAPER = (0.41, 0.45, 0.56, 0.57, 0.41, 0.53, 0.36)


def judged_texts(session: Path) -> list[dict[str, Any]]:
    """Each judged text: id, system, unit uid, text, references, BLEU, chrF++, ratings."""
    from core.correlate import human_values
    from core.metrics.scoring import sentence_score_table
    from core.metrics.scoring.material import unit_references
    from core.store import SessionStore

    with SessionStore.open(session) as store:
        humans = human_values(store)
        judged = set().union(*(set(v) for v in humans.values()))
        table = sentence_score_table(store, verbalisation_ids=judged)
        references = unit_references(store, sorted({r.unit_id for r in table}))
    out = []
    for row in table:
        if row.verbalisation_id not in judged:
            continue
        entry = {
            "vid": row.verbalisation_id,
            "system": row.model,
            "uid": row.unit_uid,
            "text": row.text or "",
            "refs": [ref for _, ref in references.get((row.unit_id, row.lang, "gold"), [])],
            **{c: row.scores.get(c) for c in COLUMNS[:2]},
        }
        for name in COLUMNS[2:]:
            entry[name] = humans.get(name, {}).get(row.verbalisation_id)
        out.append(entry)
    return out


def unit_triples() -> dict[str, list[tuple[str, str, str]]]:
    """Test entry id ("Id12") -> its modified triples, from the file as published."""
    test = shared_data.benchmark_input(*shared_data.WEBNLG2020_TEST)
    out = {}
    for entry in ET.parse(test).getroot().iter("entry"):
        triples = []
        for mtriple in entry.iter("mtriple"):
            parts = [part.strip() for part in (mtriple.text or "").split("|")]
            triples.append((parts[0], parts[1], parts[2]))
        out[f"Id{entry.get('eid', '').removeprefix('Id')}"] = triples
    return out


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float:
    from scipy.stats import pearsonr

    return float(pearsonr(xs, ys)[0])


def row_of(texts: list[dict[str, Any]], esa: dict[int, Any]) -> tuple[int, list[float]]:
    subset = [t for t in texts if esa[t["vid"]].esa is not None and esa[t["vid"]].missing]
    values = []
    for column in COLUMNS:
        pairs = [(esa[t["vid"]].esa, t[column]) for t in subset if t[column] is not None]
        values.append(pearson([x for x, _ in pairs], [y for _, y in pairs]))
    return len(subset), values


def popovic_chrf(hypothesis: str, references: Sequence[str]) -> float:
    """chrF++ as the WebNLG challenge's evaluation script computes a sentence's score."""

    def words(line: str) -> list[str]:
        out: list[str] = []
        for word in line.strip().split():
            if len(word) > 1 and word[-1] in string.punctuation:
                out += [word[:-1], word[-1]]
            elif len(word) > 1 and word[0] in string.punctuation:
                out += [word[0], word[1:]]
            else:
                out.append(word)
        return out

    def grams(items: Sequence[str], order: int) -> list[Counter[tuple[str, ...]]]:
        return [
            Counter(tuple(items[i : i + n]) for i in range(len(items) - n + 1))
            for n in range(1, order + 1)
        ]

    def counts(line: str) -> list[Counter[tuple[str, ...]]]:
        return grams(list(line.strip().replace(" ", "")), 6) + grams(words(line), 2)

    hyp = counts(hypothesis)
    best = -1.0
    for reference in (r for r in references if r.strip()):
        total = 0.0
        for h, r in zip(hyp, counts(reference), strict=True):
            matched = sum(min(c, r[g]) for g, c in h.items() if g in r)
            if matched:
                p, rec = matched / sum(h.values()), matched / sum(r.values())
                total += 5 * p * rec / (4 * p + rec)
        best = max(best, total / 8)
    return 100 * best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, required=True)
    args = parser.parse_args()
    base = args.cache / "table3-base.taillens"
    if not base.exists():
        raise SystemExit(f"{base} is missing: run benchmarks/esa_table3_webnlg2020.py first")

    import core.metrics.esa.detect as detect
    import core.metrics.esa.text as esa_text
    from core.metrics.esa.synonyms import starter_rows
    from core.surface import surface

    texts = judged_texts(base)
    triples = unit_triples()
    synonyms = detect.synonym_index(starter_rows())

    def esa(**options: Any) -> dict[int, Any]:
        settings: dict[str, Any] = {
            "synonyms": synonyms,
            "second_chance": False,
            "group_names": False,
            "literal_strings": True,
            **options,
        }
        return {
            t["vid"]: detect.esa_of_text(
                t["text"],
                detect.entities_of_triples(triples[t["uid"].rsplit(":", 1)[-1]]),
                "en",
                **settings,
            )
            for t in texts
        }

    def patched(module: Any, name: str, value: Callable[..., Any], **options: Any) -> Any:
        kept = getattr(module, name)
        setattr(module, name, value)
        try:
            return esa(**options)
        finally:
            setattr(module, name, kept)

    def no_accents(text: str) -> str:
        decomposed = unicodedata.normalize("NFKD", text)
        return "".join(c for c in decomposed if not unicodedata.combining(c))

    variants = {
        "paper config": lambda: esa(),
        "no pronouns": lambda: esa(pronouns=False),
        "no synonym table": lambda: esa(synonyms=None),
        "no synonyms, no pronouns": lambda: esa(synonyms=None, pronouns=False),
        "dates/numbers by value only": lambda: esa(literal_strings=False),
        "no label variants": lambda: patched(
            detect, "variants", lambda label: tuple(v for v in [surface(label)] if v)
        ),
        "case-sensitive": lambda: patched(esa_text, "fold", no_accents),
        "distance 0.35": lambda: esa(max_distance=0.35),
        "distance 0.30": lambda: esa(max_distance=0.30),
    }
    heads = ("BLEU", "chrF++", "Corr", "DataCov", "Fluency", "Relev", "TextStr")
    print(f"{len(texts):,} judged texts; Pearson over those with >=1 undetected entity")
    print(f"{'':<28} {'n':>4} " + " ".join(f"{h:>7}" for h in heads) + "  within 0.03")
    print(f"{'ESA paper (Table 3)':<28} {470:>4} " + " ".join(f"{v:>7.2f}" for v in PAPER))
    results = {}
    for name, run in variants.items():
        results[name] = run()
        n, row = row_of(texts, results[name])
        within = sum(abs(v - p) <= 0.03 for v, p in zip(row, PAPER, strict=True))
        print(f"{name:<28} {n:>4} " + " ".join(f"{v:>7.3f}" for v in row) + f"  {within}/7")

    by_vid = {t["vid"]: t for t in texts}
    paper = results["paper config"]
    for name in ("no pronouns", "no synonym table"):
        moved = [v for v in paper if not paper[v].missing and results[name][v].missing]
        print(f"\n{len(moved)} texts flagged only under '{name}' (first 8):")
        for vid in moved[:8]:
            t = by_vid[vid]
            print(
                f"  {t['system']} {t['uid'].rsplit(':', 1)[-1]}: missing "
                f"{', '.join(results[name][vid].missing)} | {t['text'][:110]}"
            )

    import sacrebleu

    subset = [t for t in texts if paper[t["vid"]].esa is not None and paper[t["vid"]].missing]
    values = [paper[t["vid"]].esa for t in subset]
    print("\nchrF++ implementations, Pearson with the paper config's ESA on the same subset:")
    chrf: dict[str, Callable[[str, list[str]], float]] = {
        "stored (sacrebleu chrF++)": lambda _text, _refs: 0.0,
        "WebNLG script (Popovic)": popovic_chrf,
        "sacrebleu eps smoothing": sacrebleu.CHRF(word_order=2, eps_smoothing=True).sentence_score,
        "sacrebleu chrF (no words)": sacrebleu.CHRF(word_order=0).sentence_score,
        "sacrebleu chrF++ beta 3": sacrebleu.CHRF(word_order=2, beta=3).sentence_score,
        "first reference only": lambda text, refs: (
            sacrebleu.CHRF(word_order=2).sentence_score(text, refs[:1]).score
        ),
        "first two references only": lambda text, refs: (
            sacrebleu.CHRF(word_order=2).sentence_score(text, refs[:2]).score
        ),
    }
    for name, scorer in chrf.items():
        if name.startswith("stored"):
            scores = [float(t["chrf++:gold"]) for t in subset]
        else:
            scores = [
                float(getattr(s, "score", s))
                for t in subset
                for s in [scorer(t["text"], t["refs"])]
            ]
        print(f"  {name:<28} {pearson(values, scores):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
