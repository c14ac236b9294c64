"""The system-corpus side of a system-level correlation: BLEU, chrF++ and TER over a
run's texts, from the sentence statistics stored with their scores."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core import heavy
from core.agreement.reads import Reads
from core.errors import UserFacingError

if TYPE_CHECKING:
    from core.metrics.scoring.queries import SentenceScoreRow
    from core.store import SessionStore


class CorpusForm:
    """Corpus-level BLEU, chrF++ and TER over a run's texts: the sum of the sentence
    statistics the scoring job stored with each text's score (sacrebleu's corpus_score
    over the same texts and references sums the very same statistics), made with the
    tokenisation of those scores. Scores stored before the statistics were kept are
    scored again from the stored texts and references (sacrebleu), and a note says so."""

    METRICS = ("bleu", "chrf++", "ter")

    def __init__(
        self,
        store: SessionStore,
        rows: dict[int, SentenceScoreRow],
        *,
        reads: Reads | None = None,
        universe: set[int] | None = None,
    ) -> None:
        self.store = store
        self.rows = rows
        # With ``reads``, the statistics of every text of ``universe`` (a superset of
        # ``rows``: the texts before a subset was taken) are read once for all subsets.
        self.reads = reads
        self.universe = universe if universe is not None else set(rows)
        self.used: dict[str, str] = {}  # column -> the metric's signature
        self.recomputed: set[str] = set()  # columns whose statistics were not stored
        self._metrics: dict[str, Any] = {}
        self._stored: dict[str, dict[int, Any]] = {}  # column -> vid -> SentenceStatistics
        self._references: dict[tuple[int, str, str], list[tuple[int, str]]] | None = None
        # (column, the texts) -> score: every human rating over the same texts reuses it
        self._scores: dict[tuple[str, tuple[int, ...]], float | None] = {}

    def has(self, column: str) -> bool:
        return column.split(":", 1)[0] in self.METRICS and ":" in column

    def notes(self) -> list[str]:
        if not self.recomputed:
            return []
        columns = sorted(self.recomputed)
        metrics = ",".join(sorted({c.split(":", 1)[0] for c in columns}))
        return [
            f"system-corpus {', '.join(columns)}: these scores were stored without their "
            "sentence statistics (scored by an earlier TailLens), so their corpus scores "
            "were computed again from the texts; score again (taillens score --metrics "
            f"{metrics}) to have them read"
        ]

    def _refs(self) -> dict[tuple[int, str, str], list[tuple[int, str]]]:
        if self._references is None:
            from core.metrics.scoring.material import unit_references

            self._references = unit_references(
                self.store, sorted({r.unit_id for r in self.rows.values()})
            )
        return self._references

    def _statistics(self, column: str) -> dict[int, Any]:
        if column not in self._stored:
            from core.metrics.scoring import sentence_statistics

            metric, quality = column.split(":", 1)
            if self.reads is None:
                self._stored[column] = sentence_statistics(self.store, metric, quality, self.rows)
            else:
                universe = frozenset(self.universe)
                self._stored[column] = self.reads.get(
                    ("statistics", column, universe),
                    lambda: sentence_statistics(self.store, metric, quality, universe),
                )
        return self._stored[column]

    def _metric(self, metric: str, tokenisation: str) -> Any:
        from core.metrics import FACTORIES, MetricOptions

        options = MetricOptions(bleu_tokenize=tokenisation)
        key = f"{metric}|{options.bleu_tokenize if metric == 'bleu' else ''}"
        if key not in self._metrics:
            with heavy.lock():
                self._metrics[key] = FACTORIES[metric](options, None)
        return self._metrics[key]

    def score(self, column: str, vids: list[int]) -> float | None:
        key = (column, tuple(sorted(vids)))
        if key not in self._scores:
            self._scores[key] = self._score(column, vids)
        return self._scores[key]

    def _score(self, column: str, vids: list[int]) -> float | None:
        metric_name, quality = column.split(":", 1)
        stored = self._statistics(column)
        found = [stored[vid] for vid in vids if vid in stored]
        # The tokenisation the stored sentence scores were made with: a corpus score
        # under another tokenisation than its sentence scores would not be the same metric.
        tokenisation = (
            self._tokenisation(metric_name, {f.signature for f in found if f.signature})
            if metric_name == "bleu"
            else "13a"
        )
        metric = self._metric(metric_name, tokenisation)
        if (
            found
            and len(found) == len(vids)
            and all(f.statistics is not None and f.references for f in found)
        ):
            with heavy.lock():
                value = metric.corpus_from_statistics(
                    [f.statistics for f in found], [f.references for f in found]
                )
        else:
            self.recomputed.add(column)
            value = self._from_texts(metric, quality, vids)
        if value is None or value.value is None:
            return None
        self.used[column] = value.signature or metric_name
        return float(value.value)

    def _from_texts(self, metric: Any, quality: str, vids: list[int]) -> Any:
        """sacrebleu's corpus score from the stored texts and their units' references."""
        from core.metrics.base import ScoringItem

        references = self._refs()
        items = []
        for vid in vids:
            row = self.rows[vid]
            refs = references.get((row.unit_id, row.lang, quality), [])
            if refs:
                items.append(ScoringItem(row.text or "", row.lang, tuple(text for _, text in refs)))
        if not items:
            return None
        with heavy.lock():
            return metric.corpus_score(items)

    @staticmethod
    def _tokenisation(metric: str, signatures: set[str]) -> str:
        """The ``tok`` these signatures name (13a, sacrebleu's default, where none says);
        texts scored under several are refused."""
        from core.metrics.signature import Signature, read_signature

        tokenisations = set()
        for text in signatures:
            signature = read_signature(text, metric)
            if isinstance(signature, Signature) and signature.get("tok"):
                tokenisations.add(str(signature.get("tok")))
        if len(tokenisations) > 1:
            raise UserFacingError(
                f"the {metric} scores of these texts were made with different tokenisations "
                f"({', '.join(sorted(tokenisations))}): score them again with one "
                "(--bleu-tokenize) before a corpus-level correlation"
            )
        return tokenisations.pop() if tokenisations else "13a"
