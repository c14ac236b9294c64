"""The one small interface every metric has (after sacrebleu's metric classes).

A metric scores :class:`ScoringItem` s: a text with what it is judged against (the
references of its language, the unit's triples and entities, the prompt that produced
it). ``sentence_scores`` gives one :class:`MetricValue` per item, ``corpus_score`` one
for the whole list (or None where the metric has no corpus form), and ``signature``
says exactly how the numbers were made (a typed :class:`~core.metrics.signature.Signature`,
whose canonical text is stored beside every score). A value's details are its metric's
dataclass of :mod:`core.metrics.details` (:data:`DETAILS`).

Heavy libraries (sacrebleu, torch, transformers, sentence-transformers) are imported
inside the metric's methods, never at module level: ``core.metrics`` is imported by the
GUI at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from core.metrics.details import (
    BertScoreDetails,
    BleuDetails,
    ChrfDetails,
    EntityPerplexityDetails,
    EsaDetails,
    HallucinationDetails,
    MeteorDetails,
    MetricDetails,
    PerplexityDetails,
    RougeDetails,
    SimilarityDetails,
    TerDetails,
)
from core.metrics.signature import Signature

# Canonical metric names: the ``scores.metric`` column, CLI ``--metrics`` and report columns.
BLEU = "bleu"
CHRF = "chrf++"
ROUGE1 = "rouge1"
ROUGE2 = "rouge2"
ROUGEL = "rougeL"
BERTSCORE = "bertscore"
PPL = "ppl"  # perplexity of a text under a causal model
ENTITY_PPL = "entity_ppl"  # perplexity of an entity label alone
ESA = "esa"  # entity-based semantic adequacy (per text); ESI@n at corpus level
HALLUCINATION = "hallucination"  # count of hallucination candidates (spans in details)
SIMILARITY = "similarity"  # graph-text cosine similarity (inversion drop in details)
TER = "ter"  # translation edit rate (sacrebleu), lower is better
METEOR = "meteor"  # nltk's METEOR, where a WordNet folder is on this machine

REFERENCE_BASED = (BLEU, CHRF, TER, METEOR, ROUGE1, ROUGE2, ROUGEL, BERTSCORE)

# Each metric's typed details (core/metrics/details.py).
DETAILS: Mapping[str, type[MetricDetails]] = {
    BLEU: BleuDetails,
    CHRF: ChrfDetails,
    TER: TerDetails,
    ROUGE1: RougeDetails,
    ROUGE2: RougeDetails,
    ROUGEL: RougeDetails,
    METEOR: MeteorDetails,
    BERTSCORE: BertScoreDetails,
    SIMILARITY: SimilarityDetails,
    PPL: PerplexityDetails,
    ENTITY_PPL: EntityPerplexityDetails,
    ESA: EsaDetails,
    HALLUCINATION: HallucinationDetails,
}


def details_from_json(metric: str, data: Mapping[str, Any] | None) -> MetricDetails:
    """Stored details of ``metric`` as its typed class (the base class for a metric this
    version does not know: every key is kept in ``extra``)."""
    return DETAILS.get(metric, MetricDetails).from_json(data)


@dataclass(frozen=True)
class EntityInfo:
    """A subject or object of a unit as the text may mention it."""

    label: str
    aliases: tuple[str, ...] = ()
    qid: str | None = None
    is_root: bool = False
    # "item", "time", "quantity", "string", ... (dates are compared after normalisation)
    value_type: str = "item"


@dataclass(frozen=True)
class ScoringItem:
    """One text to score, and everything a metric may judge it against.

    ``references`` are texts of the same language and the same quality (gold and silver
    are scored apart: the caller builds one item list per quality). ``triples`` are the
    unit's ``(subject, predicate, object)`` labels in ``lang``; ``entities`` its subjects
    and objects with aliases. ``prompt`` is what the model was given, where known.
    """

    text: str
    lang: str
    references: tuple[str, ...] = ()
    triples: tuple[tuple[str, str, str], ...] = ()
    entities: tuple[EntityInfo, ...] = ()
    prompt: str | None = None
    key: Any = None  # the caller's id (e.g. a verbalisation id), carried through untouched
    # The generated tokens' log-probabilities a server returned with the text, where it
    # did (perplexity of a server run is computed from them).
    token_logprobs: tuple[float, ...] | None = None


@dataclass(frozen=True)
class MetricValue:
    """A score (None where it is undefined, e.g. no reference) and how it came about."""

    value: float | None
    details: MetricDetails = field(default_factory=MetricDetails)
    # Where this one value was made differently from ``Metric.signature()`` (sentence BLEU
    # uses effective order, a BERTScore fell back to an unrescaled model): stored instead.
    signature: Signature | None = None


@runtime_checkable
class Metric(Protocol):
    name: str

    def signature(self) -> Signature:
        """How the numbers are made: library, version, settings (stored with each score)."""
        ...

    def sentence_scores(self, items: Sequence[ScoringItem]) -> list[MetricValue]:
        """One value per item, in order."""
        ...

    def corpus_score(self, items: Sequence[ScoringItem]) -> MetricValue | None:
        """One value for all items (None where the metric has no corpus form)."""
        ...


class CorpusFromSentences:
    """For metrics whose corpus figure is made from their own sentence values: one
    ``sentence_scores`` pass, then ``corpus_from_sentences`` (which the scoring job also
    calls directly with values it already has, so nothing is computed twice)."""

    def corpus_score(self, items: Sequence[ScoringItem]) -> MetricValue | None:
        sentences = self.sentence_scores(items)  # type: ignore[attr-defined]
        return self.corpus_from_sentences(items, sentences)  # type: ignore[attr-defined]
