"""Retrieval as a job: encode (cached) and rank a session's references or a run's outputs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.errors import UserFacingError
from core.jobs import Job, JobContext
from core.metrics.retrieval.encoders import open_encoder
from core.metrics.retrieval.pairs import load_pairs
from core.metrics.retrieval.ranking import RetrievalResult, evaluate, inversion_errors

if TYPE_CHECKING:
    from core.store import SessionStore


@dataclass(frozen=True)
class RetrievalRequest:
    run_id: int | None = None  # None: the session's references
    langs: tuple[str, ...] | None = None
    quality: str | None = None
    one_text_per_graph: bool = False
    encoder: str | None = None
    device: str = "cpu"
    batch_size: int = 64
    inversion: bool = True


@dataclass
class RetrievalSummary:
    result: RetrievalResult
    inverted_above: int = 0
    inversion_tested: int = 0

    def as_dict(self) -> dict[str, Any]:
        out = self.result.as_dict()
        out["inversion"] = {
            "tested": self.inversion_tested,
            "inverted_above": self.inverted_above,
            "share": (
                self.inverted_above / self.inversion_tested if self.inversion_tested else None
            ),
        }
        return out


def retrieval_job(store: SessionStore, request: RetrievalRequest) -> Job[RetrievalSummary]:
    """Encode (cached) and rank a session's references or a run's outputs."""
    if request.batch_size < 1:
        raise UserFacingError("batch size must be at least 1")
    encoder = open_encoder(request.encoder, device=request.device, batch_size=request.batch_size)
    what = "references" if request.run_id is None else f"run {request.run_id}"

    def run(ctx: JobContext) -> RetrievalSummary:
        pairs = load_pairs(
            store,
            run_id=request.run_id,
            langs=request.langs,
            quality=request.quality,
            one_text_per_graph=request.one_text_per_graph,
        )
        result = evaluate(pairs, encoder, store, ctx)
        summary = RetrievalSummary(result)
        if request.inversion:
            above, tested = inversion_errors(pairs, encoder, store, ctx)
            summary.inverted_above, summary.inversion_tested = above, tested
        return summary

    return Job(
        f"Retrieval over {what}",
        run,
        kind="retrieval",
        params={
            "run": request.run_id,
            "langs": list(request.langs or ()),
            "encoder": encoder.name,
            "fingerprint": encoder.fingerprint,
        },
    )
