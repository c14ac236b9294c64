"""Reference-based metrics: BLEU, chrF++ and TER (sacrebleu), ROUGE-1/2/L F (rouge-score).

Each item carries the references of its language and of one quality (gold or silver,
never mixed: the scoring job builds one item list per quality). Items without any
reference get ``value=None`` with a note, never 0, and are left out of the corpus score.

sacrebleu takes a variable number of references per segment when the missing ones are
``None`` in the reference streams, so corpus scores use every reference an item has.
Sentence BLEU uses ``effective_order=True`` (sacrebleu's advice for sentence-level BLEU);
its signature, which says so, is stored with those rows.

TER is sacrebleu's (tercom tokenisation, case-insensitive: its defaults); lower is better;
an empty output scores 100 (every reference word is an edit) or more. Its edit search runs
in core.metrics.ter_core: sacrebleu's rules and values, its distance rows computed with
numpy for all of a round's shift candidates at once (about 8x faster on WebNLG 2020).

Every output is scored as the WebNLG challenge's official scripts score it: an empty
output is the empty string (the scoring job decides which outputs reach a metric and
counts them), so a corpus score over a file with empty lines equals sacrebleu's on it.

ROUGE: rouge-score's default tokenizer keeps only ``[a-z0-9]`` and so cuts "città" into
"citt" and drops "ñ"; here the tokenizer lowercases and keeps Unicode letters and digits
(``[^\\W_]+``), which the signature states (``tok:unicode``). No stemming (Porter is
English-only). With several references the best F-measure counts (rouge-score's
``score_multi``). A corpus ROUGE is the mean of the sentence F-measures.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any, cast

from core import heavy
from core.metrics.base import (
    BLEU,
    CHRF,
    ROUGE1,
    ROUGE2,
    ROUGEL,
    TER,
    CorpusFromSentences,
    MetricValue,
    ScoringItem,
)
from core.metrics.details import (
    BleuDetails,
    ChrfDetails,
    MetricDetails,
    RougeDetails,
    SacreDetails,
    TerDetails,
)
from core.metrics.signature import Signature, library_version

NO_REFERENCE = "no reference of this language and quality"
# sacrebleu's private names these metrics and core.metrics.ter_core call, (module, class or
# None, name): a sentence score in its two steps (so each text's statistics are kept and
# summed into corpus scores), TER's tokeniser, and lib_ter's search constants. pyproject
# keeps sacrebleu below 3 for them; the tests check that the installed one has each.
SACREBLEU_PRIVATE_NAMES: tuple[tuple[str, str | None, str], ...] = (
    *(
        ("sacrebleu.metrics.base", "Metric", name)
        for name in (
            "_check_sentence_score_args",
            "_extract_corpus_statistics",
            "_aggregate_and_compute",
        )
    ),
    ("sacrebleu.metrics.ter", "TER", "_preprocess_segment"),
    *(
        ("sacrebleu.metrics.lib_ter", None, name)
        for name in (
            "_flip_trace",
            "_INT_INFINITY",
            "_BEAM_WIDTH",
            "_MAX_SHIFT_CANDIDATES",
            "_MAX_SHIFT_DIST",
            "_MAX_SHIFT_SIZE",
            "_OP_DEL",
            "_OP_INS",
            "_OP_NOP",
            "_OP_SUB",
            "_OP_UNDEF",
        )
    ),
)
# Texts whose reference n-grams sacrebleu holds at a time for a corpus score: the
# statistics are per sentence and summed, so batches give the very same score.
CORPUS_BATCH = 1_000


class _SacreMetric:
    """Shared code of BLEU and chrF++: one sacrebleu object for corpus, one for sentences."""

    name = ""

    def _make(self, sentence: bool) -> Any:
        raise NotImplementedError

    def __init__(self) -> None:
        self._corpus = self._make(sentence=False)
        self._sentence = self._make(sentence=True)

    def _typed(self, text: str) -> Signature:
        """sacrebleu's signature text (``nrefs:1|case:mixed|…|version:2.6.0``) as typed:
        its settings in its order, its values as it writes them."""
        pairs = [part.split(":", 1) for part in text.split("|")]
        settings = [(key, value) for key, value in pairs if key != "version"]
        version = next((value for key, value in pairs if key == "version"), "")
        return Signature(self.name, "sacrebleu", version, tuple(settings))

    def _signature_of(self, metric: Any, sentence: bool) -> Signature:
        """sacrebleu's signature; it names the reference count only after a first score."""
        try:
            return self._typed(str(metric.get_signature()))
        except ValueError:
            metric.sentence_score("a", ["a"]) if sentence else metric.corpus_score(["a"], [["a"]])
            return self._typed(str(metric.get_signature())).with_settings(nrefs="var")

    def signature(self) -> Signature:
        return self._signature_of(self._corpus, sentence=False)

    def sentence_signature(self) -> Signature:
        return self._signature_of(self._sentence, sentence=True)

    def sentence_scores(self, items: Sequence[ScoringItem]) -> list[MetricValue]:
        return self.sentence_scores_with_statistics(items)[0]

    def sentence_scores_with_statistics(
        self, items: Sequence[ScoringItem]
    ) -> tuple[list[MetricValue], list[Any]]:
        """Each item's sentence score and sacrebleu's segment statistics behind it (None
        without a reference). ``sentence_score`` is ``_aggregate_and_compute`` of exactly
        these statistics, and a corpus score is ``_aggregate_and_compute`` of all of them
        (:meth:`corpus_from_pass`): the texts are read once for both."""
        values: list[MetricValue] = []
        statistics: list[Any] = []
        for item in items:
            if not item.references:
                values.append(MetricValue(None, self._details_class(note=NO_REFERENCE)))
                statistics.append(None)
                continue
            hypothesis = item.text or ""
            references = list(item.references)
            self._sentence._check_sentence_score_args(hypothesis, references)
            # sacrebleu's sentence_score, in its two steps, so the statistics it sums are
            # kept: returned for this pass's corpus score (corpus_from_pass) and stored
            # with the value, so a corpus score over any of these texts later is their
            # sum (corpus_from_statistics), with no text scored again.
            stats = self._segment_statistics(hypothesis, references)
            score = self._sentence._aggregate_and_compute(stats)
            statistics.append((len(references), stats[0]))
            details = dataclasses.replace(
                cast(SacreDetails, self._details(score, item)), statistics=tuple(stats[0])
            )
            # Read after scoring: the signature names this item's number of references.
            values.append(
                MetricValue(
                    float(score.score),
                    details,
                    signature=self._typed(str(self._sentence.get_signature())),
                )
            )
        return values, statistics

    def _segment_statistics(self, hypothesis: str, references: list[str]) -> list[Any]:
        """sacrebleu's statistics of one text against its references (a list of one)."""
        return cast(
            list[Any],
            self._sentence._extract_corpus_statistics([hypothesis], [[ref] for ref in references]),
        )

    def corpus_from_pass(self, statistics: Sequence[Any]) -> MetricValue:
        """The corpus score from a sentence pass's statistics (``(references, segment
        statistics)`` per item, None for an item without a reference, as
        :meth:`sentence_scores_with_statistics` gives them): what ``corpus_score`` gives,
        without reading a text again."""
        scored = [entry for entry in statistics if entry is not None]
        value = self.corpus_from_statistics(
            [stats for _, stats in scored], [refs for refs, _ in scored]
        )
        if value.value is None:
            return value
        details = dataclasses.replace(
            value.details, without_reference=len(statistics) - len(scored)
        )
        return MetricValue(value.value, details, signature=value.signature)

    def corpus_from_statistics(
        self, statistics: Sequence[Sequence[float]], references: Sequence[int]
    ) -> MetricValue:
        """The corpus score of texts from their sentence statistics (each text's
        ``details.statistics``, in the texts' order) and reference counts: sacrebleu's
        ``corpus_score`` over the same texts and references sums the very same
        statistics, so the two are equal. Texts without a reference have neither."""
        if not statistics:
            return MetricValue(None, self._details_class(note=NO_REFERENCE, n=0))
        counts = set(references)
        # As sacrebleu decides it over the whole corpus (the signature's nrefs).
        self._corpus.num_refs = counts.pop() if len(counts) == 1 else -1
        score = self._corpus._aggregate_and_compute([list(row) for row in statistics])
        details = dataclasses.replace(self._details(score, None), n=len(statistics))
        return MetricValue(float(score.score), details, signature=self.signature())

    def corpus_from_sentences(
        self, items: Sequence[ScoringItem], values: Sequence[MetricValue]
    ) -> MetricValue | None:
        """The corpus score from the sentence values just made (their statistics): what
        ``corpus_score`` computes, without reading every text a second time. Values
        without statistics (made elsewhere) send it back to the texts."""
        scored = [
            (v.details.get("statistics"), item)
            for item, v in zip(items, values, strict=True)
            if v.value is not None and item.references
        ]
        if any(stats is None for stats, _ in scored):
            return self.corpus_score(items)
        if not scored:
            return MetricValue(None, self._details_class(note=NO_REFERENCE, n=0))
        value = self.corpus_from_statistics(
            [cast(Sequence[float], stats) for stats, _ in scored],
            [len(item.references) for _, item in scored],
        )
        details = dataclasses.replace(value.details, without_reference=len(items) - len(scored))
        return MetricValue(value.value, details, signature=value.signature)

    def corpus_score(self, items: Sequence[ScoringItem]) -> MetricValue | None:
        # Only the texts and their references are kept (not the items), and sacrebleu
        # reads them CORPUS_BATCH at a time: its corpus_score caches every reference's
        # n-grams at once (hundreds of MB for a large session). Its per-sentence
        # statistics, summed by _aggregate_and_compute, are what corpus_score sums.
        # (The scoring job does not come here: it sums the sentence pass's statistics.)
        scored = [(item.text or "", item.references) for item in items if item.references]
        if not scored:
            return MetricValue(None, self._details_class(note=NO_REFERENCE, n=0))
        stats: list[Any] = []
        for start in range(0, len(scored), CORPUS_BATCH):
            batch = scored[start : start + CORPUS_BATCH]
            depth = max(len(refs) for _, refs in batch)
            streams = [
                [refs[k] if k < len(refs) else None for _, refs in batch] for k in range(depth)
            ]
            stats.extend(
                self._corpus._extract_corpus_statistics([text for text, _ in batch], streams)
            )
        counts = {len(refs) for _, refs in scored}
        # As sacrebleu decides it over the whole corpus (the signature's nrefs).
        self._corpus.num_refs = counts.pop() if len(counts) == 1 else -1
        score = self._corpus._aggregate_and_compute(stats)
        details = dataclasses.replace(
            self._details(score, None), n=len(scored), without_reference=len(items) - len(scored)
        )
        return MetricValue(float(score.score), details, signature=self.signature())

    _details_class: type[MetricDetails] = ChrfDetails

    def _details(self, score: Any, item: ScoringItem | None) -> MetricDetails:
        return self._details_class(references=len(item.references) if item else None)


class Bleu(_SacreMetric):
    """BLEU (sacrebleu defaults: 13a tokenisation, exp smoothing at corpus level)."""

    name = BLEU

    def __init__(self, tokenize: str = "13a") -> None:
        self.tokenize = tokenize
        super().__init__()

    def _make(self, sentence: bool) -> Any:
        from sacrebleu.metrics import BLEU as SacreBLEU

        return SacreBLEU(tokenize=self.tokenize, effective_order=sentence)

    _details_class = BleuDetails

    def _details(self, score: Any, item: ScoringItem | None) -> BleuDetails:
        return BleuDetails(
            references=len(item.references) if item else None,
            precisions=tuple(round(p, 4) for p in score.precisions),
            bp=round(score.bp, 4),
            sys_len=score.sys_len,
            ref_len=score.ref_len,
        )


class ChrF(_SacreMetric):
    """chrF++: character 6-grams plus word 1- and 2-grams (``word_order=2``), beta 2."""

    name = CHRF

    def __init__(self, word_order: int = 2) -> None:
        self.word_order = word_order
        super().__init__()

    def _make(self, sentence: bool) -> Any:
        from sacrebleu.metrics import CHRF as SacreCHRF

        return SacreCHRF(word_order=self.word_order)

    def sentence_signature(self) -> Signature:
        return self.signature()  # chrF has no sentence-specific setting


class Ter(_SacreMetric):
    """TER (sacrebleu defaults: tercom tokenisation, case-insensitive); lower is better."""

    name = TER

    def _make(self, sentence: bool) -> Any:
        from sacrebleu.metrics import TER as SacreTER

        return SacreTER()

    def sentence_signature(self) -> Signature:
        return self.signature()  # TER has no sentence-specific setting

    def _segment_statistics(self, hypothesis: str, references: list[str]) -> list[Any]:
        """sacrebleu's TER statistics ``[fewest edits, mean reference length]``, its edit
        search run by core.metrics.ter_core (the same edits, row by row in numpy): each
        step below is sacrebleu's ``_extract_corpus_statistics`` for one text, which
        tokenises each reference twice (once when caching it, once when reading its
        words) and the text once."""
        from core.metrics.ter_core import translation_edit_rate

        metric = self._sentence
        metric.num_refs = len(references)  # as its reference cache sets it (signature)
        words_hyp = metric._preprocess_segment(hypothesis).split()
        best = int(1e16)
        lengths = 0
        for ref in references:
            words_ref = metric._preprocess_segment(metric._preprocess_segment(ref)).split()
            edits, length = translation_edit_rate(words_hyp, words_ref)
            lengths += length
            if edits < best:
                best = edits
        return [[best, lengths / len(references)]]

    _details_class = TerDetails

    def _details(self, score: Any, item: ScoringItem | None) -> TerDetails:
        return TerDetails(
            references=len(item.references) if item else None,
            edits=round(float(score.num_edits), 4),
            ref_length=round(float(score.ref_length), 4),
        )


# --- ROUGE ----------------------------------------------------------------------------------

_UNICODE_WORD = re.compile(r"[^\W_]+")
ROUGE_TYPES = {ROUGE1: "rouge1", ROUGE2: "rouge2", ROUGEL: "rougeL"}


class UnicodeTokenizer:
    """Lowercased Unicode letter/digit runs: "Città di Castello" -> città, di, castello."""

    def tokenize(self, text: str) -> list[str]:
        return _UNICODE_WORD.findall(text.lower())


class Rouge(CorpusFromSentences):
    """ROUGE-1, ROUGE-2 or ROUGE-L F-measure; multi-reference = the best reference."""

    def __init__(self, variant: str = ROUGEL) -> None:
        if variant not in ROUGE_TYPES:
            from core.errors import UserFacingError

            raise UserFacingError(f"unknown ROUGE variant {variant!r}")
        self.name = variant
        self._scorer: Any = None

    def _get_scorer(self) -> Any:
        if self._scorer is None:
            with heavy.lock():
                heavy.import_nltk()  # rouge-score's stemmer is nltk's
                from rouge_score.rouge_scorer import RougeScorer

            self._scorer = RougeScorer(
                [ROUGE_TYPES[self.name]], use_stemmer=False, tokenizer=UnicodeTokenizer()
            )
        return self._scorer

    def signature(self) -> Signature:
        return Signature.of(
            self.name,
            "rouge-score",
            library_version("rouge-score"),
            {
                "type": ROUGE_TYPES[self.name],
                "measure": "F",
                "tok": "unicode-lower",
                "stem": "no",
                "multiref": "max",
                "scale": 100,
                "corpus": "mean",
            },
        )

    def sentence_scores(self, items: Sequence[ScoringItem]) -> list[MetricValue]:
        scorer = self._get_scorer()
        key = ROUGE_TYPES[self.name]
        values = []
        for item in items:
            if not item.references:
                values.append(MetricValue(None, RougeDetails(note=NO_REFERENCE)))
                continue
            score = scorer.score_multi(list(item.references), item.text or "")[key]
            values.append(
                MetricValue(
                    float(score.fmeasure) * 100,
                    RougeDetails(
                        precision=round(score.precision * 100, 4),
                        recall=round(score.recall * 100, 4),
                        references=len(item.references),
                    ),
                )
            )
        return values

    def corpus_from_sentences(
        self, items: Sequence[ScoringItem], values: Sequence[MetricValue]
    ) -> MetricValue | None:
        scored = [v.value for v in values if v.value is not None]
        if not scored:
            return MetricValue(None, RougeDetails(note=NO_REFERENCE, n=0))
        return MetricValue(
            sum(scored) / len(scored),
            RougeDetails(
                n=len(scored),
                without_reference=len(values) - len(scored),
                aggregate="mean of sentence F-measures",
            ),
        )
