"""A group of texts scored together (one corpus row: run × language × quality): its
items, built when read, the ``scores`` rows of its values, and its corpus figure made
from what it keeps of them."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from core.metrics import MODEL_METRICS, REFERENCE_BASED, Metric
from core.metrics.base import ENTITY_PPL, PPL, MetricValue, ScoringItem
from core.metrics.details import EntityPerplexityDetails, PerplexityDetails
from core.metrics.scoring.request import CorpusScore, _Run, _Text
from core.metrics.signature import Signature


class _LazyItems(Sequence[ScoringItem]):
    """A group's ``ScoringItem``s, built when read (a chunk at a time while scoring, one
    at a time for a corpus score), so a large session never holds them all: the texts
    and, per text, its references (and prompt) are all a group keeps."""

    def __init__(
        self,
        make: Callable[..., ScoringItem],
        texts: Sequence[_Text],
        references: Sequence[Sequence[str]] | None = None,
        prompts: Sequence[str | None] | None = None,
    ) -> None:
        self._make = make
        self._texts = texts
        self._references = references
        self._prompts = prompts

    def __len__(self) -> int:
        return len(self._texts)

    def _one(self, index: int) -> ScoringItem:
        return self._make(
            self._texts[index],
            self._references[index] if self._references is not None else (),
            self._prompts[index] if self._prompts is not None else None,
        )

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._one(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._one(index)

    def __iter__(self) -> Iterator[ScoringItem]:
        return (self._one(i) for i in range(len(self)))


@dataclass
class _Group:
    """Texts scored together: one corpus row (run × lang × quality)."""

    run_id: int | None
    lang: str
    quality: str | None
    texts: list[_Text]
    items: Sequence[ScoringItem]  # built when read (_LazyItems)
    model: str | None = None  # the causal model of a perplexity group
    prompts: list[str] | None = None  # per text, perplexity only: stored / rebuilt / none


def sentence_rows(
    name: str, group: _Group, start: int, values: Sequence[MetricValue], signature: Signature
) -> Iterator[dict[str, Any]]:
    """The ``scores`` rows of ``values``, the sentence scores of the group's texts from
    ``start``; ``signature`` the metric's, where a value has none of its own."""
    quality_key = group.quality if name in REFERENCE_BASED else None
    texts = group.texts[start : start + len(values)]
    for index, (text, value) in enumerate(zip(texts, values, strict=True), start):
        if value.value is None and name in REFERENCE_BASED:
            continue  # absent, never 0
        details = value.details.to_json()
        if group.prompts is not None:  # ppl of a verbalisation: the raw reply
            details["prompt"] = group.prompts[index]
            details["scored"] = "raw reply"
            details["parse_ok"] = text.parse_ok
        if quality_key:
            details["quality"] = quality_key
        if text.reference_id is not None:
            details["quality"] = text.quality
            details["texts"] = "references"
        if text.output != "text" and group.prompts is None:
            details["output"] = text.output
        if group.model and name in MODEL_METRICS:
            details.setdefault("model", group.model)
        yield {
            "metric": name,
            "value": value.value,
            "details": details,
            "signature": str(value.signature or signature),
            "level": "sentence",
            "verbalisation_id": text.verbalisation_id,
            "reference_id": text.reference_id,
            "run_id": text.run_id,
            "lang": text.lang,
        }


def corpus_row(
    name: str,
    group: _Group,
    corpus: MetricValue,
    signature: Signature,
    *,
    run: _Run | None,
    subset: bool,
    run_texts: int | None,
) -> tuple[dict[str, Any], CorpusScore]:
    """A group's corpus row, and the same figure for the summary. ``run``: the group's
    run (None for references); ``subset``: only some units were asked for;
    ``run_texts``: how many texts the run had in the group's language when scored."""
    details = corpus.details.to_json()
    details.setdefault("n", len(group.texts))
    for kind in ("empty", "unparsed"):
        count = sum(1 for t in group.texts if t.output == kind)
        if count:
            details[f"{kind}_outputs"] = count
    if group.quality:
        details["quality"] = group.quality
    if group.run_id is None:
        details["texts"] = "references"
    if subset:
        details["subset"] = "units"
    if run is not None and run.writing is not None:
        details["partial"] = True  # the run was still being written
    if group.run_id is not None and run_texts is not None:
        # How many texts the run had in this language when scored: a reader tells
        # from it that the run has grown since (corpus_scores marks it stale).
        details["run_texts"] = run_texts
    if group.model and name in MODEL_METRICS:
        details.setdefault("model", group.model)
    row = {
        "metric": name,
        "value": corpus.value,
        "details": details,
        "signature": str(corpus.signature or signature),
        "level": "corpus",
        "verbalisation_id": None,
        "reference_id": None,
        "run_id": group.run_id,
        "lang": group.lang,
    }
    return row, CorpusScore(
        name,
        group.run_id,
        run.name if run else "references",
        group.lang,
        details.get("quality"),
        corpus.value,
        int(details.get("n") or 0),
        str(corpus.signature or signature),
        details,
    )


# Sentence details no corpus figure reads and the bulk of a value (ESA's mentions with
# their spans, hallucination candidates' spans): written with the sentence rows, not kept
# with the values a group keeps for its corpus figure.
_NOT_FOR_CORPUS = frozenset({"mentions", "spans"})


def _keeps_values(name: str, metric: Metric) -> bool:
    """Whether a group's corpus figure is made from its sentence values (kept, slimmed;
    BLEU, chrF++ and TER sum the sacrebleu statistics each sentence value carries), or
    from the texts again (a metric with a corpus form of its own)."""
    return hasattr(metric, "corpus_from_sentences") or name in (PPL, ENTITY_PPL)


def _kept(value: MetricValue) -> MetricValue:
    """What a group keeps of a sentence value for its corpus figure: the value and the
    details a corpus figure reads (ESA's entities, detected and missing names; BERTScore's
    rescaling; perplexity's mean NLL and tokens), not the bulky ones."""
    if not _NOT_FOR_CORPUS & value.details.keys():
        return value
    return MetricValue(value.value, value.details.without(*_NOT_FOR_CORPUS), value.signature)


def _pooled_perplexity(pairs: Iterable[tuple[float, int]]) -> MetricValue | None:
    """exp of the mean NLL over all tokens, from (mean NLL, tokens) per scored text."""
    pairs = [(nll, tokens) for nll, tokens in pairs if tokens]
    if not pairs:
        return None
    tokens = sum(t for _, t in pairs)
    return MetricValue(
        math.exp(sum(nll * t for nll, t in pairs) / tokens),
        PerplexityDetails(n=len(pairs), tokens=tokens, aggregate="pooled tokens"),
    )


def _corpus_of(
    name: str, metric: Metric, items: Sequence[ScoringItem], values: Sequence[MetricValue]
) -> MetricValue | None:
    """The corpus value, from the sentence values where that is the same number, so a
    model is not run twice over the same texts."""
    from_sentences = getattr(metric, "corpus_from_sentences", None)
    if from_sentences is not None:
        return from_sentences(items, values)
    ppl = [v.details for v in values if v.value is not None]
    if name == PPL and all(
        isinstance(d, PerplexityDetails) and d.mean_nll is not None for d in ppl
    ):
        return _pooled_perplexity(
            (d.mean_nll, int(d.tokens or 0))
            for d in ppl
            if isinstance(d, PerplexityDetails) and d.mean_nll is not None
        )
    entity_details = [v.details for v in values]
    if name == ENTITY_PPL and all(
        isinstance(d, EntityPerplexityDetails) and d.entities is not None for d in entity_details
    ):
        # Each distinct label once, as EntityPerplexity.corpus_score pools them.
        labels: dict[str, tuple[float, int]] = {}
        for d in entity_details:
            for entity in d.entities or () if isinstance(d, EntityPerplexityDetails) else ():
                if entity.ppl and entity.tokens:
                    labels[entity.label] = (math.log(entity.ppl), entity.tokens)
        return _pooled_perplexity(labels.values())
    return metric.corpus_score(items)
