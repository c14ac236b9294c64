"""Graph–text similarity (EREDAT-style, reference-free; METHODS §7).

The unit's triples are linearised as ``[S] s [P] p [O] o [S] ...``; the graph and the
text are embedded by the same sentence-transformers encoder and compared by cosine.
Default encoder: the all-MiniLM-L6-v2 packaged with TailLens; any sentence-transformers
model folder (or a Hugging Face id already in the local cache) can be chosen.

The robustness check: the same text is compared with the graph in which one triple's
subject and object are swapped (the first triple whose two ends differ). A metric that
reads the graph's direction drops; ``details["inversion_drop"]`` = similarity − similarity
with the swapped graph. A drop near 0 says the encoder sees a bag of labels.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core import heavy
from core.metrics.base import SIMILARITY, CorpusFromSentences, MetricValue, ScoringItem
from core.metrics.details import SimilarityDetails
from core.metrics.signature import Signature, library_version
from core.surface import surface_triple

# The encoder last loaded, by (folder, device): one at a time, so that scoring with a
# second encoder lets the first go instead of holding every one used until the app ends.
_ENCODERS: dict[tuple[str, str], Any] = {}
_LOCK = threading.Lock()


def linearise(triples: Sequence[tuple[str, str, str]]) -> str:
    """``[S] s [P] p [O] o …`` with surface forms (``Abilene,_Texas`` → "Abilene, Texas",
    ``cityServed`` → "city served"): the encoder reads text, not identifiers."""
    return " ".join(f"[S] {s} [P] {p} [O] {o}" for s, p, o in map(surface_triple, triples))


def swapped(triples: Sequence[tuple[str, str, str]]) -> tuple[tuple[str, str, str], ...] | None:
    """The triples with the first non-reflexive triple's subject and object swapped."""
    out = list(triples)
    for index, (s, p, o) in enumerate(out):
        if s.strip() != o.strip():
            out[index] = (o, p, s)
            return tuple(out)
    return None


def resolve_encoder(encoder: str | Path | None) -> tuple[Path, str]:
    """The encoder folder and its display name; offline only."""
    from core.errors import UserFacingError
    from core.metrics.bertscore import cached_hub_model, packaged_minilm

    if encoder is None or str(encoder) == "":
        return packaged_minilm(), "all-MiniLM-L6-v2"
    path = Path(str(encoder)).expanduser()
    if path.is_dir():
        return path, path.name
    cached = cached_hub_model(str(encoder))
    if cached is None:
        raise UserFacingError(
            f"encoder {str(encoder)!r} is neither a folder nor in the local Hugging Face cache "
            "(TailLens does not download models)"
        )
    return cached, str(encoder)


def load_encoder(path: Path, device: str = "cpu") -> Any:
    with _LOCK:
        key = (str(path), device)
        if key not in _ENCODERS:
            _ENCODERS.clear()
            import os

            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            with heavy.lock():
                from sentence_transformers import SentenceTransformer

            try:
                _ENCODERS[key] = SentenceTransformer(str(path), device=device)
            except Exception as error:  # any loading failure is the user's folder
                from core.errors import UserFacingError

                raise UserFacingError(
                    f"cannot load the sentence encoder at {path}: {error}"
                ) from error
        return _ENCODERS[key]


def forget_encoders() -> None:
    """Let the loaded encoder go (a job still using it keeps it until it ends)."""
    with _LOCK:
        _ENCODERS.clear()


class GraphTextSimilarity(CorpusFromSentences):
    """Cosine of graph and text embeddings, with the subject/object inversion check."""

    name = SIMILARITY

    def __init__(
        self, encoder: str | Path | None = None, *, device: str = "cpu", batch_size: int = 64
    ) -> None:
        self.encoder = encoder
        self.device = device
        self.batch_size = batch_size
        self._resolved: tuple[Path, str] | None = None

    @property
    def resolved(self) -> tuple[Path, str]:
        if self._resolved is None:
            self._resolved = resolve_encoder(self.encoder)
        return self._resolved

    def signature(self) -> Signature:
        return Signature.of(
            SIMILARITY,
            "graph-text-cosine",
            "2",
            {
                "encoder": self.resolved[1],
                "linearise": "[S][P][O]+surface",
                "inversion": "first-triple",
                "sentence-transformers": library_version("sentence-transformers"),
            },
        )

    def sentence_scores(self, items: Sequence[ScoringItem]) -> list[MetricValue]:
        if not items:
            return []
        import numpy as np

        model = load_encoder(self.resolved[0], self.device)
        texts: list[str] = []
        slots: list[tuple[int, int, int | None]] = []  # text, graph, swapped graph
        for item in items:
            text_at = len(texts)
            texts.append(item.text or "")
            graph_at = len(texts)
            texts.append(linearise(item.triples))
            inverted = swapped(item.triples)
            swap_at = None
            if inverted is not None:
                swap_at = len(texts)
                texts.append(linearise(inverted))
            slots.append((text_at, graph_at, swap_at))
        vectors = np.asarray(
            model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        )
        values = []
        for item, (text_at, graph_at, swap_at) in zip(items, slots, strict=True):
            if not item.triples:
                values.append(MetricValue(None, SimilarityDetails(note="the unit has no triples")))
                continue
            similarity = float(vectors[text_at] @ vectors[graph_at])
            if swap_at is not None:
                inverted_similarity = float(vectors[text_at] @ vectors[swap_at])
                details = SimilarityDetails(
                    encoder=self.resolved[1],
                    inverted_similarity=round(inverted_similarity, 6),
                    inversion_drop=round(similarity - inverted_similarity, 6),
                )
            else:
                details = SimilarityDetails(
                    encoder=self.resolved[1],
                    note="no triple with different subject and object to swap",
                )
            values.append(MetricValue(similarity, details))
        return values

    def corpus_from_sentences(
        self, items: Sequence[ScoringItem], values: Sequence[MetricValue]
    ) -> MetricValue | None:
        scored = [v for v in values if v.value is not None]
        if not scored:
            return None
        drops = [
            drop
            for v in scored
            if isinstance(v.details, SimilarityDetails)
            and (drop := v.details.inversion_drop) is not None
        ]
        return MetricValue(
            sum(v.value for v in scored if v.value is not None) / len(scored),
            SimilarityDetails(
                n=len(scored),
                aggregate="mean of sentence similarities",
                inversion_drop_mean=sum(drops) / len(drops) if drops else None,
                encoder=self.resolved[1],
            ),
        )
