"""The official metrics' sentence pass spread over the machine's cores.

BLEU, chrF++, TER (sacrebleu) and METEOR (nltk) are pure CPU work per text: a large session
(WebNLG 2020's 16 systems: 28,464 texts, up to 5 references each) spends most of its
scoring time there, TER above all. Their chunks of texts go to a pool of worker processes,
each holding its own copy of the metric; the results come back in order, so rows are
staged, progress is counted and a cancel is honoured chunk by chunk exactly as in one
process. A worker returns each text's value and, for the sacrebleu metrics, the segment
statistics behind it, from which the corpus score is summed (no second pass).

Workers are started with ``spawn`` (never ``fork``: the window's process has Qt and
threads), only when there is enough work to pay for starting them, and shut down when the
scoring job ends. The values are the very numbers one process computes: each text is
scored by the same code on the same input.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from core.metrics.base import BLEU, CHRF, METEOR, TER, MetricValue, ScoringItem

# Metrics whose sentence pass may run in worker processes (pure CPU, no model, no GPU).
POOLED = (BLEU, CHRF, TER, METEOR)
# Below this many texts for a metric, workers cost more to start than they save.
MIN_TEXTS = 2_000
# Chunks in flight per worker: enough to keep every worker busy while results are staged.
AHEAD = 3

_WORKER_METRICS: dict[tuple[str, Any], Any] = {}


def workers_for(requested: int | None) -> int:
    """How many worker processes: ``requested`` (1: none, score in this process), else
    every usable core."""
    if requested is not None:
        return max(1, int(requested))
    from core.local_models.placement import cpu_count

    return cpu_count()


def _worker_score(name: str, options: Any, items: Sequence[ScoringItem]) -> tuple[Any, Any]:
    """In a worker: score one chunk with this process's copy of the metric."""
    key = (name, repr(options))
    metric = _WORKER_METRICS.get(key)
    if metric is None:
        from core.metrics import create_metric

        metric = _WORKER_METRICS[key] = create_metric(name, options)
    return score_chunk(metric, items)


def score_chunk(metric: Any, items: Sequence[ScoringItem]) -> tuple[list[MetricValue], Any]:
    """A chunk's values, and its segment statistics where the metric gives them."""
    with_statistics = getattr(metric, "sentence_scores_with_statistics", None)
    if with_statistics is not None:
        return with_statistics(items)
    return metric.sentence_scores(items), None


def slim(item: ScoringItem) -> ScoringItem:
    """What a reference metric reads of an item (no triples, entities or prompt to copy)."""
    return ScoringItem(text=item.text, lang=item.lang, references=item.references, key=item.key)


class SentencePool:
    """Worker processes for the pooled metrics, started on first use."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._executor: ProcessPoolExecutor | None = None

    def wanted(self, name: str, texts: int) -> bool:
        return self.workers > 1 and name in POOLED and texts >= MIN_TEXTS

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            import multiprocessing

            self._executor = ProcessPoolExecutor(
                max_workers=self.workers, mp_context=multiprocessing.get_context("spawn")
            )
        return self._executor

    def score(
        self,
        name: str,
        options: Any,
        chunks: Iterator[Sequence[ScoringItem]],
        check: Callable[[], None],
    ) -> Iterator[tuple[Sequence[ScoringItem], list[MetricValue], Any]]:
        """(chunk, values, statistics) for each chunk, in order; ``check`` is called
        between chunks (a cancel raises there and the chunks not started are dropped)."""
        pool = self._pool()
        pending: deque[tuple[Sequence[ScoringItem], Future[Any]]] = deque()
        limit = self.workers * AHEAD
        try:
            for chunk in chunks:
                check()
                pending.append(
                    (chunk, pool.submit(_worker_score, name, options, [slim(i) for i in chunk]))
                )
                while len(pending) >= limit:
                    done, future = pending.popleft()
                    values, statistics = future.result()
                    yield done, values, statistics
            while pending:
                check()
                done, future = pending.popleft()
                values, statistics = future.result()
                yield done, values, statistics
        finally:
            for _, future in pending:
                future.cancel()

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
