"""What a training learns from: the session's references with their unit's graph, split
into train and dev **by entry** (a unit's references all go to one side, and so do units
with the same graph: a union of units and graphs, so no graph is both learnt and evaluated
on), what each epoch trains on, and its batches.

Each epoch (``sampling`` "wdv", METHODS §12) trains on one example per entry (unit and
language): one of its references drawn at random, only those WebNLG marks good
(``comment="good"``) where the entry has any, and its triples in a random order, both by
a generator seeded from the seed and the epoch alone (:func:`epoch_examples`);
``sampling`` "all" trains on every reference with the triples in their stored order.
Batches hold examples of similar length (shuffled mega-batches of 50 batches sorted by
length, as ``transformers``' ``group_by_length`` does): a resumed training replays the
same order, so it learns what an uninterrupted one does.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from core.io import jsonio
from core.verbalise.training.settings import TrainingError

if TYPE_CHECKING:
    from core.store import SessionStore

GOOD = "good"  # WebNLG's lex comment for a reference fit to train on

Triples = tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class Example:
    """One reference and its unit's graph, in the reference's language."""

    unit_id: int
    lang: str
    triples: Triples
    text: str
    reference_id: int
    comment: str | None = None  # WebNLG's lex comment ("good", "bad", "toFix"), if any


@dataclass(frozen=True)
class Split:
    train: tuple[Example, ...]
    dev: tuple[Example, ...]

    @staticmethod
    def entries(examples: Sequence[Example]) -> set[int]:
        return {e.unit_id for e in examples}


def load_examples(
    store: SessionStore, *, langs: Sequence[str] | None = None, quality: str | None = None
) -> list[Example]:
    """The session's references with their unit's triples in the reference's language and
    the WebNLG ``comment`` their ``lex`` element had (``lex comment="good"``), if any."""
    from core.formats.webnlg.writer import lex_attributes
    from core.metrics.retrieval.pairs import load_pairs

    pairs = load_pairs(store, langs=langs, quality=quality)
    extras = lex_attributes(store, sorted({p.unit_id for p in pairs}))
    return [
        Example(
            p.unit_id,
            p.lang,
            p.triples,
            p.text.strip(),
            p.text_id,
            extras.get(p.text_id, {}).get("comment"),
        )
        for p in pairs
    ]


def split_by_entry(examples: Sequence[Example], dev_share: float, seed: int) -> Split:
    """Train and dev with no entry (unit) in both, and no graph in both: units that share
    a graph are one group. Groups are drawn in an order fixed by ``seed`` until dev holds
    ``dev_share`` of the entries (at least one group; train keeps at least one)."""
    parent: dict[Any, Any] = {}

    def find(node: Any) -> Any:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for example in examples:
        a, b = find(("unit", example.unit_id)), find(("graph", example.lang, example.triples))
        if a != b:
            parent[max(a, b, key=repr)] = min(a, b, key=repr)
    groups: dict[Any, set[int]] = defaultdict(set)
    for example in examples:
        groups[find(("unit", example.unit_id))].add(example.unit_id)
    if len(groups) < 2:
        raise TrainingError(
            "training needs references of at least 2 entries with different graphs "
            "(one for training, one for dev)"
        )

    def order(units: set[int]) -> str:
        return hashlib.sha256(f"{seed}:{min(units)}".encode()).hexdigest()

    ranked = sorted(groups.values(), key=order)
    total = sum(len(g) for g in ranked)
    dev_units: set[int] = set()
    for units in ranked[:-1]:
        if dev_units and len(dev_units) + len(units) > dev_share * total:
            break
        dev_units |= units
    return Split(
        tuple(e for e in examples if e.unit_id not in dev_units),
        tuple(e for e in examples if e.unit_id in dev_units),
    )


def data_fingerprint(examples: Sequence[Example]) -> str:
    digest = hashlib.sha256()
    for e in sorted(examples, key=lambda e: e.reference_id):
        fields: list[Any] = [e.reference_id, e.unit_id, e.lang, e.text, e.triples]
        if e.comment is not None:  # (a reference without one hashes as before comments)
            fields.append(e.comment)
        digest.update(jsonio.dumps(fields).encode())
    return digest.hexdigest()[:16]


def epoch_examples(
    examples: Sequence[Example], sampling: str, seed: int, epoch: int
) -> list[Example]:
    """What an epoch trains on (METHODS §12). ``sampling`` "all": ``examples`` as they are.
    "wdv" (WDV §4.1): one example per entry (unit and language), in the entries' order:
    one of its references at random, among those WebNLG marks good where it has any, with
    the entry's triples in a random order; the generator is seeded from ``seed`` and
    ``epoch`` alone, so the epoch draws the same examples whenever it is replayed."""
    if sampling == "all":
        return list(examples)
    entries: dict[tuple[int, str], list[Example]] = defaultdict(list)
    for example in examples:
        entries[(example.unit_id, example.lang)].append(example)
    rng = random.Random(f"wdv:{seed}:{epoch}")
    drawn: list[Example] = []
    for key in sorted(entries):
        references = sorted(entries[key], key=lambda e: e.reference_id)
        good = [e for e in references if e.comment == GOOD]
        chosen = rng.choice(good or references)
        triples = list(chosen.triples)
        rng.shuffle(triples)
        drawn.append(replace(chosen, triples=tuple(triples)))
    return drawn


def entry_count(examples: Sequence[Example]) -> int:
    """Entries (unit and language) among ``examples``: a "wdv" epoch's size."""
    return len({(e.unit_id, e.lang) for e in examples})


def length_grouped_batches(
    lengths: Sequence[int], batch_size: int, seed: int, epoch: int, group: bool = True
) -> list[list[int]]:
    """An epoch's batches (example indices): shuffled by (seed, epoch) alone, cut into
    mega-batches of 50 batches, each sorted by length and cut into batches, the batches
    shuffled again: little padding, and the same order whenever the epoch is replayed.
    ``group`` False: the shuffled order cut into batches."""
    rng = random.Random(f"{seed}:{epoch}")
    order = list(range(len(lengths)))
    rng.shuffle(order)
    if not group:
        return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    mega = batch_size * 50
    batches: list[list[int]] = []
    for start in range(0, len(order), mega):
        chunk = sorted(order[start : start + mega], key=lambda i: -lengths[i])
        batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    rng.shuffle(batches)
    return batches
