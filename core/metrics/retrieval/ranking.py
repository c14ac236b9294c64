"""Ranking graphs against texts and back (top-k accuracy, MRR), the subject/object
inversion check, and the nearest graphs to a free text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.errors import UserFacingError
from core.jobs import JobContext
from core.metrics.retrieval.encoders import Encoder
from core.metrics.retrieval.encodings import encode_cached
from core.metrics.retrieval.pairs import RetrievalPair, unit_triples
from core.metrics.similarity import linearise

if TYPE_CHECKING:
    from core.store import SessionStore


@dataclass(frozen=True)
class DirectionScores:
    queries: int
    top1: float
    top5: float
    mrr: float

    def as_dict(self) -> dict[str, float | int]:
        return {"queries": self.queries, "top1": self.top1, "top5": self.top5, "mrr": self.mrr}


@dataclass(frozen=True)
class TextMatch:
    """How one text matches its own graph: cosine with it, and the rank of its best
    correct graph among all graphs (1 = found)."""

    pair: RetrievalPair
    similarity: float
    rank: int


@dataclass
class RetrievalResult:
    encoder: str
    fingerprint: str
    pairs: int
    graphs: int
    texts: int
    text_to_graph: DirectionScores
    graph_to_text: DirectionScores
    encoded: int = 0  # strings encoded by this call (the rest came from the cache)
    matches: list[TextMatch] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "encoder": self.encoder,
            "fingerprint": self.fingerprint,
            "pairs": self.pairs,
            "graphs": self.graphs,
            "texts": self.texts,
            "encoded": self.encoded,
            "text_to_graph": self.text_to_graph.as_dict(),
            "graph_to_text": self.graph_to_text.as_dict(),
        }

    def worst(self, n: int = 20) -> list[TextMatch]:
        """The texts that match their own graph worst: lowest cosine first."""
        return sorted(self.matches, key=lambda m: (m.similarity, -m.rank))[:n]


def ranks(
    queries: Any, candidates: Any, positives: Sequence[Sequence[int]], chunk: int = 256
) -> tuple[list[int], list[float]]:
    """Per query row: rank of its best correct candidate (1 + wrong candidates scored
    strictly higher) and that best correct score. Chunked, so memory stays
    ``chunk × len(candidates)``."""
    import numpy as np

    out_ranks: list[int] = []
    best_scores: list[float] = []
    for start in range(0, queries.shape[0], chunk):
        scores = queries[start : start + chunk] @ candidates.T
        for offset, row in enumerate(scores):
            best = float(np.max(row[list(positives[start + offset])]))
            out_ranks.append(1 + int(np.count_nonzero(row > best)))
            best_scores.append(best)
    return out_ranks, best_scores


def _direction(rank_list: Sequence[int]) -> DirectionScores:
    n = len(rank_list)
    if n == 0:
        return DirectionScores(0, 0.0, 0.0, 0.0)
    return DirectionScores(
        n,
        sum(r == 1 for r in rank_list) / n,
        sum(r <= 5 for r in rank_list) / n,
        sum(1.0 / r for r in rank_list) / n,
    )


def evaluate(
    pairs: Sequence[RetrievalPair],
    encoder: Encoder,
    store: SessionStore | None = None,
    ctx: JobContext | None = None,
) -> RetrievalResult:
    """Retrieval in both directions over ``pairs`` (definitions in the module doc)."""
    if not pairs:
        raise UserFacingError(
            "no texts with a graph to retrieve over (the session has no "
            "references, or the run no parsed outputs, in these languages)"
        )
    graphs = list(dict.fromkeys(p.graph for p in pairs))
    texts = list(dict.fromkeys(p.text for p in pairs))
    g_index = {g: i for i, g in enumerate(graphs)}
    t_index = {t: i for i, t in enumerate(texts)}
    text_pos: list[set[int]] = [set() for _ in texts]
    graph_pos: list[set[int]] = [set() for _ in graphs]
    for pair in pairs:
        gi, ti = g_index[pair.graph], t_index[pair.text]
        text_pos[ti].add(gi)
        graph_pos[gi].add(ti)
    total = len(graphs) + len(texts)
    done = [0]

    def encoded(n: int) -> None:
        done[0] += n
        if ctx is not None:
            ctx.progress(done[0], total, "encoding")

    if ctx is not None:
        ctx.progress(0, total, "encoding")
    g_vec = encode_cached(store, encoder, graphs, "graph", ctx, encoded)
    t_vec = encode_cached(store, encoder, texts, "text", ctx, encoded)
    if ctx is not None:
        ctx.check_cancelled()
        ctx.progress(total, total, "ranking")
    t_ranks, t_best = ranks(t_vec, g_vec, [sorted(s) for s in text_pos])
    g_ranks, _ = ranks(g_vec, t_vec, [sorted(s) for s in graph_pos])
    import numpy as np

    matches = []
    for pair in pairs:
        ti, gi = t_index[pair.text], g_index[pair.graph]
        matches.append(TextMatch(pair, float(np.dot(t_vec[ti], g_vec[gi])), t_ranks[ti]))
    return RetrievalResult(
        encoder.name,
        encoder.fingerprint,
        len(pairs),
        len(graphs),
        len(texts),
        _direction(t_ranks),
        _direction(g_ranks),
        done[0],
        matches,
    )


def inversion_errors(
    pairs: Sequence[RetrievalPair],
    encoder: Encoder,
    store: SessionStore | None = None,
    ctx: JobContext | None = None,
) -> tuple[int, int]:
    """EREDAT's inversion test: over the 1-triple graphs whose subject and object differ,
    (how many texts score the swapped graph strictly above their own, how many tested)."""
    import numpy as np

    tested = [
        p
        for p in pairs
        if len(p.triples) == 1 and p.triples[0][0].strip() != p.triples[0][2].strip()
    ]
    if not tested:
        return 0, 0
    swapped_graphs = [
        linearise([(p.triples[0][2], p.triples[0][1], p.triples[0][0])]) for p in tested
    ]
    t_vec = encode_cached(store, encoder, [p.text for p in tested], "text", ctx)
    g_vec = encode_cached(store, encoder, [p.graph for p in tested], "graph", ctx)
    s_vec = encode_cached(store, encoder, swapped_graphs, "graph", ctx)
    right = np.sum(t_vec * g_vec, axis=1)
    wrong = np.sum(t_vec * s_vec, axis=1)
    return int(np.count_nonzero(wrong > right)), len(tested)


@dataclass(frozen=True)
class GraphHit:
    unit_id: int
    lang: str
    triples: tuple[tuple[str, str, str], ...]
    similarity: float

    @property
    def linearised(self) -> str:
        """The graph as the encoder read it (``linearise``)."""
        return linearise(self.triples)


def find_graphs(
    store: SessionStore,
    text: str,
    encoder: Encoder,
    *,
    lang: str | None = None,
    k: int = 10,
    ctx: JobContext | None = None,
) -> list[GraphHit]:
    """The ``k`` session graphs (units, in ``lang`` if given) most similar to ``text``."""
    import numpy as np

    if not text or not text.strip():
        raise UserFacingError("the text is empty: nothing to search with")
    graphs = unit_triples(store, None, [lang] if lang else None)
    if not graphs:
        raise UserFacingError(
            "the session has no units with triples" + (f" in {lang!r}" if lang else "")
        )
    keys = sorted(graphs)
    strings = [linearise(graphs[key]) for key in keys]
    g_vec = encode_cached(store, encoder, strings, "graph", ctx)
    t_vec = encode_cached(store, encoder, [text], "text", ctx)
    scores = g_vec @ t_vec[0]
    order = np.argsort(-scores, kind="stable")[:k]
    return [GraphHit(keys[i][0], keys[i][1], graphs[keys[i]], float(scores[i])) for i in order]
